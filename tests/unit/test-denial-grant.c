/* SPDX-License-Identifier: MIT */
/*
 * Grants (dsh_denial_find_grant(), src/denial/grant.c): for each rule, the
 * narrowest grant that why's decision allows over the policy with the
 * candidate added — judged against real directories of a scratch home, a
 * real runtime's protections and masks — and the rules that are never
 * granted.  Then a child's records (dsh_child_denials()) from a real
 * confined command on each backend: the refused change is absent on disk,
 * its denial carries the rule and the grant, and the grant, applied, lets
 * the same command land the change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/runtime.h"
#include "test-support.h"

typedef struct fixture {
        char *home;
        char *workspace;        /* home/ws: the workspace root */
        char *outside;          /* home/out: an existing directory outside every root, with sub/ */
        char *repository;       /* home/other: a git repository outside every root */
        char *launchers;
        dsh_runtime *runtime;
} fixture;

static void set_environment(const char *name, const char *directory, const char *suffix)
{
        char *value = NULL;

        assert_true(asprintf(&value, "%s%s", directory, suffix) > 0);
        assert_int_equal(setenv(name, value, 1), 0);
        free(value);
}

static dsh_runtime *new_runtime(fixture *f, const char *backend)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        options.launcher_directory = f->launchers;
        options.backend = backend;
        options.use_verdict_cache = false;
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message ? error.message : "?");
        return runtime;
}

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        const char *landlock_run = test_landlock_run_path();
        char *sub, *hooks;

        f->home = test_make_directory(NULL);
        set_environment("HOME", f->home, "");
        set_environment("XDG_CONFIG_HOME", f->home, "/.config");
        set_environment("XDG_STATE_HOME", f->home, "/.local/state");
        set_environment("XDG_CACHE_HOME", f->home, "/.cache");
        unsetenv("DSH_SANDBOX_CONFIG");
        unsetenv("DSH_SANDBOX_STATE_DIR");
        f->workspace = test_path_join(f->home, "ws");
        f->outside = test_path_join(f->home, "out");
        f->repository = test_path_join(f->home, "other");
        sub = test_path_join(f->outside, "sub");
        hooks = test_path_join(f->repository, ".git/hooks");
        assert_int_equal(mkdir(f->workspace, 0755), 0);
        assert_int_equal(mkdir(f->outside, 0755), 0);
        assert_int_equal(mkdir(sub, 0755), 0);
        test_setup_shell(f->home, "git init -q other && mkdir -p other/.git/hooks", NULL);
        assert_true(test_path_exists(hooks));
        f->launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        f->runtime = new_runtime(f, NULL);
        free(sub);
        free(hooks);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        dsh_runtime_free(f->runtime);
        free(f->launchers);
        free(f->workspace);
        free(f->outside);
        free(f->repository);
        test_remove_tree(f->home);
        free(f);
        return 0;
}

static dsh_policy policy_of(const fixture *f, dsh_mode mode)
{
        dsh_policy policy = DSH_POLICY_INIT;

        policy.mode = mode;
        policy.workspace_root = strdup(f->workspace);
        assert_non_null(policy.workspace_root);
        return policy;
}

/* The grant dsh_denial_find_grant() gives a record {op, path, rule} under `policy`. */
static dsh_grant grant_for(const fixture *f, const dsh_policy *policy, dsh_denial_op op, const char *path,
                           const char *rule)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_grant grant;

        denial.op = op;
        denial.path = path ? strdup(path) : NULL;
        denial.rule = strdup(rule);
        if (dsh_denial_find_grant(f->runtime, policy, &denial, &error) < 0)
                fail_msg("dsh_denial_find_grant: %s", error.message ? error.message : "?");
        grant = denial.grant;
        denial.grant.target = NULL;
        dsh_denial_clear(&denial);
        return grant;
}

static void assert_grant(dsh_grant grant, dsh_grant_kind kind, bool widens, dsh_mode mode, const char *target)
{
        assert_string_equal(dsh_grant_kind_name(grant.kind), dsh_grant_kind_name(kind));
        if (kind != DSH_GRANT_NONE) {
                assert_int_equal(grant.widens, widens);
                assert_string_equal(dsh_mode_name(grant.mode), dsh_mode_name(mode));
        }
        if (target)
                assert_string_equal(grant.target, target);
        else
                assert_null(grant.target);
        free(grant.target);
}

static char *path_in(const char *directory, const char *name)
{
        return test_path_join(directory, name);
}

/* ------------------------------------------------------------ the roots -- */

static void test_outside_roots_workspace_write(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *file = path_in(f->outside, "x");
        char *deep = path_in(f->outside, "new/deeper/x");
        char *sub = path_in(f->outside, "sub");

        /* The nearest existing directory, the call's own mode. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, file, "outside-roots"), DSH_GRANT_WRITABLE_ROOT, false,
                     DSH_MODE_WORKSPACE_WRITE, f->outside);
        /* A path whose parents do not exist: the nearest one that does. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, deep, "outside-roots"), DSH_GRANT_WRITABLE_ROOT, false,
                     DSH_MODE_WORKSPACE_WRITE, f->outside);
        /* An existing directory changed as an entry (rmdir, chmod): a root at itself does not allow that; its parent does. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_METADATA, sub, "outside-roots"), DSH_GRANT_WRITABLE_ROOT, false,
                     DSH_MODE_WORKSPACE_WRITE, f->outside);
        free(file);
        free(deep);
        free(sub);
        dsh_policy_clear(&policy);
}

static void test_outside_roots_read_only(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_READ_ONLY);
        char *inside = path_in(f->workspace, "x");
        char *file = path_in(f->outside, "x");

        /* In the workspace: the wider mode alone. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, inside, "outside-roots"), DSH_GRANT_MODE, true,
                     DSH_MODE_WORKSPACE_WRITE, NULL);
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, "/tmp/dsh-grant-test-x", "outside-roots"), DSH_GRANT_MODE,
                     true, DSH_MODE_WORKSPACE_WRITE, NULL);
        /* Outside it: the root, which needs workspace-write too. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, file, "outside-roots"), DSH_GRANT_WRITABLE_ROOT, true,
                     DSH_MODE_WORKSPACE_WRITE, f->outside);
        free(inside);
        free(file);
        dsh_policy_clear(&policy);
}

static void test_outside_roots_only_the_mode(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *hook = path_in(f->repository, ".git/hooks/pre-commit");
        char *hooks = NULL;

        /* "/" as a root is everything: only the mode says that. */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, "/dsh-grant-test-x", "outside-roots"), DSH_GRANT_MODE,
                     true, DSH_MODE_DANGER_FULL_ACCESS, NULL);
        /* A root the provider refuses (it holds what confines later calls: /etc/ld.so.preload's directory). */
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, "/etc/dsh-grant-test-x", "outside-roots"),
                     DSH_GRANT_MODE, true, DSH_MODE_DANGER_FULL_ACCESS, NULL);
        /*
         * Another repository's hooks directory as a root of its own is what it names: both backends
         * let a command write there under --allow-write DIR, so that is the grant (the prompt names it).
         */
        hooks = path_in(f->repository, ".git/hooks");
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, hook, "outside-roots"), DSH_GRANT_WRITABLE_ROOT, false,
                     DSH_MODE_WORKSPACE_WRITE, hooks);
        dsh_policy_clear(&policy);
        /* Under read-only, a protected subpath of the workspace: workspace-write still refuses it, so only the mode. */
        test_setup_shell(f->workspace, "git init -q .", NULL);
        policy = policy_of(f, DSH_MODE_READ_ONLY);
        free(hook);
        hook = path_in(f->workspace, ".git/config");
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, hook, "outside-roots"), DSH_GRANT_MODE, true,
                     DSH_MODE_DANGER_FULL_ACCESS, NULL);
        free(hook);
        free(hooks);
        dsh_policy_clear(&policy);
}

static void test_outside_roots_own_file(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *store = NULL;

        /* The session store is one of the sandbox's own files: outside the roots, and never granted. */
        assert_true(asprintf(&store, "%s/.local/state/dsh-sandbox/forged.jsonl", f->home) > 0);
        test_setup_shell(f->home, "mkdir -p .local/state/dsh-sandbox", NULL);
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, store, "outside-roots"), DSH_GRANT_NONE, false,
                     DSH_MODE_READ_ONLY, NULL);
        /* A record naming it through a symlink (as a command may see it): the candidate is canonical, still none. */
        free(store);
        test_setup_shell(f->home, "ln -s ../.local/state/dsh-sandbox out/state-link", NULL);
        assert_true(asprintf(&store, "%s/out/state-link/forged.jsonl", f->home) > 0);
        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, store, "outside-roots"), DSH_GRANT_NONE, false,
                     DSH_MODE_READ_ONLY, NULL);
        free(store);
        dsh_policy_clear(&policy);
}

/* ---------------------------------------------------------- the others -- */

static void test_never_granted(void **state)
{
        static const char *const rules[] = { "own-file", "masked-path", "abstract-socket", "metadata-address",
                                             "sni-mismatch", "protocol-not-allowed", "bad-request" };
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *file = path_in(f->outside, "x");

        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, file, rules[i]), DSH_GRANT_NONE, false,
                             DSH_MODE_READ_ONLY, NULL);
        free(file);
        dsh_policy_clear(&policy);
}

static void test_protected_subpath(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *config = path_in(f->workspace, ".git/config");

        assert_grant(grant_for(f, &policy, DSH_DENIAL_WRITE, config, "protected-subpath"), DSH_GRANT_MODE, true,
                     DSH_MODE_DANGER_FULL_ACCESS, NULL);
        free(config);
        dsh_policy_clear(&policy);
}

static dsh_grant host_grant(const fixture *f, const dsh_policy *policy, dsh_denial_op op, const char *host,
                            int port, const char *rule)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_grant grant;

        denial.op = op;
        denial.host = strdup(host);
        denial.port = port;
        denial.rule = strdup(rule);
        if (dsh_denial_find_grant(f->runtime, policy, &denial, &error) < 0)
                fail_msg("dsh_denial_find_grant: %s", error.message ? error.message : "?");
        grant = denial.grant;
        denial.grant.target = NULL;
        dsh_denial_clear(&denial);
        return grant;
}

static void test_network_grants(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char github[] = "*.github.com";
        char *hosts[] = { github, NULL };

        policy.network.mode = DSH_NETWORK_OFF;
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "example.com", 443, "network-off"),
                     DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE, "example.com:443");
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "2001:db8::1", 443, "network-off"),
                     DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE, "[2001:db8::1]:443");
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "127.0.0.1", 8080, "local-port"),
                     DSH_GRANT_LOCAL_PORT, false, DSH_MODE_WORKSPACE_WRITE, "8080");
        policy.network.mode = DSH_NETWORK_ALLOW_LIST;
        policy.network.allow_hosts = dsh_strv_copy(hosts);
        assert_grant(host_grant(f, &policy, DSH_DENIAL_DNS, "example.com", 0, "host-not-allowed"),
                     DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE, "example.com");
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "203.0.113.7", 80, "address-not-resolved"),
                     DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE, "203.0.113.7:80");
        /* A name no allow-list entry may hold (a bare top-level name) allows nothing: none. */
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "com", 443, "host-not-allowed"), DSH_GRANT_NONE,
                     false, DSH_MODE_READ_ONLY, NULL);
        assert_grant(host_grant(f, &policy, DSH_DENIAL_CONNECT, "169.254.169.254", 80, "metadata-address"),
                     DSH_GRANT_NONE, false, DSH_MODE_READ_ONLY, NULL);
        dsh_policy_clear(&policy);
}

/* ------------------------------------------------------- why's answers -- */

static int why(const fixture *f, const dsh_policy *policy, dsh_denial_op op, const char *target, char **rule)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_why(f->runtime, policy, op, target, &denial, &error);

        *rule = denial.rule ? strdup(denial.rule) : NULL;
        if (result == 1)
                assert_string_equal(dsh_denial_source_name(denial.source), "policy");
        dsh_denial_clear(&denial);
        dsh_error_clear(&error);
        return result;
}

static void test_why_bad_input(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        const char *const bad[] = { "", "example.com", "example.com:", "example.com:0", "example.com:65536",
                                    "::1:80", "[::1]80", "[::1]:x" };
        char *rule = NULL;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(why(f, &policy, DSH_DENIAL_CONNECT, bad[i], &rule), -EINVAL);
                assert_null(rule);
        }
        assert_int_equal(why(f, &policy, DSH_DENIAL_DNS, "example.com", &rule), -EINVAL);
        assert_int_equal(why(f, &policy, DSH_DENIAL_WRITE, "", &rule), -EINVAL);
        assert_int_equal(why(f, &policy, DSH_DENIAL_WRITE, "ws/..", &rule), -EINVAL);
        dsh_policy_clear(&policy);
}

/* A relative target is the workspace's; a symlink's target is judged where it points. */
static void test_why_resolves_as_the_guard(void **state)
{
        fixture *f = *state;
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        char *link = path_in(f->workspace, "out-link");
        char *through = path_in(f->workspace, "out-link/x");
        char *rule = NULL;

        assert_int_equal(symlink(f->outside, link), 0);
        assert_int_equal(why(f, &policy, DSH_DENIAL_WRITE, "new/file", &rule), 0);
        assert_int_equal(why(f, &policy, DSH_DENIAL_WRITE, through, &rule), 1);
        assert_string_equal(rule, "outside-roots");
        free(rule);
        assert_int_equal(why(f, &policy, DSH_DENIAL_READ, through, &rule), 0);
        free(link);
        free(through);
        dsh_policy_clear(&policy);
}

/* ------------------------------------------------------ a child's records -- */

static bool backend_usable(const char *backend)
{
        if (strcmp(backend, "bwrap") == 0 && !test_bwrap_works()) {
                printf("# SKIP bwrap: it cannot make a sandbox on this host\n");
                return false;
        }
        return true;
}

/* Runs `script` with /bin/sh under `policy` on `runtime`'s backend; the child's denials in `out`. */
static void run_confined(dsh_runtime *runtime, const dsh_policy *policy, const char *script, dsh_denials *out)
{
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) script, NULL };
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        int status = 0, null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

        assert_true(null_fd >= 0);
        options.stdin_fd = null_fd;
        options.stdout_fd = null_fd;
        options.stderr_fd = null_fd;
        if (dsh_provider_spawn(dsh_runtime_provider(runtime), argv, policy, &options, &child, &error) < 0)
                fail_msg("spawn: %s", error.message ? error.message : "?");
        assert_int_equal(dsh_child_wait(child, &status), 0);
        if (dsh_child_denials(runtime, policy, child, out, &error) < 0)
                fail_msg("dsh_child_denials: %s", error.message ? error.message : "?");
        dsh_child_free(child);
        close(null_fd);
}

static const dsh_denial *find_denial(const dsh_denials *denials, dsh_denial_op op, const char *path)
{
        for (size_t i = 0; i < denials->count; i++)
                if (denials->items[i].op == op && denials->items[i].path && strcmp(denials->items[i].path, path) == 0)
                        return &denials->items[i];
        return NULL;
}

static void check_child_records(fixture *f, const char *backend)
{
        dsh_runtime *runtime = new_runtime(f, backend);
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        dsh_denials denials = DSH_DENIALS_INIT, again = DSH_DENIALS_INIT;
        char *file = path_in(f->outside, "x");
        char *sub = path_in(f->outside, "sub");
        char *script = NULL;
        const dsh_denial *write, *metadata;
        struct stat before, after;

        assert_int_equal(stat(sub, &before), 0);
        assert_true(asprintf(&script, "touch '%s'; chmod 700 '%s'; exit 0", file, sub) > 0);
        run_confined(runtime, &policy, script, &denials);
        /* Refused on disk, and said so by the records. */
        assert_false(test_path_exists(file));
        assert_int_equal(stat(sub, &after), 0);
        assert_int_equal(after.st_mode, before.st_mode);
        write = find_denial(&denials, DSH_DENIAL_WRITE, file);
        metadata = find_denial(&denials, DSH_DENIAL_METADATA, sub);
        if (!write || !metadata)
                print_message("%s: %zu denials, no write of %s or chmod of %s among them\n", backend, denials.count,
                              file, sub);
        assert_non_null(write);
        assert_non_null(metadata);
        if (!write || !metadata)
                return;
        assert_string_equal(write->rule, "outside-roots");
        assert_string_equal(dsh_denial_source_name(write->source), "supervisor");
        assert_string_equal(metadata->call, "chmod");
        assert_string_equal(dsh_grant_kind_name(write->grant.kind), "writable-root");
        assert_string_equal(write->grant.target, f->outside);
        assert_string_equal(dsh_grant_kind_name(metadata->grant.kind), "writable-root");
        assert_string_equal(metadata->grant.target, f->outside);
        /* The grant, applied for one call, lands both; the call after it, without, is refused again. */
        assert_int_equal(dsh_strv_append(&policy.additional_writable_roots, write->grant.target), 0);
        run_confined(runtime, &policy, script, &again);
        assert_true(test_path_exists(file));
        assert_int_equal(stat(sub, &after), 0);
        assert_int_equal(after.st_mode & 07777, 0700);
        assert_null(find_denial(&again, DSH_DENIAL_WRITE, file));
        printf("# %s: %zu denials, the write's grant --additional-write %s lands it\n", backend, denials.count,
               write->grant.target);
        free(script);
        free(file);
        free(sub);
        dsh_denials_clear(&denials);
        dsh_denials_clear(&again);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
}

static void test_child_records_bwrap(void **state)
{
        if (backend_usable("bwrap"))
                check_child_records(*state, "bwrap");
}

static void test_child_records_landlock(void **state)
{
        check_child_records(*state, "landlock");
}

/* A protected subpath the command created, kept absent: its denial says so and offers only the mode. */
static void test_child_kept_absent(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        fixture *f = *state;

        for (size_t i = 0; i < 2; i++) {
                dsh_runtime *runtime;
                dsh_policy policy;
                dsh_denials denials = DSH_DENIALS_INIT;
                char *config = path_in(f->workspace, ".mcp.json");
                char *script = NULL;
                const dsh_denial *denial;

                if (!backend_usable(backends[i])) {
                        free(config);
                        continue;
                }
                runtime = new_runtime(f, backends[i]);
                policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
                assert_true(asprintf(&script, "echo '{}' > '%s'; exit 0", config) > 0);
                run_confined(runtime, &policy, script, &denials);
                assert_false(test_path_exists(config));
                denial = find_denial(&denials, DSH_DENIAL_WRITE, config);
                if (!denial)
                        print_message("%s: no denial for %s among %zu\n", backends[i], config, denials.count);
                assert_non_null(denial);
                if (denial) {
                        assert_string_equal(denial->rule, "protected-subpath");
                        assert_string_equal(dsh_grant_kind_name(denial->grant.kind), "mode");
                        assert_string_equal(dsh_mode_name(denial->grant.mode), "danger-full-access");
                        printf("# %s: %s refused by the %s\n", backends[i], config,
                               dsh_denial_source_name(denial->source));
                }
                free(script);
                free(config);
                dsh_denials_clear(&denials);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
}

/* A daemon's socket outside every root: the connect is refused, recorded as a connect with its path, granted by allowing it. */
static void test_child_unix_socket(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        fixture *f = *state;
        char *path = path_in(f->outside, "daemon.sock");
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char *script = NULL;

        assert_true(listener >= 0);
        assert_true(strlen(path) < sizeof(address.sun_path));
        memcpy(address.sun_path, path, strlen(path));
        assert_int_equal(bind(listener, (struct sockaddr *) &address, sizeof(address)), 0);
        assert_int_equal(listen(listener, 4), 0);
        assert_true(asprintf(&script, "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"%s\")'",
                             path) > 0);
        for (size_t i = 0; i < 2; i++) {
                dsh_runtime *runtime;
                dsh_policy policy;
                dsh_denials denials = DSH_DENIALS_INIT;
                const dsh_denial *denial;

                if (!backend_usable(backends[i]))
                        continue;
                runtime = new_runtime(f, backends[i]);
                policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
                run_confined(runtime, &policy, script, &denials);
                denial = find_denial(&denials, DSH_DENIAL_CONNECT, path);
                if (!denial)
                        print_message("%s: no connect of %s among %zu denials\n", backends[i], path, denials.count);
                assert_non_null(denial);
                if (denial) {
                        assert_string_equal(denial->rule, "unix-socket");
                        assert_string_equal(denial->call, "connect");
                        assert_string_equal(dsh_grant_kind_name(denial->grant.kind), "unix-socket");
                        assert_string_equal(denial->grant.target, path);
                }
                dsh_denials_clear(&denials);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
        close(listener);
        free(script);
        free(path);
}

/*
 * Many refusals of one call, their grants found with the call's guards
 * kept (one per candidate policy, denial/grant.h): each is the grant a
 * question alone finds.  Two names in one candidate root share its guard
 * and still differ (.mcp.json is protected there, its neighbour is not);
 * eleven candidate roots are more than the set keeps, and the first one is
 * asked again after it was let go.
 */
static void test_child_grants_reused(void **state)
{
        fixture *f = *state;
        dsh_runtime *runtime = new_runtime(f, "landlock");
        dsh_policy policy = policy_of(f, DSH_MODE_WORKSPACE_WRITE);
        dsh_denials denials = DSH_DENIALS_INIT;
        char *script = NULL, *plain = path_in(f->outside, "a"), *config = path_in(f->outside, ".mcp.json");
        const dsh_denial *denial;

        for (int i = 0; i < 10; i++) {
                char name[8], *directory;

                snprintf(name, sizeof(name), "d%d", i);
                directory = path_in(f->outside, name);
                assert_int_equal(mkdir(directory, 0755), 0);
                free(directory);
        }
        assert_true(asprintf(&script,
                             "cd '%s' && for d in d0 d1 d2 d3 d4 d5 d6 d7 d8 d9; do echo > $d/f; echo > $d/g; done;"
                             " echo > d0/h; echo > a; echo '{}' > .mcp.json; exit 0",
                             f->outside) > 0);
        run_confined(runtime, &policy, script, &denials);
        assert_true(denials.count >= 23);
        for (size_t i = 0; i < denials.count; i++) {
                const dsh_denial *record = &denials.items[i];
                dsh_grant alone;

                if (!record->path || strcmp(record->rule, "outside-roots") != 0)
                        continue;
                alone = grant_for(f, &policy, record->op, record->path, record->rule);
                assert_grant(alone, record->grant.kind, record->grant.widens, record->grant.mode, record->grant.target);
        }
        denial = find_denial(&denials, DSH_DENIAL_WRITE, plain);
        assert_non_null(denial);
        if (denial) {
                assert_string_equal(dsh_grant_kind_name(denial->grant.kind), "writable-root");
                assert_string_equal(denial->grant.target, f->outside);
        }
        denial = find_denial(&denials, DSH_DENIAL_WRITE, config);
        assert_non_null(denial);
        if (denial) {
                assert_string_equal(dsh_grant_kind_name(denial->grant.kind), "mode");
                assert_string_equal(dsh_mode_name(denial->grant.mode), "danger-full-access");
        }
        printf("# %zu denials, each grant as a question alone finds it\n", denials.count);
        free(script);
        free(plain);
        free(config);
        dsh_denials_clear(&denials);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_outside_roots_workspace_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_outside_roots_read_only, setup, teardown),
                cmocka_unit_test_setup_teardown(test_outside_roots_only_the_mode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_outside_roots_own_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_never_granted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected_subpath, setup, teardown),
                cmocka_unit_test_setup_teardown(test_network_grants, setup, teardown),
                cmocka_unit_test_setup_teardown(test_why_bad_input, setup, teardown),
                cmocka_unit_test_setup_teardown(test_why_resolves_as_the_guard, setup, teardown),
                cmocka_unit_test_setup_teardown(test_child_records_bwrap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_child_records_landlock, setup, teardown),
                cmocka_unit_test_setup_teardown(test_child_kept_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_child_unix_socket, setup, teardown),
                cmocka_unit_test_setup_teardown(test_child_grants_reused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
