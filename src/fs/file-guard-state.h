/* SPDX-License-Identifier: MIT */
/*
 * The file guard's state, shared by its operations (file-guard.c) and its
 * construction (file-guard-setup.c), and by nothing else: the guard stays
 * opaque behind dsh-sandbox/file-guard.h.
 */
#ifndef DSH_SANDBOX_FILE_GUARD_STATE_H
#define DSH_SANDBOX_FILE_GUARD_STATE_H

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
};

#endif
