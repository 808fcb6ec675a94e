/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor under bwrap (docs/supervisor.md): the same one
 * Landlock's workspace-write runs (core/metadata-supervisor.h), given the
 * roots as the bwrap plan binds them — each by the host directory's fd and
 * the path at which the command sees it — and what the plan binds read-only
 * as its protected paths.  dsh-sandbox-exec inside the sandbox installs the
 * filter and sends the listener (--listener-fd); the thread runs in the
 * process that spawned bwrap.
 */
#ifndef DSH_SANDBOX_BWRAP_SUPERVISOR_H
#define DSH_SANDBOX_BWRAP_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/metadata-supervisor.h"
#include "provider/prepared-policy.h"
#include "base/util.h"

/* What a host that forbids the supervisor costs under bwrap (the probe's partial reason, the call's refusal). */
#define DSH_BWRAP_SUPERVISOR_UNAVAILABLE_CONSEQUENCE \
        "under bwrap the metadata supervisor governs chmod, chown, utimes and extended attributes in the writable " \
        "roots, so workspace-write under bwrap is refused here rather than run with them ungoverned"

/* One bind over bwrap's read-only root (backend-bwrap.c plans them). */
struct dsh_bwrap_bind {
        const char *path;       /* canonical, and where the command sees it; borrowed */
        bool writable;
        int fd;                 /* O_PATH, owned by the plan; -1: bound by name */
};

/*
 * Starts the supervisor of one spawn, under either mode: the allow-listed
 * unix sockets for its connects (core/socket-call.h) and, under
 * workspace-write, the writable binds
 * (`binds`, each opened by fd) as roots at their own paths, the session's
 * scratch temp area as /tmp and its cache at its path (both their contents
 * only: the directories are the session's, their mode stays), every
 * read-only bind as a protected path.  Under read-only, and without a
 * scratch, /tmp is a tmpfs of the call's own: its fd arrives after the
 * listener (dsh-sandbox-exec --temp-root) and is the root the supervisor
 * expects (dsh_metadata_supervisor_expect_root()).  *socket_out: the end dsh-sandbox-exec sends the
 * listener on (bwrap must inherit it).  Returns 0, or SANDBOX_UNAVAILABLE
 * with the reason (the host forbids reading the command, or the thread
 * cannot start).
 */
DSH_INTERNAL int dsh_bwrap_supervisor_start(const dsh_prepared_policy *prepared, const struct dsh_bwrap_bind *binds,
                                            size_t bind_count, dsh_metadata_supervisor **supervisor_out,
                                            int *socket_out, dsh_error *error);

#endif
