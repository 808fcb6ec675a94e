/* SPDX-License-Identifier: MIT */
/*
 * landlock-run against the real kernel: the upstream launcher contract
 * (flags, 125, the exact lines, --probe) and the confinement it promises,
 * checked on disk.  The operation table it shares with the other backends is
 * the escape matrix (test-escape-matrix.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "core/landlock.h"
#include "test-landlock.h"
#include "test-support.h"

static char *scratch;   /* a fresh directory per test, outside every grant */

static int setup(void **state)
{
        (void) state;
        scratch = test_make_directory(NULL);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(scratch);
        scratch = NULL;
        return 0;
}

/* Runs `landlock-run ARGS...` (NULL-terminated varargs). */
static void launch(test_process_result *result, ...)
{
        const char *argv[64];
        size_t count = 0;
        va_list arguments;
        const char *argument;

        argv[count++] = test_landlock_run_path();
        va_start(arguments, result);
        while ((argument = va_arg(arguments, const char *)) && count < 63)
                argv[count++] = argument;
        va_end(arguments);
        argv[count] = NULL;
        test_run(argv, NULL, result);
}

static void test_probe_line(void **state)
{
        test_process_result result;
        int abi = dsh_landlock_abi();

        (void) state;
        launch(&result, "--probe", NULL);
        if (abi >= DSH_LANDLOCK_FULL_ABI) {
                assert_int_equal(result.exit_code, 0);
                assert_string_equal(result.stdout_text, "landlock: fully enforced\n");
        } else if (abi >= DSH_LANDLOCK_MINIMUM_ABI) {
                assert_int_equal(result.exit_code, 0);
                assert_string_equal(result.stdout_text, "landlock: partially enforced (older ABI)\n");
        } else {
                assert_int_equal(result.exit_code, 125);
        }
        test_process_result_clear(&result);
}

/* Every program answers --help and --version on stdout with exit 0 (upstream made both usage errors). */
static void test_help_and_version(void **state)
{
        test_process_result result;

        (void) state;
        launch(&result, "--help", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_true(strncmp(result.stdout_text, "Usage: landlock-run [--ro PATH]... [--rw PATH]... ", 50) == 0);
        assert_string_equal(result.stderr_text, "");
        test_process_result_clear(&result);
        launch(&result, "--version", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "landlock-run (dsh-sandbox) " DSH_SANDBOX_VERSION "\n");
        assert_string_equal(result.stderr_text, "");
        test_process_result_clear(&result);
}

struct usage_case {
        const char *arguments[7];
        const char *line;
};

/* Every usage error: exit 125, exactly the contract's line, and the command never ran. */
static void test_usage_errors(void **state)
{
        char *marker = test_path_join(scratch, "ran");
        const struct usage_case cases[] = {
                { { "--ro", NULL }, "landlock-run: usage error: --ro requires a path\n" },
                { { "--rw", NULL }, "landlock-run: usage error: --rw requires a path\n" },
                { { "--ro", "/", NULL }, "landlock-run: usage error: missing `-- <argv>...` command\n" },
                { { "--ro", "/", "--", NULL }, "landlock-run: usage error: missing `-- <argv>...` command\n" },
                { { "--ro", "/", "touch", marker, NULL }, "landlock-run: usage error: unknown argument: touch\n" },
                { { "--frobnicate", "--", "touch", marker, NULL },
                  "landlock-run: usage error: unknown argument: --frobnicate\n" },
                { { "--probe", "--", "touch", marker, NULL }, "landlock-run: usage error: --probe takes no other arguments\n" },
                { { "--ro", "/", "--probe", NULL }, "landlock-run: usage error: --probe takes no other arguments\n" },
                /* --help and --version answer only alone; anywhere else they are what upstream made them. */
                { { "--ro", "/", "--help", "touch", marker, NULL },
                  "landlock-run: usage error: unknown argument: --help\n" },
                { { "--version", "--", "touch", marker, NULL },
                  "landlock-run: usage error: unknown argument: --version\n" },
                { { "-h", NULL }, "landlock-run: usage error: unknown argument: -h\n" },
                { { "--setenv", "NAME", NULL }, "landlock-run: usage error: --setenv requires a name and a value\n" },
                { { "--setenv", "", "v", "--", "touch", marker }, "landlock-run: usage error: --setenv: invalid variable name: \n" },
                { { "--setenv", "A=B", "v", "--", "touch", marker },
                  "landlock-run: usage error: --setenv: invalid variable name: A=B\n" },
                /* A held-back path the supervisor could not match by name is refused, never taken as given. */
                { { "--protect", NULL }, "landlock-run: usage error: --protect requires a path\n" },
                { { "--protect", "relative/.git/hooks", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: relative/.git/hooks\n" },
                { { "--protect", "", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: \n" },
                { { "--protect", "/w//.git/hooks", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: /w//.git/hooks\n" },
                { { "--protect", "/w/./.git", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: /w/./.git\n" },
                { { "--protect", "/w/x/../.git", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: /w/x/../.git\n" },
                { { "--protect", "/w/.git/hooks/", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: /w/.git/hooks/\n" },
                { { "--protect", "/w/.git/..", "--", "touch", marker },
                  "landlock-run: usage error: --protect: not a canonical absolute path: /w/.git/..\n" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *argv[9] = { test_landlock_run_path() };
                test_process_result result;
                size_t count = 1;

                for (size_t j = 0; cases[i].arguments[j]; j++)
                        argv[count++] = cases[i].arguments[j];
                argv[count] = NULL;
                test_run(argv, NULL, &result);
                assert_int_equal(result.exit_code, 125);
                assert_string_equal(result.stderr_text, cases[i].line);
                assert_false(test_path_exists(marker));
                test_process_result_clear(&result);
        }
        free(marker);
}

/*
 * A --protect path that reaches a symlink (a component or the last one) is
 * refused before anything runs: the supervisor matches names, and one
 * through a symlink would hold nothing back.  A canonical one, existing or
 * missing, inside a --rw directory or not, is taken and the command runs
 * (`true` makes no write-intent call).
 */
static void test_protect_paths_checked_at_launch(void **state)
{
        char *canonical = realpath(scratch, NULL);
        char *real = test_path_join(canonical, "real");
        char *link = test_path_join(canonical, "link");
        char *through_link = test_path_join(link, "hooks");
        char *hooks = test_path_join(real, "hooks");
        char *missing = test_path_join(canonical, ".mcp.json");
        char *missing_deeper = test_path_join(canonical, ".claude/settings.json");
        char *expected = NULL;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_non_null(canonical);
        assert_int_equal(mkdir(real, 0755), 0);
        assert_int_equal(mkdir(hooks, 0755), 0);
        assert_int_equal(symlink("real", link), 0);
        {
                const char *refused[] = { link, through_link };

                for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                        launch(&result, "--ro", "/", "--rw", canonical, "--protect", refused[i], "--", "true", NULL);
                        assert_int_equal(result.exit_code, 125);
                        assert_true(asprintf(&expected,
                                             "landlock-run: usage error: --protect: not a canonical absolute path (it "
                                             "reaches a symlink): %s\n",
                                             refused[i]) > 0);
                        assert_string_equal(result.stderr_text, expected);
                        free(expected);
                        test_process_result_clear(&result);
                }
        }
        launch(&result, "--ro", "/", "--rw", canonical, "--protect", hooks, "--protect", missing, "--protect",
               missing_deeper, "--protect", "/usr/lib", "--", "true", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stderr_text, "");
        test_process_result_clear(&result);
        /* Without a --rw directory too (the supervisor still decides write intent there). */
        launch(&result, "--ro", "/", "--protect", hooks, "--", "true", NULL);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        free(missing_deeper);
        free(missing);
        free(hooks);
        free(through_link);
        free(link);
        free(real);
        free(canonical);
}

static void test_unopenable_grant_refuses(void **state)
{
        char *marker = test_path_join(scratch, "ran");
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        launch(&result, "--ro", "/", "--rw", "/nonexistent-dsh-grant", "--", "touch", marker, NULL);
        assert_int_equal(result.exit_code, 125);
        assert_string_equal(result.stderr_text,
                            "landlock-run: cannot open rule path: /nonexistent-dsh-grant: No such file or directory\n");
        assert_false(test_path_exists(marker));
        test_process_result_clear(&result);
        free(marker);
}

static void test_sink_and_shm(void **state)
{
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        launch(&result, "--ro", "/", "--rw", "/dev/null", "--", "sh", "-c",
               "echo x > /dev/null && echo sink-ok; echo x > /dev/shm/dsh-sandbox-test-shm && echo shm-written",
               NULL);
        assert_true(test_contains(result.stdout_text, "sink-ok"));
        assert_false(test_contains(result.stdout_text, "shm-written"));
        assert_false(test_path_exists("/dev/shm/dsh-sandbox-test-shm"));
        test_process_result_clear(&result);
}

/* An existing file outside the grants is neither written nor truncated. */
static void test_existing_file_not_truncated(void **state)
{
        char *victim = test_path_join(scratch, "victim");
        char *content;
        test_process_result result;
        char *script = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_write_file(victim, "precious\n");
        assert_true(asprintf(&script, "truncate -s 0 '%s'; : > '%s'; echo more >> '%s'", victim, victim, victim) > 0);
        launch(&result, "--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", script, NULL);
        content = test_read_file(victim);
        assert_string_equal(content, "precious\n");
        free(content);
        free(script);
        free(victim);
        test_process_result_clear(&result);
}

/* /proc/<parent>/cwd resolves to the parent's real directory, which the domain does not cover. */
static void test_proc_parent_cwd_trick(void **state)
{
        char *escaped = test_path_join(scratch, "escaped");
        char *script = NULL;
        const char *argv[4] = { "sh", "-c", NULL, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_true(asprintf(&script, "cd '%s' && '%s' --ro / --rw /dev/null -- sh -c 'echo x > /proc/$PPID/cwd/escaped'",
                             scratch, test_landlock_run_path()) > 0);
        argv[2] = script;
        test_run(argv, NULL, &result);
        assert_false(test_path_exists(escaped));
        test_process_result_clear(&result);
        free(script);
        free(escaped);
}

/* An fd the caller opened for writing does not reach the command. */
static void test_inherited_writable_fd_closed(void **state)
{
        char *target = test_path_join(scratch, "inherited");
        char *content;
        test_process_result result;
        int fd;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);  /* no O_CLOEXEC: inherited on purpose */
        assert_true(fd >= 0);
        if (fd != 7) {
                assert_int_equal(dup2(fd, 7), 7);
                close(fd);
        }
        launch(&result, "--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", "echo leaked >&7", NULL);
        close(7);
        content = test_read_file(target);
        assert_string_equal(content, "");
        assert_int_not_equal(result.exit_code, 0);
        free(content);
        free(target);
        test_process_result_clear(&result);
}

static void test_exit_status_passes_through(void **state)
{
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        launch(&result, "--ro", "/", "--", "sh", "-c", "exit 7", NULL);
        assert_int_equal(result.exit_code, 7);
        test_process_result_clear(&result);
        /* The command's own 125 stays 125 and prints no launcher line. */
        launch(&result, "--ro", "/", "--", "sh", "-c", "exit 125", NULL);
        assert_int_equal(result.exit_code, 125);
        assert_false(test_contains(result.stderr_text, "landlock-run: "));
        test_process_result_clear(&result);
        launch(&result, "--ro", "/", "--", "dsh-sandbox-no-such-program", NULL);
        assert_int_equal(result.exit_code, 125);
        assert_string_equal(result.stderr_text, "landlock-run: exec failed: No such file or directory\n");
        test_process_result_clear(&result);
}

static void test_environment_unchanged_and_terminal_filtered(void **state)
{
        const char *argv[] = { test_landlock_run_path(), "--ro", "/", "--", "sh", "-c",
                               "echo \"$DSH_TEST_MARKER\"; \"$TIOCSTI_PROBE\"", NULL };
        char *probe_assignment = NULL;
        const char *env[] = { "DSH_TEST_MARKER=kept", NULL, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_true(asprintf(&probe_assignment, "TIOCSTI_PROBE=%s", getenv("TIOCSTI_PROBE_BIN")) > 0);
        env[1] = probe_assignment;
        test_run(argv, env, &result);
        assert_string_equal(result.stdout_text, "kept\nEPERM\n");
        test_process_result_clear(&result);
        free(probe_assignment);
}

/* --setenv NAME VALUE sets (or replaces) a variable of the command's environment; the rest stays. */
static void test_setenv_sets_the_commands_variables(void **state)
{
        const char *argv[] = { test_landlock_run_path(), "--ro", "/", "--setenv", "TMPDIR", "/tmp", "--setenv",
                               "DSH_TEST_NEW", "a value with spaces", "--", "sh", "-c",
                               "echo \"$TMPDIR|$DSH_TEST_NEW|$DSH_TEST_MARKER\"", NULL };
        const char *env[] = { "TMPDIR=/nonexistent-or-ungranted", "DSH_TEST_MARKER=kept", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_run(argv, env, &result);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "/tmp|a value with spaces|kept\n");
        test_process_result_clear(&result);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_probe_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_help_and_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protect_paths_checked_at_launch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unopenable_grant_refuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sink_and_shm, setup, teardown),
                cmocka_unit_test_setup_teardown(test_existing_file_not_truncated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_proc_parent_cwd_trick, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inherited_writable_fd_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exit_status_passes_through, setup, teardown),
                cmocka_unit_test_setup_teardown(test_environment_unchanged_and_terminal_filtered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_setenv_sets_the_commands_variables, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
