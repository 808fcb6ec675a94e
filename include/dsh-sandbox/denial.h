/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: denials — one typed record for every refusal the sandbox
 * makes, the narrowest grant that would allow it, and `why` (docs/denials.md).
 *
 * A denial is written by the layer that enforced it — the supervisor (a
 * write, a metadata change, a connect, a unix socket), the network service
 * (a DNS query, a proxied request), the file guard, the cleanup after the
 * command (a path the sandbox keeps absent, moved aside) — never taken from
 * text the command printed: a command can print any line, it cannot add a
 * record.  The bash tool says "denied" only when a record exists.
 *
 * Each record carries the grant: the narrowest one-call approval that would
 * have allowed it (an extra writable root, an allowed host, a wider mode),
 * or none (the sandbox's own files, a masked credential, a cloud metadata
 * address: nothing a model may ask for).  The grant is computed by dsh_why()
 * over the policy with the candidate added — the same decision code the file
 * guard uses and the backends' plan is made of — never guessed.
 */
#ifndef DSH_SANDBOX_DENIAL_H
#define DSH_SANDBOX_DENIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/provider.h"
#include "dsh-sandbox/runtime.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What was refused: the class of operation (the record's `call` names the system call or request). */
typedef enum dsh_denial_op {
        DSH_DENIAL_WRITE = 0,   /* "write": a file created, changed, removed, renamed, linked */
        DSH_DENIAL_METADATA,    /* "metadata": chmod, chown, utimes, xattrs */
        DSH_DENIAL_READ,        /* "read": a masked path read (the file guard) */
        DSH_DENIAL_CONNECT,     /* "connect": a TCP/UDP destination, or a unix socket (then `path`) */
        DSH_DENIAL_DNS,         /* "dns": a name the DNS stub refused to resolve */
        DSH_DENIAL_HTTP,        /* "http": a request the proxy refused */
} dsh_denial_op;

#define DSH_DENIAL_OP_COUNT (DSH_DENIAL_HTTP + 1)

/* "write", "metadata", "read", "connect", "dns", "http"; static, never NULL. */
DSH_PUBLIC const char *dsh_denial_op_name(dsh_denial_op op);
/* Parses one of those names.  Returns 0, or -EINVAL. */
DSH_PUBLIC int dsh_denial_op_parse(const char *name, dsh_denial_op *op_out);

/* Which layer refused (and wrote the record). */
typedef enum dsh_denial_source {
        DSH_DENIAL_SOURCE_SUPERVISOR = 0,       /* "supervisor": the seccomp supervisor of the call */
        DSH_DENIAL_SOURCE_PROXY,                /* "proxy": the call's network service (DNS stub, HTTP proxy) */
        DSH_DENIAL_SOURCE_FILE_GUARD,           /* "file-guard": the harness's own file tools */
        DSH_DENIAL_SOURCE_CLEANUP,              /* "cleanup": a path kept absent, moved aside after the command */
        DSH_DENIAL_SOURCE_KERNEL_AUDIT,         /* "kernel-audit": a Landlock audit record (corroboration only) */
        DSH_DENIAL_SOURCE_POLICY,               /* "policy": dsh_why()'s answer, nothing was tried */
} dsh_denial_source;

/* "supervisor", "proxy", "file-guard", "cleanup", "kernel-audit", "policy"; static, never NULL. */
DSH_PUBLIC const char *dsh_denial_source_name(dsh_denial_source source);
DSH_PUBLIC int dsh_denial_source_parse(const char *name, dsh_denial_source *source_out);

/* The narrowest thing that would allow it, for one call. */
typedef enum dsh_grant_kind {
        DSH_GRANT_NONE = 0,             /* "none": no per-call grant allows it; only the user, by configuration */
        DSH_GRANT_WRITABLE_ROOT,        /* "writable-root": `target` an extra writable root (--additional-write) */
        DSH_GRANT_ALLOWED_HOST,         /* "allowed-host": `target` "host" or "host:port" (--additional-host) */
        DSH_GRANT_UNIX_SOCKET,          /* "unix-socket": `target` the socket (--allow-unix-socket, configured) */
        DSH_GRANT_LOCAL_PORT,           /* "local-port": `target` the port (--allow-local-port, configured) */
        DSH_GRANT_MODE,                 /* "mode": only a wider mode allows it (`mode`) */
} dsh_grant_kind;

/* "none", "writable-root", "allowed-host", "unix-socket", "local-port", "mode"; static, never NULL. */
DSH_PUBLIC const char *dsh_grant_kind_name(dsh_grant_kind kind);
DSH_PUBLIC int dsh_grant_kind_parse(const char *name, dsh_grant_kind *kind_out);

typedef struct dsh_grant {
        dsh_grant_kind kind;
        /*
         * `widens`: the grant also needs the wider `mode` (a write outside
         * the workspace under read-only is "writable-root" DIR under
         * workspace-write: extra roots exist only there); always true for
         * "mode", false for "none".  Without it `mode` is the call's own.
         */
        bool widens;
        dsh_mode mode;
        char *target;                   /* owned; NULL for "none" and "mode" */
} dsh_grant;

typedef struct dsh_denial {
        dsh_denial_op op;
        char *call;                     /* "open", "rename", "chmod", "connect", "query", "CONNECT"...; owned, may be NULL */
        char *path;                     /* write, metadata, read, a unix socket's connect: absolute; owned; else NULL */
        char *host;                     /* connect, dns, http: a name or an address's text; owned; else NULL */
        int port;                       /* connect, http: the port; 0 when none applies */
        char *rule;                     /* docs/denials.md, "Rules": "outside-roots", "network-off", ...; owned */
        dsh_denial_source source;
        dsh_grant grant;
} dsh_denial;

#define DSH_DENIAL_INIT { DSH_DENIAL_WRITE, NULL, NULL, NULL, 0, NULL, DSH_DENIAL_SOURCE_SUPERVISOR, \
                          { DSH_GRANT_NONE, false, DSH_MODE_READ_ONLY, NULL } }

/* The records of one call: at most DSH_DENIALS_MAX, past them only `dropped`. */
#define DSH_DENIALS_MAX 64

typedef struct dsh_denials {
        dsh_denial *items;              /* owned; NULL when count is 0 */
        size_t count;
        unsigned long dropped;          /* refusals past the bound (or the layer's own bound) */
} dsh_denials;

#define DSH_DENIALS_INIT { NULL, 0, 0 }

DSH_PUBLIC void dsh_denial_clear(dsh_denial *denial);
DSH_PUBLIC void dsh_denials_clear(dsh_denials *denials);
/* Deep copy into `out` (DSH_DENIAL_INIT).  Returns 0 or -ENOMEM. */
DSH_PUBLIC int dsh_denial_copy(dsh_denial *out, const dsh_denial *in);
/*
 * Moves `denial` (taken: emptied either way) to the end of `denials`; past
 * `limit` records only `dropped` counts it.  A record equal to the last one
 * (op, call, path, host, port, rule) is not added again: a retry loop leaves
 * one record.  Returns 0 or -ENOMEM.
 */
DSH_PUBLIC int dsh_denials_take(dsh_denials *denials, dsh_denial *denial, size_t limit);

/*
 * One line for a person or a model: `write "/etc/x" (outside-roots):
 * grant --additional-write /etc`, `connect example.com:443 (host-not-allowed):
 * grant --additional-host example.com:443`, `write "/repo/.dsh" (own-file):
 * no grant, only the user can allow it`.  Non-UTF-8 and control bytes are
 * written \xNN.  Returns a new string, or NULL (out of memory).
 */
DSH_PUBLIC char *dsh_denial_describe(const dsh_denial *denial);

/* ----------------------------------------------------------------- why -- */

/*
 * Would `policy` allow `op` on `target`, and if not, why and what grant?
 * `target` is a path for write, metadata and read (absolute, or relative to
 * the workspace root; a path that does not exist yet is judged as the entry
 * it would create), and for connect "host:port", "IPV4:PORT", "[IPV6]:PORT"
 * or an absolute unix socket path.  dns and http are not asked here.
 * The answer is computed by the decision code the file guard runs over the
 * call's prepared plan (roots, shield, masks) and the network policy's host
 * rules — never a second implementation; dsh_denial_find_grant() uses it.
 * Returns 0 when allowed, 1 when denied (`denial_out`, DSH_DENIAL_INIT, is
 * filled, source "policy", with its grant), or a negative errno with
 * `error` set: INVALID_INPUT for a target that cannot be judged (empty, a
 * connect target without a port), the policy's refusals as the file guard
 * makes them (SANDBOX_INVALID_ROOT, ...).
 */
DSH_PUBLIC int dsh_why(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial_op op, const char *target,
                       dsh_denial *denial_out, dsh_error *error);

/*
 * Fills `denial->grant` for a record refused under `policy`: the narrowest of
 * (an extra writable root: the nearest existing directory of the path; an
 * allowed host; a wider mode) that dsh_why() allows, else none.  The
 * sandbox's own files, masked paths and the rules no grant may lift
 * (metadata-address, sni-mismatch, ...) are always none.  Returns 0 or a
 * negative errno (-ENOMEM) with `error` set.
 */
DSH_PUBLIC int dsh_denial_find_grant(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial *denial,
                                     dsh_error *error);

/*
 * After dsh_child_wait(): every record the child's enforcing layers wrote
 * (its write and metadata refusals, its network refusals, the paths moved
 * aside), as typed denials with their grants under `policy` (the policy the
 * child was spawned with), appended to `out`.  Returns 0 or a negative
 * errno with `error` set.
 */
DSH_PUBLIC int dsh_child_denials(dsh_runtime *runtime, const dsh_policy *policy, const dsh_child *child,
                                 dsh_denials *out, dsh_error *error);

/*
 * After a file-guard operation failed with FS_SANDBOX_DENIED: its record
 * (source "file-guard", op write or read, the canonical path, the rule, the
 * grant), moved into `denial_out` (DSH_DENIAL_INIT).  Returns 1 with a
 * record, 0 when the last operation left none (it was not refused by the
 * policy), or a negative errno with `error` set.
 */
DSH_PUBLIC int dsh_file_guard_take_denial(dsh_runtime *runtime, dsh_file_guard *guard, dsh_denial *denial_out,
                                          dsh_error *error);

/* ------------------------------------------------------------ sessions -- */

/* Denials a session keeps; past them the oldest go, and the session's count of dropped ones grows. */
#define DSH_SESSION_DENIALS_MAX 1024

/*
 * Appends `denials` (and their `dropped`) to the session `policy->session_id`
 * names, if any, through `runtime`'s store: durable, bounded, one record per
 * denial with the time and the surface ("bash", "fs", ...: 1 to 32 of
 * [a-z0-9._-], else INVALID_INPUT).  A policy without a session appends
 * nothing.  The store, its bound and its refusals: docs/sessions.md,
 * "Denials".  Returns 0 or a negative errno with `error` set (the caller
 * reports it as a warning: the call happened).
 */
DSH_PUBLIC int dsh_runtime_record_denials(dsh_runtime *runtime, const dsh_policy *policy, const char *surface,
                                          const dsh_denials *denials, dsh_error *error);

/* A session's kept denials, oldest first, and how many were dropped over its life. */
typedef struct dsh_session_denial {
        dsh_denial denial;
        long long at_ms;                /* when it was recorded (ms since the epoch) */
        char *surface;                  /* the tool that met it, whichever front end called it: "bash", "fs" */
} dsh_session_denial;

typedef struct dsh_session_denials {
        dsh_session_denial *items;
        size_t count;
        unsigned long long dropped;
} dsh_session_denials;

#define DSH_SESSION_DENIALS_INIT { NULL, 0, 0 }

/*
 * Session `session_id`'s kept denials into `out` (DSH_SESSION_DENIALS_INIT;
 * clear with dsh_session_denials_clear(), also after a failure).  Returns 0
 * (none recorded yet: count 0), or a negative errno with `error` set: the
 * id's and the session's errors as dsh_runtime_open_session() has them, a
 * store that is not a regular file or is corrupt (INVARIANT, naming the
 * file and the line).
 */
DSH_PUBLIC int dsh_runtime_session_denials(dsh_runtime *runtime, const char *session_id,
                                           dsh_session_denials *out, dsh_error *error);
DSH_PUBLIC void dsh_session_denials_clear(dsh_session_denials *denials);

#ifdef __cplusplus
}
#endif

#endif
