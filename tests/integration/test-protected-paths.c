/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's own files (config, session state, verdict cache) stay out of
 * a confined command's reach even when a writable root contains them:
 * bwrap binds them read-only, under Landlock the write supervisor refuses
 * every write to them.  Checked on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static char *home;       /* the workspace, holding the XDG directories like a home directory does */
static char **environment;

static int setup(void **state)
{
        (void) state;
        home = test_make_directory(NULL);
        environment = test_home_environment(home);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_home_environment_free(environment);
        environment = NULL;
        test_remove_tree(home);
        return 0;
}

static void run_in_home(const char *backend, const char *extra_option, const char *extra_value, const char *script,
                        test_process_result *result)
{
        const char *argv[16];
        size_t count = 0;

        count = test_run_command_prefix(argv, count, backend, "workspace-write", home);
        if (extra_option) {
                argv[count++] = extra_option;
                argv[count++] = extra_value;
        }
        argv[count++] = "--";
        argv[count++] = "sh";
        argv[count++] = "-c";
        argv[count++] = script;
        argv[count] = NULL;
        test_run(argv, (const char *const *) environment, result);
}

static void test_bwrap_binds_own_files_read_only(void **state)
{
        char *config = NULL, *session = NULL, *cache = NULL, *ordinary = NULL;
        test_process_result result;

        (void) state;
        assert_true(asprintf(&config, "%s/.config/dsh-sandbox/config.json", home) > 0);
        assert_true(asprintf(&session, "%s/.local/state/dsh-sandbox/forged.jsonl", home) > 0);
        assert_true(asprintf(&cache, "%s/.cache/dsh-sandbox/verdict-forged.json", home) > 0);
        assert_true(asprintf(&ordinary, "%s/project-file", home) > 0);
        run_in_home("bwrap", NULL, NULL,
                    "echo '{\"runnerCommand\":[\"env\"],\"runnerFailureSignatures\":[\"x\"]}' > "
                    "\"$HOME/.config/dsh-sandbox/config.json\"; "
                    "echo forged > \"$HOME/.local/state/dsh-sandbox/forged.jsonl\"; "
                    "echo forged > \"$HOME/.cache/dsh-sandbox/verdict-forged.json\"; "
                    "echo ok > \"$HOME/project-file\"",
                    &result);
        assert_true(test_path_exists(ordinary));         /* the workspace itself stays writable */
        assert_false(test_path_exists(config));
        assert_false(test_path_exists(session));
        assert_false(test_path_exists(cache));
        assert_true(test_contains(result.stderr_text, "Read-only file system"));
        test_process_result_clear(&result);
        free(config);
        free(session);
        free(cache);
        free(ordinary);
}

static void test_named_config_file_in_workspace_is_read_only(void **state)
{
        char *config = test_path_join(home, "dsh.json");
        char *content;
        test_process_result result;

        (void) state;
        test_write_file(config, "{}\n");
        run_in_home("bwrap", "--config", config, "echo '{\"mode\":\"danger-full-access\"}' > \"$HOME/dsh.json\"",
                    &result);
        content = test_read_file(config);
        assert_string_equal(content, "{}\n");
        free(content);
        test_process_result_clear(&result);
        free(config);
}

/*
 * Landlock can only grant, so the write supervisor holds the sandbox's own
 * files back: a root holding them runs, and every write to them (an
 * existing config rewritten, renamed away or removed, a session record or
 * a verdict planted in their existing directories) is refused, while the
 * workspace beside them is written.  Checked on disk.
 */
static void test_landlock_holds_back_own_files_in_a_root(void **state)
{
        char *config = NULL, *session = NULL, *cache = NULL, *moved = NULL, *command = NULL;
        char *ordinary = test_path_join(home, "project-file");
        char *content;
        test_process_result result;

        (void) state;
        assert_true(asprintf(&config, "%s/.config/dsh-sandbox/config.json", home) > 0);
        assert_true(asprintf(&session, "%s/.local/state/dsh-sandbox/forged.jsonl", home) > 0);
        assert_true(asprintf(&cache, "%s/.cache/dsh-sandbox/verdict-forged.json", home) > 0);
        assert_true(asprintf(&moved, "%s/moved.json", home) > 0);
        assert_true(asprintf(&command, "mkdir -p '%s/.config/dsh-sandbox' '%s/.local/state/dsh-sandbox' "
                             "'%s/.cache/dsh-sandbox'", home, home, home) > 0);
        assert_int_equal(system(command), 0);
        test_write_file(config, "{}\n");
        run_in_home("landlock", NULL, NULL,
                    "echo '{\"runnerCommand\":[\"env\"],\"runnerFailureSignatures\":[\"x\"]}' > "
                    "\"$HOME/.config/dsh-sandbox/config.json\"; "
                    "mv \"$HOME/.config/dsh-sandbox/config.json\" \"$HOME/moved.json\"; "
                    "rm -f \"$HOME/.config/dsh-sandbox/config.json\"; "
                    "echo forged > \"$HOME/.local/state/dsh-sandbox/forged.jsonl\"; "
                    "echo forged > \"$HOME/.cache/dsh-sandbox/verdict-forged.json\"; "
                    "echo ok > \"$HOME/project-file\"",
                    &result);
        assert_int_equal(result.exit_code, 0);           /* it ran: no longer refused with 125 */
        assert_true(test_path_exists(ordinary));         /* the workspace itself stays writable */
        content = test_read_file(config);
        assert_string_equal(content, "{}\n");
        assert_false(test_path_exists(moved));
        assert_false(test_path_exists(session));
        assert_false(test_path_exists(cache));
        assert_true(test_contains(result.stderr_text, "Permission denied"));
        free(content);
        test_process_result_clear(&result);
        free(command);
        free(moved);
        free(ordinary);
        free(cache);
        free(session);
        free(config);
}

/* A writable root inside the sandbox's own directory cannot be shielded by any backend. */
static void test_root_inside_own_files_refused(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        char *inside = NULL;

        (void) state;
        assert_true(asprintf(&inside, "%s/.local/state/dsh-sandbox/sub", home) > 0);
        {
                char *command = NULL;

                assert_true(asprintf(&command, "mkdir -p '%s'", inside) > 0);
                assert_int_equal(system(command), 0);
                free(command);
        }
        for (size_t i = 0; i < 2; i++) {
                const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", backends[i], "--mode",
                                       "workspace-write", "--root", inside, "--", "touch", "ran", NULL };
                char *marker = test_path_join(inside, "ran");
                test_process_result result;

                test_run(argv, (const char *const *) environment, &result);
                assert_int_equal(result.exit_code, 125);
                assert_true(test_contains(result.stderr_text, "lies inside"));
                assert_false(test_path_exists(marker));
                test_process_result_clear(&result);
                free(marker);
        }
        free(inside);
}


/* Runs `dsh-sandbox run --mode read-only -- sh -c SCRIPT` under the test's environment (so its config applies). */
static void run_plain(const char *script, test_process_result *result)
{
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--", "sh", "-c", script, NULL };

        test_run(argv, (const char *const *) environment, result);
}

/*
 * A bind over the config directory moves with a rename of an ancestor: the
 * pins (every directory between the root and the protected path bound onto
 * itself) make that rename fail, so no replacement config can appear where
 * the next call looks.  Checked on disk and by the next call staying confined.
 */
static void test_bwrap_ancestors_cannot_be_renamed_away(void **state)
{
        char *renamed_config = test_path_join(home, ".config.old");
        char *renamed_state = test_path_join(home, ".local.old");
        char *config = NULL, *escaped = test_path_join(home, "escaped");
        char *script = NULL;
        test_process_result result;

        (void) state;
        assert_true(asprintf(&config, "%s/.config/dsh-sandbox/config.json", home) > 0);
        run_in_home("bwrap", NULL, NULL,
                    "mv \"$HOME/.config\" \"$HOME/.config.old\"; mkdir -p \"$HOME/.config/dsh-sandbox\"; "
                    "echo '{\"runnerCommand\":[\"env\"],\"runnerFailureSignatures\":[\"x\"]}' > "
                    "\"$HOME/.config/dsh-sandbox/config.json\"; "
                    "mv \"$HOME/.local\" \"$HOME/.local.old\"; mv \"$HOME/.local/state\" \"$HOME/.local/state.old\"; "
                    "mv \"$HOME/.local/state/dsh-sandbox\" \"$HOME/.local/state/x\"; true",
                    &result);
        assert_true(test_contains(result.stderr_text, "Device or resource busy"));
        assert_false(test_path_exists(renamed_config));
        assert_false(test_path_exists(renamed_state));
        assert_false(test_path_exists(config));
        test_process_result_clear(&result);
        /* The next plain call is still confined: read-only, its write must not land. */
        assert_true(asprintf(&script, "echo escaped > '%s'", escaped) > 0);
        run_plain(script, &result);
        assert_false(test_path_exists(escaped));
        test_process_result_clear(&result);
        free(script);
        free(escaped);
        free(config);
        free(renamed_state);
        free(renamed_config);
}

/*
 * A dotfile manager's symlink on the way to the sandbox's own files is only
 * as safe as the directory holding it: inside a writable root the command
 * could repoint it, so every backend refuses such a root, and the link is
 * unchanged on disk.
 */
static void test_symlinked_own_directory_refused(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        char *dotfiles = test_path_join(home, "dotfiles");
        char *link = NULL, *target = NULL, *evil = test_path_join(home, "evil");
        char linked[4096];
        ssize_t length;

        (void) state;
        assert_true(asprintf(&link, "%s/.config/dsh-sandbox", home) > 0);
        assert_true(asprintf(&target, "%s/dsh-sandbox", dotfiles) > 0);
        {
                char *command = NULL;

                assert_true(asprintf(&command, "mkdir -p '%s' '%s/.config' '%s' && ln -s '%s' '%s'", target, home,
                                     evil, target, link) > 0);
                assert_int_equal(system(command), 0);
                free(command);
        }
        for (size_t i = 0; i < 2; i++) {
                test_process_result result;

                run_in_home(backends[i], NULL, NULL, "ln -sfn \"$HOME/evil\" \"$HOME/.config/dsh-sandbox\"", &result);
                assert_int_equal(result.exit_code, 125);
                assert_true(test_contains(result.stderr_text, "symlink"));
                length = readlink(link, linked, sizeof(linked) - 1);
                assert_true(length > 0);
                linked[length] = '\0';
                assert_string_equal(linked, target);
                test_process_result_clear(&result);
        }
        free(evil);
        free(target);
        free(link);
        free(dotfiles);
}

/*
 * A writable root that contains a runner (bwrap's trusted places, the
 * loader's libraries) or this tool's own programs is refused by every
 * backend: the command could replace what the next call executes.
 */
static void test_root_holding_a_runner_refused(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        char *programs = strdup(test_dsh_sandbox_path());
        const char *roots[] = { "/usr", "/usr/lib", programs, NULL };

        (void) state;
        *strrchr(programs, '/') = '\0';
        for (size_t r = 0; roots[r]; r++) {
                for (size_t i = 0; i < 2; i++) {
                        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", backends[i], "--mode",
                                               "workspace-write", "--root", home, "--allow-write", roots[r], "--",
                                               "true", NULL };
                        test_process_result result;

                        test_run(argv, (const char *const *) environment, &result);
                        if (result.exit_code != 125 || !test_contains(result.stderr_text, "the sandbox runs or loads"))
                                fail_msg("root %s under %s: status %d, stderr %s", roots[r], backends[i],
                                         result.exit_code, result.stderr_text);
                        test_process_result_clear(&result);
                }
        }
        free(programs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bwrap_binds_own_files_read_only, setup, teardown),
                cmocka_unit_test_setup_teardown(test_named_config_file_in_workspace_is_read_only, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_holds_back_own_files_in_a_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_inside_own_files_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_ancestors_cannot_be_renamed_away, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_own_directory_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_holding_a_runner_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
