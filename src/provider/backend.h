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
#include "provider/prepared-policy.h"
#include "base/util.h"
#include "shield/protections.h"

/* What a probe learned about one backend on this host. */
typedef struct dsh_backend_report {
        bool usable;
        dsh_enforcement enforcement;
        char *reason;         /* why not usable, in words a user can act on; NULL when usable */
        char *version;        /* runner version when known, e.g. "0.8.0" */
        int landlock_abi;     /* Landlock only: the kernel ABI, or a negative errno */
        char *runner_path;    /* the runner binary the backend would execute, when it has one */
        char **landlock_scopes;          /* Landlock only: scope names in force (see dsh_probe_report) */
        char **landlock_scopes_missing;  /* Landlock only: scope names the ABI cannot request */
        char **partial_reasons;          /* why enforcement is partial, one sentence each */
        char **notes;                    /* facts a caller should know (the temp area per mode), one sentence each */
        /*
         * Not usable for a reason that may not hold on the next call: a
         * timeout, a resource shortage (EMFILE, ENFILE, ENOMEM, EAGAIN) or a
         * failure the backend does not recognise.  Set by whoever found the
         * failure (the backend's probe, or the provider's functional run).
         * A verdict that passed over such a backend is used by this provider
         * but never persisted: a persisted verdict must rest on deterministic
         * facts only (not installed, not trusted, ABI too old, namespaces
         * blocked...), or one bad moment would select a backend for good.
         * On a usable report: usable for this provider, but a verdict that
         * selects it is not persisted either (its confinement proof was
         * disturbed: confinement-proof.c).
         */
        bool transient;
} dsh_backend_report;

#define DSH_BACKEND_REPORT_INIT { false, DSH_ENFORCEMENT_FULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, false }

DSH_INTERNAL void dsh_backend_report_clear(dsh_backend_report *report);

typedef struct dsh_backend_ops {
        const char *name;
        /* Functional check: can this backend confine a command on this host? Fills `report`. */
        void (*probe)(dsh_provider *provider, dsh_backend_report *report);
        /* Builds the confined argv; the policy is prepared (its roots open) and confined. */
        int (*confine)(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                       dsh_confined_argv *out, dsh_error *error);
        /* Spawns `argv` confined; the policy is prepared (its roots open) and confined. */
        int (*spawn)(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                     const dsh_spawn_options *options, dsh_child *child, dsh_error *error);
        /* True when probe() already runs a confined command; otherwise the provider
         * follows a usable static probe with a functional run of `true` through spawn(). */
        bool probe_is_functional;
        /* The runner binary a verdict depends on (the verdict cache's key), new string; NULL: none. */
        char *(*runner_path)(const dsh_provider *provider);
        /*
         * Every program this backend could run to confine a later call,
         * found or not (a new strv; NULL when out of memory): no confined
         * command may be able to write one (the shield refuses such a root).
         */
        char **(*runner_candidates)(const dsh_provider *provider);
        /*
         * Under workspace-write, the command's /tmp is the call's scratch
         * temp area (bwrap binds it there), not the host's /tmp: the file
         * guard maps /tmp the same way, so that a file it writes at /tmp/x
         * is the one the command reads at /tmp/x.
         */
        bool temp_area_is_scratch;
        /*
         * It holds a network policy other than "on" (call-network.h): its
         * filter and supervisor are told the mode.  A backend without it
         * (an operator's runner command) is refused such a call.
         */
        bool holds_network;
        /* After waitpid() of a child it spawned: what its runner's status channels say.  NULL: nothing to read. */
        void (*settle)(dsh_child *child, int wait_status);
} dsh_backend_ops;

DSH_INTERNAL extern const dsh_backend_ops dsh_backend_landlock;
DSH_INTERNAL extern const dsh_backend_ops dsh_backend_bwrap;
DSH_INTERNAL extern const dsh_backend_ops dsh_backend_runner_command;

#define DSH_PROVIDER_MAX_BACKENDS 4

struct dsh_provider {
        const dsh_backend_ops *backends[DSH_PROVIDER_MAX_BACKENDS];
        size_t backend_count;
        char *landlock_run_path;
        /* The verdict, cached for the provider's lifetime (NULL selected + cached: unavailable). */
        bool verdict_cached;
        const dsh_backend_ops *selected;
        char *unavailable_detail;
        /* The bwrap binary set by dsh_provider_set_bwrap_path(); NULL: the trusted lookup. */
        char *bwrap_path;
        long probe_timeout_ms;
        /* Operator override (dsh_provider_set_runner_command); NULL: none. */
        char **runner_command;
        char **runner_failure_signatures;
        /* What no confined command may change, and where the launchers are: the shield's input (protections.h). */
        dsh_protections protections;
        /* Directory of the cross-process verdict cache; NULL: the verdict lives in this provider only. */
        char *verdict_cache_dir;
        /* Where each session's scratch lives (scratch.h); NULL: none, bwrap's /tmp is a tmpfs per call. */
        char *scratch_dir;
        /* The selection came from the persisted cache and was not probed by this provider. */
        bool verdict_from_cache;
        /*
         * The one deadline (dsh_monotonic_ms() time) of the functional probe
         * of one backend, shared by every step of it (version query,
         * confined `true`, confinement proof); 0 when no probe runs.  See
         * dsh_provider_begin_probe().
         */
        long long probe_deadline_ms;
};

DSH_INTERNAL const dsh_backend_ops *dsh_backend_by_name(const char *name);

/*
 * The backend this provider would confine a call with (probing the chain
 * when nothing is selected yet, exactly as a spawn would), or NULL when
 * none is usable.  provider.c.
 */
DSH_INTERNAL const dsh_backend_ops *dsh_provider_selected_backend(dsh_provider *provider);

/* The Linux backends in their default chain order (bwrap, then Landlock), NULL-terminated.  provider-settings.c. */
DSH_INTERNAL const dsh_backend_ops *const *dsh_backends_known(void);

/* Forgets the selection: the next call selects again (every setter that changes it calls this).  provider-settings.c. */
DSH_INTERNAL void dsh_provider_forget_verdict(dsh_provider *provider);

/*
 * One backend's functional probe into `report`: its own probe, a confined
 * `true` where that was static, and the confinement proof, under one
 * deadline.  probe.c.
 */
DSH_INTERNAL void dsh_probe_backend(dsh_provider *provider, const dsh_backend_ops *backend,
                                    dsh_backend_report *report);

/*
 * Probes each of `candidates` into report->backends, in order, with
 * `usable[i]` and `transient[i]` per candidate, the Landlock facts, and the
 * last unusable backend's reason in `*last_reason` (replaced; caller owns).
 * Returns 0, or -ENOMEM with `report` cleared.  probe.c.
 */
DSH_INTERNAL int dsh_probe_report_fill(dsh_provider *provider, const dsh_backend_ops *const *candidates, size_t count,
                                       dsh_probe_report *report, bool *usable, bool *transient, char **last_reason);

/*
 * Starts the deadline of one functional probe, probeTimeoutMs from now,
 * unless one is running already (a probe nested in a probe shares the
 * outer one's).  Returns true when it started one: that caller then ends it
 * with dsh_provider_end_probe().  probe.c.
 */
DSH_INTERNAL bool dsh_provider_begin_probe(dsh_provider *provider);

/* "a bwrap probe did not finish within 300 ms (probeTimeoutMs)": a new string, NULL when out of memory.  probe.c. */
DSH_INTERNAL char *dsh_probe_timeout_reason(const dsh_provider *provider, const dsh_backend_ops *backend);
DSH_INTERNAL void dsh_provider_end_probe(dsh_provider *provider, bool started);

/*
 * Runs `argv` through `backend->spawn` under a prepared `policy` with stdin
 * and stdout on /dev/null and stderr captured, in a process group of its
 * own, bounded by the running probe's deadline (or probeTimeoutMs from now
 * when none runs): whatever of that group still runs at the deadline is
 * killed with SIGKILL and reaped.  `*exit_code` gets the exit status (128+N
 * for signal N, -1 on timeout), `*stderr_text` the captured stderr (caller
 * frees).  Returns 0, or a negative errno with `error` set when the spawn
 * itself failed.
 */
DSH_INTERNAL int dsh_provider_run_bounded(dsh_provider *provider, const dsh_backend_ops *backend, char *const *argv,
                                          const dsh_policy *policy, int *exit_code, char **stderr_text,
                                          dsh_error *error);

/* dsh_provider_run_bounded() with stdin on `stdin_fd` (borrowed; the caller closes it) instead of /dev/null. */
DSH_INTERNAL int dsh_provider_run_bounded_with_input(dsh_provider *provider, const dsh_backend_ops *backend,
                                                     char *const *argv, const dsh_policy *policy, int stdin_fd,
                                                     int *exit_code, char **stderr_text, dsh_error *error);

#endif
