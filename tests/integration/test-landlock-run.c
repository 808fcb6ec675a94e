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
                /* An environment rule the library would not have given is refused, never taken as given. */
                { { "--deny-env", NULL }, "landlock-run: usage error: --deny-env requires a pattern\n" },
                { { "--allow-env", NULL }, "landlock-run: usage error: --allow-env requires a name\n" },
                { { "--deny-env", "A=B", "--", "touch", marker },
                  "landlock-run: usage error: --deny-env: not a variable pattern (only letters, digits and _, * and "
                  "?): A=B\n" },
                { { "--allow-env", "*_TOKEN", "--", "touch", marker },
                  "landlock-run: usage error: --allow-env: not a variable name (only letters, digits and _): "
                  "*_TOKEN\n" },
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

/*
 * Every door into a --protect path, judged on disk: an existing hook is not
 * written, appended to, truncated, replaced or removed, no hook is created
 * (O_CREAT with 0755, a rename in, a hard link in, a symlink), not through
 * `..` nor /proc/self/fd, the held-back directory (or its parent) is not
 * renamed or removed whole, and a missing .mcp.json stays missing whatever is tried.  Writes
 * beside them are performed.  The same writes without --protect land (the
 * control): it is --protect that holds.
 */
#define PROTECT_DOORS_SCRIPT                                                                              \
        "cd \"$1\" || exit 90; h=.git/hooks\n"                                                              \
        "echo evil > $h/pre-commit; echo evil >> $h/pre-commit; true > $h/pre-commit\n"                        \
        "truncate -s 0 $h/pre-commit; python3 -c 'import os; os.truncate(\"'$h'/pre-commit\", 0)'\n"       \
        "(umask 0; set -C; echo evil > $h/post-checkout); install -m 0755 /dev/null $h/pre-push\n"            \
        "echo evil > planted; chmod 755 planted; cp planted planted2\n"                                      \
        "mv planted2 $h/pre-rebase; ln planted $h/pre-merge-commit; ln -s ../../planted $h/commit-msg\n"     \
        "mkdir -p sub; echo evil > sub/../$h/pre-commit; echo evil > ./$h/../hooks/pre-applypatch\n"         \
        "exec 3< $h; echo evil > /proc/self/fd/3/pre-commit; echo evil > /proc/self/fd/3/post-merge\n"       \
        "rm -f $h/pre-commit; mv $h .git/hooks-gone; mv .git .git-moved; rm -rf $h .git; mkdir $h/new-dir\n"  \
        "echo '{}' > .mcp.json; mkdir .mcp.json; ln -s planted .mcp.json; ln planted .mcp.json\n"            \
        "mv planted .mcp.json; mkfifo .mcp.json\n"                                                           \
        "echo ok > plain && mkdir plain-dir && mv plain-dir moved-dir && echo ok > moved-dir/inside\n"

static void make_protect_workspace(const char *workspace)
{
        char *git = test_path_join(workspace, ".git");
        char *hooks = test_path_join(git, "hooks");
        char *hook = test_path_join(hooks, "pre-commit");

        assert_int_equal(mkdir(git, 0755), 0);
        assert_int_equal(mkdir(hooks, 0755), 0);
        test_write_file(hook, "original\n");
        free(hook);
        free(hooks);
        free(git);
}

static void test_protect_holds_back_every_door(void **state)
{
        char *workspace = realpath(scratch, NULL);
        char *hooks = test_path_join(workspace, ".git/hooks");
        char *hook = test_path_join(hooks, "pre-commit");
        char *mcp_config = test_path_join(workspace, ".mcp.json");
        char *plain = test_path_join(workspace, "plain");
        char *inside = test_path_join(workspace, "moved-dir/inside");
        char *gone = test_path_join(workspace, ".git/hooks-gone");
        char *moved = test_path_join(workspace, ".git-moved");
        const char *other_hooks[] = { "post-checkout", "pre-push", "pre-rebase", "pre-merge-commit", "commit-msg",
                                      "pre-applypatch", "post-merge", "new-dir" };
        test_process_result result;
        char *content;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_non_null(workspace);
        make_protect_workspace(workspace);
        launch(&result, "--ro", "/", "--rw", "/dev/null", "--rw", workspace, "--protect", hooks, "--protect",
               mcp_config, "--", "sh", "-c", PROTECT_DOORS_SCRIPT, "sh", workspace, NULL);
        assert_int_equal(result.exit_code, 0);
        content = test_read_file(hook);
        assert_string_equal(content, "original\n");
        free(content);
        for (size_t i = 0; i < sizeof(other_hooks) / sizeof(other_hooks[0]); i++) {
                char *planted = test_path_join(hooks, other_hooks[i]);
                struct stat status;

                if (lstat(planted, &status) == 0)
                        fail_msg("%s was planted in the protected hooks", planted);
                free(planted);
        }
        assert_false(test_path_exists(gone));
        assert_false(test_path_exists(moved));
        assert_false(test_path_exists(mcp_config));
        {
                struct stat status;

                assert_true(lstat(mcp_config, &status) < 0 && errno == ENOENT);
        }
        /* Beside them, the supervisor performed every write. */
        content = test_read_file(plain);
        assert_string_equal(content, "ok\n");
        free(content);
        content = test_read_file(inside);
        assert_string_equal(content, "ok\n");
        free(content);
        test_process_result_clear(&result);
        free(moved);
        free(gone);
        free(inside);
        free(plain);
        free(mcp_config);
        free(hook);
        free(hooks);
        free(workspace);
}

/* The control: the same doors without --protect change the hook and make .mcp.json. */
static void test_without_protect_the_doors_open(void **state)
{
        char *workspace = realpath(scratch, NULL);
        char *hook = test_path_join(workspace, ".git/hooks/pre-commit");
        char *mcp_config = test_path_join(workspace, ".mcp.json");
        test_process_result result;
        char *content;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_non_null(workspace);
        make_protect_workspace(workspace);
        launch(&result, "--ro", "/", "--rw", "/dev/null", "--rw", workspace, "--", "sh", "-c",
               "cd \"$1\" && echo evil > .git/hooks/pre-commit && echo '{}' > .mcp.json", "sh", workspace, NULL);
        assert_int_equal(result.exit_code, 0);
        content = test_read_file(hook);
        assert_string_equal(content, "evil\n");
        free(content);
        assert_true(test_path_exists(mcp_config));
        test_process_result_clear(&result);
        free(mcp_config);
        free(hook);
        free(workspace);
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

/*
 * --deny-env PATTERN removes every variable it matches, any case, but the
 * ones --allow-env names exactly, before --setenv: a pattern never takes
 * away what the call set.  The command's /proc/self/environ is the scrubbed
 * one, and its parent's (the supervisor, which keeps what it was exec'd
 * with) is out of its reach.
 */
static void test_deny_env_scrubs_before_setenv(void **state)
{
        const char *argv[] = { test_landlock_run_path(), "--ro", "/", "--setenv", "SET_TOKEN", "set", "--deny-env",
                               "*_TOKEN", "--deny-env", "*PASSWORD*", "--allow-env", "KEEP_TOKEN", "--", "sh", "-c",
                               "echo \"${GITHUB_TOKEN-gone}|${github_token-gone}|${db_password-gone}|$KEEP_TOKEN|"
                               "$SET_TOKEN|$PLAIN\"; tr '\\0' '\\n' </proc/self/environ | grep -c sekrit; "
                               "cat /proc/$PPID/environ >/dev/null 2>&1 || echo parent-unreadable", NULL };
        const char *env[] = { "GITHUB_TOKEN=sekrit1", "github_token=sekrit2", "db_password=sekrit3",
                              "KEEP_TOKEN=kept", "SET_TOKEN=sekrit4", "PLAIN=plain", "PATH=/usr/bin:/bin", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_run(argv, env, &result);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "gone|gone|gone|kept|set|plain\n0\nparent-unreadable\n");
        test_process_result_clear(&result);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_probe_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_help_and_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protect_paths_checked_at_launch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protect_holds_back_every_door, setup, teardown),
                cmocka_unit_test_setup_teardown(test_without_protect_the_doors_open, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unopenable_grant_refuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sink_and_shm, setup, teardown),
                cmocka_unit_test_setup_teardown(test_existing_file_not_truncated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_proc_parent_cwd_trick, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inherited_writable_fd_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exit_status_passes_through, setup, teardown),
                cmocka_unit_test_setup_teardown(test_environment_unchanged_and_terminal_filtered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_setenv_sets_the_commands_variables, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deny_env_scrubs_before_setenv, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
