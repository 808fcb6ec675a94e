/* SPDX-License-Identifier: MIT */
/*
 * The record of what one call was refused: each write the supervisor (or,
 * under bwrap, the mounts it watches) refused, each metadata change, and
 * each connect to a unix socket it would not reach, as {op, path, rule}.  The
 * enforcing layer writes it, never the command: a command can print any
 * text on stderr, it cannot add a record here.  Bounded per call
 * (DSH_REFUSALS_MAX records; past that only a count), so a command that
 * hammers a read-only path costs the harness a fixed amount of memory.
 * libc only, like the rest of core/.
 */
#ifndef DSH_SANDBOX_REFUSALS_H
#define DSH_SANDBOX_REFUSALS_H

#include <stddef.h>

/* Why a write (or a unix socket's connect) was refused. */
typedef enum dsh_refusal_rule {
        DSH_REFUSAL_OUTSIDE_ROOTS,      /* beneath no writable root of the call */
        DSH_REFUSAL_PROTECTED_SUBPATH,  /* a protected subpath inside a root: .git/hooks, .git/config, .mcp.json... */
        DSH_REFUSAL_OWN_FILE,           /* one of the sandbox's own files: its sessions, its runners */
        DSH_REFUSAL_MASKED_PATH,        /* a path the policy masks (secrets) */
        DSH_REFUSAL_UNIX_SOCKET,        /* a pathname socket neither allow-listed nor in a root of the call's own */
        DSH_REFUSAL_ABSTRACT_SOCKET,    /* an abstract or unnamed unix address: never reached (path "@name") */
} dsh_refusal_rule;

typedef struct dsh_refusal {
        const char *op;                 /* static: "open", "mkdir", "rename", "chmod", "connect"... */
        char *path;                     /* as the command sees it; owned */
        dsh_refusal_rule rule;
} dsh_refusal;

/* Records kept per call; one more only counts in `dropped`. */
#define DSH_REFUSALS_MAX 64

typedef struct dsh_refusals {
        dsh_refusal items[DSH_REFUSALS_MAX];
        size_t count;
        unsigned long dropped;          /* refusals past DSH_REFUSALS_MAX, or whose path could not be kept */
} dsh_refusals;

#define DSH_REFUSALS_INIT { .count = 0 }

/*
 * Adds one record (the path copied; a path longer than PATH_MAX is cut).
 * The same record as the last one is not added again: a retry loop leaves
 * one record, not sixty-four.
 */
void dsh_refusals_add(dsh_refusals *refusals, const char *op, const char *path, dsh_refusal_rule rule);

/* Moves every record of `from` to the end of `to` (as many as fit; the rest counted dropped); `from` is emptied. */
void dsh_refusals_move(dsh_refusals *to, dsh_refusals *from);

/* Frees the paths and empties the list. */
void dsh_refusals_clear(dsh_refusals *refusals);

/* "outside-roots", "protected-subpath", "own-file", "masked-path", "unix-socket", "abstract-socket". */
const char *dsh_refusal_rule_name(dsh_refusal_rule rule);

#endif
