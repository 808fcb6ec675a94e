/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the process-sandbox seam.
 *
 * The vocabulary every other part of the library speaks: modes, enforcement,
 * the per-call execution policy, the confined argv a provider returns, the
 * runner-failure classification, and the typed error that carries the spec's
 * codes and exact messages.
 *
 * Conventions for the whole API:
 *   - Functions that can fail return 0 (or a non-negative value) on success and
 *     a negative errno on failure; when they take a `dsh_error *`, it is filled
 *     with the spec's code and message (it may be NULL when the caller only
 *     wants the errno).
 *   - String vectors (`char **`) are NULL-terminated.
 *   - Nothing here prints, exits or aborts: the library is safe to keep loaded
 *     in a long-running harness process.
 */
#ifndef DSH_SANDBOX_SANDBOX_H
#define DSH_SANDBOX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DSH_PUBLIC __attribute__((visibility("default")))

/* ---------------------------------------------------------------- modes -- */

/* File-effect modes.  The network is a dimension of its own (dsh_network_policy); process visibility is outside this vocabulary. */
typedef enum dsh_mode {
        DSH_MODE_READ_ONLY = 0,
        DSH_MODE_WORKSPACE_WRITE,
        DSH_MODE_DANGER_FULL_ACCESS,
} dsh_mode;

#define DSH_MODE_COUNT 3

/* Every mode's name, in order, NULL-terminated: "read-only", "workspace-write",
 * "danger-full-access".  The spec's SANDBOX_MODES. */
DSH_PUBLIC extern const char *const dsh_sandbox_modes[DSH_MODE_COUNT + 1];

/* Parses a mode name (exact, case-sensitive).  Returns 0, or -EINVAL. */
DSH_PUBLIC int dsh_mode_parse(const char *name, dsh_mode *mode_out);

/* The mode's spec name; a static string, never NULL. */
DSH_PUBLIC const char *dsh_mode_name(dsh_mode mode);

/* True for read-only and workspace-write: the only modes a provider ever sees. */
DSH_PUBLIC bool dsh_mode_is_confined(dsh_mode mode);

/* True when `wider` grants strictly more than `narrower` (the escalation order). */
DSH_PUBLIC bool dsh_mode_is_wider(dsh_mode wider, dsh_mode narrower);

typedef enum dsh_enforcement {
        DSH_ENFORCEMENT_FULL = 0,
        DSH_ENFORCEMENT_PARTIAL,
} dsh_enforcement;

/* "full" or "partial"; a static string. */
DSH_PUBLIC const char *dsh_enforcement_name(dsh_enforcement enforcement);

/* --------------------------------------------------------------- errors -- */

typedef enum dsh_error_code {
        DSH_ERROR_NONE = 0,
        DSH_ERROR_SANDBOX_UNAVAILABLE,
        DSH_ERROR_SANDBOX_PREPARATION_FAILED,
        DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT,
        DSH_ERROR_SANDBOX_INVALID_ROOT,
        DSH_ERROR_FS_SANDBOX_DENIED,
        DSH_ERROR_INVARIANT,      /* a durable record breaks the vocabulary */
        DSH_ERROR_INVALID_INPUT,  /* bad caller input that has no spec code */
        DSH_ERROR_SYSTEM,         /* an operating-system failure; see errno_value */
        DSH_ERROR_EXEC_FAILED,    /* the program could not be executed (errno_value: ENOENT, EACCES, ...) */
        /* The file guard's own (dsh-sandbox/file-guard.h): what a guarded operation found, not a denial. */
        DSH_ERROR_FS_NOT_FOUND,         /* the entry, or a directory on the way, does not exist */
        DSH_ERROR_FS_NOT_A_DIRECTORY,   /* a component on the way is not a directory */
        DSH_ERROR_FS_IS_A_DIRECTORY,    /* a file operation names a directory */
        DSH_ERROR_FS_ALREADY_EXISTS,    /* a create-only write, a mkdir, a no-replace move found the entry */
        DSH_ERROR_FS_NOT_EMPTY,         /* a directory removed or replaced without recursion holds entries */
        DSH_ERROR_FS_TEXT_NOT_FOUND,    /* an edit's text does not occur in the file */
        DSH_ERROR_FS_TEXT_NOT_UNIQUE,   /* an edit's text occurs more than once, and one replacement was asked */
        DSH_ERROR_FS_TOO_LARGE,         /* a read of a whole file over the read limit (read a range instead) */
} dsh_error_code;

/*
 * A typed error.  `message` is owned by the error and freed by
 * dsh_error_clear(); it is the exact text the spec fixes for coded errors.
 */
typedef struct dsh_error {
        dsh_error_code code;
        int errno_value;  /* positive errno behind the failure, or 0 */
        char *message;
} dsh_error;

#define DSH_ERROR_INIT { DSH_ERROR_NONE, 0, NULL }

/* The code string: the spec's codes ("SANDBOX_UNAVAILABLE", ...) and the file
 * guard's own ("FS_NOT_FOUND", ...), or NULL for the generic codes (invalid
 * input, system errors, invariant, exec failure). */
DSH_PUBLIC const char *dsh_error_code_name(dsh_error_code code);

/* Frees the message and resets the error to DSH_ERROR_INIT.  NULL is allowed. */
DSH_PUBLIC void dsh_error_clear(dsh_error *error);

/* ------------------------------------------------------- string vectors -- */

DSH_PUBLIC size_t dsh_strv_length(char *const *strv);
/* Frees every string and the vector.  NULL is allowed. */
DSH_PUBLIC void dsh_strv_free(char **strv);
/* Deep copy; NULL in gives an empty vector.  Returns NULL only on ENOMEM. */
DSH_PUBLIC char **dsh_strv_copy(char *const *strv);
/* Appends a copy of `value`.  Returns 0 or -ENOMEM (the vector is unchanged then). */
DSH_PUBLIC int dsh_strv_append(char ***strv, const char *value);

/* ---------------------------------------------------------------- text -- */

/*
 * True when the `length` bytes at `text` are valid UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), the only bytes a
 * JSON string can carry.  Paths and arguments are bytes: anything that
 * prints them as JSON checks them here and refuses what fails, rather than
 * dropping it.  When false, `*invalid_offset` (if not NULL) receives the
 * offset of the first byte that does not decode.
 */
DSH_PUBLIC bool dsh_text_is_utf8(const char *text, size_t length, size_t *invalid_offset);

/* ------------------------------------------------------------ network -- */

/*
 * The network dimension of a policy, beside the mode (docs/network.md).
 * Modes speak of file effects; the network is its own choice:
 *   - ON: today's behaviour and the default: the command reaches what the
 *     host reaches (unix sockets stay governed by the mode: socket-call);
 *   - OFF: nothing outside the sandbox, TCP or UDP, host loopback included;
 *     a loopback server the command starts itself is still reached, and so
 *     is each allowed local port;
 *   - ALLOW_LIST: the hosts the patterns name, through the call's proxy and
 *     DNS stub, plus each allowed local port; nothing else.
 */
typedef enum dsh_network_mode {
        DSH_NETWORK_ON = 0,
        DSH_NETWORK_OFF,
        DSH_NETWORK_ALLOW_LIST,
} dsh_network_mode;

/* "on", "off", "allow-list"; a static string, never NULL. */
DSH_PUBLIC const char *dsh_network_mode_name(dsh_network_mode mode);

/* Parses "on" or "off" (the CLI's and the config's words; the allow-list is
 * chosen by naming hosts).  Returns 0, or -EINVAL. */
DSH_PUBLIC int dsh_network_mode_parse(const char *name, dsh_network_mode *mode_out);

typedef struct dsh_network_policy {
        dsh_network_mode mode;
        /*
         * ALLOW_LIST: the host patterns ("host", "*.domain", each with an
         * optional ":port"; an IPv4 or bracketed IPv6 literal) and named sets
         * ("@npm"...), NULL-terminated; dsh_policy_prepare() expands the sets
         * and drops duplicates.  NULL means none.
         */
        char **allow_hosts;
        /* Host loopback TCP/UDP ports the command may reach under OFF and ALLOW_LIST. */
        unsigned short *allow_local_ports;
        size_t allow_local_port_count;
        /* "IP:PORT" of the resolver asked on the command's behalf; NULL: the host's first nameserver. */
        char *dns_upstream;
} dsh_network_policy;

#define DSH_NETWORK_POLICY_INIT { DSH_NETWORK_ON, NULL, NULL, 0, NULL }

/*
 * Checks one allow-list entry: a host pattern or a named set.  Refused:
 * "*" alone, a bare top-level name ("com", "*.com"), a scheme ("https://"),
 * a path, a port outside 1..65535, an empty label, a character a host name
 * cannot hold, an unknown named set.  Returns 0, or -EINVAL with `*reason`
 * (if not NULL) a static sentence saying what is wrong.
 */
DSH_PUBLIC int dsh_network_pattern_check(const char *pattern, const char **reason);

/*
 * The named sets, NULL-terminated ("@npm", "@pypi", "@github", ...), and one
 * set's patterns (NULL-terminated; NULL when `name` is no set).  Static.
 */
DSH_PUBLIC const char *const *dsh_network_named_sets(void);
DSH_PUBLIC const char *const *dsh_network_named_set(const char *name);

/* Checks a dnsUpstream value, "IPV4:PORT" or "[IPV6]:PORT".  Returns 0 or -EINVAL. */
DSH_PUBLIC int dsh_network_upstream_check(const char *upstream);

DSH_PUBLIC void dsh_network_policy_clear(dsh_network_policy *network);
/* Deep copy into `out` (which must be cleared).  Returns 0 or -ENOMEM. */
DSH_PUBLIC int dsh_network_policy_copy(dsh_network_policy *out, const dsh_network_policy *in);

/* ------------------------------------------------------------ secrets -- */

/*
 * Masked paths (docs/secrets.md).  An entry is an absolute path, "~/PATH"
 * or a relative PATH (both taken under each of the user's homes: $HOME and
 * the passwd entry's).  Its last component may hold the wildcards `*`, `?`
 * and `[...]`, which match names of that directory (never a name ending in
 * ".pub": a public key is not a secret, and ssh and git signing read it).
 * Refused: an empty entry, NUL, an empty, "." or ".." component, a wildcard
 * before the last component, "/" or a home itself.  Returns 0, or -EINVAL
 * with *reason (static) set.
 */
DSH_PUBLIC int dsh_mask_entry_check(const char *entry, const char **reason);

/*
 * The default masked entries, NULL-terminated, in the order docs/secrets.md
 * lists them: SSH private keys, cloud and cluster credentials, netrc and git
 * credentials, gh's hosts file, GnuPG, pass, the keyrings, npm's and PyPI's
 * user files, and the credential files of the agents that run us.
 */
DSH_PUBLIC const char *const *dsh_default_masked_paths(void);

/*
 * Environment patterns: a variable name, or a shell wildcard over names
 * (`*`, `?`), matched without regard to case.  The default deny patterns,
 * NULL-terminated ("*_TOKEN", "*_SECRET", "*_SECRET_*", "*PASSWORD*",
 * "*_API_KEY", ..., "SSH_AUTH_SOCK"; docs/secrets.md lists them).  A
 * variable matching a deny pattern is removed from a confined command's
 * environment unless its name is allowed.  SSH_AUTH_SOCK is denied by
 * default and let through only when the socket it names is one of the
 * policy's allowed_unix_sockets (nothing else would let the command reach it).
 */
DSH_PUBLIC const char *const *dsh_default_environment_deny(void);

/* Checks a deny pattern or an allowed name: non-empty, only [A-Za-z0-9_*?]
 * (no wildcard in an allowed name).  Returns 0, or -EINVAL with *reason set. */
DSH_PUBLIC int dsh_environment_pattern_check(const char *pattern, bool allow_wildcards, const char **reason);

/* ------------------------------------------------------------- policy -- */

/*
 * The complete file-effect policy of one capability call.  All strings are
 * owned by the policy; dsh_policy_clear() frees them.
 */
typedef struct dsh_policy {
        dsh_mode mode;
        char *workspace_root;               /* absolute */
        char **additional_writable_roots;   /* absolute dirs; NULL means none */
        char *session_id;                   /* NULL for agentless calls */
        char **allowed_unix_sockets;        /* absolute paths of unix sockets the command may connect to
                                               wherever they lie (ssh-agent's); NULL means none */
        dsh_network_policy network;         /* the network dimension; ON when zeroed */
        /*
         * Secrets (docs/secrets.md).  Masks this call adds to the
         * deployment's (dsh_provider_set_masked_paths()), each an entry as
         * dsh_mask_entry_check() accepts; and names of environment variables
         * this call lets through although a deny pattern matches them.
         * NULL means none.  Neither applies under danger-full-access.
         */
        char **masked_paths;
        char **allowed_environment;
} dsh_policy;

#define DSH_POLICY_INIT { DSH_MODE_READ_ONLY, NULL, NULL, NULL, NULL, DSH_NETWORK_POLICY_INIT, NULL, NULL }

DSH_PUBLIC void dsh_policy_clear(dsh_policy *policy);
/* Deep copy into `out` (which must be cleared).  Returns 0 or -ENOMEM. */
DSH_PUBLIC int dsh_policy_copy(dsh_policy *out, const dsh_policy *in);

/*
 * Checks a policy before any argv is built or any process spawned, and
 * rewrites it into the form backends grant:
 *   - the workspace root must be absolute and free of NUL (SANDBOX_INVALID_ROOT);
 *     it is canonicalized with filesystem semantics (realpath, so `link/..`
 *     lands where chdir lands) when it exists;
 *   - under workspace-write the root must exist and be a directory;
 *   - each additional writable root must be absolute, exist, be a directory and
 *     not be a symlink (SANDBOX_PREPARATION_FAILED names the offending path);
 *     duplicates are dropped.
 *   - each allowed unix socket must be absolute and name a socket
 *     (SANDBOX_PREPARATION_FAILED names the offending path);
 *   - each masked path must pass dsh_mask_entry_check() and each allowed
 *     environment name dsh_environment_pattern_check() without wildcards
 *     (DSH_ERROR_INVALID_INPUT naming the entry); duplicates are dropped;
 *   - the network: every allow-list entry must pass
 *     dsh_network_pattern_check() and dns_upstream
 *     dsh_network_upstream_check() (DSH_ERROR_INVALID_INPUT naming the
 *     entry); named sets are expanded, duplicates dropped; a mode other
 *     than ON with danger-full-access is SANDBOX_UNAVAILABLE (nothing
 *     confines that mode, so nothing could hold the network back);
 * Returns 0 or a negative errno with `error` filled.
 */
DSH_PUBLIC int dsh_policy_prepare(dsh_policy *policy, dsh_error *error);

/* ---------------------------------------------------- confined argv -- */

/* Evidence that a runner failed before it executed the command (docs/backends.md, "the runner-failure rule"). */
typedef struct dsh_runner_failure_rule {
        int *allowed_exit_codes;        /* NULL/0 length: any nonzero exit */
        size_t allowed_exit_code_count;
        char **fatal_signatures;        /* non-empty substrings */
        char **informational_lines;     /* whole lines excluded first; may be NULL */
} dsh_runner_failure_rule;

typedef struct dsh_confined_argv {
        char **argv;                    /* runner, profile, "--", the caller's argv */
        dsh_enforcement enforcement;
        char **denial_signatures;       /* the selected backend's dialect only */
        dsh_runner_failure_rule *runner_failure_rules;
        size_t runner_failure_rule_count;
        char *backend;                  /* "landlock", "bwrap", "runner-command", ... */
        char **partial_reasons;         /* why enforcement is "partial", one sentence each; NULL when full */
        char *network;                  /* the network policy held: "on", "off", "allow-list" (NULL: not set) */
        /*
         * The secrets held back: `masked`, the canonical paths masked for
         * this call (existing or not; a wildcard entry as the names it
         * matched plus the entry itself); `environment_removed`, the names
         * removed from the environment the caller gave (spawn), or from the
         * confining process's own (confine: the launcher removes them again
         * from whatever environment the harness spawns it with).  NULL: none.
         */
        char **masked;
        char **environment_removed;
} dsh_confined_argv;

#define DSH_CONFINED_ARGV_INIT { NULL, DSH_ENFORCEMENT_FULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL }

DSH_PUBLIC void dsh_confined_argv_clear(dsh_confined_argv *confined);

/* Appends a rule (deep-copied).  Returns 0 or -ENOMEM. */
DSH_PUBLIC int dsh_confined_argv_add_rule(dsh_confined_argv *confined,
                                          const int *allowed_exit_codes, size_t allowed_exit_code_count,
                                          const char *const *fatal_signatures,
                                          const char *const *informational_lines);

/* Marks the facts "partial" and appends why (copied).  Returns 0 or -ENOMEM. */
DSH_PUBLIC int dsh_confined_argv_add_partial_reason(dsh_confined_argv *confined, const char *reason);

/* ----------------------------------------------------- classification -- */

/*
 * The runner-failure algorithm: requires a nonzero exit; applies each rule's
 * allowed exit codes; drops stderr lines equal (case-insensitively, whole
 * line) to an informational line; a remaining line containing a fatal
 * signature (case-insensitively) proves the runner failed.  Exit status alone
 * never proves it.  On a match, `*matched_line` (if not NULL) receives a newly
 * allocated copy of the line, owned by the caller.
 */
DSH_PUBLIC bool dsh_runner_failed(const dsh_runner_failure_rule *rules, size_t rule_count,
                                  int exit_code, const char *stderr_text, char **matched_line);

/*
 * A denial: nonzero exit and one of the backend's denial signatures
 * (case-insensitive substring) in stderr.  Callers check dsh_runner_failed()
 * first and never call a signal death a denial.
 */
DSH_PUBLIC bool dsh_is_denial(char *const *denial_signatures, int exit_code, const char *stderr_text);

#ifdef __cplusplus
}
#endif

#endif
