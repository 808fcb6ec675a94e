/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox run` with the Landlock backend (the in-process spawn path):
 * danger-full-access, extra roots, links, the exit-status table, bad input
 * that never runs the command, and refusal when Landlock is missing.  Which
 * writes each mode allows is the escape matrix's (test-escape-matrix.c).
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

#include "core/landlock.h"
#include "test-landlock.h"
#include "test-support.h"

static char *workspace;   /* the policy's workspace root */
static char *outside;     /* a directory no grant covers */

static int setup(void **state)
{
        (void) state;
        workspace = test_make_directory(NULL);
        outside = test_make_directory(NULL);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(workspace);
        test_remove_tree(outside);
        workspace = outside = NULL;
        return 0;
}

/* Runs `dsh-sandbox run --backend landlock <options...> -- sh -c SCRIPT` with $WS and $OUT set. */
static void run_script(test_process_result *result, const char *const *options, const char *script)
{
        const char *argv[32];
        char *ws_assignment = NULL, *out_assignment = NULL, *probe_assignment = NULL;
        const char *env[4];
        size_t count = 0;

        assert_true(asprintf(&ws_assignment, "WS=%s", workspace) > 0);
        assert_true(asprintf(&out_assignment, "OUT=%s", outside) > 0);
        assert_true(asprintf(&probe_assignment, "TIOCSTI_PROBE=%s", getenv("TIOCSTI_PROBE_BIN")) > 0);
        env[0] = ws_assignment;
        env[1] = out_assignment;
        env[2] = probe_assignment;
        env[3] = NULL;
        argv[count++] = test_dsh_sandbox_path();
        argv[count++] = "run";
        argv[count++] = "--backend";
        argv[count++] = "landlock";
        for (; options && *options && count < 24; options++)
                argv[count++] = *options;
        argv[count++] = "--";
        argv[count++] = "sh";
        argv[count++] = "-c";
        argv[count++] = script;
        argv[count] = NULL;
        test_run(argv, env, result);
        free(ws_assignment);
        free(out_assignment);
        free(probe_assignment);
}

/* danger-full-access is the one mode that is unconfined on purpose: the command writes outside every root. */
static void test_danger_full_access_writes_outside(void **state)
{
        char *path = test_path_join(outside, "written");
        const char *options[] = { "--mode", "danger-full-access", "--root", workspace, NULL };
        char *script = NULL;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_true(asprintf(&script, "echo data > '%s'", path) > 0);
        run_script(&result, options, script);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(path));
        /* --root and --backend govern nothing here, and the caller is told so, one line each. */
        assert_string_equal(result.stderr_text,
                            "dsh-sandbox: warning: --root has no effect under danger-full-access, where nothing is "
                            "confined\n"
                            "dsh-sandbox: warning: --backend has no effect under danger-full-access, where no backend "
                            "runs the command\n");
        free(path);
        free(script);
        test_process_result_clear(&result);
}

static void test_extra_root_and_grandchild(void **state)
{
        char *extra = test_make_directory(NULL);
        char *in_extra = test_path_join(extra, "f");
        char *grandchild_out = test_path_join(outside, "g");
        const char *options[] = { "--mode", "workspace-write", "--root", workspace, "--allow-write", extra, NULL };
        char *script = NULL;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_true(asprintf(&script, "echo x > '%s'; sh -c \"sh -c 'echo x > %s'\"; true", in_extra,
                             grandchild_out) > 0);
        run_script(&result, options, script);
        assert_true(test_path_exists(in_extra));
        assert_false(test_path_exists(grandchild_out));
        test_process_result_clear(&result);
        free(script);
        free(grandchild_out);
        free(in_extra);
        test_remove_tree(extra);
}

/* Links cannot carry a write past the policy: hard links need REFER on the source, symlinks resolve. */
static void test_links_do_not_reach_outside(void **state)
{
        char *victim = test_path_join(outside, "victim");
        const char *options[] = { "--mode", "workspace-write", "--root", workspace, NULL };
        char *content;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_write_file(victim, "precious\n");
        run_script(&result, options,
                   "ln \"$OUT/victim\" \"$WS/hard\"; echo pwned >> \"$WS/hard\"; "
                   "ln -s \"$OUT/victim\" \"$WS/soft\"; echo pwned >> \"$WS/soft\"; "
                   "mv \"$OUT/victim\" \"$WS/moved\"; true");
        /* The victim is still there, unchanged (mv may only have copied it: reading is allowed). */
        content = test_read_file(victim);
        assert_non_null(content);
        assert_string_equal(content, "precious\n");
        free(content);
        test_process_result_clear(&result);
        free(victim);
}

static void test_relative_root_is_taken_from_cwd(void **state)
{
        char *sub = test_path_join(workspace, "sub");
        char *written = test_path_join(sub, "f");
        char *script = NULL;
        const char *argv[] = { "sh", "-c", NULL, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_true(asprintf(&script,
                             "cd '%s' && '%s' run --backend landlock --mode workspace-write --root sub -- "
                             "sh -c 'echo x > sub/f'",
                             workspace, test_dsh_sandbox_path()) > 0);
        argv[2] = script;
        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(written));
        test_process_result_clear(&result);
        free(script);
        free(written);
        free(sub);
}

/*
 * Options end at the first operand: what follows PROGRAM is PROGRAM's own, even when it looks like
 * one of ours (`dsh-sandbox run make -j4`).  The command's words and the write land on disk.
 */
static void test_options_end_at_the_program(void **state)
{
        char *written = test_path_join(workspace, "words");
        char *escaped = test_path_join(outside, "escaped");
        const char *argv[] = { test_dsh_sandbox_path(), "run", "-b", "landlock", "-m", "workspace-write", "-r",
                               workspace, "sh", "-c", "printf '%s\n' \"$@\" > \"$0\"; echo x > \"$1\"", written,
                               escaped, "--mode", "danger-full-access", "-r", "/", "--", NULL };
        char *expected = NULL, *content;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_run(argv, NULL, &result);
        content = test_read_file(written);
        if (!content)
                fail_msg("the command did not run: exit %d, stderr: %s", result.exit_code, result.stderr_text);
        assert_true(asprintf(&expected, "%s\n--mode\ndanger-full-access\n-r\n/\n--\n", escaped) > 0);
        assert_string_equal(content, expected);
        /* `--mode danger-full-access` after the program was the program's: the write outside was denied. */
        assert_false(test_path_exists(escaped));
        assert_int_not_equal(result.exit_code, 0);
        free(content);
        free(expected);
        test_process_result_clear(&result);
        free(written);
        free(escaped);
}

struct status_case {
        const char *script;
        int exit_code;
        const char *stderr_contains;   /* NULL: no dsh-sandbox line at all */
};

static void test_exit_status_table(void **state)
{
        static const struct status_case cases[] = {
                { "exit 0", 0, NULL },
                { "exit 7", 7, NULL },
                { "exit 125", 125, NULL },     /* the command's own 125 is not the sandbox's */
                { "kill -9 $$", 137, NULL },
                { "kill -TERM $$", 143, NULL },
        };

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                test_process_result result;

                run_script(&result, NULL, cases[i].script);
                assert_int_equal(result.exit_code, cases[i].exit_code);
                assert_false(test_contains(result.stderr_text, "dsh-sandbox:"));
                test_process_result_clear(&result);
        }
}

static void test_program_not_found_or_not_executable(void **state)
{
        char *not_executable = test_path_join(workspace, "data.txt");
        const char *missing[] = { test_dsh_sandbox_path(), "run", "--backend", "landlock", "--",
                                  "dsh-sandbox-no-such-program", NULL };
        const char *denied[] = { test_dsh_sandbox_path(), "run", "--backend", "landlock", "--", not_executable, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_write_file(not_executable, "data\n");
        test_run(missing, NULL, &result);
        assert_int_equal(result.exit_code, 127);
        assert_true(test_contains(result.stderr_text, "No such file or directory"));
        test_process_result_clear(&result);
        test_run(denied, NULL, &result);
        assert_int_equal(result.exit_code, 126);
        test_process_result_clear(&result);
        free(not_executable);
}

struct bad_input_case {
        const char *arguments[10];
        int exit_code;
        const char *stderr_contains;
};

/* Bad input: one line naming the problem, a documented status, and the command never runs. */
static void test_bad_input_never_runs(void **state)
{
        char *marker = test_path_join(workspace, "ran");
        char *file = test_path_join(workspace, "plain-file");
        char *link = test_path_join(workspace, "link");
        const struct bad_input_case cases[] = {
                { { "--mode", "writable", "--", "touch", marker }, 2, "unknown mode \"writable\"" },
                { { "--mode", "workspace-write", "--frobnicate", "--", "touch", marker }, 2,
                  "run: unknown option \"--frobnicate\"" },
                { { "--mode", "workspace-write", "--ro", "touch", marker }, 2,
                  "run: unknown option \"--ro\" (options are not abbreviated: --root)" },
                { { "--mode", "workspace-write", "--" }, 2, "missing PROGRAM" },
                { { "--mode" }, 2, "--mode requires a value" },
                { { "--backend", "chroot", "--", "touch", marker }, 2, "--backend must be" },
                { { "--mode", "workspace-write", "--root", "/nonexistent/dsh", "--", "touch", marker }, 125,
                  "SANDBOX_INVALID_ROOT" },
                { { "--mode", "workspace-write", "--root", file, "--", "touch", marker }, 125, "SANDBOX_INVALID_ROOT" },
                { { "--mode", "workspace-write", "--allow-write", "/nonexistent/dsh", "--", "touch", marker }, 125,
                  "does not exist" },
                { { "--mode", "workspace-write", "--allow-write", file, "--", "touch", marker }, 125,
                  "is not a directory" },
                { { "--mode", "workspace-write", "--allow-write", link, "--", "touch", marker }, 125,
                  "is a symlink" },
        };

        (void) state;
        test_write_file(file, "x");
        assert_int_equal(symlink(outside, link), 0);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *argv[16] = { test_dsh_sandbox_path(), "run", "--backend", "landlock" };
                size_t count = 4;
                test_process_result result;
                char *newline;

                for (size_t j = 0; j < 10 && cases[i].arguments[j]; j++)
                        argv[count++] = cases[i].arguments[j];
                argv[count] = NULL;
                test_run(argv, NULL, &result);
                if (result.exit_code != cases[i].exit_code || !test_contains(result.stderr_text, cases[i].stderr_contains))
                        fail_msg("case %zu: exit %d, stderr: %s", i, result.exit_code, result.stderr_text);
                newline = strchr(result.stderr_text, '\n');
                assert_non_null(newline);
                assert_int_equal(newline[1], '\0');  /* exactly one line */
                assert_true(strncmp(result.stderr_text, "dsh-sandbox: ", 13) == 0);
                assert_false(test_path_exists(marker));
                test_process_result_clear(&result);
        }
        free(marker);
        free(file);
        free(link);
}

static void test_descriptors_terminal_and_proc_cwd(void **state)
{
        char *inherited = test_path_join(outside, "inherited");
        char *escaped = test_path_join(outside, "escaped");
        char *script = NULL, *content;
        const char *argv[] = { "sh", "-c", NULL, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        /* fd 7 is opened writable on an outside file by the caller; $PPID's cwd is outside. */
        assert_true(asprintf(&script,
                             "cd '%s' && exec 7>'%s' && '%s' run --backend landlock -- sh -c "
                             "'echo leaked >&7; echo x > /proc/$PPID/cwd/escaped; \"$TIOCSTI_PROBE\"'",
                             outside, inherited, test_dsh_sandbox_path()) > 0);
        argv[2] = script;
        {
                char *probe_assignment = NULL;
                const char *env[2] = { NULL, NULL };

                assert_true(asprintf(&probe_assignment, "TIOCSTI_PROBE=%s", getenv("TIOCSTI_PROBE_BIN")) > 0);
                env[0] = probe_assignment;
                test_run(argv, env, &result);
                free(probe_assignment);
        }
        content = test_read_file(inherited);
        assert_string_equal(content, "");
        assert_false(test_path_exists(escaped));
        assert_string_equal(result.stdout_text, "EPERM\n");
        free(content);
        free(script);
        free(inherited);
        free(escaped);
        test_process_result_clear(&result);
}

/* With Landlock gone, the sandbox refuses with the spec's message; nothing runs. */
static void test_fails_closed_without_landlock(void **state)
{
        char *marker = test_path_join(workspace, "ran");
        const char *argv[] = { getenv("NO_LANDLOCK_EXEC_BIN"), test_dsh_sandbox_path(), "run", "--backend", "landlock",
                               "--mode", "workspace-write", "--root", workspace, "--", "touch", marker, NULL };
        test_process_result result;

        (void) state;
        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 125);
        assert_true(test_contains(result.stderr_text,
                                  "dsh-sandbox: SANDBOX_UNAVAILABLE: sandbox mode \"workspace-write\" is requested "
                                  "but no sandbox backend is usable on this host; refusing to run the command "
                                  "unconfined."));
        assert_true(test_contains(result.stderr_text, " Runner failure: landlock is not built into this kernel"));
        assert_false(test_path_exists(marker));
        test_process_result_clear(&result);
        free(marker);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_danger_full_access_writes_outside, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options_end_at_the_program, setup, teardown),
                cmocka_unit_test_setup_teardown(test_extra_root_and_grandchild, setup, teardown),
                cmocka_unit_test_setup_teardown(test_links_do_not_reach_outside, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_root_is_taken_from_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exit_status_table, setup, teardown),
                cmocka_unit_test_setup_teardown(test_program_not_found_or_not_executable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_input_never_runs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_descriptors_terminal_and_proc_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fails_closed_without_landlock, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
