/* SPDX-License-Identifier: MIT */
/* The metadata supervisor under bwrap: see bwrap-supervisor.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "provider/bwrap-supervisor.h"
#include "provider/provider-protections.h"
#include "provider/supervision.h"

#define BWRAP_TEMP_AREA "/tmp"

/*
 * The roots as the command sees them.  A writable bind is mounted at its
 * own host path, so its path is the command's too; the scratch's temp area
 * is mounted at /tmp, so it is given as /tmp.  A read-only bind (a
 * protected subpath, the sandbox's own files) is refused by the kernel
 * anyway (EROFS: the supervisor acts through the command's own mount), and
 * named as protected so that it is refused before anything is tried.
 */
static int supervise_binds(const dsh_provider *provider, dsh_metadata_supervisor *supervisor,
                           const dsh_prepared_policy *prepared, const struct dsh_bwrap_bind *binds, size_t bind_count)
{
        const dsh_scratch *scratch = &prepared->scratch;
        int result = 0;

        for (size_t i = 0; result == 0 && i < bind_count; i++) {
                if (!binds[i].writable)
                        result = dsh_metadata_supervisor_hold_back(supervisor, binds[i].path,
                                                                   dsh_provider_held_back_rule(provider, binds[i].path));
                else if (binds[i].fd >= 0)
                        result = dsh_metadata_supervisor_add_root_seen_at(supervisor, binds[i].fd, binds[i].path,
                                                                          false);
                else
                        result = -EBADF;  /* a spawn binds by fd: by name would be a root unchecked */
        }
        /*
         * Each existing mask (bwrap-masks.c) held back by name: its mount is
         * no inode of the root's, so a metadata call there would fail the
         * inode check anyway; held back, it is refused before anything is
         * tried and recorded as a masked path.
         */
        for (size_t i = 0; result == 0 && i < prepared->masks.count; i++)
                if (prepared->masks.masks[i].kind != DSH_MASK_ABSENT)
                        result = dsh_metadata_supervisor_hold_back(supervisor, prepared->masks.masks[i].path,
                                                                   DSH_REFUSAL_MASKED_PATH);
        if (result == 0 && dsh_scratch_present(scratch))
                result = dsh_metadata_supervisor_add_root_seen_at(supervisor, scratch->temp_fd, BWRAP_TEMP_AREA, true);
        if (result == 0 && dsh_scratch_present(scratch))
                result = dsh_metadata_supervisor_add_root_seen_at(supervisor, scratch->cache_fd, scratch->cache_path,
                                                                  true);
        return result;
}

int dsh_bwrap_supervisor_start(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                               const struct dsh_bwrap_bind *binds,
                               size_t bind_count, char *const *kept_absent, struct dsh_call_network *network,
                               bool loopback_private, dsh_metadata_supervisor **supervisor_out, int *socket_out,
                               dsh_error *error)
{
        dsh_mode mode = prepared->policy.mode;
        dsh_metadata_supervisor *supervisor = NULL;
        int result;

        *supervisor_out = NULL;
        *socket_out = -1;
        /* Read-only needs no metadata supervisor: where the host forbids one, it runs with every connect refused. */
        if (mode == DSH_MODE_WORKSPACE_WRITE &&
            dsh_supervision_check_host(mode, DSH_BWRAP_SUPERVISOR_UNAVAILABLE_CONSEQUENCE, error) < 0)
                return -1;
        supervisor = dsh_metadata_supervisor_new();
        result = supervisor ? 0 : -ENOMEM;
        /*
         * Under read-only one root, the call's private /tmp, whose fd
         * dsh-sandbox-exec sends after the listener (--temp-root): every bind
         * is read-only, and the host's device nodes are no root either.  A
         * workspace-write call without a scratch has that tmpfs too.
         */
        if (result == 0 && mode == DSH_MODE_WORKSPACE_WRITE)
                result = supervise_binds(provider, supervisor, prepared, binds, bind_count);
        for (char *const *path = kept_absent; result == 0 && mode == DSH_MODE_WORKSPACE_WRITE && path && *path; path++)
                result = dsh_metadata_supervisor_hold_back(supervisor, *path, DSH_REFUSAL_PROTECTED_SUBPATH);
        if (result == 0)
                dsh_metadata_supervisor_watch_writes(supervisor);
        /* In both modes: under read-only the private /tmp is the one root whose files' metadata may change. */
        if (result == 0)
                dsh_metadata_supervisor_perform_metadata(supervisor);
        if (result == 0 && (mode != DSH_MODE_WORKSPACE_WRITE || !dsh_scratch_present(&prepared->scratch)))
                result = dsh_metadata_supervisor_expect_root(supervisor, BWRAP_TEMP_AREA);
        /* The allow-listed unix sockets (core/socket-call.h): opened now, compared by inode later. */
        if (result == 0)
                result = dsh_metadata_supervisor_allow_unix_sockets(supervisor,
                                                                    prepared->policy.allowed_unix_sockets);
        if (result < 0) {
                char detail[512];

                dsh_metadata_supervisor_free(supervisor);
                snprintf(detail, sizeof(detail), "cannot start the metadata supervisor: %s", strerror(-result));
                return dsh_error_set_unavailable(error, mode, detail);
        }
        result = dsh_supervision_start(supervisor, mode, network, loopback_private, socket_out, error);
        if (result == 0)
                *supervisor_out = supervisor;
        return result;
}
