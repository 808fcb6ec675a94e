/* SPDX-License-Identifier: MIT */
/* The provider's protections as the runtime and the file guard reach them: see provider-protections.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/backend.h"
#include "base/error.h"
#include "base/path.h"
#include "provider/provider-protections.h"

const dsh_protections *dsh_provider_protections(const dsh_provider *provider)
{
        return &provider->protections;
}

/* Copies absolute `hidden` (NULL: none) into the provider's protections. */
static int set_hidden_directories(dsh_provider *provider, char *const *hidden, dsh_error *error)
{
        char **copy = NULL;

        for (char *const *path = hidden; path && *path; path++)
                if ((*path)[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "a hidden directory must be absolute: \"%s\"", *path);
        if (hidden) {
                copy = dsh_strv_copy(hidden);
                if (!copy)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        dsh_strv_free(provider->protections.hidden);
        provider->protections.hidden = copy;
        return 0;
}

int dsh_provider_set_protections(dsh_provider *provider, const dsh_protections *protections, dsh_error *error)
{
        int result = dsh_provider_set_protected_subpaths(provider, (const char *const *) protections->subpaths,
                                                         protections->require_subpaths, error);

        if (result == 0)
                result = dsh_provider_set_protected_paths(provider, protections->paths, error);
        if (result == 0)
                result = dsh_provider_set_protected_executables(provider, protections->executables, error);
        if (result == 0)
                result = set_hidden_directories(provider, protections->hidden, error);
        return result;
}

/*
 * Every backend known, not only the chain: a later call may be configured
 * with another chain, and a runner it would start must not be writable now.
 */
char **dsh_provider_runner_candidates(const dsh_provider *provider, int *result)
{
        char **runners = NULL;

        *result = 0;
        for (const dsh_backend_ops *const *backend = dsh_backends_known(); *backend; backend++) {
                char **candidates = (*backend)->runner_candidates ? (*backend)->runner_candidates(provider) : NULL;

                if ((*backend)->runner_candidates && !candidates)
                        goto out_of_memory;
                for (char **path = candidates; path && *path; path++)
                        if (dsh_strv_append(&runners, *path) < 0) {
                                dsh_strv_free(candidates);
                                goto out_of_memory;
                        }
                dsh_strv_free(candidates);
        }
        return runners;
out_of_memory:
        dsh_strv_free(runners);
        *result = -ENOMEM;
        return NULL;
}

int dsh_provider_plan_shield(const dsh_provider *provider, const dsh_policy *policy, const char *host_temp_area,
                             bool with_subpaths, dsh_shield *shield, dsh_error *error)
{
        int result = 0;
        char **runners = policy->mode == DSH_MODE_WORKSPACE_WRITE ? dsh_provider_runner_candidates(provider, &result)
                                                                  : NULL;

        *shield = (dsh_shield) DSH_SHIELD_INIT;
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_shield_plan(policy, &provider->protections, runners, host_temp_area, with_subpaths, shield, error);
        dsh_strv_free(runners);
        return result;
}

bool dsh_provider_temp_area_is_scratch(dsh_provider *provider)
{
        const dsh_backend_ops *backend = dsh_provider_selected_backend(provider);

        return backend && backend->temp_area_is_scratch;
}

const char *dsh_provider_scratch_dir(const dsh_provider *provider)
{
        return provider->scratch_dir;
}

dsh_refusal_rule dsh_provider_held_back_rule(const dsh_provider *provider, const char *path)
{
        for (char *const *given = provider->protections.paths; given && *given; given++) {
                dsh_autofree char *canonical = dsh_path_canonical(*given);

                if (canonical && strcmp(path, canonical) == 0)
                        return DSH_REFUSAL_OWN_FILE;
        }
        return DSH_REFUSAL_PROTECTED_SUBPATH;
}
