/* SPDX-License-Identifier: MIT */
/*
 * The Landlock backend.
 *
 * Grants (docs/security.md): read+execute beneath "/" but the call's masks
 * (provider/landlock-masks.h: a mask it cannot hold is said), read-write on the
 * "/dev/null" sink; workspace-write adds the temp area "/tmp", /dev/ptmx
 * (new ptys), the workspace root, each extra root, the session's scratch
 * cache directory (src/provider/scratch.h: where the package managers' cache
 * variables point), and where the caller may mount, a /dev/shm and a
 * /dev/pts of the command's own (core/private-dev.h).  Landlock cannot
 * mount /tmp, so /tmp stays the host's, and read-only has no scratch space
 * at all; TMPDIR is /tmp in both modes.  "/dev" itself is never granted,
 * nor the host's /dev/pts or /dev/shm: every other terminal, and every
 * other process's shared memory, lies there.
 *
 * Two ways to use it: confine() names the `landlock-run` launcher in an argv
 * for callers that spawn themselves; spawn() builds the same ruleset in this
 * process and applies it in the forked child right before exec, so the only
 * cost over a bare spawn is a handful of system calls.  Both paths (and the
 * launcher) also drop every capability before the restriction and, from
 * Landlock ABI 6, scope the domain: no signal to, and no connection to an
 * abstract unix socket of, a process outside it (src/provider/spawn.c says why in
 * that order).
 *
 * Landlock does not govern metadata (chmod, chown, utimes, extended
 * attributes, inode flags).  Every path adds the metadata filter
 * (core/metadata-filter.h): under read-only it refuses every metadata call;
 * under workspace-write it sends each one to the metadata supervisor
 * (core/metadata-supervisor.h, docs/supervisor.md), which performs it when its
 * target lies in a writable root.  Under both modes the supervisor also
 * performs every connect() (core/socket-call.h): a unix socket outside the
 * command's own roots and the allow-list is refused.  The supervisor runs on
 * a thread of the process that spawned the command, and holds the network
 * policy there (call-network.h): under "off" and the allow-list the filter
 * sends it every inet connect, bind, listen and send to an address; Landlock
 * has no network namespace to add, so the host's loopback is refused by the
 * supervisor alone.  An in-place exec leaves no process to host the
 * supervisor: the backend never execs in place (no exec op),
 * dsh_provider_exec() answers -EOPNOTSUPP and the caller spawns.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/call-environment.h"
#include "provider/call-network.h"
#include "provider/landlock-masks.h"
#include "provider/process.h"
#include "provider/provider-protections.h"
#include "core/landlock.h"
#include "core/metadata-supervisor.h"
#include "provider/supervision.h"
#include "core/private-dev.h"
#include "core/socket-call.h"
#include "base/error.h"
#include "base/path.h"
#include "shield/shield.h"
#include "provider/spawn.h"
#include "provider/stand-in-spawn.h"

#define LANDLOCK_TEMP_AREA "/tmp"
#define LANDLOCK_SINK "/dev/null"
#define LANDLOCK_PARTIAL_NOTICE "landlock-run: partial enforcement (older Landlock ABI)"
#define ABI_PARTIAL_REASON "the kernel's Landlock ABI is older than 5 and does not govern ioctl(2) on device files"
#define SUPERVISOR_UNAVAILABLE_CONSEQUENCE \
        "Landlock alone does not govern chmod, chown, utimes or extended attributes, so workspace-write under " \
        "Landlock is refused here rather than run with them ungoverned"

struct landlock_grant {
        const char *path;
        bool writable;
        int fd;           /* a writable root, opened right after its check (prepared policy); -1: by name */
        bool optional;    /* a device the host may lack: no grant then, rather than no run (unset: false) */
        bool masked;      /* "/": read granted around the masks (landlock-masks.h), not by this entry */
};

#define LANDLOCK_READ_ACCESS (DSH_LANDLOCK_ACCESS_FS_EXECUTE | DSH_LANDLOCK_ACCESS_FS_READ_FILE | \
                              DSH_LANDLOCK_ACCESS_FS_READ_DIR)

/*
 * Under workspace-write the command may make ptys (script, pty.openpty,
 * expect): /dev/ptmx read-write with ioctl, which makes a new pty on every
 * open and reaches no existing one.  The host's /dev/pts is not granted
 * (every terminal of the host is there): a new pty's slave lies in the
 * command's own /dev/pts where it has one, and comes from the supervisor
 * otherwise (core/metadata-supervisor.c, "pty peers").
 */
#define LANDLOCK_PTY_MULTIPLEXER "/dev/ptmx"

/* Calls `visit` for every grant of the policy, in launcher order (--ro first). */
static int for_each_grant(const dsh_prepared_policy *prepared,
                          int (*visit)(const struct landlock_grant *grant, void *context), void *context)
{
        const dsh_policy *policy = &prepared->policy;
        struct landlock_grant fixed[] = {
                { "/", false, -1, false, true },
                { LANDLOCK_SINK, true, -1 },
        };
        int result;

        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
                result = visit(&fixed[i], context);
                if (result < 0)
                        return result;
        }
        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return 0;
        {
                struct landlock_grant temp_area = { LANDLOCK_TEMP_AREA, true, -1 };
                struct landlock_grant ptys = { LANDLOCK_PTY_MULTIPLEXER, true, -1, true };
                struct landlock_grant workspace = { policy->workspace_root, true,
                                                    dsh_prepared_policy_root_fd(prepared, policy->workspace_root) };

                result = visit(&temp_area, context);
                if (result == 0)
                        result = visit(&ptys, context);
                if (result == 0)
                        result = visit(&workspace, context);
        }
        if (result == 0 && dsh_scratch_present(&prepared->scratch)) {
                /* The session's own cache directory, by the fd opened when it was checked (scratch.c). */
                struct landlock_grant cache = { prepared->scratch.cache_path, true, prepared->scratch.cache_fd };

                result = visit(&cache, context);
        }
        for (char **root = policy->additional_writable_roots; result == 0 && root && *root; root++) {
                struct landlock_grant extra = { *root, true, dsh_prepared_policy_root_fd(prepared, *root) };

                result = visit(&extra, context);
        }
        return result;
}

static const char *abi_problem(int abi)
{
        if (abi == -ENOSYS)
                return "landlock is not built into this kernel";
        if (abi == -EOPNOTSUPP)
                return "landlock is disabled on this kernel (enable it with the lsm= boot parameter)";
        if (abi < 0)
                return "landlock cannot be queried on this kernel";
        if (!dsh_landlock_abi_usable(abi))
                return "the kernel's landlock ABI is older than 3 and cannot stop truncation of files outside the policy";
        return NULL;
}

static const struct {
        uint64_t scope;
        const char *name;
} scope_names[] = {
        { DSH_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, "abstract-unix-socket" },
        { DSH_LANDLOCK_SCOPE_SIGNAL, "signal" },
};

/* Names each known scope as in force (the ruleset requests it on this ABI) or missing. */
static int report_scopes(int abi, dsh_backend_report *report)
{
        uint64_t scoped = dsh_landlock_scopes(abi);

        for (size_t i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++) {
                char ***list = scoped & scope_names[i].scope ? &report->landlock_scopes
                                                             : &report->landlock_scopes_missing;

                if (dsh_strv_append(list, scope_names[i].name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * Whether a workspace-write call gets a /dev/shm and /dev/pts of its own is
 * the caller's privilege to mount (core/private-dev.h): known by trying, and
 * said either way, since without them POSIX semaphores fail.
 */
static void add_private_devices_note(dsh_backend_report *report)
{
        dsh_private_devices devices = DSH_PRIVATE_DEVICES_INIT;
        bool private = dsh_private_devices_create(&devices) == 0;

        dsh_private_devices_close(&devices);
        (void) dsh_strv_append(&report->notes,
                               private ? "workspace-write: /dev/shm and /dev/pts of the command's own (a tmpfs and a "
                                         "devpts instance): Python multiprocessing, ptys and expect work"
                                       : "workspace-write: this caller cannot mount, so /dev/shm and /dev/pts stay "
                                         "the host's, read-only: ptys work (/dev/ptmx), POSIX semaphores (Python "
                                         "multiprocessing) and expect are refused");
}

static void landlock_probe(dsh_provider *provider, dsh_backend_report *report)
{
        int abi = dsh_landlock_abi();
        const char *problem = abi_problem(abi);

        report->landlock_abi = abi;
        if (report_scopes(abi, report) < 0)
                return;  /* out of memory: not usable, no reason to give */
        if (problem) {
                report->reason = strdup(problem);
                return;
        }
        report->enforcement = dsh_landlock_enforcement(abi);
        if (report->enforcement == DSH_ENFORCEMENT_PARTIAL)
                (void) dsh_strv_append(&report->partial_reasons, ABI_PARTIAL_REASON);
        /* Known before any call: workspace-write needs the metadata supervisor, which this host may not allow. */
        if (dsh_metadata_supervisor_check_host(&problem) < 0) {
                char *sentence = NULL;

                report->enforcement = DSH_ENFORCEMENT_PARTIAL;
                if (asprintf(&sentence, "%s; %s", problem, SUPERVISOR_UNAVAILABLE_CONSEQUENCE) >= 0)
                        (void) dsh_strv_append(&report->partial_reasons, sentence);
                free(sentence);
        }
        /* Known before any call: without pidfd_getfd() the supervisor cannot perform a command's connect. */
        if (dsh_socket_call_check_host(&problem) < 0)
                (void) dsh_strv_append(&report->notes, problem);
        /*
         * Nothing outlives a spawned call only while its stand-in lives
         * (provider/stand-in-spawn.h); the signal scope is what keeps the
         * command itself from killing it.
         */
        if (abi < DSH_LANDLOCK_SCOPE_ABI)
                (void) dsh_strv_append(&report->notes,
                                       "below Landlock ABI 6 the domain has no signal scope: a confined command "
                                       "can kill its call's stand-in (SIGKILL) and leave processes running after "
                                       "the call");
        /* It cannot mount: /tmp is the host's in both modes, and read-only has nowhere to write. */
        (void) dsh_strv_append(&report->notes, "read-only: no scratch space under landlock (/tmp is the host's, "
                                               "not writable); TMPDIR=/tmp");
        (void) dsh_strv_append(&report->notes,
                               provider->scratch_dir
                                       ? "workspace-write: /tmp is the host's /tmp, shared with every process; "
                                         "package-manager caches go to the session's scratch; TMPDIR=/tmp"
                                       : "workspace-write: /tmp is the host's /tmp, shared with every process; "
                                         "TMPDIR=/tmp");
        add_private_devices_note(report);
        if (access(provider->landlock_run_path, X_OK) < 0) {
                if (asprintf(&report->reason, "the landlock-run launcher %s is not executable: %s",
                             provider->landlock_run_path, strerror(errno)) < 0)
                        report->reason = NULL;
                return;
        }
        report->usable = true;
}

static int append_grant_arguments(const struct landlock_grant *grant, void *context)
{
        char ***argv = context;

        if (grant->optional && access(grant->path, F_OK) < 0)
                return 0;  /* the launcher would refuse a rule path it cannot open */
        if (dsh_strv_append(argv, grant->writable ? "--rw" : "--ro") < 0 || dsh_strv_append(argv, grant->path) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * The call's variables (TMPDIR, the caches: scratch.h) as landlock-run's
 * `--setenv NAME VALUE`: a harness that spawns the argv itself passes its
 * own environment, which the launcher then sets them over.
 */
static int append_variable_arguments(const dsh_prepared_policy *prepared, char ***argv)
{
        char **pairs = dsh_scratch_variables(&prepared->scratch, prepared->policy.mode);
        int result = pairs ? 0 : -ENOMEM;

        for (char **pair = pairs; result == 0 && pair && pair[0] && pair[1]; pair += 2)
                if (dsh_strv_append(argv, "--setenv") < 0 || dsh_strv_append(argv, pair[0]) < 0 ||
                    dsh_strv_append(argv, pair[1]) < 0)
                        result = -ENOMEM;
        dsh_strv_free(pairs);
        return result;
}

/*
 * The caller's environment scrubbed of its secrets (call-environment.h),
 * with the call's variables set over it after (scratch.h, and the
 * network's: call-network.h), and the names it removed in
 * `facts->environment_removed`; NULL when out of memory.
 */
static char **command_environment(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                                  const dsh_call_network *network, dsh_confined_argv *facts)
{
        char **pairs = dsh_scratch_variables(&prepared->scratch, prepared->policy.mode);
        char **environment = pairs && dsh_call_network_add_variables(network, &pairs) == 0
                                     ? dsh_call_environment_build_with_facts(&provider->protections,
                                                                             &prepared->policy, pairs, facts)
                                     : NULL;

        dsh_strv_free(pairs);
        return environment;
}

static int set_dialect(dsh_confined_argv *out, dsh_enforcement enforcement, dsh_mode mode)
{
        static const int launcher_failure[] = { 125 };
        static const char *const fatal[] = { "landlock-run: ", NULL };
        static const char *const informational[] = { LANDLOCK_PARTIAL_NOTICE, NULL };

        out->enforcement = enforcement;
        if (dsh_strv_append(&out->denial_signatures, "permission denied") < 0)
                return -ENOMEM;
        /* The read-only metadata filter's answer (a chmod, a chown, a touch refused outright). */
        if (mode == DSH_MODE_READ_ONLY && dsh_strv_append(&out->denial_signatures, "operation not permitted") < 0)
                return -ENOMEM;
        out->backend = strdup("landlock");
        if (!out->backend)
                return -ENOMEM;
        return dsh_confined_argv_add_rule(out, launcher_failure, 1, fatal, informational);
}


/*
 * Landlock can only grant: nothing beneath a granted root can be held back
 * by the kernel.  The supervisor holds them back instead
 * (core/write-supervisor.h): every write-intent call is decided there, and
 * a protected subpath, a missing agent config or one of the sandbox's own
 * files inside a root is refused by name and by inode.  Runners in a
 * writable root are refused by the shield itself.
 */

/*
 * The shield for a Landlock call.  `*held_back` (may be NULL: not wanted)
 * receives what the shield holds back that exists — the protected subpaths
 * and the sandbox's own files in the writable roots — and `*kept_absent`
 * (may be NULL) the protected subpaths missing from the roots (the agent's
 * launch config, a home's startup files).  The supervisor refuses every
 * write to both; a spawn also audits the missing ones once the call is over
 * (landlock_settle()), which a harness-spawned argv has not.
 *
 * `*unprotected` (may be NULL) receives why a protected subpath is in
 * neither list (the shield's sentences: a git one that does not exist, one
 * reached through a symlink the command could repoint).  Nothing holds such
 * a path back, so the call must not claim "full" (set_facts()), and with
 * requireProtectedSubpaths it is refused, as bwrap refuses it.
 */
static int check_shield(const dsh_provider *provider, const dsh_policy *policy, char ***held_back,
                        char ***kept_absent, char ***unprotected, dsh_error *error)
{
        dsh_shield shield = DSH_SHIELD_INIT;
        int result = dsh_provider_plan_shield(provider, policy, LANDLOCK_TEMP_AREA, held_back != NULL, &shield,
                                              error);

        if (result == 0 && shield.unprotected && provider->protections.require_subpaths)
                result = dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                       "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                       shield.unprotected[0]);

        /* A missing commondir, which would send git elsewhere for hooks and config, is kept absent the same way. */
        for (char **path = shield.must_stay_absent; result == 0 && path && *path; path++)
                if (dsh_strv_append(&shield.kept_absent, *path) < 0)
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result == 0 && held_back)
                *held_back = dsh_steal_pointer(&shield.read_only);
        if (result == 0 && kept_absent)
                *kept_absent = dsh_steal_pointer(&shield.kept_absent);
        if (result == 0 && unprotected)
                *unprotected = dsh_steal_pointer(&shield.unprotected);
        dsh_shield_clear(&shield);
        return result;
}

/*
 * The facts of a Landlock run: the dialect, every reason it is partial
 * (`unprotected`: check_shield()'s; the masks not held), and the masks held.
 * Never "full" with a mask not held.
 */
static int set_facts(dsh_confined_argv *out, int abi, dsh_mode mode, char *const *unprotected,
                     const dsh_landlock_masks *masks)
{
        bool partial = unprotected || masks->unheld;

        if (set_dialect(out, partial ? DSH_ENFORCEMENT_PARTIAL : dsh_landlock_enforcement(abi), mode) < 0)
                return -ENOMEM;
        for (char *const *reason = masks->unheld; reason && *reason; reason++)
                if (dsh_confined_argv_add_partial_reason(out, *reason) < 0)
                        return -ENOMEM;
        for (char *const *path = masks->held_facts; path && *path; path++)
                if (dsh_strv_append(&out->masked, *path) < 0)
                        return -ENOMEM;
        if (dsh_landlock_enforcement(abi) == DSH_ENFORCEMENT_PARTIAL &&
            dsh_confined_argv_add_partial_reason(out, ABI_PARTIAL_REASON) < 0)
                return -ENOMEM;
        for (char *const *reason = unprotected; reason && *reason; reason++)
                if (dsh_confined_argv_add_partial_reason(out, *reason) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * The network policy as landlock-run's `--network off [--allow-local-port
 * PORT]...`: the launcher's own supervisor holds it.  Nothing under "on";
 * the allow-list never gets here (dsh_call_network_check_confine()).
 */
static int append_network_arguments(char ***argv, const dsh_network_policy *network)
{
        char port[8];

        if (network->mode == DSH_NETWORK_ON)
                return 0;
        if (dsh_strv_append(argv, "--network") < 0 || dsh_strv_append(argv, dsh_network_mode_name(network->mode)) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < network->allow_local_port_count; i++) {
                snprintf(port, sizeof(port), "%u", (unsigned) network->allow_local_ports[i]);
                if (dsh_strv_append(argv, "--allow-local-port") < 0 || dsh_strv_append(argv, port) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Each path of `paths` (NULL: none) as landlock-run's `--protect PATH`: held back by its supervisor. */
static int append_protect_arguments(char ***argv, char *const *paths)
{
        for (char *const *path = paths; path && *path; path++)
                if (dsh_strv_append(argv, "--protect") < 0 || dsh_strv_append(argv, *path) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * The masks as landlock-run will hold them: decided here on a throwaway
 * ruleset, so the launcher's own enumeration is known to fit (-E2BIG
 * becomes a partial reason, or the refusal, before the argv exists) and
 * the facts name what it holds.
 */
static int plan_launcher_masks(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                               dsh_landlock_masks *masks, dsh_error *error)
{
        dsh_landlock_ruleset trial = DSH_LANDLOCK_RULESET_INIT;
        int result = dsh_landlock_ruleset_open(&trial);

        if (result < 0)
                return dsh_error_set_unavailable(error, prepared->policy.mode, strerror(-result));
        result = dsh_landlock_masks_grant_read(&trial, LANDLOCK_READ_ACCESS, prepared,
                                               provider->protections.require_masks, masks, error);
        dsh_landlock_ruleset_close(&trial);
        return result;
}

static int landlock_confine(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                            dsh_confined_argv *out, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        int abi = dsh_landlock_abi();
        const char *problem = abi_problem(abi);
        char **held_back = NULL, **kept_absent = NULL, **unprotected = NULL;
        dsh_landlock_masks masks = DSH_LANDLOCK_MASKS_INIT;

        if (problem)
                return dsh_error_set_unavailable(error, policy->mode, problem);
        /* landlock-run hosts a supervisor of its own: off and the allowed local ports hold, the allow-list not. */
        if (dsh_call_network_check_confine(&policy->network, policy->mode, true, error) < 0)
                return -ENOSYS;
        if (check_shield(provider, policy, &held_back, &kept_absent, &unprotected, error) < 0)
                return -EPERM;
        if (plan_launcher_masks(provider, prepared, &masks, error) < 0) {
                dsh_strv_free(held_back);
                dsh_strv_free(kept_absent);
                dsh_strv_free(unprotected);
                dsh_landlock_masks_clear(&masks);
                return -EPERM;
        }
        /* The protected subpaths, those that exist and those kept absent: the launcher's supervisor holds both back. */
        if (dsh_strv_append(&out->argv, provider->landlock_run_path) < 0 ||
            for_each_grant(prepared, append_grant_arguments, &out->argv) < 0 ||
            append_protect_arguments(&out->argv, held_back) < 0 ||
            append_protect_arguments(&out->argv, kept_absent) < 0 ||
            dsh_landlock_masks_append_arguments(&masks, &out->argv) < 0 ||
            append_network_arguments(&out->argv, &policy->network) < 0 ||
            append_variable_arguments(prepared, &out->argv) < 0 ||
            dsh_call_environment_append_arguments(&provider->protections, policy, NULL, &out->argv) < 0 ||
            dsh_strv_append(&out->argv, "--") < 0)
                goto out_of_memory;
        for (char *const *argument = argv; *argument; argument++)
                if (dsh_strv_append(&out->argv, *argument) < 0)
                        goto out_of_memory;
        if (set_facts(out, abi, policy->mode, unprotected, &masks) < 0 ||
            dsh_call_environment_set_facts(&provider->protections, policy, out) < 0)
                goto out_of_memory;
        dsh_strv_free(held_back);
        dsh_strv_free(kept_absent);
        dsh_strv_free(unprotected);
        dsh_landlock_masks_clear(&masks);
        return 0;
out_of_memory:
        dsh_strv_free(held_back);
        dsh_strv_free(kept_absent);
        dsh_strv_free(unprotected);
        dsh_landlock_masks_clear(&masks);
        dsh_confined_argv_clear(out);
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

struct ruleset_builder {
        dsh_landlock_ruleset *ruleset;
        const char *failed_path;
        const char *failed_step;
};

static int add_grant_rule(const struct landlock_grant *grant, void *context)
{
        struct ruleset_builder *builder = context;
        int result;

        if (grant->masked)
                return 0;  /* granted around the masks before (build_ruleset()) */
        if (grant->fd >= 0) {
                /* The very directory that was checked: nothing renamed or repointed since can change the grant. */
                result = dsh_landlock_ruleset_grant_fd(builder->ruleset, grant->fd, grant->writable);
                builder->failed_step = "add_rule";
        } else {
                result = dsh_landlock_ruleset_grant(builder->ruleset, grant->path, grant->writable, false,
                                                    &builder->failed_step);
                if (result == -ENOENT && grant->optional)
                        return 0;
        }
        if (result < 0)
                builder->failed_path = grant->path;
        return result;
}

/*
 * Builds the ruleset of `policy` in this process, and the facts of the run
 * (`facts->argv` is left to the caller).  Returns 0 or a negative errno with
 * `error` set.
 */
static int build_ruleset(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                         dsh_landlock_ruleset *ruleset, dsh_confined_argv *facts, char ***held_back,
                         char ***kept_absent, dsh_landlock_masks *masks, const dsh_private_devices *devices,
                         dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        struct ruleset_builder builder = { ruleset, NULL, NULL };
        const char *problem;
        char detail[PATH_MAX + 128];
        char **unprotected = NULL;
        int result = check_shield(provider, policy, held_back, kept_absent, &unprotected, error);

        if (result < 0)
                return result;
        result = dsh_landlock_ruleset_open(ruleset);

        if (result < 0) {
                problem = abi_problem(result == -EOPNOTSUPP ? 1 : result);
                if (!problem) {
                        snprintf(detail, sizeof(detail), "landlock ruleset error: %s", strerror(-result));
                        problem = detail;
                }
                dsh_strv_free(unprotected);
                return dsh_error_set_unavailable(error, policy->mode, problem);
        }
        /* Read beneath "/" but the masks (landlock-masks.h); a mask it cannot hold is said, or refused. */
        result = dsh_landlock_masks_grant_read(ruleset, LANDLOCK_READ_ACCESS, prepared,
                                               provider->protections.require_masks, masks, error);
        if (result < 0) {
                dsh_landlock_ruleset_close(ruleset);
                dsh_strv_free(unprotected);
                return result;
        }
        result = for_each_grant(prepared, add_grant_rule, &builder);
        /* The command's own /dev/shm and /dev/pts, by their mounts' fds: no other inode can come to carry these. */
        if (result == 0 && devices) {
                builder.failed_step = "add_rule";
                result = dsh_landlock_ruleset_grant_fd(ruleset, devices->shm, true);
                if (result == 0)
                        result = dsh_landlock_ruleset_grant_fd(ruleset, devices->pts, true);
        }
        if (result < 0) {
                if (builder.failed_step && strcmp(builder.failed_step, "open") == 0)
                        snprintf(detail, sizeof(detail), "cannot open rule path: %s: %s", builder.failed_path,
                                 strerror(-result));
                else
                        snprintf(detail, sizeof(detail), "landlock ruleset error: %s", strerror(-result));
                dsh_landlock_ruleset_close(ruleset);
                dsh_strv_free(unprotected);
                return dsh_error_set_unavailable(error, policy->mode, detail);
        }
        /* The facts are complete before anything runs: no allocation can fail once the command does. */
        result = set_facts(facts, ruleset->abi, policy->mode, unprotected, masks);
        dsh_strv_free(unprotected);
        if (result < 0) {
                dsh_landlock_ruleset_close(ruleset);
                dsh_confined_argv_clear(facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        return 0;
}

/* Gives every writable root of a workspace-write call to the supervisor: by its fd, as Landlock grants it. */
static int supervise_roots(dsh_metadata_supervisor *supervisor, const dsh_prepared_policy *prepared)
{
        const dsh_policy *policy = &prepared->policy;
        dsh_autofree char *temp_area = dsh_path_canonical(LANDLOCK_TEMP_AREA);
        int result = dsh_metadata_supervisor_add_root(supervisor, prepared->root_fds[0], policy->workspace_root, false);

        for (size_t i = 1; result == 0 && i < prepared->root_count; i++)
                result = dsh_metadata_supervisor_add_root(supervisor, prepared->root_fds[i],
                                                          policy->additional_writable_roots[i - 1], false);
        /* The host's /tmp is everyone's: what the command creates beneath it, not the directory itself. */
        if (result == 0)
                result = temp_area ? dsh_metadata_supervisor_add_root_path(supervisor, temp_area, true) : -errno;
        /* The scratch cache: what the tools make beneath it (npm sets modes in its cache), not the directory. */
        if (result == 0 && dsh_scratch_present(&prepared->scratch))
                result = dsh_metadata_supervisor_add_root(supervisor, prepared->scratch.cache_fd,
                                                          prepared->scratch.cache_path, true);
        return result;
}

/*
 * What the supervisor holds back inside the roots: each existing protected
 * subpath and own file (by name and inode), and each missing protected
 * subpath (by name: nothing may be made there).
 */
static int hold_back(const dsh_provider *provider, dsh_metadata_supervisor *supervisor, char *const *held_back,
                     char *const *kept_absent, char *const *pinned_masks)
{
        int result = 0;

        /* A mask inside a root is readable there (not held), but never moved or linked to where a later call reads it. */
        for (char *const *path = pinned_masks; result == 0 && path && *path; path++)
                result = dsh_metadata_supervisor_hold_back(supervisor, *path, DSH_REFUSAL_MASKED_PATH);
        for (char *const *path = held_back; result == 0 && path && *path; path++)
                result = dsh_metadata_supervisor_hold_back(supervisor, *path,
                                                           dsh_provider_held_back_rule(provider, *path));
        for (char *const *path = kept_absent; result == 0 && path && *path; path++)
                result = dsh_metadata_supervisor_hold_back(supervisor, *path, DSH_REFUSAL_PROTECTED_SUBPATH);
        return result;
}

/* Whether this host lets the supervisor read a command's arguments (dsh_metadata_supervisor_check_host()). */
static bool supervisor_reads_commands(void)
{
        const char *reason;

        return dsh_metadata_supervisor_check_host(&reason) == 0;
}

/*
 * The supervisor of one call, started and waiting for its listener on
 * `*socket_out` (the child's end, which the caller puts in the plan and
 * closes once the spawn returned).  Under both modes it performs connect()
 * and every write-intent call (`filter` says whether the filter sends them);
 * under workspace-write it also performs metadata calls in the roots.
 * Refuses (SANDBOX_UNAVAILABLE) a workspace-write call where the host would
 * not let it read the command's arguments: the command never runs with
 * metadata ungoverned.  Under read-only the metadata calls are the filter's
 * (EPERM) and a connect whose arguments cannot be read is refused (EACCES).
 */
static int start_supervisor(const dsh_provider *provider, const dsh_prepared_policy *prepared,
                            dsh_metadata_policy filter, int ruleset_fd, char *const *held_back,
                            char *const *kept_absent, char *const *pinned_masks, dsh_call_network *network,
                            dsh_metadata_supervisor **supervisor_out, int *socket_out, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        bool metadata = policy->mode == DSH_MODE_WORKSPACE_WRITE;
        dsh_metadata_supervisor *supervisor = NULL;
        int result;

        *supervisor_out = NULL;
        *socket_out = -1;
        /* Read-only needs no metadata supervisor: where the host forbids one, it runs with every connect refused. */
        if (metadata && dsh_supervision_check_host(policy->mode, SUPERVISOR_UNAVAILABLE_CONSEQUENCE, error) < 0)
                return -1;
        supervisor = dsh_metadata_supervisor_new();
        result = supervisor ? 0 : -ENOMEM;
        /* Under read-only none is performed: each is refused (EPERM) and written down (metadata-supervisor.h). */
        if (result == 0 && metadata) {
                dsh_metadata_supervisor_perform_metadata(supervisor);
                result = supervise_roots(supervisor, prepared);
        }
        if (result == 0)
                result = hold_back(provider, supervisor, held_back, kept_absent, pinned_masks);
        /*
         * Every write-intent call decided there and performed under the
         * command's own ruleset — where it can read the command: under
         * read-only on a host that forbids it, the kernel decides them
         * (DSH_METADATA_DENY_KERNEL_WRITES) and no record is kept.
         */
        if (result == 0 && filter != DSH_METADATA_DENY_KERNEL_WRITES)
                result = dsh_metadata_supervisor_perform_writes(supervisor, ruleset_fd);
        /* The allow-listed unix sockets (core/socket-call.h): opened now, compared by inode later. */
        if (result == 0)
                result = dsh_metadata_supervisor_allow_unix_sockets(supervisor, policy->allowed_unix_sockets);
        if (result < 0) {
                char detail[512];

                dsh_metadata_supervisor_free(supervisor);
                snprintf(detail, sizeof(detail), "cannot start the supervisor: %s", strerror(-result));
                return dsh_error_set_unavailable(error, policy->mode, detail);
        }
        /* The host's network namespace: its loopback is shared, only what the command bound is its own. */
        result = dsh_supervision_start(supervisor, policy->mode, network, false, socket_out, error);
        if (result == 0)
                *supervisor_out = supervisor;
        return result;
}

static int landlock_spawn(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                          const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_metadata_supervisor *supervisor = NULL;
        dsh_private_devices devices = DSH_PRIVATE_DEVICES_INIT;
        dsh_landlock_masks masks = DSH_LANDLOCK_MASKS_INIT;
        char **held_back = NULL, **kept_absent = NULL, **environment = NULL;
        dsh_spawn_failure failure;
        pid_t pid, command;
        int result;

        plan.terminal_filter = true;
        plan.drop_capabilities = true;
        plan.network = dsh_call_network_filter(child->network);
        plan.metadata = policy->mode == DSH_MODE_WORKSPACE_WRITE ? DSH_METADATA_SUPERVISE
                        : supervisor_reads_commands()            ? DSH_METADATA_DENY
                                                                 : DSH_METADATA_DENY_KERNEL_WRITES;
        /* Where the caller may mount (core/private-dev.h); elsewhere the host's stay read-only. */
        if (policy->mode == DSH_MODE_WORKSPACE_WRITE && dsh_private_devices_create(&devices) == 0)
                plan.private_devices = &devices;
        result = build_ruleset(provider, prepared, &ruleset, &facts, &held_back, &kept_absent, &masks,
                               plan.private_devices, error);
        if (result < 0) {
                dsh_landlock_masks_clear(&masks);
                dsh_strv_free(held_back);
                dsh_strv_free(kept_absent);
                dsh_private_devices_close(&devices);
                return result;
        }
        facts.argv = dsh_strv_copy(argv);
        environment = command_environment(provider, prepared, child->network, &facts);
        plan.environment = environment;
        if (!facts.argv || !environment)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        else
                result = start_supervisor(provider, prepared, plan.metadata, ruleset.fd, held_back, kept_absent,
                                          masks.pinned, child->network, &supervisor, &plan.metadata_socket, error);
        dsh_strv_free(held_back);
        dsh_landlock_masks_clear(&masks);
        if (result < 0) {
                dsh_strv_free(kept_absent);
                dsh_strv_free(environment);
                dsh_private_devices_close(&devices);
                dsh_landlock_ruleset_close(&ruleset);
                dsh_confined_argv_clear(&facts);
                return result;
        }
        /*
         * The supervisor's own copy of the ruleset serves the child too, and
         * ours goes now: a call holds one ruleset fd, not two (a command run
         * under a tight fd limit has room for one more of its own).
         */
        plan.landlock_ruleset_fd = dsh_metadata_supervisor_ruleset_fd(supervisor);
        if (plan.landlock_ruleset_fd < 0)
                plan.landlock_ruleset_fd = ruleset.fd;
        else
                dsh_landlock_ruleset_close(&ruleset);
        /* Through a stand-in: nothing the command starts outlives the call (stand-in-spawn.h). */
        pid = dsh_spawn_standing_in(&plan, options, &command, &failure);
        dsh_strv_free(environment);
        dsh_landlock_ruleset_close(&ruleset);
        /* Mounted in the child's namespace by now, or gone with the child: ours are no longer needed. */
        dsh_private_devices_close(&devices);
        /* The child's copy went with its exec (or its exit): the supervisor now gets the listener or end of file. */
        if (plan.metadata_socket >= 0)
                close(plan.metadata_socket);
        if (pid < 0) {
                dsh_strv_free(kept_absent);
                dsh_metadata_supervisor_stop(supervisor, NULL);
                dsh_confined_argv_clear(&facts);
                if (pid == -ECHILD)
                        return dsh_spawn_failure_to_error(&failure, policy->mode, argv[0], error);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid, "cannot start the command: %s",
                                     strerror((int) -pid));
        }
        child->pid = pid;
        /* The command leads the group or session it asked for; its stand-in is not in it. */
        if (options->new_process_group || options->new_session)
                child->process_group = command;
        child->mode = policy->mode;
        child->facts = facts;
        /* The spawn returned only once the child exec'd the command: its pre-exec report is the status channel. */
        child->command_started = true;
        child->metadata_supervisor = supervisor;
        child->audit_absent = kept_absent;
        return 0;
}

/*
 * After waitpid() on the stand-in: it ends only once the command and
 * everything it left have been killed and reaped (stand-in-spawn.h), so no
 * process of the call is left to race the audit.  A protected subpath that
 * was missing and now exists (a `.mcp.json` the command wrote, which the
 * agent would run unconfined) is moved aside and reported, as under bwrap
 * (shield.h: dsh_shield_audit()).  Landlock cannot refuse the creation
 * itself: a root is granted whole.
 */
static void landlock_settle(dsh_child *child, int wait_status)
{
        (void) wait_status;
        child->moved_aside = dsh_shield_audit(child->audit_absent, &child->warnings, &child->moved_aside_paths);
}

/*
 * The supervisor lives in a process that stays: an in-place exec leaves
 * none, and every mode has one (connect is supervised in both), so the
 * backend never execs in place and has no exec op.
 */
static char *landlock_runner_path(const dsh_provider *provider)
{
        return provider->landlock_run_path ? strdup(provider->landlock_run_path) : NULL;
}

static char **landlock_runner_candidates(const dsh_provider *provider)
{
        char **candidates = calloc(1, sizeof(char *));

        if (candidates && provider->landlock_run_path && dsh_strv_append(&candidates, provider->landlock_run_path) < 0) {
                dsh_strv_free(candidates);
                return NULL;
        }
        return candidates;
}

const dsh_backend_ops dsh_backend_landlock = {
        .name = "landlock",
        .holds_network = true,
        .probe = landlock_probe,
        .confine = landlock_confine,
        .spawn = landlock_spawn,
        .runner_path = landlock_runner_path,
        .runner_candidates = landlock_runner_candidates,
        .settle = landlock_settle,
};
