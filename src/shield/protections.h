/* SPDX-License-Identifier: MIT */
/*
 * The protections: what the deployment says no confined command may change
 * (shield.h applies them).  One value, set through the provider's setters
 * (dsh-sandbox/provider.h) and composed by the runtime (src/runtime.c); the
 * backends, the shield and the file guard all read this one copy, so that a
 * runner, the guard's own checks and the shield can never disagree about
 * what is protected.
 */
#ifndef DSH_SANDBOX_PROTECTIONS_H
#define DSH_SANDBOX_PROTECTIONS_H

#include <stdbool.h>

#include "base/util.h"

typedef struct dsh_protections {
        /* The sandbox's own files, absolute, canonicalized per call (dsh_provider_set_protected_paths()). */
        char **paths;
        char **executables;      /* programs later calls trust to run (dsh_provider_set_protected_executables()) */
        char **subpaths;         /* relative to each writable root (dsh_provider_set_protected_subpaths()) */
        bool require_subpaths;   /* refuse a call where a protected subpath cannot be held back */
        /*
         * The directory of landlock-run (dsh_provider_set_landlock_run_path()),
         * where the other launchers are looked for first; "" for "/", NULL: none.
         */
        char *launcher_directory;
        /*
         * Own directories no confined command may even look into, absolute,
         * each also one of `paths`: the remote's ssh control directories,
         * whose sockets answer whoever connects (`-O forward`, `-O exit`, new
         * sessions).  bwrap lays an empty read-only tmpfs over each; Landlock
         * cannot hide and refuses a root containing one, as for every path.
         */
        char **hidden;
        /*
         * Secrets (dsh_provider_set_masked_paths(), ..._environment_rules()):
         * the masked entries as configured (masks.h expands them per call),
         * whether a mask not held refuses the call, and the environment's
         * deny patterns and allowed names (core/env-scrub.h).  NULL `masks`
         * or `environment_deny` means the defaults (a provider nobody
         * configured still masks); an empty vector means none.
         */
        char **masks;
        bool require_masks;
        char **environment_deny;
        char **environment_allow;
} dsh_protections;

#define DSH_PROTECTIONS_INIT { NULL, NULL, NULL, false, NULL, NULL, NULL, false, NULL, NULL }

/*
 * Makes each missing directory of `hidden` (0700), where the remote would
 * make it, so that a backend can hide it for a whole call (protections.c).
 * Best effort: one that may not or cannot be made is left alone.
 */
DSH_INTERNAL void dsh_protections_make_hidden(const dsh_protections *protections);

/* Frees what `protections` owns and resets it to DSH_PROTECTIONS_INIT. */
DSH_INTERNAL void dsh_protections_clear(dsh_protections *protections);

/*
 * Sets the launcher directory to the directory of `landlock_run_path`
 * (absolute).  Returns 0, or -ENOMEM with the directory unchanged.
 */
DSH_INTERNAL int dsh_protections_set_launcher_directory(dsh_protections *protections, const char *landlock_run_path);

/*
 * The launcher `name` ("landlock-run", "dsh-sandbox-exec"): in the launcher
 * directory when it is there, else the installed copy in the libexec
 * directory.  New string; NULL when out of memory.
 */
DSH_INTERNAL char *dsh_protections_launcher_path(const dsh_protections *protections, const char *name);

#endif
