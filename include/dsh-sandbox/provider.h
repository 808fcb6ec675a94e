/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the local provider.
 *
 * A provider answers one question: "wrap this argv under this policy".  It
 * selects a backend (Landlock, bwrap, or an operator's runner command) and
 * either returns the argv to spawn in place of the caller's own
 * (dsh_provider_confine) or spawns the command confined itself
 * (dsh_provider_spawn: for Landlock the restriction is applied in the forked
 * child right before exec, with no launcher process in between).  When no
 * backend can confine, both fail with SANDBOX_UNAVAILABLE: nothing ever runs
 * unconfined under a confined mode.
 *
 * A provider holds configuration and the cached backend verdict; policy is
 * carried per call, so one provider serves concurrent calls under different
 * policies.  It is not thread-safe: use one per thread or lock around it.
 */
#ifndef DSH_SANDBOX_PROVIDER_H
#define DSH_SANDBOX_PROVIDER_H

#include <stdbool.h>
#include <sys/types.h>

#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dsh_provider dsh_provider;

/* A new provider with the Linux defaults (backends: bwrap, then Landlock).
 * Returns NULL only when out of memory.  Free with dsh_provider_free(). */
DSH_PUBLIC dsh_provider *dsh_provider_new(void);
DSH_PUBLIC void dsh_provider_free(dsh_provider *provider);

/*
 * The backends to consider, in order, by name ("bwrap", "landlock").  A sole
 * backend is selected without a probe.  Resets the cached verdict.
 * Returns 0 or -EINVAL (unknown or duplicate name, empty list) with `error` set.
 */
DSH_PUBLIC int dsh_provider_set_backends(dsh_provider *provider, const char *const *names, dsh_error *error);

/*
 * The check dsh_provider_set_backends() applies, without a provider: for a
 * config loader or a command line that names backends before it builds one.
 * Returns 0, or -EINVAL with `error` set to one of: unknown backend "<name>"
 * (known: <the names this build knows>), backend "<name>" is listed twice,
 * the backend list is empty.
 */
DSH_PUBLIC int dsh_provider_check_backends(const char *const *names, dsh_error *error);

/* Absolute path of the `landlock-run` launcher that confined argvs name.
 * Defaults to the installed copy in the bin directory.  The bwrap backend's
 * dsh-sandbox-exec is the one beside it when there is one, else the installed
 * copy in the libexec directory.  Returns 0, -EINVAL or -ENOMEM. */
DSH_PUBLIC int dsh_provider_set_landlock_run_path(dsh_provider *provider, const char *path, dsh_error *error);

/*
 * The bwrap binary to run, bypassing the trusted lookup (tests, operators
 * with bwrap in an unusual place).  Must be absolute; NULL restores the
 * lookup: /usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap, then absolute
 * PATH entries that are not inside the call's writable roots or a temporary
 * directory.  Resets the cached verdict.  Returns 0 or -EINVAL / -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_bwrap_path(dsh_provider *provider, const char *path, dsh_error *error);

/* Bound of the functional probe of each backend, all its steps together
 * (version query, confined `true`, confinement check; default 5000 ms):
 * whatever still runs at the bound is killed and the backend is reported
 * unusable for this call.  Returns 0, or -EINVAL with
 * "sandbox-local: probeTimeoutMs must be a positive finite number". */
DSH_PUBLIC int dsh_provider_set_probe_timeout_ms(dsh_provider *provider, long timeout_ms, dsh_error *error);

/*
 * The operator override: every confined argv becomes `command` followed by
 * the caller's argv, with one runner-failure rule over `failure_signatures`.
 * Probes are skipped and enforcement is reported as full: the operator
 * vouches for the runner.  Both NULL removes the override.  Validation, with
 * the upstream texts: signatures without a command ("sandbox-local:
 * runnerFailureSignatures requires runnerCommand"), a command without a
 * signature ("sandbox-local: runnerCommand requires at least one
 * runnerFailureSignatures entry"), an empty or multi-line signature
 * ("sandbox-local: runnerFailureSignatures entries must be non-empty
 * single-line strings"), an empty command or an empty command word.
 * Resets the cached verdict.  Returns 0 or -EINVAL / -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_runner_command(dsh_provider *provider, char *const *command,
                                               char *const *failure_signatures, dsh_error *error);

/*
 * Enables the cross-process verdict cache in `directory` (absolute; created
 * on first write), or disables it (NULL, the default).  The verdict of a
 * probed chain is stored there keyed by the kernel, the runner binaries, the
 * user-namespace and LSM knobs, the chain and the probe timeout — only when
 * the probe was clean: every backend passed over failed for a deterministic
 * reason (not installed or trusted, ABI too old, namespaces blocked...), none
 * for a timeout, a resource shortage or a failure it did not recognise; a
 * runner that fails before exec drops it.  Returns 0 or -EINVAL / -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_verdict_cache_dir(dsh_provider *provider, const char *directory, dsh_error *error);

/* $XDG_CACHE_HOME/dsh-sandbox, else $HOME/.cache/dsh-sandbox (absolute
 * variables only), else NULL.  Caller frees. */
DSH_PUBLIC char *dsh_provider_default_verdict_cache_dir(void);

/*
 * Gives every workspace-write call a scratch beneath `directory` (absolute;
 * created on first use), or none (NULL, the default): one directory per
 * session id (per workspace root for a call without one) holding the
 * command's /tmp under bwrap and its package-manager caches on both
 * backends (docs/backends.md, "Temp areas and caches").  The directory must
 * be out of every confined command's reach: beneath one of the protected
 * paths (dsh_provider_set_protected_paths()); dsh_runtime_new() puts it in
 * the verdict cache directory.  Returns 0 or -EINVAL / -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_scratch_dir(dsh_provider *provider, const char *directory, dsh_error *error);

/* One backend as a probe saw it. */
typedef struct dsh_backend_status {
        char *name;                     /* "bwrap", "landlock", "runner-command" */
        bool usable;
        dsh_enforcement enforcement;    /* what it gives when usable */
        char *reason;                   /* why not usable, in words a user can act on; NULL when usable */
        char *version;                  /* runner version when known ("0.8.0"); NULL otherwise */
        char *runner_path;              /* the runner binary, when the backend has one */
        char **partial_reasons;         /* why enforcement is partial, one sentence each; NULL when full */
        char **notes;                   /* facts a caller should know (its temp area per mode), one sentence each */
        char **network;                 /* the network policies it holds here: "on", "off", "allow-list" */
} dsh_backend_status;

typedef struct dsh_probe_report {
        dsh_backend_status *backends;   /* every backend this host could use, probed functionally */
        size_t backend_count;
        int landlock_abi;               /* the kernel's Landlock ABI, or a negative errno */
        /*
         * The Landlock scopes every command confined by Landlock runs under,
         * and those this kernel's ABI cannot request (both are known scopes:
         * "abstract-unix-socket", a command cannot connect to an abstract
         * unix socket of a process outside its sandbox; "signal", it cannot
         * signal one).  NULL-terminated; NULL when empty.  A missing scope is
         * a fact about process reach, not about file effects: it does not
         * make Landlock's enforcement partial.
         */
        char **landlock_scopes;
        char **landlock_scopes_missing;
        char *selected;                 /* what this provider's chain selects; NULL: nothing usable */
        /*
         * The secrets every confined call of this provider holds back
         * (docs/secrets.md): the masked entries as configured (the defaults
         * when nobody configured them), whether a mask not held refuses the
         * call, the environment's deny patterns and allowed names.  Each a
         * NULL-terminated vector (empty: none), never NULL after a probe.
         */
        char **secrets_masked_paths;
        bool secrets_require_masks;
        char **secrets_environment_deny;
        char **secrets_environment_allow;
} dsh_probe_report;

#define DSH_PROBE_REPORT_INIT { NULL, 0, 0, NULL, NULL, NULL, NULL, false, NULL, NULL }

/*
 * Probes every known backend (and the operator's runner command when one is
 * set) and says which one the provider's chain selects.  The selection
 * becomes the provider's cached verdict (and is persisted when the verdict
 * cache is enabled and the probe was clean).  `report` must be
 * DSH_PROBE_REPORT_INIT; clear it with dsh_probe_report_clear().  Returns 0
 * or -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_probe(dsh_provider *provider, dsh_probe_report *report, dsh_error *error);

DSH_PUBLIC void dsh_probe_report_clear(dsh_probe_report *report);

/*
 * Absolute paths (files or directories) that a confined command must never
 * create, change, remove or repoint, even beneath a writable root: the
 * sandbox's own configuration, session state and caches, whose change would
 * widen later calls (a `runnerCommand` written into the config, a
 * `sandbox/mode` event appended to the command's own session).  Per call,
 * under bwrap each one beneath a writable root is bound read-only over it (a
 * missing one is first created as an empty directory, mode 0700) and every
 * directory between the root and it is pinned (bound onto itself), so
 * neither it nor an ancestor can be renamed away and replaced; Landlock,
 * which can only grant, refuses such a policy with
 * SANDBOX_PREPARATION_FAILED.  Every backend refuses a writable root that
 * lies inside a protected path, and a route to one through a symlink that
 * lies beneath a writable root (the command could repoint it).  A runner
 * command is the operator's to configure and is not checked.  Replaces the
 * previous list; NULL clears it.  Returns 0, -EINVAL (a relative path) or -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_protected_paths(dsh_provider *provider, char *const *paths, dsh_error *error);

/*
 * Absolute paths of programs that later calls run to confine commands (a
 * front end's own executable, e.g. /proc/self/exe of `dsh-sandbox`).  Every
 * backend refuses a writable root that contains one of them, as it does for
 * the runners it knows itself (bwrap where the trusted lookup finds it,
 * landlock-run, dsh-sandbox-exec) and the dynamic loader's libraries and
 * configuration.  Replaces the previous list; NULL clears it.
 */
DSH_PUBLIC int dsh_provider_set_protected_executables(dsh_provider *provider, char *const *paths, dsh_error *error);

/*
 * Names relative to every writable root that a confined command must not
 * change (the defaults below; NULL or an empty list turns the protection
 * off).  A name starting with "~/" names a place in the user's home instead
 * ($HOME and the passwd entry's), protected only where a writable root is
 * that home or an ancestor of it.  A name starting with ".git/" is also
 * applied to the real git directory and common directory of a linked
 * worktree or submodule checkout, and to the git directories of submodules.
 * bwrap binds each existing one read-only and pins its ancestors (and makes
 * a linked worktree's git directories writable, so git keeps working).  A
 * missing ".git/" one cannot be held back without creating it on the host:
 * the call reports enforcement "partial" with the reason; a missing other
 * one is kept absent: when dsh-sandbox spawns the command under bwrap, one
 * the command created is moved aside once the command is gone (a warning
 * says so), and the file guard refuses to create it.  Landlock cannot hold
 * any back: a call whose roots hold an existing one (or a git directory)
 * reports "partial".  With `required`, each "partial" of these is a refusal
 * (SANDBOX_PREPARATION_FAILED).  Returns 0 or -EINVAL (an absolute name, an
 * empty, "." or ".." component).
 */
/*
 * The default protected subpaths, NULL-terminated: ".git/hooks",
 * ".git/config"; the agents' launch configuration ".mcp.json", ".claude",
 * ".codex", ".cursor", ".gemini", ".vscode", ".idea", ".agents",
 * ".gitmodules", ".envrc", ".husky"; and in the home "~/.bashrc",
 * "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
 * "~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.gitconfig", "~/.config/git",
 * "~/.local/bin", "~/.npmrc", "~/.pypirc".
 */
DSH_PUBLIC const char *const *dsh_provider_default_protected_subpaths(void);

DSH_PUBLIC int dsh_provider_set_protected_subpaths(dsh_provider *provider, const char *const *subpaths, bool required,
                                                   dsh_error *error);

/*
 * Secrets (docs/secrets.md).  The masked entries of every confined call
 * (dsh_mask_entry_check(); the config's `maskedPaths`, default
 * dsh_default_masked_paths(); NULL or an empty list: none), to which each
 * call's policy may add its own.  bwrap presents an existing masked file as
 * an empty read-only file and a masked directory as an empty read-only
 * directory, and keeps names that do not exist yet (or that a wildcard could
 * match later) unreadable; Landlock grants read on everything else and so
 * refuses reading a masked path (EACCES).  A mask a backend cannot hold (one
 * inside a writable root under Landlock, too many entries to enumerate, ...)
 * makes the call "partial" naming it — or, with `required` (`requireMasks`),
 * refuses it with SANDBOX_PREPARATION_FAILED.  The file guard refuses every
 * operation on a masked path.  Replaces the previous list.  Returns 0,
 * -EINVAL (an entry dsh_mask_entry_check() refuses) or -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_masked_paths(dsh_provider *provider, const char *const *entries, bool required,
                                             dsh_error *error);

/*
 * The environment rules of every confined call: variables whose names match
 * a `deny` pattern (default dsh_default_environment_deny(); an empty list:
 * none) are removed from the command's environment, unless `allow` (or the
 * call's policy) names them.  The patterns are checked with
 * dsh_environment_pattern_check().  Replaces the previous rules; NULL `deny`
 * restores the default.  Returns 0, -EINVAL or -ENOMEM.
 */
DSH_PUBLIC int dsh_provider_set_environment_rules(dsh_provider *provider, const char *const *deny,
                                                  const char *const *allow, dsh_error *error);

/*
 * What dsh_provider_confine(), dsh_provider_spawn() and dsh_provider_exec()
 * return on failure: the negative of the errno_value their `error` carries
 * (with `error` NULL, of the one it would have carried), by code:
 *   SANDBOX_UNAVAILABLE           -ENOSYS, whatever failed (no usable
 *                                 backend, a runner or the in-process
 *                                 confinement failing before exec: its
 *                                 reason is in the message);
 *   INVALID_INPUT                 -EINVAL (an empty argv, a mode a provider
 *                                 does not confine, for confine);
 *   SANDBOX_INVALID_ROOT, SANDBOX_INVALID_TEMP_ROOT,
 *   SANDBOX_PREPARATION_FAILED    the errno behind the refusal (ENOENT,
 *                                 ENOTDIR, ELOOP, EPERM, EINVAL, ...);
 *   EXEC_FAILED                   the exec's errno (ENOENT, EACCES, ...);
 *   SYSTEM                        the failed call's errno (ENOMEM, EMFILE, ...);
 * and, for dsh_provider_exec() only, -EOPNOTSUPP with `error` untouched.
 * No other value leaves the provider.
 */

/*
 * Wraps `argv` (non-empty) so it runs confined under `policy`.  The policy
 * must be confined (read-only or workspace-write); it is checked and
 * canonicalized per call (dsh_policy_prepare) before any argv is built.
 * `out` must be cleared; on success it owns the result.  Returns 0, or a
 * negative errno with `error` set (SANDBOX_UNAVAILABLE when no backend is
 * usable, SANDBOX_INVALID_ROOT / SANDBOX_PREPARATION_FAILED for bad policy).
 */
DSH_PUBLIC int dsh_provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                    dsh_confined_argv *out, dsh_error *error);

/* ------------------------------------------------------------ spawning -- */

typedef struct dsh_spawn_options {
        int stdin_fd;       /* -1: inherit */
        int stdout_fd;      /* -1: inherit */
        int stderr_fd;      /* -1: inherit */
        bool new_session;   /* setsid() in the child: no controlling terminal */
        /*
         * setpgid(0, 0) in the child, first of all (a new session is a new
         * group already): the spawned process leads a process group of its
         * own, so signals the terminal generates for the caller's group
         * (Ctrl-C, Ctrl-\) reach only the caller, which passes them on to
         * dsh_child.process_group itself.  The bwrap backend always starts
         * its runner this way: bwrap sharing the caller's group would die of
         * Ctrl-C and take the command with it before the command could
         * handle the signal.  Note that a process outside the terminal's
         * foreground group is stopped (SIGTTIN) when it reads the terminal.
         */
        bool new_process_group;
        /*
         * PR_SET_PDEATHSIG(SIGKILL) in the child: the command is killed when
         * the thread that spawned it ends.  For a front end that stands in
         * for the command (`dsh-sandbox run`): a SIGKILL to it, which it
         * cannot pass on, still ends the command as it would have ended a
         * command exec'd in its place.  Not for a caller whose spawning
         * thread may end before the command does.
         */
        bool die_with_parent;
        /*
         * stdin is a terminal the caller made for this command (a pty whose
         * other side it serves, as `dsh-sandbox run` does at a terminal): the
         * command takes it as its controlling terminal, in a session of its
         * own, so an interactive shell inside keeps job control.  Nothing of
         * the caller's own terminal, session or process groups is then in the
         * command's reach: a signal to its group, a stolen foreground, a line
         * discipline set, all land on that pty.  Under bwrap the last step
         * inside (dsh-sandbox-exec) calls setsid() and TIOCSCTTY; elsewhere
         * the child does, before it is confined.
         */
        bool controlling_terminal;
        /*
         * The directory the command starts in: an open directory fd (O_PATH
         * is enough; the caller keeps it), or -1 for the caller's cwd.  The
         * command enters what the fd names, never a path looked up again by
         * the host: fchdir() in the child before it is confined, except
         * under bwrap, whose runner stays in the caller's cwd and is told
         * the fd's path (--chdir), so the command lands on the sandbox's own
         * mount of it (a host cwd inherited into the sandbox would let
         * relative writes bypass its read-only binds).  A directory the
         * sandbox does not show is a runner failure, never another cwd.
         */
        int cwd_fd;
} dsh_spawn_options;

#define DSH_SPAWN_OPTIONS_INIT { -1, -1, -1, false, false, false, false, -1 }

/*
 * A spawned command, opaque: created by dsh_provider_spawn(), released by
 * dsh_child_free().  Its facts describe how it was confined: the backend,
 * the enforcement, and the dialect its stderr is read in (their argv is the
 * argv actually executed).  For danger-full-access the backend is "none"
 * and no dialect is set.
 */
typedef struct dsh_child dsh_child;

/*
 * The process spawned: the command itself (danger-full-access), the runner
 * that runs it (bwrap), or under Landlock the call's stand-in, the process
 * between the caller and the command that ends whatever the command leaves
 * running when it ends (docs/backends.md, "Landlock: nothing outlives its
 * call").  Its wait status is the command's.
 */
DSH_PUBLIC pid_t dsh_child_pid(const dsh_child *child);

/*
 * Where signals for the command go: kill(-group, sig) when non-zero (bwrap:
 * the sandbox's own process group; a child spawned with new_session or
 * new_process_group: its own), else the child shares the caller's group and
 * kill(pid, sig) reaches it.
 */
DSH_PUBLIC pid_t dsh_child_process_group(const dsh_child *child);

/*
 * Sends `signal_number` to a spawned command, given its dsh_child_pid()
 * (`runner`) and dsh_child_process_group() (`group`, 0: none) taken while
 * the child was known: to the group, else to the runner.  Where the group
 * is a sandbox's (bwrap: group != runner) and the signal cannot reach the
 * command — the sandbox is still starting: its init has not made the group,
 * or not yet forked the command's process into it — the sandbox is ended
 * (SIGKILL to its init) and the runner gets the signal: the command had not
 * been exec'd, so this is a cancellation before the start.  SIGKILL always
 * ends the sandbox's init, the group and the runner.  For the caller that
 * spawned the child, only while the runner is not reaped (its pid, and the
 * sandbox's init's, are then still theirs).  A runner that dies of the
 * signal (or whose sandbox does) before the command was exec'd is reported
 * by dsh_child_wait() as a runner failure: the caller, who sent the signal,
 * knows better.  A Landlock stand-in this process spawned is never sent
 * SIGKILL: for SIGKILL it is asked (SIGRTMAX) to kill the command and then
 * what the command left; a SIGKILL sent to its pid by other means ends the
 * command but orphans those.  Async-signal-safe (open, read, close, kill,
 * waitid; errno is not preserved): a signal handler that passes signals on
 * can call it with values it keeps in sig_atomic_t.
 */
DSH_PUBLIC void dsh_signal_command(pid_t runner, pid_t group, int signal_number);

/* How the command was confined; owned by the child. */
DSH_PUBLIC const dsh_confined_argv *dsh_child_facts(const dsh_child *child);

/* The mode the command runs under. */
DSH_PUBLIC dsh_mode dsh_child_mode(const dsh_child *child);

/*
 * An out-of-band channel proved the command was exec'd: the runner's status
 * channel (bwrap's --json-status-fd), known after dsh_child_wait(), or the
 * in-process spawn's own pre-exec report (Landlock, danger-full-access),
 * known from the start.  When true, no stderr line can make the run a runner
 * failure; when false, the backend has no such channel (an operator's runner
 * command) or it did not report an exec.
 */
DSH_PUBLIC bool dsh_child_command_started(const dsh_child *child);

/* After dsh_child_wait(): the runner exited without running the command (see dsh_child_runner_error()). */
DSH_PUBLIC bool dsh_child_runner_failed(const dsh_child *child);

/*
 * After dsh_child_wait(): what the sandbox undid or noticed once the command
 * was gone, one sentence each (NULL-terminated, owned by the child; empty
 * when nothing) — e.g. a `.git/commondir` the command created, which would
 * have redirected git's hooks, moved aside.  A caller shows them to the user.
 */
DSH_PUBLIC const char *const *dsh_child_warnings(const dsh_child *child);

/*
 * One write the sandbox refused the command: the operation ("open",
 * "mkdir", "rename", "chmod", "chown", "utimes", "setxattr"..., and
 * "connect" for a unix socket), its path (absolute, as the supervisor
 * resolved it against the command's cwd or directory fd; a socket by where
 * a symlink led; an abstract unix address "@name", a NUL in it written
 * \x00, an unnamed one "@"), and the rule that refused it: "outside-roots"
 * (beneath no writable root of the call), "protected-subpath" (.git/hooks,
 * .git/config, the agent's launch config...), "own-file" (the sandbox's own
 * files), "masked-path" (a path the policy masks), "unix-socket" (a
 * pathname socket neither allow-listed nor in one of the call's own
 * writable roots), "abstract-socket" (an abstract or unnamed unix address,
 * never reached).  The enforcing layer writes these
 * records (the supervisor, which refused or watched the call), never the
 * command: unlike a line on stderr, a command cannot forge one.
 */
typedef struct dsh_write_refusal {
        char *op;
        char *path;
        char *rule;
} dsh_write_refusal;

/* The records kept per call; past them only a count. */
#define DSH_WRITE_REFUSALS_MAX 64

/*
 * After dsh_child_wait(): the writes refused to the command, in the order
 * they were refused (a refusal the same as the one before it is kept once),
 * at most DSH_WRITE_REFUSALS_MAX; `*dropped` (may be NULL) receives how
 * many more there were.
 * `*refusals` (may be NULL) points into the child, valid until
 * dsh_child_free(); it is NULL when there is none.  Returns the count.  Not
 * every refusal is here: one made where no supervisor looks has no record
 * (a call the filter refuses itself: an AF_UNIX datagram socket, a set-id
 * creation; a read the kernel refuses: a masked path; under Landlock
 * read-only a metadata change where the host forbids the supervisor to
 * read the command), so an empty list does not prove the command was
 * refused nothing.  Under danger-full-access, and for
 * a runner command, always empty.
 */
DSH_PUBLIC size_t dsh_child_refusals(const dsh_child *child, const dsh_write_refusal **refusals,
                                     unsigned long *dropped);

/*
 * After dsh_child_wait(): the paths the sandbox keeps absent (a protected
 * subpath that did not exist: .git/hooks, .mcp.json, a home's startup file)
 * that the command created, each moved aside once the command was gone (its
 * sentence in dsh_child_warnings()), by their original absolute names, in
 * the order they were moved; a symlink the command planted on the way to
 * one is among them.  The cleanup writes these, never the command.
 * `*paths` (may be NULL) points into the child, NULL-terminated, valid
 * until dsh_child_free(); NULL when there is none.  Returns the count.  One
 * that could not be moved aside is not here (it is in the warnings, which
 * say to remove it).  Under danger-full-access, and for a runner command,
 * always empty.
 */
DSH_PUBLIC size_t dsh_child_moved_aside_paths(const dsh_child *child, const char *const **paths);

/*
 * One connection, DNS query or proxied request the sandbox refused the
 * command on the network (docs/network.md, "Records"): `op` "connect" (a
 * connect, a send to an address, a connection the proxy captured), "dns" (a
 * query the DNS stub refused) or "http" (a request to the proxy); `host` a
 * name or an address in its text form; `port` (0 when none applies); and
 * the `rule`: "network-off", "host-not-allowed", "address-not-resolved",
 * "metadata-address", "sni-mismatch", "protocol-not-allowed", "local-port",
 * "bad-request"; and the `source`, the layer that refused: "supervisor" (a
 * connect or send the seccomp supervisor refused) or "proxy" (the network
 * service: a DNS stub query, an HTTP proxy request, a connection the proxy
 * captured and refused).  Written by the enforcing layer, never by the
 * command.  (The name `dsh_network_refusal` is the supervisor's own record,
 * core/network-refusals.h.)
 */
typedef struct dsh_refused_connection {
        char *op;
        char *host;
        int port;
        char *rule;
        char *source;                   /* NULL only in a result decoded from a peer that did not send it */
} dsh_refused_connection;

/* The records kept per call; past them only a count. */
#define DSH_REFUSED_CONNECTIONS_MAX 64

/*
 * After dsh_child_wait(): what the network policy refused the command, in
 * order (a record the same as the one before it is kept once), at most
 * DSH_REFUSED_CONNECTIONS_MAX; `*dropped` (may be NULL) receives how many
 * more there were.  `*refusals` (may be NULL) points into the child, valid
 * until dsh_child_free(); NULL when there is none.  Returns the count.
 * Always empty under the network policy "on", under danger-full-access and
 * for a runner command.  A refusal made where no supervisor looks (a socket
 * family the filter refuses by itself, a call of an argv nobody supervises)
 * has no record.
 */
DSH_PUBLIC size_t dsh_child_network_refusals(const dsh_child *child, const dsh_refused_connection **refusals,
                                             unsigned long *dropped);

/*
 * Spawns `argv` confined under `policy` (or unconfined, on purpose, under
 * danger-full-access).  Returns once the command has been exec'd: a failure
 * before that is reported here and the command never ran —
 * SANDBOX_UNAVAILABLE (with " Runner failure: <detail>") when confinement
 * could not be applied, DSH_ERROR_EXEC_FAILED with errno_value ENOENT or
 * EACCES when the program could not be executed.  Every fd above 2 is closed
 * in the child.  On success `*child_out` is a new child the caller waits for
 * with dsh_child_wait() and releases with dsh_child_free(); on failure it is
 * left NULL.
 */
DSH_PUBLIC int dsh_provider_spawn(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                  const dsh_spawn_options *options, dsh_child **child_out, dsh_error *error);

/*
 * Replaces the calling process with `argv` confined under `policy` (unconfined
 * under danger-full-access), like execvp(): it returns only on failure, with
 * the same errors as dsh_provider_spawn(), and the command never ran.  Every
 * fd above 2 is closed first.  On failure the calling process may already be
 * restricted: it should only report the error and exit.
 *
 * No backend confines a command in place any more: bwrap and a runner
 * command need a parent that stays to tell the runner's failures from the
 * command's, and Landlock needs one to host its supervisor, which performs
 * the command's connect calls in both modes and its metadata changes under
 * workspace-write, and the stand-in that ends what the command leaves
 * (docs/supervisor.md).  So under read-only and workspace-write it returns
 * -EOPNOTSUPP as soon as a backend is selected (the selection, which may
 * probe, is the provider's verdict that the spawn then reuses), before the
 * policy is prepared: with `error` untouched and nothing else done, and the
 * caller uses dsh_provider_spawn() instead.  Without a usable backend it
 * fails as dsh_provider_spawn() would.
 *
 * `announce` (may be NULL) was called with the facts of an in-place
 * confinement before it was applied; with none left, it is never called.
 */
typedef void (*dsh_exec_announce_fn)(const dsh_confined_argv *facts, void *data);

DSH_PUBLIC int dsh_provider_exec(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                 dsh_exec_announce_fn announce, void *announce_data, dsh_error *error);

/*
 * Waits for the child (retrying EINTR); `*wait_status` is waitpid()'s status.
 * Returns 0 or a negative errno.  When the child is a runner with an
 * out-of-band status channel (bwrap) and the channel shows that the command
 * was never exec'd, dsh_child_runner_failed() is true: the status is the
 * runner's, not the command's (see dsh_child_runner_error()).
 */
DSH_PUBLIC int dsh_child_wait(dsh_child *child, int *wait_status);

/*
 * For a front end that stands in for the command it waited for: ends like
 * the child whose waitpid() status is `wait_status`.  Returns its exit code
 * for a normal exit (125 for a status that is neither an exit nor a death);
 * for a death by signal N, dies of N itself (disposition reset, N unblocked,
 * no core dump of the caller's own), so that a shell sees "killed by N".  A
 * signal whose default does not end a process cannot: then returns 128+N.
 */
DSH_PUBLIC int dsh_end_like_child(int wait_status);

/*
 * After dsh_child_wait(): 0 when the command ran (or nothing says otherwise),
 * else -ENOSYS with `error` set to SANDBOX_UNAVAILABLE and
 * " Runner failure: <detail>" — the runner failed before exec and the
 * command never ran; its exit status must not be read as the command's —
 * or the negative errno with DSH_ERROR_EXEC_FAILED when the runner reported,
 * out of band, that the program could not be executed inside the sandbox
 * (ENOENT: not found, 127; anything else: 126).
 */
DSH_PUBLIC int dsh_child_runner_error(const dsh_child *child, dsh_error *error);

/* Releases the child (closing what it holds); it does not wait for or kill the process.  NULL is a no-op. */
DSH_PUBLIC void dsh_child_free(dsh_child *child);

#ifdef __cplusplus
}
#endif

#endif
