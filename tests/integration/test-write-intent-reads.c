/* SPDX-License-Identifier: MIT */
/*
 * A read-heavy command pays nothing for write intent (issue 20, "It must
 * stay cheap"): the filter decides an open's write intent from its flags in
 * BPF, so a plain read never reaches the supervisor.  Judged on the real
 * kernel by the supervisor's own count of the write-intent notifications it
 * received (dsh_child_write_calls(), a diagnostic): `grep -r` over the
 * project tree, `find` over it and `cat` of its files, spawned through the
 * library on both backends, make none.  The same count after a command that
 * makes files is at least one per file, so a count stuck at 0 fails.
 * The programs run directly, not through a shell: a shell's redirections
 * and bash's own open of /dev/tty are write-intent calls of their own.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/provider.h"
#include "provider/process.h"
#include "test-landlock.h"
#include "test-support.h"

/* The files `cat` reads: every one `find` lists under the tree's core/ (the sources' src/core), enough to be many. */
#define CAT_DIRECTORY "core"
#define CAT_MAX 512

static char *workspace;
static char *tree;

static const char *source_root(void);

/*
 * The tree read: a copy of the project's src/ in the test's own scratch.
 * The sources themselves may lie under /tmp (a clean clone), which is the
 * session's scratch inside bwrap, not the host's: a read there would find
 * nothing rather than read much.
 */
static int setup(void **state)
{
        char *copy = NULL;

        (void) state;
        workspace = test_make_directory(NULL);
        tree = test_path_join(workspace, "tree");
        assert_true(asprintf(&copy, "cp -R '%s/src' '%s'", source_root(), tree) > 0);
        assert_int_equal(system(copy), 0);
        free(copy);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(workspace);
        workspace = NULL;
        free(tree);
        tree = NULL;
        return 0;
}

/* The project tree the tests were built from (tests/meson.build sets it). */
static const char *source_root(void)
{
        const char *root = getenv("DSH_SOURCE_ROOT");

        if (!root || root[0] != '/')
                fail_msg("DSH_SOURCE_ROOT is not an absolute path: %s", root ? root : "(unset)");
        return root;
}

static dsh_provider *sole_backend(const char *backend)
{
        const char *const sole[] = { backend, NULL };
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();

        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        return provider;
}

/*
 * Spawns `argv` under `backend`, workspace-write, its stdout and stderr to
 * /dev/null opened here (so no open of the command's writes there); returns
 * its write-intent notifications and puts its exit status in `*status`.
 */
static unsigned long write_calls_of(const char *backend, char *const *argv, int *status)
{
        dsh_provider *provider = sole_backend(backend);
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        int sink = open("/dev/null", O_WRONLY | O_CLOEXEC), wait_status = 0;
        unsigned long calls;

        assert_true(sink >= 0);
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup(workspace);
        options.stdout_fd = sink;
        options.stderr_fd = sink;
        if (dsh_provider_spawn(provider, argv, &policy, &options, &child, &error) < 0)
                fail_msg("spawn under %s: %s", backend, error.message);
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        *status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
        calls = dsh_child_write_calls(child);
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        close(sink);
        return calls;
}

/* `cat` and every regular file under the tree's CAT_DIRECTORY, as found by `find` on the host. */
static char **cat_argv(void)
{
        char **argv = calloc(CAT_MAX + 2, sizeof(*argv));
        char *command = NULL, line[4096];
        size_t count = 0;
        FILE *listing;

        assert_non_null(argv);
        argv[count++] = strdup("cat");
        assert_true(asprintf(&command, "find '%s/%s' -type f", tree, CAT_DIRECTORY) > 0);
        listing = popen(command, "r");
        assert_non_null(listing);
        while (count <= CAT_MAX && fgets(line, sizeof(line), listing)) {
                line[strcspn(line, "\n")] = '\0';
                argv[count++] = strdup(line);
        }
        pclose(listing);
        free(command);
        if (count < 20)
                fail_msg("only %zu files under %s/%s: not a read-heavy command", count - 1, tree,
                         CAT_DIRECTORY);
        return argv;
}

static void free_argv(char **argv)
{
        for (size_t i = 0; argv[i]; i++)
                free(argv[i]);
        free(argv);
}

static void check_reads_make_no_notification(const char *backend)
{
        char *const grep[] = { (char *) "grep", (char *) "-r", (char *) "-c", (char *) "dsh_", tree,
                               NULL };
        char *const find[] = { (char *) "find", tree, (char *) "-name", (char *) "*.c", NULL };
        char **cat = cat_argv();
        int status = -1;

        assert_int_equal(write_calls_of(backend, grep, &status), 0);
        assert_int_equal(status, 0);  /* it found matches: it read the tree */
        assert_int_equal(write_calls_of(backend, find, &status), 0);
        assert_int_equal(status, 0);
        assert_int_equal(write_calls_of(backend, (char *const *) cat, &status), 0);
        assert_int_equal(status, 0);
        free_argv(cat);
}

/* The control: files made are write-intent calls, each one counted. */
static void check_writes_are_counted(const char *backend)
{
        char *one = test_path_join(workspace, "one"), *two = test_path_join(workspace, "two");
        char *three = test_path_join(workspace, "three"), *directory = test_path_join(workspace, "made");
        char *const touch[] = { (char *) "touch", one, two, three, NULL };
        char *const make[] = { (char *) "mkdir", directory, NULL };
        int status = -1;

        assert_true(write_calls_of(backend, touch, &status) >= 3);
        assert_int_equal(status, 0);
        assert_true(test_path_exists(three));
        assert_true(write_calls_of(backend, make, &status) >= 1);
        assert_int_equal(status, 0);
        assert_true(test_path_exists(directory));
        free(directory);
        free(three);
        free(two);
        free(one);
}

static void test_landlock_reads_make_no_notification(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_reads_make_no_notification("landlock");
}

static void test_landlock_writes_are_counted(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_writes_are_counted("landlock");
}

static void test_bwrap_reads_make_no_notification(void **state)
{
        (void) state;
        TEST_REQUIRE_BWRAP();
        check_reads_make_no_notification("bwrap");
}

static void test_bwrap_writes_are_counted(void **state)
{
        (void) state;
        TEST_REQUIRE_BWRAP();
        check_writes_are_counted("bwrap");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_landlock_reads_make_no_notification, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_writes_are_counted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_reads_make_no_notification, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_writes_are_counted, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
