/* SPDX-License-Identifier: MIT */
/*
 * The runtime: where its configuration comes from, the protections its
 * provider has (checked by what a confined command can do on disk, not by
 * reading fields), the launcher directory, sessions, and relative roots.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "dsh-sandbox/runtime.h"
#include "test-support.h"

typedef struct fixture {
        char *home;             /* scratch, standing in for $HOME and holding the XDG directories */
        char *config_directory; /* $XDG_CONFIG_HOME/dsh-sandbox */
        char *default_config;   /* ... /config.json (not created) */
        char *launchers;        /* the build tree's landlock-run and dsh-sandbox-exec */
        char *original_cwd;
} fixture;

static void set_environment(const char *name, const char *directory, const char *suffix)
{
        char *value = NULL;

        assert_true(asprintf(&value, "%s%s", directory, suffix) > 0);
        assert_int_equal(setenv(name, value, 1), 0);
        free(value);
}

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        const char *landlock_run = test_landlock_run_path();

        f->home = test_make_directory(NULL);
        set_environment("HOME", f->home, "");
        set_environment("XDG_CONFIG_HOME", f->home, "/.config");
        set_environment("XDG_STATE_HOME", f->home, "/.local/state");
        set_environment("XDG_CACHE_HOME", f->home, "/.cache");
        unsetenv("DSH_SANDBOX_CONFIG");
        unsetenv("DSH_SANDBOX_STATE_DIR");
        assert_true(asprintf(&f->config_directory, "%s/.config/dsh-sandbox", f->home) > 0);
        f->default_config = test_path_join(f->config_directory, "config.json");
        f->launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        f->original_cwd = getcwd(NULL, 0);
        assert_non_null(f->original_cwd);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        assert_int_equal(chdir(f->original_cwd), 0);
        free(f->original_cwd);
        free(f->launchers);
        free(f->default_config);
        free(f->config_directory);
        test_remove_tree(f->home);
        free(f);
        return 0;
}

static void write_default_config(fixture *f, const char *content)
{
        char *command = NULL;

        assert_true(asprintf(&command, "mkdir -p '%s'", f->config_directory) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        test_write_file(f->default_config, content);
}

static dsh_runtime *new_runtime(const dsh_runtime_options *options)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        if (dsh_runtime_new(options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message);
        return runtime;
}

/* A workspace-write policy rooted at `root`, resolved through the runtime. */
static void resolve_workspace_write(dsh_runtime *runtime, const char *root, dsh_policy *policy)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_error error = DSH_ERROR_INIT;

        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = root;
        if (dsh_runtime_resolve(runtime, &request, policy, &error) < 0)
                fail_msg("dsh_runtime_resolve: %s", error.message);
}

/*
 * Spawns `argv` confined through the runtime's provider and waits for it.
 * Returns 0 with *exit_status set, or the spawn's negative errno with `error` set (nothing ran).
 */
static int run_confined(dsh_runtime *runtime, const dsh_policy *policy, char *const *argv, int *exit_status,
                        dsh_error *error)
{
        dsh_child *child = NULL;
        int wait_status = 0;
        int result = dsh_provider_spawn(dsh_runtime_provider(runtime), argv, policy, NULL, &child, error);

        if (result < 0)
                return result;
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        result = dsh_child_runner_error(child, error);
        dsh_child_free(child);
        if (result < 0)
                return result;
        *exit_status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
        return 0;
}

/* Confines `true` through the runtime's provider (nothing runs). */
static int confine_true(dsh_runtime *runtime, const dsh_policy *policy, dsh_confined_argv *confined, dsh_error *error)
{
        const char *argv[] = { "true", NULL };

        return dsh_provider_confine(dsh_runtime_provider(runtime), (char *const *) argv, policy, confined, error);
}

/* ------------------------------------------------------------------ configuration sources -- */

static void test_default_without_file(void **state)
{
        fixture *f = *state;
        dsh_runtime *runtime;
        char *cwd = realpath(".", NULL);

        (void) f;
        runtime = new_runtime(NULL);
        assert_null(dsh_runtime_config_path(runtime));
        assert_int_equal(dsh_runtime_config(runtime)->mode, DSH_MODE_READ_ONLY);
        assert_string_equal(dsh_runtime_config(runtime)->workspace_root, cwd);
        assert_non_null(dsh_runtime_policy_service(runtime));
        dsh_runtime_free(runtime);
        free(cwd);
}

static void test_default_reads_xdg_file(void **state)
{
        fixture *f = *state;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_runtime *runtime;

        write_default_config(f, "{\"mode\":\"workspace-write\",\"probeTimeoutMs\":1234}\n");
        runtime = new_runtime(&options);
        assert_string_equal(dsh_runtime_config_path(runtime), f->default_config);
        assert_int_equal(dsh_runtime_config(runtime)->mode, DSH_MODE_WORKSPACE_WRITE);
        assert_int_equal(dsh_runtime_config(runtime)->probe_timeout_ms, 1234);
        dsh_runtime_free(runtime);
}

/* $DSH_SANDBOX_CONFIG wins over the XDG file, and must exist when set. */
static void test_default_reads_named_file(void **state)
{
        fixture *f = *state;
        char *named = test_path_join(f->home, "named.json");
        char *missing = test_path_join(f->home, "missing.json");
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        write_default_config(f, "{\"mode\":\"workspace-write\"}\n");
        test_write_file(named, "{\"mode\":\"danger-full-access\"}\n");
        assert_int_equal(setenv("DSH_SANDBOX_CONFIG", named, 1), 0);
        runtime = new_runtime(NULL);
        assert_string_equal(dsh_runtime_config_path(runtime), named);
        assert_int_equal(dsh_runtime_config(runtime)->mode, DSH_MODE_DANGER_FULL_ACCESS);
        dsh_runtime_free(runtime);

        assert_int_equal(setenv("DSH_SANDBOX_CONFIG", missing, 1), 0);
        assert_true(dsh_runtime_new(NULL, &runtime, &error) < 0);
        assert_null(runtime);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, missing));
        dsh_error_clear(&error);
        unsetenv("DSH_SANDBOX_CONFIG");
        free(missing);
        free(named);
}

static void test_file_missing_is_named(void **state)
{
        fixture *f = *state;
        char *missing = test_path_join(f->home, "missing.json");
        char *expected = NULL;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        options.config_source = DSH_RUNTIME_CONFIG_FILE;
        options.config_path = missing;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -ENOENT);
        assert_null(runtime);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_true(asprintf(&expected, "config %s: cannot open: No such file or directory", missing) > 0);
        assert_string_equal(error.message, expected);
        dsh_error_clear(&error);

        /* Nothing named at all. */
        options.config_path = NULL;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        free(expected);
        free(missing);
}

/* A relative file is read against the cwd, named in errors as given, and kept absolute. */
static void test_file_relative_to_cwd(void **state)
{
        fixture *f = *state;
        char *file = test_path_join(f->home, "relative.json");
        char *bad = test_path_join(f->home, "bad.json");
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        test_write_file(file, "{\"mode\":\"workspace-write\"}\n");
        test_write_file(bad, "{\"mode\":\"sideways\"}\n");
        assert_int_equal(chdir(f->home), 0);
        options.config_source = DSH_RUNTIME_CONFIG_FILE;
        options.config_path = "relative.json";
        runtime = new_runtime(&options);
        assert_string_equal(dsh_runtime_config_path(runtime), file);
        assert_int_equal(dsh_runtime_config(runtime)->mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_runtime_free(runtime);

        options.config_path = "bad.json";
        assert_true(dsh_runtime_new(&options, &runtime, &error) < 0);
        assert_non_null(strstr(error.message, "config bad.json: key \"mode\": "));
        dsh_error_clear(&error);
        free(bad);
        free(file);
}

/* Values set in code are copied (the caller's may go), and no file is read, not even the default one. */
static void test_values_copied(void **state)
{
        fixture *f = *state;
        char *extra = test_path_join(f->home, "extra");
        char *roots[] = { extra, NULL };
        const char *backends[] = { "landlock", NULL };
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_config config;
        dsh_runtime *runtime;
        const dsh_config *held;

        write_default_config(f, "{\"mode\":\"danger-full-access\"}\n");
        assert_int_equal(mkdir(extra, 0755), 0);
        assert_int_equal(dsh_config_init(&config, &error), 0);
        config.mode = DSH_MODE_WORKSPACE_WRITE;
        free(config.workspace_root);
        config.workspace_root = strdup(f->home);
        config.additional_writable_roots = dsh_strv_copy(roots);
        config.backends = dsh_strv_copy((char *const *) backends);
        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        options.config = &config;
        runtime = new_runtime(&options);
        dsh_config_clear(&config);
        memset(&config, 0x5a, sizeof(config));   /* whatever the caller does with its own copy now */

        held = dsh_runtime_config(runtime);
        assert_null(dsh_runtime_config_path(runtime));
        assert_int_equal(held->mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(held->workspace_root, f->home);
        assert_string_equal(held->backends[0], "landlock");
        assert_null(held->backends[1]);
        assert_int_equal(dsh_runtime_resolve(runtime, NULL, &policy, &error), 0);
        assert_int_equal(policy.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(policy.workspace_root, f->home);
        assert_string_equal(policy.additional_writable_roots[0], extra);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(extra);
}

/* Values set in code are checked by the same owners that check a file's. */
static void test_values_checked(void **state)
{
        const char *unknown[] = { "chroot", NULL };
        const char *relative[] = { "relative/root", NULL };
        const char *relative_mask[] = { "a/../b", NULL };
        const char *wildcard_name[] = { "*_TOKEN", NULL };
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_config config = { 0 };
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        (void) state;
        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);   /* no values given */
        dsh_error_clear(&error);
        options.config = &config;
        config.backends = (char **) unknown;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, "unknown backend \"chroot\""));
        dsh_error_clear(&error);
        config.backends = NULL;
        config.additional_writable_roots = (char **) relative;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        assert_non_null(strstr(error.message, "\"relative/root\" is not an absolute path"));
        dsh_error_clear(&error);
        config.additional_writable_roots = NULL;
        /* The secrets are checked by the provider's setters, with the entry named. */
        config.masked_paths = (char **) relative_mask;
        config.masked_paths_set = true;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        assert_non_null(strstr(error.message, "masked path \"a/../b\": "));
        dsh_error_clear(&error);
        config.masked_paths = NULL;
        config.environment_allow = (char **) wildcard_name;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        assert_non_null(strstr(error.message, "\"*_TOKEN\": "));
        dsh_error_clear(&error);
        config.environment_allow = NULL;
        config.mode = (dsh_mode) 42;
        assert_int_equal(dsh_runtime_new(&options, &runtime, &error), -EINVAL);
        dsh_error_clear(&error);
        assert_null(runtime);
}

/* The config's secrets reach the provider (what its probe reports is what every call plans from). */
static void test_secrets_reach_the_provider(void **state)
{
        fixture *f = *state;
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_runtime *runtime;

        write_default_config(f, "{\"maskedPaths\":[\".foo\",\"/srv/*.key\"],\"requireMasks\":true,"
                                "\"environment\":{\"deny\":[],\"allow\":[\"GH_TOKEN\"]}}\n");
        runtime = new_runtime(&options);
        assert_int_equal(dsh_provider_probe(dsh_runtime_provider(runtime), &report, &error), 0);
        assert_int_equal(dsh_strv_length(report.secrets_masked_paths), 2);
        assert_string_equal(report.secrets_masked_paths[1], "/srv/*.key");
        assert_true(report.secrets_require_masks);
        assert_int_equal(dsh_strv_length(report.secrets_environment_deny), 0);   /* [] is none, not the defaults */
        assert_string_equal(report.secrets_environment_allow[0], "GH_TOKEN");
        dsh_probe_report_clear(&report);
        dsh_runtime_free(runtime);

        /* A config silent on them: the defaults, which mask and scrub. */
        write_default_config(f, "{}\n");
        runtime = new_runtime(&options);
        assert_int_equal(dsh_provider_probe(dsh_runtime_provider(runtime), &report, &error), 0);
        assert_int_equal(dsh_strv_length(report.secrets_masked_paths),
                         dsh_strv_length((char *const *) dsh_default_masked_paths()));
        assert_false(report.secrets_require_masks);
        assert_int_equal(dsh_strv_length(report.secrets_environment_deny),
                         dsh_strv_length((char *const *) dsh_default_environment_deny()));
        assert_int_equal(dsh_strv_length(report.secrets_environment_allow), 0);
        dsh_probe_report_clear(&report);
        dsh_runtime_free(runtime);
}

/* Values without a workspaceRoot (a zeroed struct): an agentless call works in the cwd. */
static void test_values_without_root_use_cwd(void **state)
{
        fixture *f = *state;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_config config = { 0 };
        dsh_runtime *runtime;

        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        options.config = &config;
        runtime = new_runtime(&options);
        assert_int_equal(chdir(f->home), 0);
        assert_int_equal(dsh_runtime_resolve(runtime, NULL, &policy, &error), 0);
        assert_int_equal(policy.mode, DSH_MODE_READ_ONLY);
        assert_string_equal(policy.workspace_root, f->home);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
}

/* ------------------------------------------------------------------------------ protections -- */

static dsh_runtime *runtime_with_backend(fixture *f, const char *backend, const char *config_path)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;

        options.backend = backend;
        options.launcher_directory = f->launchers;
        if (config_path) {
                options.config_source = DSH_RUNTIME_CONFIG_FILE;
                options.config_path = config_path;
        }
        return new_runtime(&options);
}

/* The session store's and the verdict cache's directories, as a used home has them. */
static void make_own_directories(const fixture *f)
{
        char *command = NULL;

        assert_true(asprintf(&command, "mkdir -p '%s/.local/state/dsh-sandbox' '%s/.cache/dsh-sandbox'", f->home,
                             f->home) > 0);
        assert_int_equal(system(command), 0);
        free(command);
}

/*
 * A workspace at a home that holds the sandbox's own files: the command
 * writes its workspace but not the config (the default one and a named
 * one), the session store or the verdict cache.  Checked on disk.
 * Their directories exist, so a forged file is refused, not merely missing
 * a parent.
 */
static void check_own_files_unwritable(fixture *f, const char *backend)
{
        char *named = test_path_join(f->home, "named.json");
        char *ordinary = test_path_join(f->home, "ordinary");
        char *session = NULL, *cache = NULL, *config_text, *named_text;
        const char *argv[] = { "sh", "-c",
                         "echo '{\"runnerCommand\":[\"env\"],\"runnerFailureSignatures\":[\"x\"]}' > \"$1\"; "
                         "echo '{\"mode\":\"danger-full-access\"}' > \"$2\"; "
                         "echo forged > \"$3\"; echo forged > \"$4\"; echo ok > \"$5\"",
                         "sh", f->default_config, named, NULL, NULL, ordinary, NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime;
        int status = -1;

        assert_true(asprintf(&session, "%s/.local/state/dsh-sandbox/forged.jsonl", f->home) > 0);
        assert_true(asprintf(&cache, "%s/.cache/dsh-sandbox/verdict-forged.json", f->home) > 0);
        argv[6] = session;
        argv[7] = cache;
        make_own_directories(f);
        write_default_config(f, "{}\n");
        test_write_file(named, "{}\n");
        runtime = runtime_with_backend(f, backend, named);
        resolve_workspace_write(runtime, f->home, &policy);
        if (run_confined(runtime, &policy, (char *const *) argv, &status, &error) < 0) {
                if (error.code != DSH_ERROR_SANDBOX_UNAVAILABLE)
                        fail_msg("spawn: %s", error.message);
                print_message("skipped: %s cannot confine on this host: %s\n", backend, error.message);
                dsh_error_clear(&error);
                skip();
        }
        assert_int_equal(status, 0);
        assert_true(test_path_exists(ordinary));   /* the workspace itself stays writable */
        config_text = test_read_file(f->default_config);
        named_text = test_read_file(named);
        assert_string_equal(config_text, "{}\n");
        assert_string_equal(named_text, "{}\n");
        assert_false(test_path_exists(session));
        assert_false(test_path_exists(cache));
        free(config_text);
        free(named_text);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(session);
        free(cache);
        free(ordinary);
        free(named);
}

static void test_bwrap_cannot_write_own_files(void **state)
{
        check_own_files_unwritable(*state, "bwrap");
}

/*
 * Landlock can only grant, so the write supervisor holds them back: such a
 * root runs (it was refused before issue 20) and every write to them is
 * refused, the workspace beside them written.
 */
static void test_landlock_cannot_write_own_files(void **state)
{
        check_own_files_unwritable(*state, "landlock");
}

/*
 * The running program is protected by default: a writable root holding it
 * is refused by every backend (the next call would run what the command
 * left there).  An embedder that names its own list replaces the default.
 */
static void test_own_executable_protected(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        fixture *f = *state;
        char executable[4096];
        ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
        char *none[] = { NULL };

        assert_true(length > 0);
        executable[length] = '\0';
        *strrchr(executable, '/') = '\0';   /* the directory holding this test program */
        for (size_t i = 0; i < 2; i++) {
                dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
                dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;
                dsh_runtime *runtime = runtime_with_backend(f, backends[i], NULL);
                int result;

                resolve_workspace_write(runtime, executable, &policy);
                assert_true(confine_true(runtime, &policy, &confined, &error) < 0);
                if (error.code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                        print_message("not checked under %s: it cannot confine on this host: %s\n", backends[i],
                                      error.message);
                        dsh_error_clear(&error);
                        dsh_policy_clear(&policy);
                        dsh_runtime_free(runtime);
                        continue;
                }
                assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
                dsh_error_clear(&error);
                dsh_runtime_free(runtime);

                options.backend = backends[i];
                options.launcher_directory = f->launchers;
                options.protected_executables = none;
                runtime = new_runtime(&options);
                result = confine_true(runtime, &policy, &confined, &error);
                /* bwrap may be unusable here; what matters is that it is not refused for this program. */
                if (result < 0)
                        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
                dsh_error_clear(&error);
                dsh_confined_argv_clear(&confined);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
}

/* The launchers a confined argv names: the directory given, else (none beside this program) the install location. */
static void test_launcher_directory(void **state)
{
        fixture *f = *state;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        char *expected = NULL, *workspace = test_path_join(f->home, "workspace");

        assert_int_equal(mkdir(workspace, 0755), 0);   /* not the home: it holds the sandbox's own files */
        options.backend = "landlock";
        for (int given = 0; given < 2; given++) {
                dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;
                dsh_runtime *runtime;

                options.launcher_directory = given ? f->launchers : NULL;
                runtime = new_runtime(&options);
                resolve_workspace_write(runtime, workspace, &policy);
                if (confine_true(runtime, &policy, &confined, &error) < 0)
                        fail_msg("confine: %s", error.message);
                if (given)
                        assert_true(asprintf(&expected, "%s/landlock-run", f->launchers) > 0);
                else
                        expected = strdup(DSH_SANDBOX_BINDIR "/landlock-run");
                assert_string_equal(confined.argv[0], expected);
                free(expected);
                dsh_confined_argv_clear(&confined);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
        free(workspace);
}

/* ---------------------------------------------------------------------------------- resolve -- */

static void test_resolve_with_session(void **state)
{
        fixture *f = *state;
        char *workspace = test_path_join(f->home, "workspace");
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session_store *store = NULL;
        dsh_session *created = NULL, *session = NULL;
        dsh_runtime *runtime = new_runtime(NULL);
        char *state_directory = NULL, *id;

        assert_int_equal(mkdir(workspace, 0755), 0);
        assert_int_equal(dsh_runtime_session_store(runtime, &store, &error), 0);
        assert_true(asprintf(&state_directory, "%s/.local/state/dsh-sandbox", f->home) > 0);
        assert_string_equal(dsh_session_store_directory(store), state_directory);
        assert_int_equal(dsh_session_create(store, workspace, NULL, &created, &error), 0);
        assert_int_equal(dsh_session_set_mode(created, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        id = strdup(dsh_session_id(created));
        dsh_session_free(created);

        assert_int_equal(dsh_runtime_open_session(runtime, id, &session, &error), 0);
        request.session = session;
        assert_int_equal(dsh_runtime_resolve(runtime, &request, &policy, &error), 0);
        assert_int_equal(policy.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(policy.workspace_root, workspace);
        assert_string_equal(policy.session_id, id);
        dsh_policy_clear(&policy);

        /* An explicit mode still wins over the session's override. */
        request.has_mode = true;
        request.mode = DSH_MODE_READ_ONLY;
        assert_int_equal(dsh_runtime_resolve(runtime, &request, &policy, &error), 0);
        assert_int_equal(policy.mode, DSH_MODE_READ_ONLY);
        dsh_policy_clear(&policy);
        dsh_session_free(session);

        assert_int_equal(dsh_runtime_open_session(runtime, "missing", &session, &error), -ENOENT);
        assert_non_null(strstr(error.message, "session \"missing\" does not exist"));
        dsh_error_clear(&error);
        assert_int_equal(dsh_runtime_open_session(runtime, "../x", &session, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        assert_null(session);
        dsh_runtime_free(runtime);
        free(state_directory);
        free(id);
        free(workspace);
}

/* A store named in code is the one used, and a relative one is taken against the cwd. */
static void test_state_directory_option(void **state)
{
        fixture *f = *state;
        char *expected = test_path_join(f->home, "custom-state");
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_session_store *store = NULL;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime;

        assert_int_equal(chdir(f->home), 0);
        options.state_directory = "custom-state";
        runtime = new_runtime(&options);
        assert_int_equal(dsh_runtime_session_store(runtime, &store, &error), 0);
        assert_string_equal(dsh_session_store_directory(store), expected);
        dsh_runtime_free(runtime);
        free(expected);
}

/* No $HOME and no state directory (a service's bare environment): agentless calls still resolve. */
static void test_no_state_directory(void **state)
{
        fixture *f = *state;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        dsh_runtime *runtime;

        unsetenv("HOME");
        unsetenv("XDG_STATE_HOME");
        runtime = new_runtime(NULL);
        assert_int_equal(dsh_runtime_session_store(runtime, &store, &error), -EINVAL);
        assert_null(store);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, "no session state directory"));
        dsh_error_clear(&error);
        assert_int_equal(dsh_runtime_open_session(runtime, "any", &session, &error), -EINVAL);
        dsh_error_clear(&error);
        assert_int_equal(dsh_runtime_resolve(runtime, NULL, &policy, &error), 0);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        set_environment("HOME", f->home, "");
}

static void test_relative_roots(void **state)
{
        fixture *f = *state;
        char *sub = test_path_join(f->home, "sub"), *extra = test_path_join(f->home, "extra");
        const char *roots[] = { "extra", NULL };
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = new_runtime(NULL);

        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(mkdir(extra, 0755), 0);
        assert_int_equal(chdir(f->home), 0);   /* after the runtime was made: the cwd of the call counts */
        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = "sub";
        request.additional_writable_roots = (char *const *) roots;
        assert_int_equal(dsh_runtime_resolve(runtime, &request, &policy, &error), 0);
        assert_string_equal(policy.workspace_root, sub);
        assert_string_equal(policy.additional_writable_roots[0], extra);
        assert_null(policy.additional_writable_roots[1]);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(extra);
        free(sub);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_default_without_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_default_reads_xdg_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_default_reads_named_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_missing_is_named, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_relative_to_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_values_copied, setup, teardown),
                cmocka_unit_test_setup_teardown(test_values_checked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_secrets_reach_the_provider, setup, teardown),
                cmocka_unit_test_setup_teardown(test_values_without_root_use_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_cannot_write_own_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_cannot_write_own_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_own_executable_protected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_launcher_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_resolve_with_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_state_directory_option, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_state_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_roots, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
