/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox session ...`, `policy ...` and `run --session`: the real binary,
 * a fresh state directory per test, every invocation a new process (so every
 * check after a switch is also a check that the switch survived a restart).
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

#define READ_ONLY_TEXT                                                                                     \
        "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot " \
        "modify files in the standing mode. Do not refuse a required modification from this policy alone: "   \
        "try an available tool normally and follow any denial and escalation guidance it returns.\n"
#define WORKSPACE_WRITE_FORMAT                                                                             \
        "Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox "  \
        "may modify files under the session workspace: \"%s\". Some platform temporary areas may also "        \
        "be writable.\n"

typedef struct fixture {
        char *directory;
        char *state_assignment;    /* DSH_SANDBOX_STATE_DIR=... */
        char *config_assignment;   /* XDG_CONFIG_HOME=... (so no real config is picked up) */
        char *state;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));

        f->directory = test_make_directory(NULL);
        f->state = test_path_join(f->directory, "state");
        assert_true(asprintf(&f->state_assignment, "DSH_SANDBOX_STATE_DIR=%s", f->state) > 0);
        assert_true(asprintf(&f->config_assignment, "XDG_CONFIG_HOME=%s", f->directory) > 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        free(f->state_assignment);
        free(f->config_assignment);
        free(f->state);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

/* Runs dsh-sandbox with the arguments (NULL-terminated) in this test's state directory. */
static void cli(fixture *f, test_process_result *result, ...)
{
        const char *argv[32] = { test_dsh_sandbox_path() };
        const char *env[] = { f->state_assignment, f->config_assignment, "DSH_SANDBOX_CONFIG=", NULL };
        size_t count = 1;
        va_list arguments;

        va_start(arguments, result);
        while (count < 31 && (argv[count] = va_arg(arguments, const char *)))
                count++;
        va_end(arguments);
        argv[count] = NULL;
        test_run(argv, env, result);
}

/* `session new`, returning the printed id. */
static char *new_session(fixture *f, const char *cwd, const char *parent)
{
        test_process_result result;
        char *id;

        if (parent)
                cli(f, &result, "session", "new", "--cwd", cwd, "--parent", parent, NULL);
        else
                cli(f, &result, "session", "new", "--cwd", cwd, NULL);
        assert_int_equal(result.exit_code, 0);
        id = strndup(result.stdout_text, strcspn(result.stdout_text, "\n"));
        assert_int_equal(strlen(id), 36);
        test_process_result_clear(&result);
        return id;
}

static char *make_workspace(fixture *f, const char *name)
{
        char *path = test_path_join(f->directory, name);

        assert_int_equal(mkdir(path, 0755), 0);
        return path;
}

static void expect_resolved(fixture *f, const char *expected_json, ...)
{
        const char *argv[16] = { "policy", "resolve", "--json" };
        test_process_result result;
        size_t count = 3;
        va_list arguments;

        va_start(arguments, expected_json);
        while (count < 15 && (argv[count] = va_arg(arguments, const char *)))
                count++;
        va_end(arguments);
        cli(f, &result, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], argv[8], NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, expected_json);
        test_process_result_clear(&result);
}

static void test_help(void **state)
{
        static const char *const commands[][3] = {
                { "session", "--help", NULL },   { "session", "new", "--help" },
                { "session", "mode", "--help" }, { "session", "show", "--help" },
                { "session", "list", "--help" }, { "policy", "--help", NULL },
                { "policy", "resolve", "--help" }, { "policy", "context", "--help" },
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                test_process_result result;

                cli(f, &result, commands[i][0], commands[i][1], commands[i][2], NULL);
                assert_int_equal(result.exit_code, 0);
                assert_true(test_contains(result.stdout_text, "Usage: dsh-sandbox "));
                test_process_result_clear(&result);
        }
}

static void test_sessions_independent_and_durable(void **state)
{
        fixture *f = *state;
        char *root_a = make_workspace(f, "a"), *root_b = make_workspace(f, "b");
        char *a = new_session(f, root_a, NULL), *b = new_session(f, root_b, NULL);
        char *expected = NULL;
        test_process_result result;

        cli(f, &result, "session", "mode", a, "workspace-write", NULL);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);

        assert_true(asprintf(&expected, "{\"mode\":\"workspace-write\",\"workspaceRoot\":\"%s\",\"sessionId\":\"%s\"}\n",
                             root_a, a) > 0);
        expect_resolved(f, expected, "--session", a, NULL);
        free(expected);
        assert_true(asprintf(&expected, "{\"mode\":\"read-only\",\"workspaceRoot\":\"%s\",\"sessionId\":\"%s\"}\n",
                             root_b, b) > 0);
        expect_resolved(f, expected, "--session", b, NULL);
        free(expected);

        /* Explicit --mode outranks the session; --root outranks its cwd. */
        assert_true(asprintf(&expected, "{\"mode\":\"read-only\",\"workspaceRoot\":\"%s\",\"sessionId\":\"%s\"}\n",
                             root_a, a) > 0);
        expect_resolved(f, expected, "--session", a, "--mode", "read-only", NULL);
        free(expected);
        assert_true(asprintf(&expected,
                             "{\"mode\":\"workspace-write\",\"workspaceRoot\":\"%s\",\"additionalWritableRoots\":"
                             "[\"%s\"],\"sessionId\":\"%s\"}\n",
                             root_b, root_a, a) > 0);
        expect_resolved(f, expected, "--session", a, "--root", root_b, "--allow-write", root_a, NULL);
        free(expected);

        cli(f, &result, "session", "list", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_true(asprintf(&expected, "%s\tworkspace-write\t%s\n", a, root_a) > 0);
        assert_true(test_contains(result.stdout_text, expected));
        free(expected);
        assert_true(asprintf(&expected, "%s\tread-only\t%s\n", b, root_b) > 0);
        assert_true(test_contains(result.stdout_text, expected));
        free(expected);
        test_process_result_clear(&result);

        cli(f, &result, "session", "show", a, "--json", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "\"effectiveMode\":\"workspace-write\""));
        assert_true(test_contains(result.stdout_text, "\"events\":[{\"type\":\"sandbox/mode\",\"seq\":1,"));
        test_process_result_clear(&result);
        free(a);
        free(b);
        free(root_a);
        free(root_b);
}

/*
 * `session list --json`: one array in the store's order (ids sort by
 * creation), the effective mode and the override when there is one; an
 * empty store is []; a session that does not load is reported on stderr and
 * left out, the others still printed, exit 1.
 */
static void test_session_list_json(void **state)
{
        fixture *f = *state;
        char *root_a = make_workspace(f, "a"), *root_b = make_workspace(f, "b"), *expected = NULL, *a, *b, *fifo;
        test_process_result result;

        cli(f, &result, "session", "list", "--json", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "[]\n");
        test_process_result_clear(&result);

        a = new_session(f, root_a, NULL);
        b = new_session(f, root_b, NULL);
        cli(f, &result, "session", "mode", a, "workspace-write", NULL);
        test_process_result_clear(&result);
        assert_true(asprintf(&expected, "[{\"id\":\"%s\",\"cwd\":\"%s\",\"effectiveMode\":\"workspace-write\","
                                        "\"override\":\"workspace-write\"},{\"id\":\"%s\",\"cwd\":\"%s\","
                                        "\"effectiveMode\":\"read-only\"}]\n",
                             a, root_a, b, root_b) > 0);
        cli(f, &result, "session", "list", "--json", NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, expected);
        assert_string_equal(result.stderr_text, "");
        test_process_result_clear(&result);

        fifo = test_path_join(f->state, "zz-fifo.jsonl");
        assert_int_equal(mkfifo(fifo, 0600), 0);
        cli(f, &result, "session", "list", "--json", NULL);
        assert_int_equal(result.exit_code, 1);
        assert_string_equal(result.stdout_text, expected);
        assert_true(test_contains(result.stderr_text, "zz-fifo.jsonl is not a regular file"));
        test_process_result_clear(&result);
        free(fifo);
        free(expected);
        free(a);
        free(b);
        free(root_a);
        free(root_b);
}

static void test_delegation(void **state)
{
        fixture *f = *state;
        char *parent = new_session(f, f->directory, NULL), *child, *expected = NULL;
        test_process_result result;

        cli(f, &result, "session", "mode", parent, "danger-full-access", NULL);
        test_process_result_clear(&result);
        child = new_session(f, f->directory, parent);
        assert_true(asprintf(&expected, "{\"mode\":\"danger-full-access\",\"workspaceRoot\":\"%s\",\"sessionId\":\"%s\"}\n",
                             f->directory, child) > 0);
        expect_resolved(f, expected, "--session", child, NULL);
        cli(f, &result, "session", "show", child, NULL);
        assert_true(test_contains(result.stdout_text, "\"source\":\"delegation\""));
        assert_true(test_contains(result.stdout_text, "\"delegationDepth\":1"));
        test_process_result_clear(&result);
        free(expected);
        free(child);
        free(parent);
}

static void test_invariant_on_append_and_load(void **state)
{
        fixture *f = *state;
        char *id = new_session(f, f->directory, NULL), *name = NULL, *path, *log, *expected = NULL;
        test_process_result result;

        cli(f, &result, "session", "mode", id, "bogus", NULL);
        assert_int_equal(result.exit_code, 1);
        assert_string_equal(result.stderr_text, "dsh-sandbox: sandbox/mode carries unknown mode \"bogus\"\n");
        test_process_result_clear(&result);

        /* A hand edit: the load refuses it, naming the file and the line. */
        assert_true(asprintf(&name, "%s.jsonl", id) > 0);
        path = test_path_join(f->state, name);
        log = test_read_file(path);
        assert_true(asprintf(&expected, "%s{\"type\":\"sandbox/mode\",\"seq\":1,\"time\":5,\"data\":{\"mode\":\"root\"}}\n",
                             log) > 0);
        test_write_file(path, expected);
        free(expected);
        cli(f, &result, "policy", "resolve", "--session", id, NULL);
        assert_int_not_equal(result.exit_code, 0);
        assert_true(asprintf(&expected, "dsh-sandbox: session log %s: line 2: sandbox/mode carries unknown mode \"root\"\n",
                             path) > 0);
        assert_string_equal(result.stderr_text, expected);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);
        free(expected);
        free(log);
        free(path);
        free(name);
        free(id);
}

static void test_context_once_per_change(void **state)
{
        fixture *f = *state;
        char *root = make_workspace(f, "ws"), *id = new_session(f, root, NULL), *expected = NULL;
        test_process_result result;

        cli(f, &result, "policy", "context", "--session", id, NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, READ_ONLY_TEXT);
        test_process_result_clear(&result);
        cli(f, &result, "policy", "context", "--session", id, NULL);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);

        cli(f, &result, "session", "mode", id, "workspace-write", NULL);
        test_process_result_clear(&result);
        cli(f, &result, "policy", "context", "--session", id, NULL);
        assert_true(asprintf(&expected, WORKSPACE_WRITE_FORMAT, root) > 0);
        assert_string_equal(result.stdout_text, expected);
        test_process_result_clear(&result);
        cli(f, &result, "policy", "context", "--session", id, NULL);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);

        /* The log alone tells what the model was last told. */
        cli(f, &result, "session", "show", id, NULL);
        assert_true(test_contains(result.stdout_text, "event 3 sandbox/context: "));
        assert_false(test_contains(result.stdout_text, "event 4"));
        test_process_result_clear(&result);
        free(expected);
        free(id);
        free(root);
}

static bool sandbox_unavailable(const test_process_result *result)
{
        return result->exit_code == 125 && test_contains(result->stderr_text, "SANDBOX_UNAVAILABLE");
}

/* The session's mode, not a --mode flag, decides: checked on the disk. */
static void test_run_uses_session_policy(void **state)
{
        fixture *f = *state;
        char *writable_root = make_workspace(f, "writable"), *read_only_root = make_workspace(f, "read-only");
        char *writable = new_session(f, writable_root, NULL), *read_only = new_session(f, read_only_root, NULL);
        char *writable_file = test_path_join(writable_root, "f"), *read_only_file = test_path_join(read_only_root, "f");
        char *command = NULL;
        test_process_result result;

        cli(f, &result, "session", "mode", writable, "workspace-write", NULL);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);

        assert_true(asprintf(&command, "echo x > '%s'", writable_file) > 0);
        cli(f, &result, "run", "--session", writable, "--", "sh", "-c", command, NULL);
        if (sandbox_unavailable(&result)) {
                test_process_result_clear(&result);
                skip();
        }
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(writable_file));
        test_process_result_clear(&result);
        free(command);

        assert_true(asprintf(&command, "echo x > '%s'", read_only_file) > 0);
        cli(f, &result, "run", "--session", read_only, "--", "sh", "-c", command, NULL);
        assert_int_not_equal(result.exit_code, 0);
        assert_false(test_path_exists(read_only_file));
        test_process_result_clear(&result);

        /* A session that cannot be read never runs the command. */
        cli(f, &result, "run", "--session", "missing", "--", "sh", "-c", command, NULL);
        assert_int_equal(result.exit_code, 125);
        assert_true(test_contains(result.stderr_text, "session \"missing\" does not exist"));
        assert_false(test_path_exists(read_only_file));
        test_process_result_clear(&result);
        free(command);
        free(writable_file);
        free(read_only_file);
        free(writable);
        free(read_only);
        free(writable_root);
        free(read_only_root);
}

/*
 * One session's command must not choose another session's root.  Session `a`
 * may write `ws`; session `c` is rooted at `ws/sub`.  A command run in `a`
 * replaces `ws/sub` with a symlink to `outside`; a later call in `c` must be
 * refused (SANDBOX_INVALID_ROOT) rather than follow it and write `outside`.
 * Both backends; checked on disk.
 */
static void swap_root_for_symlink(fixture *f, const char *backend)
{
        char *workspace = make_workspace(f, "ws"), *outside = make_workspace(f, "outside");
        char *sub = test_path_join(workspace, "sub"), *escaped = test_path_join(outside, "escaped");
        char *a, *c, *swap = NULL, *write = NULL, *expected = NULL;
        test_process_result result;

        assert_int_equal(mkdir(sub, 0755), 0);
        a = new_session(f, workspace, NULL);
        c = new_session(f, sub, NULL);
        cli(f, &result, "session", "mode", a, "workspace-write", NULL);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        cli(f, &result, "session", "mode", c, "workspace-write", NULL);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);

        assert_true(asprintf(&swap, "rm -r '%s' && ln -s '%s' '%s'", sub, outside, sub) > 0);
        cli(f, &result, "run", "--backend", backend, "--session", a, "--", "sh", "-c", swap, NULL);
        if (sandbox_unavailable(&result)) {
                printf("# SKIP: the %s backend is not usable here: %s", backend, result.stderr_text);
                test_process_result_clear(&result);
                skip();
        }
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);

        assert_true(asprintf(&write, "echo x > '%s/escaped'", sub) > 0);
        cli(f, &result, "run", "--backend", backend, "--session", c, "--", "sh", "-c", write, NULL);
        assert_false(test_path_exists(escaped));
        assert_int_equal(result.exit_code, 125);
        assert_true(asprintf(&expected,
                             "dsh-sandbox: SANDBOX_INVALID_ROOT: session %s: recorded cwd \"%s\" now passes through a "
                             "symlink (\"%s\")",
                             c, sub, sub) > 0);
        if (!test_contains(result.stderr_text, expected))
                fail_msg("expected \"%s\" in \"%s\"", expected, result.stderr_text);
        test_process_result_clear(&result);

        /* policy resolve refuses the same root, and so does confine. */
        cli(f, &result, "policy", "resolve", "--session", c, NULL);
        assert_int_equal(result.exit_code, 125);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);
        cli(f, &result, "confine", "--backend", backend, "--session", c, "--", "true", NULL);
        assert_int_equal(result.exit_code, 125);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);
        free(expected);
        free(write);
        free(swap);
        free(c);
        free(a);
        free(escaped);
        free(sub);
        free(outside);
        free(workspace);
}

static void test_session_root_swapped_bwrap(void **state)
{
        swap_root_for_symlink(*state, "bwrap");
}

static void test_session_root_swapped_landlock(void **state)
{
        swap_root_for_symlink(*state, "landlock");
}

/* A user who names the session's directory through a symlink keeps a working session. */
static void test_session_created_through_symlink(void **state)
{
        fixture *f = *state;
        char *real = make_workspace(f, "real"), *link = test_path_join(f->directory, "link");
        char *id, *written = test_path_join(real, "written"), *command = NULL, *expected = NULL;
        test_process_result result;

        assert_int_equal(symlink(real, link), 0);
        id = new_session(f, link, NULL);
        assert_true(asprintf(&expected, "{\"mode\":\"read-only\",\"workspaceRoot\":\"%s\",\"sessionId\":\"%s\"}\n",
                             real, id) > 0);
        expect_resolved(f, expected, "--session", id, NULL);
        cli(f, &result, "session", "mode", id, "workspace-write", NULL);
        test_process_result_clear(&result);
        assert_true(asprintf(&command, "echo x > '%s'", written) > 0);
        cli(f, &result, "run", "--session", id, "--", "sh", "-c", command, NULL);
        if (!sandbox_unavailable(&result)) {
                assert_int_equal(result.exit_code, 0);
                assert_true(test_path_exists(written));
        }
        test_process_result_clear(&result);
        free(command);
        free(expected);
        free(written);
        free(id);
        free(link);
        free(real);
}

static void test_errors(void **state)
{
        fixture *f = *state;
        char *id = new_session(f, f->directory, NULL), *name = NULL, *path, *log = NULL, *expected = NULL;
        char *blocker = test_path_join(f->directory, "file"), *assignment = NULL;
        test_process_result result;

        cli(f, &result, "session", "show", "missing", NULL);
        assert_int_equal(result.exit_code, 1);
        assert_true(test_contains(result.stderr_text, "dsh-sandbox: session \"missing\" does not exist"));
        test_process_result_clear(&result);
        cli(f, &result, "session", "mode", "../x", "read-only", NULL);
        assert_int_equal(result.exit_code, 2);
        test_process_result_clear(&result);
        cli(f, &result, "session", "frobnicate", NULL);
        assert_int_equal(result.exit_code, 2);
        test_process_result_clear(&result);
        cli(f, &result, "session", "new", "--cwd", "/nonexistent/dsh-sandbox", NULL);
        assert_int_equal(result.exit_code, 1);
        test_process_result_clear(&result);

        /* A corrupt line in the middle: named, refused, and nothing appended after it. */
        assert_true(asprintf(&name, "%s.jsonl", id) > 0);
        path = test_path_join(f->state, name);
        {
                char *header = test_read_file(path);

                assert_true(asprintf(&log, "%s{\"type\":\"sandbox/mode\",\"seq\":1,\"ti\n"
                                           "{\"type\":\"sandbox/mode\",\"seq\":2,\"time\":5,\"data\":{\"mode\":\"read-only\"}}\n",
                                     header) > 0);
                free(header);
        }
        test_write_file(path, log);
        cli(f, &result, "session", "mode", id, "workspace-write", NULL);
        assert_int_equal(result.exit_code, 1);
        assert_true(asprintf(&expected, "session log %s: line 2: corrupt line", path) > 0);
        assert_true(test_contains(result.stderr_text, expected));
        test_process_result_clear(&result);
        {
                char *after = test_read_file(path);

                assert_string_equal(after, log);
                free(after);
        }

        /* An unwritable state directory (a path through a regular file). */
        test_write_file(blocker, "x");
        assert_true(asprintf(&assignment, "DSH_SANDBOX_STATE_DIR=%s/state", blocker) > 0);
        {
                const char *argv[] = { test_dsh_sandbox_path(), "session", "new", "--cwd", "/", NULL };
                const char *env[] = { assignment, f->config_assignment, NULL };

                test_run(argv, env, &result);
                assert_int_equal(result.exit_code, 1);
                assert_true(test_contains(result.stderr_text, blocker));
                assert_string_equal(result.stdout_text, "");
                test_process_result_clear(&result);
        }
        free(assignment);
        free(blocker);
        free(expected);
        free(log);
        free(path);
        free(name);
        free(id);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_help, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sessions_independent_and_durable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_list_json, setup, teardown),
                cmocka_unit_test_setup_teardown(test_delegation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invariant_on_append_and_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_context_once_per_change, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_uses_session_policy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_root_swapped_bwrap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_root_swapped_landlock, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_created_through_symlink, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
