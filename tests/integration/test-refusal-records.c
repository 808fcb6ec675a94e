/* SPDX-License-Identifier: MIT */
/*
 * The refusal records a finished child hands out (dsh_child_refusals(),
 * dsh-sandbox/provider.h), on the real kernel, for each backend: a real
 * confined program through dsh_provider_spawn(), whose supervisor is a
 * thread of this process, and the disk checked after it.  A refused change
 * is recorded {op, path, rule} with the rule that refused it (outside the
 * roots; a protected subpath), and the file is unchanged; a command that
 * does nothing, or that only reads, has no record and sent no write-intent
 * call; records are bounded (64, the rest counted); an unconfined call has
 * none; a path kept absent that the command made anyway is moved aside and
 * named (dsh_child_moved_aside_paths()).  The records' way up to the bash tool, serve and mcp is
 * tests/reach/test_refusal_records.py.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/provider.h"
#include "provider/process.h"
#include "test-landlock.h"
#include "test-support.h"

#define BOUND_FILES 200
#define HOSTNAME_PATH "/etc/hostname"

struct scratch {
        char *root;
        char *workspace;        /* the call's workspace root: a git repository */
        char *outside;          /* beside it, beneath no writable root */
        char *hook;             /* workspace/.git/hooks/pre-commit, mode 0755 */
};

static struct scratch scratch;

static int setup(void **state)
{
        (void) state;
        scratch.root = test_make_directory(NULL);
        scratch.workspace = test_path_join(scratch.root, "w");
        scratch.outside = test_path_join(scratch.root, "o");
        assert_int_equal(mkdir(scratch.workspace, 0755), 0);
        assert_int_equal(mkdir(scratch.outside, 0755), 0);
        test_setup_shell(scratch.workspace, "git init -q . && printf '#!/bin/sh\\n' > .git/hooks/pre-commit && "
                                            "chmod 0755 .git/hooks/pre-commit", NULL);
        scratch.hook = test_path_join(scratch.workspace, ".git/hooks/pre-commit");
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(scratch.workspace);
        free(scratch.outside);
        free(scratch.hook);
        test_remove_tree(scratch.root);
        memset(&scratch, 0, sizeof(scratch));
        return 0;
}

/* The backend a case runs on (its prestate), skipped with the reason where the host lacks it. */
static const char *require_backend(void **state)
{
        const char *backend = *state;

        printf("# on %s\n", backend);
        if (strcmp(backend, "landlock") == 0)
                TEST_REQUIRE_LANDLOCK();
        else
                TEST_REQUIRE_BWRAP();
        return backend;
}

static char *format_text(const char *format, ...) __attribute__((format(printf, 1, 2)));

static char *format_text(const char *format, ...)
{
        va_list arguments;
        char *text = NULL;
        int length;

        va_start(arguments, format);
        length = vasprintf(&text, format, arguments);
        va_end(arguments);
        assert_true(length >= 0);
        return text;
}

static mode_t mode_of(const char *path)
{
        struct stat status;

        assert_int_equal(lstat(path, &status), 0);
        return status.st_mode & 07777;
}

/*
 * `argv` under `mode` with `backend` the sole backend, started in the
 * workspace, its output discarded; waited for and settled, so that its
 * records are final.  A program, not a shell: bash opens /dev/tty for
 * writing as it starts, a write-intent call of its own that would stand
 * beside every record here.  It must end with `status` (a refused chmod
 * exits 1): a run that failed for another reason proves nothing.
 */
static dsh_child *run_command(const char *backend, dsh_mode mode, const char *const *argv, int status)
{
        const char *const sole[] = { backend, NULL };
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();
        dsh_child *child = NULL;
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC), cwd_fd, wait_status = -1;

        assert_non_null(provider);
        assert_true(null_fd >= 0);
        cwd_fd = open(scratch.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(cwd_fd >= 0);
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        policy.mode = mode;
        policy.workspace_root = strdup(scratch.workspace);
        options.stdin_fd = null_fd;
        options.stdout_fd = null_fd;
        options.stderr_fd = null_fd;
        options.cwd_fd = cwd_fd;
        if (dsh_provider_spawn(provider, (char *const *) argv, &policy, &options, &child, &error) < 0)
                fail_msg("spawn under %s: %s", backend, error.message);
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        assert_true(WIFEXITED(wait_status));
        if (WEXITSTATUS(wait_status) != status)
                fail_msg("%s under %s exited %d, not %d", argv[0], backend, WEXITSTATUS(wait_status), status);
        close(null_fd);
        close(cwd_fd);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        return child;
}

/* Record `index` of `child` is {op, path, rule}; the message names what it was instead. */
static void assert_refusal(const dsh_child *child, size_t index, const char *op, const char *path, const char *rule)
{
        const dsh_write_refusal *refusals = NULL;
        size_t count = dsh_child_refusals(child, &refusals, NULL);

        if (index >= count)
                fail_msg("record %zu expected {%s, %s, %s}; the child has %zu", index, op, path, rule, count);
        if (strcmp(refusals[index].op, op) != 0 || strcmp(refusals[index].path, path) != 0 ||
            strcmp(refusals[index].rule, rule) != 0)
                fail_msg("record %zu is {%s, %s, %s}, expected {%s, %s, %s}", index, refusals[index].op,
                         refusals[index].path, refusals[index].rule, op, path, rule);
}

/* A chmod beneath no root: refused, the file unchanged, recorded once however often it is retried. */
static void test_outside_roots_is_recorded(void **state)
{
        const char *backend = require_backend(state);
        dsh_autofree char *target = test_path_join(scratch.outside, "f");
        mode_t hostname_mode = mode_of(HOSTNAME_PATH);
        unsigned long dropped = 1;
        dsh_child *child;

        test_write_file(target, "kept\n");
        assert_int_equal(chmod(target, 0644), 0);
        child = run_command(backend, DSH_MODE_WORKSPACE_WRITE,
                            (const char *const[]) { "/bin/chmod", "600", HOSTNAME_PATH, target, target, target, NULL },
                            1);
        assert_int_equal(mode_of(HOSTNAME_PATH), hostname_mode);
        assert_int_equal(mode_of(target), 0644);
        assert_refusal(child, 0, "chmod", HOSTNAME_PATH, "outside-roots");
        assert_refusal(child, 1, "chmod", target, "outside-roots");
        assert_int_equal(dsh_child_refusals(child, NULL, &dropped), 2);
        assert_int_equal(dropped, 0);
        dsh_child_free(child);
}

/* A chmod of a protected subpath inside the root: refused, the hook still executable, the rule named. */
static void test_protected_subpath_is_recorded(void **state)
{
        const char *backend = require_backend(state);
        dsh_child *child = run_command(backend, DSH_MODE_WORKSPACE_WRITE,
                                       (const char *const[]) { "/bin/chmod", "-x", scratch.hook, NULL }, 1);

        assert_int_equal(mode_of(scratch.hook), 0755);
        assert_refusal(child, 0, "chmod", scratch.hook, "protected-subpath");
        assert_int_equal(dsh_child_refusals(child, NULL, NULL), 1);
        dsh_child_free(child);
}

/* Nothing done, and only reads (the tree walked, every file read): no record, no write-intent call. */
static void test_reads_make_no_record_and_no_write_call(void **state)
{
        const char *backend = require_backend(state);
        const char *const nothing[] = { "/bin/true", NULL };
        const char *const reads[] = { "/bin/grep", "-r", "-q", "no such text in the tree", ".", HOSTNAME_PATH, NULL };
        const struct {
                const char *const *argv;
                int status;
        } commands[] = { { nothing, 0 }, { reads, 1 } };

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                static const dsh_write_refusal sentinel;
                const dsh_write_refusal *refusals = &sentinel;   /* anything but NULL: the call must set it */
                unsigned long dropped = 1;
                dsh_child *child = run_command(backend, DSH_MODE_WORKSPACE_WRITE, commands[i].argv,
                                               commands[i].status);

                assert_int_equal(dsh_child_refusals(child, &refusals, &dropped), 0);
                assert_null(refusals);
                assert_int_equal(dropped, 0);
                if (dsh_child_write_calls(child) != 0)
                        fail_msg("%s under %s sent %lu write-intent calls", commands[i].argv[0], backend,
                                 dsh_child_write_calls(child));
                dsh_child_free(child);
        }
}

/* The other side of the line above: a file made in the workspace is a write-intent call, made, with no record. */
static void test_a_write_is_counted_not_recorded(void **state)
{
        const char *backend = require_backend(state);
        dsh_autofree char *made = test_path_join(scratch.workspace, "made");
        dsh_child *child = run_command(backend, DSH_MODE_WORKSPACE_WRITE,
                                       (const char *const[]) { "/usr/bin/touch", made, NULL }, 0);

        assert_true(test_path_exists(made));
        assert_int_equal(dsh_child_refusals(child, NULL, NULL), 0);
        if (dsh_child_write_calls(child) == 0)
                fail_msg("touch of a new file in the workspace under %s sent no write-intent call", backend);
        dsh_child_free(child);
}

/* 200 different refused chmods: the first 64 kept in order, 136 counted, and not one file changed. */
static void test_records_are_bounded(void **state)
{
        const char *backend = require_backend(state);
        dsh_autofree char *directory = test_path_join(scratch.outside, "many");
        char *paths[BOUND_FILES];
        const char *argv[BOUND_FILES + 3] = { "/bin/chmod", "600" };
        unsigned long dropped = 0;
        dsh_child *child;

        assert_int_equal(mkdir(directory, 0755), 0);
        for (int i = 0; i < BOUND_FILES; i++) {
                paths[i] = format_text("%s/f%03d", directory, i);
                test_write_file(paths[i], "");
                assert_int_equal(chmod(paths[i], 0644), 0);
                argv[i + 2] = paths[i];
        }
        child = run_command(backend, DSH_MODE_WORKSPACE_WRITE, argv, 1);
        assert_int_equal(dsh_child_refusals(child, NULL, &dropped), DSH_WRITE_REFUSALS_MAX);
        assert_int_equal(dropped, BOUND_FILES - DSH_WRITE_REFUSALS_MAX);
        for (int i = 0; i < BOUND_FILES; i++) {
                assert_int_equal(mode_of(paths[i]), 0644);
                if (i < DSH_WRITE_REFUSALS_MAX)
                        assert_refusal(child, (size_t) i, "chmod", paths[i], "outside-roots");
                free(paths[i]);
        }
        dsh_child_free(child);
}

/* danger-full-access: no supervisor, nothing refused, nothing recorded (the chmod is made). */
static void test_unconfined_call_has_no_record(void **state)
{
        dsh_autofree char *target = test_path_join(scratch.outside, "g");
        dsh_child *child;

        (void) state;
        test_write_file(target, "");
        assert_int_equal(chmod(target, 0644), 0);
        child = run_command("landlock", DSH_MODE_DANGER_FULL_ACCESS,
                            (const char *const[]) { "/bin/chmod", "600", target, NULL }, 0);
        assert_int_equal(mode_of(target), 0600);
        assert_int_equal(dsh_child_refusals(child, NULL, NULL), 0);
        assert_int_equal(dsh_child_write_calls(child), 0);
        dsh_child_free(child);
}

/*
 * A path the sandbox keeps absent that the command made where no write
 * supervisor looks (a unix socket bound at the missing .mcp.json: bind is
 * no write-intent call): moved aside after the call, and named by its
 * original path for the records (dsh_child_moved_aside_paths()), the
 * name itself gone from the disk.
 */
static void test_moved_aside_path_is_named(void **state)
{
        const char *backend = require_backend(state);
        dsh_autofree char *planted = test_path_join(scratch.workspace, ".mcp.json");
        const char *const *paths = NULL;
        struct stat status;
        dsh_child *child = run_command(backend, DSH_MODE_WORKSPACE_WRITE,
                                       (const char *const[]) { "/usr/bin/python3", "-c",
                                                               "import socket; socket.socket(socket.AF_UNIX)"
                                                               ".bind('.mcp.json')", NULL },
                                       0);

        assert_int_equal(lstat(planted, &status), -1);
        assert_int_equal(dsh_child_moved_aside(child), 1);
        assert_int_equal(dsh_child_moved_aside_paths(child, &paths), 1);
        assert_non_null(paths);
        assert_string_equal(paths[0], planted);
        assert_null(paths[1]);
        dsh_child_free(child);
}

#define ON_BOTH_BACKENDS(test)                                                                                 \
        cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *) "landlock"),                  \
        cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *) "bwrap")

int main(void)
{
        const struct CMUnitTest tests[] = {
                ON_BOTH_BACKENDS(test_outside_roots_is_recorded),
                ON_BOTH_BACKENDS(test_protected_subpath_is_recorded),
                ON_BOTH_BACKENDS(test_reads_make_no_record_and_no_write_call),
                ON_BOTH_BACKENDS(test_a_write_is_counted_not_recorded),
                ON_BOTH_BACKENDS(test_records_are_bounded),
                ON_BOTH_BACKENDS(test_moved_aside_path_is_named),
                cmocka_unit_test_setup_teardown(test_unconfined_call_has_no_record, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
