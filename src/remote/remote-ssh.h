/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's transport: the user's ssh, started once per call
 * with its stdio on pipes, reusing one connection per destination through
 * OpenSSH's own multiplexing (a control socket in a private directory).
 */
#ifndef DSH_SANDBOX_REMOTE_SSH_H
#define DSH_SANDBOX_REMOTE_SSH_H

#include <stdbool.h>
#include <sys/types.h>

#include "dsh-sandbox/remote.h"
#include "base/util.h"

typedef struct dsh_remote_connection {
        pid_t pid;              /* ssh, leading a process group of its own */
        int to_remote;          /* ssh's stdin, non-blocking */
        int from_remote;        /* ssh's stdout: the helper's frames */
        int diagnostics;        /* ssh's stderr: its own messages (and the remote shell's), non-blocking */
} dsh_remote_connection;

#define DSH_REMOTE_CONNECTION_INIT { -1, -1, -1, -1 }

/* The program ssh starts on the target: the config's remoteProgram, or "dsh-sandbox" found on the remote PATH. */
DSH_INTERNAL const char *dsh_remote_program(const dsh_remote_target *target);

/*
 * The argv that reaches `remote-helper` on the target: the ssh command,
 * `-T -o BatchMode=yes`, the multiplexing options unless the user's own
 * config sets ControlMaster or ControlPath, `--`, the destination and the
 * remote program (quoted for the remote shell).  Caller frees (dsh_strv_free).
 */
DSH_INTERNAL int dsh_remote_ssh_argv(const dsh_remote_target *target, char ***argv_out, dsh_error *error);

/*
 * True when the user's own ssh config (as `ssh -G` prints it for the
 * destination) sets up multiplexing: then theirs is used, untouched.
 */
DSH_INTERNAL bool dsh_remote_user_multiplexes(const dsh_remote_target *target);

/*
 * The ssh command, `-T -o BatchMode=yes` and our shared connection through
 * the checked control `directory` — the start of every ssh the remote
 * service runs (remote-endpoint.c).  0 or -ENOMEM.  Caller frees.
 */
DSH_INTERNAL int dsh_remote_ssh_shared_argv(const dsh_remote_target *target, const char *directory,
                                            char ***argv_out);

/*
 * True when ssh, given the ssh command and our shared-connection options
 * for `directory`, takes them (`ssh -G`): an ssh command that names its own
 * ControlPath (`-o ControlPath=none`: sharing off) wins over ours.
 */
DSH_INTERNAL bool dsh_remote_shared_connection_applies(const dsh_remote_target *target, const char *directory);

/* `word` single-quoted for the remote shell.  Caller frees; NULL out of memory. */
DSH_INTERNAL char *dsh_remote_shell_quoted(const char *word);

/* Starts ssh.  Returns 0, or SANDBOX_UNAVAILABLE when it cannot be started. */
DSH_INTERNAL int dsh_remote_ssh_start(const dsh_remote_target *target, dsh_remote_connection *connection,
                                      dsh_error *error);

/* Closes ssh's stdin and stdout and reaps it (waiting for it); *wait_status its status.  Its stderr stays open, to be read to the end. */
DSH_INTERNAL void dsh_remote_ssh_finish(dsh_remote_connection *connection, int *wait_status);

/*
 * The private control directory, created (0700) and checked, or NULL when
 * there is none that is safe or short enough for a socket path: the call
 * then opens a connection of its own.  Caller frees.
 */
DSH_INTERNAL char *dsh_remote_control_directory_prepare(void);

/*
 * The same directory, made and checked alike, for the remote service's own
 * socket (remote-service.c), which needs less room than ssh's: NULL only
 * when it is unsafe or too long for service-<pid>.  Caller frees.
 */
DSH_INTERNAL char *dsh_remote_service_directory_prepare(void);

/* $HOME/.cache/dsh-sandbox/ssh (HOME absolute), the directory used without XDG_RUNTIME_DIR.  Caller frees. */
DSH_INTERNAL char *dsh_remote_home_control_directory(void);

/* ~/.ssh, from the passwd entry as ssh finds it, or from $HOME with `from_environment`.  Caller frees. */
DSH_INTERNAL char *dsh_remote_user_ssh_directory(bool from_environment);

/*
 * Whether the peer of a connected unix socket `fd` runs as this user
 * (SO_PEERCRED): the ssh master on the local side, sshd's session process
 * on the remote side.  A socket another user's process answers is never
 * trusted, whatever its mode says.
 */
DSH_INTERNAL bool dsh_remote_peer_is_this_user(int fd);

#endif
