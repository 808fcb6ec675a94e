/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path-fd.h"
#include "provider/prepared-policy.h"
#include "shield/shield.h"

void dsh_prepared_policy_clear(dsh_prepared_policy *prepared)
{
        if (!prepared)
                return;
        for (size_t i = 0; i < prepared->root_count; i++)
                if (prepared->root_fds[i] >= 0)
                        close(prepared->root_fds[i]);
        free(prepared->root_fds);
        dsh_scratch_clear(&prepared->scratch);
        dsh_mask_plan_clear(&prepared->masks);
        dsh_policy_clear(&prepared->policy);
        *prepared = (dsh_prepared_policy) DSH_PREPARED_POLICY_INIT;
}

static int open_root(dsh_prepared_policy *prepared, const char *root, dsh_error *error)
{
        int fd = dsh_path_open_canonical(root, true);

        if (fd == -ELOOP)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, ELOOP,
                                     "writable root \"%s\" now passes through a symlink; refusing to follow it", root);
        /* Every dsh-sandbox filter refuses openat2 (core/metadata-filter.c): this is a sandbox in a sandbox. */
        if (fd == -ENOSYS) {
                dsh_error_set_unavailable(error, prepared->policy.mode,
                                          "openat2() is refused in this process (ENOSYS): it already runs under a "
                                          "sandbox's seccomp filter, and the writable roots cannot be opened safely "
                                          "without it (a sandbox in a sandbox)");
                return -ENOSYS;
        }
        if (fd < 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, -fd, "cannot open writable root \"%s\": %s",
                                     root, strerror(-fd));
        prepared->root_fds[prepared->root_count++] = fd;
        return 0;
}

int dsh_prepared_policy_init(dsh_prepared_policy *prepared, const dsh_policy *policy, dsh_error *error)
{
        size_t extra = dsh_strv_length(policy->additional_writable_roots);
        int result;

        *prepared = (dsh_prepared_policy) DSH_PREPARED_POLICY_INIT;
        if (dsh_policy_copy(&prepared->policy, policy) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_policy_prepare(&prepared->policy, error);
        if (result < 0 || prepared->policy.mode != DSH_MODE_WORKSPACE_WRITE)
                return result;
        prepared->root_fds = calloc(extra + 1, sizeof(int));
        if (!prepared->root_fds)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = open_root(prepared, prepared->policy.workspace_root, error);
        for (size_t i = 0; result == 0 && i < extra; i++)
                result = open_root(prepared, prepared->policy.additional_writable_roots[i], error);
        return result;
}

int dsh_prepared_policy_root_fd(const dsh_prepared_policy *prepared, const char *root)
{
        if (prepared->root_count == 0)
                return -1;
        if (strcmp(root, prepared->policy.workspace_root) == 0)
                return prepared->root_fds[0];
        for (size_t i = 1; i < prepared->root_count; i++)
                if (strcmp(root, prepared->policy.additional_writable_roots[i - 1]) == 0)
                        return prepared->root_fds[i];
        return -1;
}

int dsh_prepared_policy_open_scratch(dsh_prepared_policy *prepared, const char *scratch_base, dsh_error *error)
{
        if (!scratch_base || prepared->policy.mode != DSH_MODE_WORKSPACE_WRITE)
                return 0;
        return dsh_scratch_open(scratch_base, &prepared->policy, &prepared->scratch, error);
}

int dsh_prepared_policy_plan_masks(dsh_prepared_policy *prepared, const dsh_protections *protections,
                                   dsh_error *error)
{
        char **homes = dsh_shield_user_homes();
        int result;

        dsh_mask_plan_clear(&prepared->masks);
        result = dsh_mask_plan_build(protections, &prepared->policy, homes, &prepared->masks, error);
        dsh_strv_free(homes);
        return result;
}
