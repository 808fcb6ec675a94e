/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the remote provider — the same policy on another machine,
 * over OpenSSH (docs/remote.md).
 *
 * The local side runs the user's `ssh` (their ~/.ssh/config, keys and agent)
 * as `<sshCommand> -T -o BatchMode=yes [multiplexing] -- DEST <remoteProgram>
 * remote-helper`; on the remote host, `dsh-sandbox remote-helper`
 * (dsh_remote_serve) resolves and canonicalizes the policy with its own
 * runtime (its own config, state and backends), asks its own local provider
 * and answers.  Everything on the SSH channel is a frame (a type byte, a
 * 4-byte big-endian length, the payload) written by this library on both
 * ends: the command's stdout and stderr are framed by the helper, so nothing
 * the command prints can pass for the helper's final record, and the exit
 * contract is carried out of band — a final record says the command exited
 * with N, was killed by signal N, or never ran and why.  No final record
 * means the transport failed (ssh exits 255 on its own errors, and so can a
 * command; its status is never read as the command's).
 *
 * Every failure before a final record — ssh missing, the host unreachable
 * or its key unknown, no dsh-sandbox on the remote (the remote shell's 127),
 * a remote that speaks another protocol version or answers anything but
 * frames, facts that do not validate — is SANDBOX_UNAVAILABLE with the
 * reason, and the command never ran anywhere.  The SSH host is trusted: what
 * its dsh-sandbox answers is believed once it validates.
 *
 * Paths in a request (the workspace root, extra writable roots) are the
 * remote host's: they are neither checked nor canonicalized here.
 */
#ifndef DSH_SANDBOX_REMOTE_H
#define DSH_SANDBOX_REMOTE_H

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/runtime.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The frame protocol's version, sent in both directions' first frame: a mismatch is refused. */
#define DSH_REMOTE_PROTOCOL_VERSION 2

/* How to reach the remote host. */
typedef struct dsh_remote_target {
        const char *destination;        /* anything `ssh` takes as a destination ("host", "user@host:22"...) */
        char *const *ssh_command;       /* the argv prefix (config sshCommand); NULL: {"ssh"} */
        const char *remote_program;     /* the remote dsh-sandbox (config remoteProgram); NULL: "dsh-sandbox" */
} dsh_remote_target;

#define DSH_REMOTE_TARGET_INIT { NULL, NULL, NULL }

/* What the remote resolves its policy from; every member NULL/false: the remote's own config decides. */
typedef struct dsh_remote_request {
        bool has_mode;
        dsh_mode mode;
        const char *workspace_root;                 /* the remote's path; NULL: its config's, else its cwd */
        char *const *additional_writable_roots;     /* the remote's paths; NULL: none besides its config's */
        const char *backend;                        /* "auto", "bwrap", "landlock"; NULL: its config's chain */
        /*
         * The call's network policy, enforced by the remote's own provider
         * (it replaces the remote config's whole); NULL: the remote's
         * config's.  A remote too old to know it refuses the request (it
         * reads every member strictly): never run with the network open.
         */
        const dsh_network_policy *network;
        /*
         * The call's own secrets (docs/secrets.md): masks added to the
         * remote's (entries under the remote's homes) and environment names
         * let through; NULL: none.  The remote checks each as a local call's.
         */
        char *const *masked_paths;
        char *const *allowed_environment;
} dsh_remote_request;

#define DSH_REMOTE_REQUEST_INIT { false, DSH_MODE_READ_ONLY, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * The private directory for OpenSSH control sockets (connection reuse):
 * $XDG_RUNTIME_DIR/dsh-sandbox/ssh, else $HOME/.cache/dsh-sandbox/ssh (both
 * only when absolute).  Returns a new string (caller frees), or NULL when
 * neither applies.  The runtime protects it from confined commands like the
 * sandbox's other state — and $HOME/.cache/dsh-sandbox/ssh too, whatever
 * XDG_RUNTIME_DIR is, since a later call made without it uses that one.
 */
DSH_PUBLIC char *dsh_remote_default_control_directory(void);

/*
 * The facts for `argv` under the remote's policy (what its `confine`
 * prints), validated strictly (dsh_json_decode_confined_argv: a non-empty
 * argv, full or partial, the runnerFailureRules shape).  `facts_out` must be
 * DSH_CONFINED_ARGV_INIT; on success the caller clears it.  Returns 0, or a
 * negative errno with `error` set: SANDBOX_UNAVAILABLE ("remote \"DEST\":
 * <reason>") for the transport, a remote that cannot confine, or facts that
 * do not validate; DSH_ERROR_INVALID_INPUT for a bad target or argv; a
 * remote refusal keeps the remote's own code (SANDBOX_INVALID_ROOT...).
 */
DSH_PUBLIC int dsh_remote_confine(const dsh_remote_target *target, const dsh_remote_request *request,
                                  char *const *argv, dsh_confined_argv *facts_out, dsh_error *error);

/*
 * The remote's probe report (what its `probe --json` prints), checked to be
 * a JSON object with a "backends" array and a "selected" member.  Returns 0
 * with *report_json_out a new string (caller frees) and *selected_out true
 * when the remote selects a backend, or a negative errno with `error` set
 * as dsh_remote_confine() sets it.
 */
DSH_PUBLIC int dsh_remote_probe(const dsh_remote_target *target, const dsh_remote_request *request,
                                char **report_json_out, bool *selected_out, dsh_error *error);

/* The local ends of a remote run. */
typedef struct dsh_remote_stdio {
        int stdin_fd;        /* read until EOF and sent; -1: the command's stdin is empty */
        int stdout_fd;       /* the command's stdout is written here */
        int stderr_fd;       /* its stderr here */
        /*
         * Each byte read from it is a signal number to deliver to the remote
         * command's process group (a front end's signal handler writes it to
         * a pipe); -1: none.  Read until EOF or the end of the run.
         */
        int signal_fd;
} dsh_remote_stdio;

#define DSH_REMOTE_STDIO_INIT { -1, -1, -1, -1 }

/*
 * Runs `argv` confined on the remote host under the remote's policy, with
 * stdin, stdout and stderr streamed both ways.  Returns 0 once the remote
 * command ended, with *wait_status_out a waitpid()-style status built from
 * the final record (its exit status, its own 255 included, or the signal
 * that killed it: dsh_end_like_child() ends a front end the same way).
 * Otherwise the command did not run (or its end could not be learned — the
 * connection dropped mid-run) and a negative errno is returned with `error`
 * set: SANDBOX_UNAVAILABLE for the transport or the remote sandbox, the
 * remote's own code for its refusals, DSH_ERROR_EXEC_FAILED (errno_value
 * ENOENT or EACCES) when the remote could not execute the program.
 * Blocks until then; the stdio fds are not closed.  The caller ignores or
 * handles SIGPIPE (a local reader or ssh may go away; the library's spawns
 * give ssh and every command the default disposition back).
 */
DSH_PUBLIC int dsh_remote_run(const dsh_remote_target *target, const dsh_remote_request *request, char *const *argv,
                              const dsh_remote_stdio *stdio, int *wait_status_out, dsh_error *error);

/* A remote bash-tool call (dsh-sandbox/bash-tool.h). */
typedef struct dsh_remote_bash_options {
        long timeout_ms;                /* 0: none; else the remote kills the command's group at the bound */
        size_t output_limit;            /* bytes kept per stream; 0: DSH_BASH_OUTPUT_LIMIT_DEFAULT */
        dsh_bash_output_fn on_output;   /* the output as it comes (stream 1 or 2); NULL: only in the result */
        void *output_data;
        /* Each byte read is a signal number that cancels the call (dsh_bash_cancel on the remote); -1: none. */
        int signal_fd;
} dsh_remote_bash_options;

#define DSH_REMOTE_BASH_OPTIONS_INIT { 0, 0, NULL, NULL, -1 }

/*
 * Runs `command` as the bash tool on the remote host (`bash -c COMMAND`
 * confined there, attributed there: its backend's dialect, its runner's
 * out-of-band channel) and reads the result back strictly
 * (dsh_json_decode_bash_result).  There is no escalation on the remote:
 * approving a wider mode is the caller's, here, and the approved mode goes
 * in `request` as its explicit mode.  Returns 0 with `result_out` (which
 * must be DSH_BASH_RESULT_INIT; clear it with dsh_bash_result_clear()), or
 * a negative errno with `error` set as dsh_remote_run() sets it, nothing
 * having run.
 */
DSH_PUBLIC int dsh_remote_bash(const dsh_remote_target *target, const dsh_remote_request *request,
                               const char *command, const dsh_remote_bash_options *options,
                               dsh_bash_result *result_out, dsh_error *error);

/*
 * The remote side: serves one request read from `in_fd` (frames), answering
 * on `out_fd`, with a runtime made from `options` (NULL: the defaults; the
 * request's backend overrides options->backend).  Whatever goes wrong is
 * answered as a refusal record when the channel still works.  Returns 0
 * once a final record was written, or a negative errno when the channel
 * broke (the peer is gone: there is nobody to tell).  As for
 * dsh_remote_run(), the caller ignores or handles SIGPIPE.
 */
DSH_PUBLIC int dsh_remote_serve(const dsh_runtime_options *options, int in_fd, int out_fd);

/*
 * The remote side's service (docs/remote.md "The remote service"): listens
 * on a unix socket in this host's private ssh control directory, writes
 * `ready PATH` to `session_fd` (the ssh session that started it), and
 * serves each connection in a forked child with dsh_remote_serve(), until
 * `session_fd`'s far end closes (the connection ended) or it was idle for
 * 10 minutes; then it kills the calls still running and returns 0.  A
 * negative errno when it cannot listen (nothing was written).  The caller
 * ignores SIGPIPE, as for dsh_remote_serve().
 */
DSH_PUBLIC int dsh_remote_service(const dsh_runtime_options *options, int session_fd);

#ifdef __cplusplus
}
#endif

#endif
