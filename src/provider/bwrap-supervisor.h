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
#include "dsh-sandbox/provider.h"
#include "provider/prepared-policy.h"
#include "base/util.h"

/* What a host that forbids the supervisor costs under bwrap (the probe's partial reason, the call's refusal). */
#define DSH_BWRAP_SUPERVISOR_UNAVAILABLE_CONSEQUENCE \
        "under bwrap the metadata supervisor governs chmod, chown, utimes and extended attributes in the writable " \
        "roots, so workspace-write under bwrap is refused here rather than run with them ungoverned"

/*
 * Where the kernel has no Landlock, dsh-sandbox-exec cannot put the command
 * in a domain of its own, and bwrap's pid 1 (no seccomp filter, the caller's
 * stdio still open) stays within its ptrace reach (tools/sandbox-exec.c,
 * enter_own_domain()): every call says so.
 */
#define DSH_BWRAP_NO_DOMAIN_REASON \
        "this kernel has no Landlock (or only its first ABI), so the command cannot be kept out of ptrace reach of bwrap's own init " \
        "(pid 1 in the sandbox, which no seccomp filter governs): where Yama allows a process to attach to its " \
        "parent, the command can make through it the calls the filter refuses, and read or write the " \
        "descriptors it holds (/proc/1/fd); an argv the caller spawns itself also leaves the caller's whole " \
        "environment, secrets included, readable there (/proc/1/environ)"

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
 * expects (dsh_metadata_supervisor_expect_root()).  Under both modes it
 * watches write-intent calls (core/write-supervisor.h: the mounts decide,
 * it writes down what they refuse), and refuses outright a write that would
 * create one of `kept_absent` (the protected paths no bind can cover; the
 * audit after the call stays what guarantees them).  *socket_out: the end
 * dsh-sandbox-exec sends the listener on (bwrap must inherit it).  The
 * call's `network` (NULL: "on") is told to it, `loopback_private` under
 * --unshare-net (supervision.h).  Returns 0, or SANDBOX_UNAVAILABLE
 * with the reason (the host forbids reading the command, or the thread
 * cannot start).
 */
struct dsh_call_network;

DSH_INTERNAL int dsh_bwrap_supervisor_start(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                                            const struct dsh_bwrap_bind *binds,
                                            size_t bind_count, char *const *kept_absent,
                                            struct dsh_call_network *network, bool loopback_private,
                                            dsh_metadata_supervisor **supervisor_out, int *socket_out,
                                            dsh_error *error);

#endif
