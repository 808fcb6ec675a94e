/* SPDX-License-Identifier: MIT */
/*
 * The file guard's construction: the policy prepared as a backend would
 * prepare it, the writable roots opened and identified, the temp area the
 * command sees (the session's scratch or the host's /tmp, as the selected
 * backend would give it), and the shield planned from the provider's
 * protections — the same plan bwrap binds, so the guard denies what the
 * runner holds back (file-guard.c's opening carries the whole argument).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/runtime.h"

#include "base/error.h"
#include "base/path.h"
#include "base/path-fd.h"
#include "fs/file-decision.h"
#include "fs/file-guard-state.h"
#include "fs/path-walk.h"
#include "provider/prepared-policy.h"
#include "provider/provider-protections.h"
#include "shield/shield.h"

const char *dsh_file_operation_name(dsh_file_operation operation)
{
        switch (operation) {
        case DSH_FILE_WRITE:
                return "write";
        case DSH_FILE_EDIT:
                return "edit";
        case DSH_FILE_MKDIR:
                return "mkdir";
        case DSH_FILE_REMOVE:
                return "remove";
        case DSH_FILE_MOVE:
                return "move";
        case DSH_FILE_READ:
                return "read";
        }
        return "unknown";
}

void dsh_file_result_clear(dsh_file_result *result)
{
        if (!result)
                return;
        free(result->path);
        free(result->source);
        free(result->content);
        *result = (dsh_file_result) DSH_FILE_RESULT_INIT;
}

static int spell(dsh_file_guard *guard, const char *directory, const char *subpath)
{
        dsh_autofree char *spelled = NULL;

        if (asprintf(&spelled, "%s/%s", strcmp(directory, "/") == 0 ? "" : directory, subpath) < 0)
                return -ENOMEM;
        return dsh_strv_append(&guard->protected_spellings, spelled);
}

/*
 * ROOT/SUBPATH for every writable root and protected subpath, and HOME/NAME
 * for every "~/NAME" and every home a writable root holds: denied whether
 * it exists or not.
 */
static int spell_protected_subpaths(dsh_file_guard *guard, const dsh_protections *protections)
{
        const dsh_policy *policy = &guard->prepared.policy;
        size_t prefix = strlen(DSH_SHIELD_HOME_PREFIX);
        char **homes = dsh_shield_user_homes();
        int result = 0;

        for (size_t i = 0; i < guard->prepared.root_count; i++) {
                const char *root = i == 0 ? policy->workspace_root : policy->additional_writable_roots[i - 1];

                for (char **subpath = protections->subpaths; result == 0 && subpath && *subpath; subpath++)
                        result = strncmp(*subpath, DSH_SHIELD_HOME_PREFIX, prefix) == 0 ? 0 : spell(guard, root, *subpath);
                for (char **home = homes; result == 0 && home && *home; home++) {
                        if (!dsh_path_is_beneath(*home, root))
                                continue;
                        for (char **subpath = protections->subpaths; result == 0 && subpath && *subpath; subpath++)
                                if (strncmp(*subpath, DSH_SHIELD_HOME_PREFIX, prefix) == 0)
                                        result = spell(guard, *home, *subpath + prefix);
                }
        }
        dsh_strv_free(homes);
        return result;
}

/* Each entry of `list` that the supervisor would record as one of the sandbox's own files, into guard->own_files. */
static int keep_own_files(dsh_file_guard *guard, const dsh_provider *provider, char *const *list)
{
        for (; list && *list; list++)
                if (dsh_provider_held_back_rule(provider, *list) == DSH_REFUSAL_OWN_FILE &&
                    dsh_strv_append(&guard->own_files, *list) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * Which of the shield's entries are the sandbox's own files (rule
 * own-file): the same choice the supervisor makes for its records
 * (dsh_provider_held_back_rule()), so the guard and the supervisor name a
 * refusal alike.
 */
static int find_own_files(dsh_file_guard *guard, const dsh_provider *provider)
{
        const dsh_shield *shield = &guard->shield;

        if (keep_own_files(guard, provider, shield->read_only) < 0 ||
            keep_own_files(guard, provider, shield->must_stay_absent) < 0 ||
            keep_own_files(guard, provider, shield->kept_absent) < 0)
                return -ENOMEM;
        return 0;
}

/* The host's temp area, canonical and open, when this host has one. */
static int open_host_temp_area(dsh_file_guard *guard)
{
        char canonical[PATH_MAX];

        if (!realpath(GUARD_TEMP_AREA, canonical))
                return 0;  /* no /tmp: no temp area to write */
        guard->temp_fd = dsh_path_open_canonical(canonical, true);
        if (guard->temp_fd < 0)
                return 0;
        guard->temp_path = strdup(canonical);
        return guard->temp_path ? 0 : -ENOMEM;
}

/*
 * The temp area the command of this policy sees, as the runtime would
 * select its backend (the same selection a bash call makes): the session's
 * scratch temp area where the backend binds it at /tmp, none where that
 * backend would give a tmpfs per call (no scratch configured: a file
 * written there would never be seen), else the host's /tmp.
 */
static int open_temp_area(dsh_file_guard *guard, dsh_provider *provider, dsh_error *error)
{
        const dsh_scratch *scratch = &guard->prepared.scratch;
        int result;

        if (!dsh_provider_temp_area_is_scratch(provider))
                return open_host_temp_area(guard) < 0 ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory")
                                                      : 0;
        guard->temp_is_scratch = true;
        result = dsh_prepared_policy_open_scratch(&guard->prepared, dsh_provider_scratch_dir(provider), error);
        if (result < 0 || !dsh_scratch_present(scratch))
                return result;
        guard->temp_fd = fcntl(scratch->temp_fd, F_DUPFD_CLOEXEC, 3);
        if (guard->temp_fd < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot open the scratch: %s", strerror(errno));
        guard->temp_path = strdup(scratch->temp_path);
        return guard->temp_path ? 0 : dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

static int add_root(dsh_file_guard *guard, int fd, const char *path)
{
        dsh_walk_root *root = &guard->roots[guard->root_count];

        root->fd = fd;
        root->path = path;
        if (dsh_walk_root_identify(root) < 0)
                return -errno;
        guard->root_count++;
        return 0;
}

static int prepare_workspace_write(dsh_file_guard *guard, dsh_provider *provider, dsh_error *error)
{
        const dsh_policy *policy = &guard->prepared.policy;
        const dsh_protections *protections = dsh_provider_protections(provider);
        int result = open_temp_area(guard, provider, error);

        if (result < 0)
                return result;
        guard->roots = calloc(guard->prepared.root_count + 1, sizeof(*guard->roots));
        if (!guard->roots)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        for (size_t i = 0; result == 0 && i < guard->prepared.root_count; i++)
                result = add_root(guard, guard->prepared.root_fds[i],
                                  i == 0 ? policy->workspace_root : policy->additional_writable_roots[i - 1]);
        if (result == 0 && guard->temp_fd >= 0)
                result = add_root(guard, guard->temp_fd, guard->temp_path);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, -result,
                                     "cannot examine a writable root: %s", strerror(-result));
        /*
         * The shield bwrap plans (subpaths mapped to the real git
         * directories), with Landlock's temp area — the host's /tmp; the
         * scratch's is the sandbox's own, made for this call, not a root.
         */
        result = dsh_provider_plan_shield(provider, policy, guard->temp_is_scratch ? NULL : guard->temp_path, true,
                                          &guard->shield, error);
        if (result < 0)
                return result;
        if (guard->shield.unprotected && protections->require_subpaths)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                     guard->shield.unprotected[0]);
        if (spell_protected_subpaths(guard, protections) < 0 || find_own_files(guard, provider) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return 0;
}

int dsh_file_guard_new(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard **guard_out, dsh_error *error)
{
        dsh_file_guard *guard;
        int result;

        *guard_out = NULL;
        if (!runtime || !policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "a file guard needs a runtime and a policy");
        guard = calloc(1, sizeof(*guard));
        if (!guard)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        guard->prepared = (dsh_prepared_policy) DSH_PREPARED_POLICY_INIT;
        guard->temp_fd = -1;
        guard->shield = (dsh_shield) DSH_SHIELD_INIT;
        pthread_mutex_init(&guard->refusal_lock, NULL);
        guard->read_limit = dsh_runtime_config(runtime)->file_read_limit_bytes;
        if (guard->read_limit == 0)
                guard->read_limit = DSH_CONFIG_DEFAULT_FILE_READ_LIMIT_BYTES;
        /* Nothing is confined under danger-full-access: the root need not even exist (relative paths use it). */
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS)
                result = dsh_policy_copy(&guard->prepared.policy, policy) < 0
                                 ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory")
                                 : 0;
        else
                result = dsh_prepared_policy_init(&guard->prepared, policy, error);
        /* The call's masks, planned as a backend plans them: the guard refuses what the command could not read. */
        if (result == 0 && policy->mode != DSH_MODE_DANGER_FULL_ACCESS)
                result = dsh_prepared_policy_plan_masks(&guard->prepared,
                                                        dsh_provider_protections(dsh_runtime_provider(runtime)), error);
        if (result == 0 && guard->prepared.policy.mode == DSH_MODE_WORKSPACE_WRITE)
                result = prepare_workspace_write(guard, dsh_runtime_provider(runtime), error);
        if (result < 0) {
                dsh_file_guard_free(guard);
                return result;
        }
        *guard_out = guard;
        return 0;
}

void dsh_file_guard_free(dsh_file_guard *guard)
{
        if (!guard)
                return;
        dsh_prepared_policy_clear(&guard->prepared);
        if (guard->temp_fd >= 0)
                close(guard->temp_fd);
        free(guard->temp_path);
        free(guard->roots);
        dsh_shield_clear(&guard->shield);
        dsh_strv_free(guard->protected_spellings);
        dsh_strv_free(guard->own_files);
        free(guard->last_refusal.path);
        pthread_mutex_destroy(&guard->refusal_lock);
        free(guard);
}

bool dsh_file_guard_take_refusal(dsh_file_guard *guard, dsh_guard_refusal *out)
{
        pthread_mutex_lock(&guard->refusal_lock);
        *out = guard->last_refusal;
        guard->last_refusal = (dsh_guard_refusal) { DSH_GUARD_ALLOWED, false, NULL };
        pthread_mutex_unlock(&guard->refusal_lock);
        return out->rule != DSH_GUARD_ALLOWED;
}

const dsh_policy *dsh_file_guard_policy(const dsh_file_guard *guard)
{
        return &guard->prepared.policy;
}
