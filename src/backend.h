/* SPDX-License-Identifier: MIT */
/*
 * The backend interface inside the local provider.  A backend is one file
 * (backend-landlock.c, backend-bwrap.c, ...) exporting one dsh_backend_ops.
 * The provider selects a backend, prepares the policy (dsh_policy_prepare)
 * and only then calls into it, so every backend sees a checked, canonical,
 * confined policy.
 */
#ifndef DSH_SANDBOX_BACKEND_H
#define DSH_SANDBOX_BACKEND_H

#include "dsh-sandbox/provider.h"
#include "util.h"

/* What a probe learned about one backend on this host. */
typedef struct dsh_backend_report {
        bool usable;
        dsh_enforcement enforcement;
        char *reason;         /* why not usable, in words a user can act on; NULL when usable */
        char *version;        /* runner version when known, e.g. "0.8.0" */
        int landlock_abi;     /* Landlock only: the kernel ABI, or a negative errno */
} dsh_backend_report;

#define DSH_BACKEND_REPORT_INIT { false, DSH_ENFORCEMENT_FULL, NULL, NULL, 0 }

DSH_INTERNAL void dsh_backend_report_clear(dsh_backend_report *report);

typedef struct dsh_backend_ops {
        const char *name;
        /* Functional check: can this backend confine a command on this host? Fills `report`. */
        void (*probe)(dsh_provider *provider, dsh_backend_report *report);
        /* Builds the confined argv; `policy` is prepared and confined. */
        int (*confine)(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                       dsh_confined_argv *out, dsh_error *error);
        /* Spawns `argv` confined; `policy` is prepared and confined. */
        int (*spawn)(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                     const dsh_spawn_options *options, dsh_child *child, dsh_error *error);
} dsh_backend_ops;

DSH_INTERNAL extern const dsh_backend_ops dsh_backend_landlock;

#define DSH_PROVIDER_MAX_BACKENDS 4

struct dsh_provider {
        const dsh_backend_ops *backends[DSH_PROVIDER_MAX_BACKENDS];
        size_t backend_count;
        char *landlock_run_path;
        /* The verdict, cached for the provider's lifetime (NULL selected + cached: unavailable). */
        bool verdict_cached;
        const dsh_backend_ops *selected;
        char *unavailable_detail;
};

DSH_INTERNAL const dsh_backend_ops *dsh_backend_by_name(const char *name);

#endif
