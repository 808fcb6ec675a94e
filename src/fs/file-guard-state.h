/* SPDX-License-Identifier: MIT */
/*
 * The file guard's state, shared by its operations (file-guard.c) and its
 * construction (file-guard-setup.c), and by nothing else: the guard stays
 * opaque behind dsh-sandbox/file-guard.h.
 */
#ifndef DSH_SANDBOX_FILE_GUARD_STATE_H
#define DSH_SANDBOX_FILE_GUARD_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/file-guard.h"
#include "fs/path-walk.h"
#include "provider/prepared-policy.h"
#include "shield/shield.h"

/*
 * The temp area a workspace-write change may reach, as the command names it:
 * the host's under Landlock (which grants it), the session's scratch under
 * bwrap (which binds it there: docs/backends.md).
 */
#define GUARD_TEMP_AREA "/tmp"

/* Which rule refused an entry (file-decision.c); the names are the denial records' (docs/denials.md). */
typedef enum dsh_guard_rule {
        DSH_GUARD_ALLOWED = 0,
        DSH_GUARD_OUTSIDE_ROOTS,        /* read-only, or beneath no writable root */
        DSH_GUARD_PROTECTED_SUBPATH,    /* held back (or kept absent) inside a root */
        DSH_GUARD_OWN_FILE,             /* one of the sandbox's own files (dsh_provider_held_back_rule()) */
        DSH_GUARD_MASKED_PATH,          /* masked for the call: read or change */
} dsh_guard_rule;

/* The last refusal an operation of the guard made: what dsh_file_guard_take_denial() moves out. */
typedef struct dsh_guard_refusal {
        dsh_guard_rule rule;            /* DSH_GUARD_ALLOWED: none kept */
        bool read;                      /* refused a read (else a change) */
        char *path;                     /* canonical where the walk got there, as the command names it; owned */
} dsh_guard_refusal;

struct dsh_file_guard {
        dsh_prepared_policy prepared;
        dsh_walk_root *roots;           /* workspace-write: the workspace, each extra root, then the temp area */
        size_t root_count;
        int temp_fd;                    /* the temp area's fd (the others are the prepared policy's) */
        char *temp_path;                /* canonical: the host's /tmp, or the scratch's temp area */
        bool temp_is_scratch;           /* /tmp/... is mapped to temp_path/... (the selected backend binds it) */
        dsh_shield shield;
        char **protected_spellings;     /* ROOT/SUBPATH for each writable root and protected subpath */
        size_t read_limit;              /* the most one read returns (the config's fileReadLimitBytes) */
        /* Of the shield's entries, the sandbox's own files (the provider's protected paths): rule own-file. */
        char **own_files;
        /*
         * The last refusal, kept for dsh_file_guard_take_denial().  Guarded
         * by a lock: operations may run on several threads at once, and
         * the last one to be refused is the one kept.
         */
        pthread_mutex_t refusal_lock;
        dsh_guard_refusal last_refusal;
};

#endif
