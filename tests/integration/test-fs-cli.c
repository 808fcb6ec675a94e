/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox fs write|edit|mkdir|rm|mv|read` (docs/cli.md, docs/file-guard.md):
 * exit 0 on success, 1 with one error line on failure (and with --json the
 * error object on stdout), 2 for a usage error; `write` takes stdin; paths
 * are taken from the current directory; options may follow the paths; `rm
 * -r` is --recursive.  Checked on disk.
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

#include "guard-fixture.h"
#include "test-support.h"

static guard_fixture fixture;

static int setup(void **state)
{
        (void) state;
        guard_fixture_setup(&fixture);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        guard_fixture_teardown(&fixture);
        return 0;
}

/* Runs `line` with sh in the workspace, $B being dsh-sandbox and $WS, $OUT the fixture's places. */
static void shell(const char *line, test_process_result *result)
{
        char *script = NULL;
        const char *argv[] = { "sh", "-c", NULL, NULL };

        assert_true(asprintf(&script, "cd '%s' && B='%s' WS='%s' OUT='%s' && %s", fixture.workspace,
                             test_dsh_sandbox_path(), fixture.workspace, fixture.outside, line) > 0);
        argv[2] = script;
        test_run(argv, NULL, result);
        free(script);
}

static void expect(const char *line, int status, const char *stdout_text, const char *stderr_text)
{
        test_process_result result;

        shell(line, &result);
        if (result.exit_code != status || (stdout_text && strcmp(result.stdout_text, stdout_text) != 0) ||
            (stderr_text && strcmp(result.stderr_text, stderr_text) != 0))
                fail_msg("`%s`: exit %d, stdout \"%s\", stderr \"%s\"; expected %d, \"%s\", \"%s\"", line,
                         result.exit_code, result.stdout_text, result.stderr_text, status,
                         stdout_text ? stdout_text : "(any)", stderr_text ? stderr_text : "(any)");
        test_process_result_clear(&result);
}

static void assert_file(const char *name, const char *expected)
{
        char *path = guard_fixture_path(fixture.workspace, name);
        char *content = test_read_file(path);

        if (!content || strcmp(content, expected) != 0)
                fail_msg("%s holds \"%s\", expected \"%s\"", path, content ? content : "(missing)", expected);
        free(content);
        free(path);
}

static char *format(const char *format_text, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *format_text, ...)
{
        va_list arguments;
        char *text = NULL;

        va_start(arguments, format_text);
        assert_true(vasprintf(&text, format_text, arguments) > 0);
        va_end(arguments);
        return text;
}

static void test_write_edit_read(void **state)
{
        char *json;

        (void) state;
        expect("printf 'one two\\n' | \"$B\" fs write --mode workspace-write a/b/new", 0, "", "");
        assert_file("a/b/new", "one two\n");
        expect("\"$B\" fs edit a/b/new --old two --new '' --mode workspace-write", 0, "", "");
        assert_file("a/b/new", "one \n");
        expect("\"$B\" fs read a/b/new", 0, "one \n", "");
        json = format("{\"operation\":\"write\",\"path\":\"%s/a/b/new\",\"created\":false,\"bytes\":3}\n",
                      fixture.workspace);
        expect("printf 'new' | \"$B\" fs write -m workspace-write --json a/b/new", 0, json, "");
        free(json);
        /* Relative paths are taken from the workspace root (where `bash` starts), not the current directory. */
        expect("cd a && printf 'rel' | \"$B\" fs write -m workspace-write --root \"$WS\" rel", 0, "", "");
        assert_file("rel", "rel");
        assert_int_equal(access("a/rel", F_OK), -1);
        expect("cd a && \"$B\" bash --root \"$WS\" 'cat rel; echo'", 0, "rel\n", "");
        expect("printf 'x' | \"$B\" fs write -m workspace-write --create-only rel", 1, "", NULL);
        assert_file("rel", "rel");
}

static void test_denied(void **state)
{
        char *line, *json;

        (void) state;
        line = format("dsh-sandbox: FS_SANDBOX_DENIED: cannot write \"%s/x\": file access denied under "
                      "workspace-write mode\n", fixture.outside);
        /* The error's own members as before, then the refusal's record (docs/file-guard.md). */
        json = format("{\"code\":\"FS_SANDBOX_DENIED\",\"message\":\"cannot write \\\"%s/x\\\": file access denied "
                      "under workspace-write mode\",\"denial\":{\"op\":\"write\",\"path\":\"%s/x\",\"rule\":"
                      "\"outside-roots\",\"source\":\"file-guard\",\"grant\":{\"kind\":\"writable-root\","
                      "\"target\":\"%s\"}}}\n",
                      fixture.outside, fixture.outside, fixture.outside);
        expect("printf x | \"$B\" fs write -m workspace-write \"$OUT/x\"", 1, "", line);
        expect("printf x | \"$B\" fs write -m workspace-write \"$OUT/x\" --json", 1, json, line);
        free(json);
        free(line);
        /* The configured default mode is read-only; a relative path is named as it was given. */
        expect("printf x | \"$B\" fs write y", 1, "",
               "dsh-sandbox: FS_SANDBOX_DENIED: cannot write \"y\": file access denied under read-only mode\n");
        {
                char *x = guard_fixture_path(fixture.outside, "x"), *y = guard_fixture_path(fixture.workspace, "y");

                assert_false(test_path_exists(x));
                assert_false(test_path_exists(y));
                free(y);
                free(x);
        }
}

static void test_mkdir_mv_rm(void **state)
{
        struct stat status;
        char *moved = guard_fixture_path(fixture.workspace, "q/moved"), *tree = guard_fixture_path(fixture.workspace,
                                                                                                    "tree");

        (void) state;
        expect("\"$B\" fs mkdir -m workspace-write -p p/1 q", 0, "", "");
        expect("\"$B\" fs mkdir -m workspace-write q", 1, "", NULL);
        expect("\"$B\" fs mv -m workspace-write file q/moved", 0, "", "");
        assert_file("q/moved", "old\n");
        assert_int_equal(lstat(moved, &status), 0);
        /* Options after the paths; -r is --recursive, --root is spelt out. */
        expect("\"$B\" fs rm tree -m workspace-write", 1, "", NULL);
        assert_true(test_path_exists(tree));
        expect("\"$B\" fs rm tree p -r -m workspace-write --root \"$WS\"", 0, "", "");
        assert_false(test_path_exists(tree));
        free(tree);
        free(moved);
}

static void test_usage_errors(void **state)
{
        (void) state;
        expect("\"$B\" fs", 2, "", "dsh-sandbox: usage error: fs requires a command: write, edit, mkdir, rm, mv or read "
                                   "(see --help)\n");
        expect("\"$B\" fs copy a", 2, "", "dsh-sandbox: usage error: unknown fs command \"copy\" (see --help)\n");
        expect("\"$B\" fs write </dev/null", 2, "", "dsh-sandbox: usage error: fs write takes PATH (see --help)\n");
        expect("\"$B\" fs mv a", 2, "", "dsh-sandbox: usage error: fs mv takes SOURCE DESTINATION (see --help)\n");
        expect("\"$B\" fs rm ''", 2, "", "dsh-sandbox: usage error: fs rm: path 1 is empty (see --help)\n");
        expect("\"$B\" fs edit --new x f", 2, "", "dsh-sandbox: usage error: fs edit requires --old TEXT (see --help)\n");
        expect("\"$B\" fs edit --old '' --new x f", 2, "",
               "dsh-sandbox: usage error: fs edit: --old must not be empty (see --help)\n");
        expect("\"$B\" fs read --backend bwrap f", 2, "",
               "dsh-sandbox: usage error: fs read: --backend does not apply here (see --help)\n");
        expect("\"$B\" fs rm -m bogus f", 2, "", NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_write_edit_read, setup, teardown),
                cmocka_unit_test_setup_teardown(test_denied, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mkdir_mv_rm, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
