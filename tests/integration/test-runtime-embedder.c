/* SPDX-License-Identifier: MIT */
/*
 * A program that embeds the sandbox through the public runtime API alone
 * (dsh-sandbox/runtime.h), as a harness would, gets the protections the
 * command-line tool has: a command it confines under workspace-write at a
 * home directory cannot rewrite the sandbox's own config, whichever backend
 * runs it.  The contrast case shows that the protection is the runtime's: a
 * provider assembled by hand, without it, lets the same command through.
 * Checked on disk.
 */
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

#define ORIGINAL_CONFIG "{\"mode\":\"read-only\"}\n"
#define REWRITE_SCRIPT                                                                                        \
        "echo '{\"mode\":\"danger-full-access\",\"runnerCommand\":[\"env\"],\"runnerFailureSignatures\":[\"x\"]}' " \
        "> \"$1\"; echo ok > \"$2\""

static char *home;           /* the workspace: a home directory, holding the XDG config directory */
static char *config_file;    /* $XDG_CONFIG_HOME/dsh-sandbox/config.json */
static char *project_file;   /* an ordinary file of the workspace */
static char *launchers;      /* where this build's landlock-run and dsh-sandbox-exec are */

static int setup(void **state)
{
        const char *landlock_run = test_landlock_run_path();
        char *command = NULL, *value = NULL;

        (void) state;
        home = test_make_directory(NULL);
        assert_int_equal(setenv("HOME", home, 1), 0);
        assert_true(asprintf(&value, "%s/.config", home) > 0);
        assert_int_equal(setenv("XDG_CONFIG_HOME", value, 1), 0);
        free(value);
        unsetenv("XDG_STATE_HOME");
        unsetenv("XDG_CACHE_HOME");
        unsetenv("DSH_SANDBOX_CONFIG");
        unsetenv("DSH_SANDBOX_STATE_DIR");
        assert_true(asprintf(&command, "mkdir -p '%s/.config/dsh-sandbox'", home) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        assert_true(asprintf(&config_file, "%s/.config/dsh-sandbox/config.json", home) > 0);
        test_write_file(config_file, ORIGINAL_CONFIG);
        project_file = test_path_join(home, "project-file");
        launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(launchers);
        free(project_file);
        free(config_file);
        test_remove_tree(home);
        return 0;
}

/* What an embedder writes: the default configuration, a workspace-write policy at `root`, one command. */
typedef struct outcome {
        bool ran;                 /* the command was started (else `error` says why not) */
        dsh_error error;
} outcome;

static void spawn_and_wait(dsh_provider *provider, const dsh_policy *policy, outcome *result)
{
        const char *argv[] = { "sh", "-c", REWRITE_SCRIPT, "sh", config_file, project_file, NULL };
        dsh_child *child = NULL;
        int wait_status = 0;

        result->ran = dsh_provider_spawn(provider, (char *const *) argv, policy, NULL, &child, &result->error) == 0;
        if (!result->ran)
                return;
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        result->ran = dsh_child_runner_error(child, &result->error) == 0;
        dsh_child_free(child);
}

static void embed(const char *backend, outcome *result)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;

        options.backend = backend;
        /* This test program is not installed beside the launchers; an installed embedder finds them itself. */
        options.launcher_directory = launchers;
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message);
        assert_string_equal(dsh_runtime_config_path(runtime), config_file);
        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = home;
        if (dsh_runtime_resolve(runtime, &request, &policy, &error) < 0)
                fail_msg("dsh_runtime_resolve: %s", error.message);
        spawn_and_wait(dsh_runtime_provider(runtime), &policy, result);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
}

static void assert_config_unchanged(void)
{
        char *content = test_read_file(config_file);

        assert_string_equal(content, ORIGINAL_CONFIG);
        free(content);
}

/* NULL: the default chain (bwrap, then Landlock), as most embedders use it. */
static void check_backend(const char *backend)
{
        outcome result = { false, DSH_ERROR_INIT };

        embed(backend, &result);
        if (!result.ran && result.error.code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                print_message("skipped: %s cannot confine on this host: %s\n", backend ? backend : "the chain",
                              result.error.message);
                dsh_error_clear(&result.error);
                skip();
        }
        assert_config_unchanged();
        if (result.ran) {
                /* bwrap: it ran, with the config held read-only and the rest of the workspace writable. */
                assert_true(test_path_exists(project_file));
        } else {
                /* Landlock can only grant: it refuses the policy, and nothing ran. */
                assert_int_equal(result.error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
                assert_false(test_path_exists(project_file));
        }
        dsh_error_clear(&result.error);
}

static void test_default_chain_cannot_rewrite_config(void **state)
{
        (void) state;
        check_backend(NULL);
}

static void test_bwrap_cannot_rewrite_config(void **state)
{
        (void) state;
        check_backend("bwrap");
}

static void test_landlock_cannot_rewrite_config(void **state)
{
        (void) state;
        check_backend("landlock");
}

/*
 * The contrast: the same command through a provider assembled by hand, with
 * no runtime, rewrites the config.  This is what the runtime exists to
 * prevent, and what proves the cases above would see a rewrite.
 */
static void test_bare_provider_has_no_protection(void **state)
{
        const char *sole[] = { "bwrap", NULL };
        char *landlock_run = test_path_join(launchers, "landlock-run");
        dsh_provider *provider = dsh_provider_new();
        dsh_policy policy = DSH_POLICY_INIT;
        outcome result = { false, DSH_ERROR_INIT };
        char *content;

        (void) state;
        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, sole, NULL), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, landlock_run, NULL), 0);
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup(home);
        spawn_and_wait(provider, &policy, &result);
        if (!result.ran) {
                print_message("skipped: bwrap cannot confine on this host: %s\n", result.error.message);
                dsh_error_clear(&result.error);
                dsh_policy_clear(&policy);
                dsh_provider_free(provider);
                free(landlock_run);
                skip();
        }
        content = test_read_file(config_file);
        assert_true(test_contains(content, "danger-full-access"));
        free(content);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        free(landlock_run);
}

/*
 * The launcher directory beside the running program is used only when it
 * holds both launchers: landlock-run (Landlock's argvs) and dsh-sandbox-exec
 * (bwrap's last step, looked for beside landlock-run).  A copy of the
 * command-line tool, a runtime consumer, shows which landlock-run its
 * confined argv names.
 */
static void test_launchers_beside_the_program(void **state)
{
        char *directory = test_make_directory(NULL), *workspace = test_path_join(directory, "workspace");
        char *copy = test_path_join(directory, "dsh-sandbox");
        char *local_launcher = test_path_join(directory, "landlock-run");
        char *exec_helper = test_path_join(directory, "dsh-sandbox-exec"), *command = NULL;
        char *real_helper = test_path_join(launchers, "dsh-sandbox-exec");
        const char *argv[] = { copy, "confine", "--backend", "landlock", "--mode", "workspace-write", "--root",
                               workspace, "--", "true", NULL };
        test_process_result result;

        (void) state;
        assert_int_equal(mkdir(workspace, 0755), 0);
        assert_true(asprintf(&command, "cp '%s' '%s'", test_dsh_sandbox_path(), copy) > 0);
        assert_int_equal(system(command), 0);
        assert_int_equal(symlink(test_landlock_run_path(), local_launcher), 0);

        /* landlock-run alone: not a launcher directory; the install location is named instead. */
        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        assert_false(test_contains(result.stdout_text, local_launcher));
        assert_true(test_contains(result.stdout_text, "[\"" DSH_SANDBOX_BINDIR "/landlock-run\""));
        test_process_result_clear(&result);

        assert_int_equal(symlink(real_helper, exec_helper), 0);
        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, local_launcher));
        test_process_result_clear(&result);
        free(command);
        free(real_helper);
        free(exec_helper);
        free(local_launcher);
        free(copy);
        free(workspace);
        test_remove_tree(directory);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_default_chain_cannot_rewrite_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_cannot_rewrite_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_cannot_rewrite_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bare_provider_has_no_protection, setup, teardown),
                cmocka_unit_test_setup_teardown(test_launchers_beside_the_program, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
