/* SPDX-License-Identifier: MIT */
/*
 * The fd-based path module and the prepared policy: resolution beneath a
 * directory fd never leaves it, a canonical path that now passes through a
 * symlink is refused, and a prepared policy's root fds are the checked
 * directories themselves.
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

#include "base/path-fd.h"
#include "provider/prepared-policy.h"
#include "test-support.h"

static char *scratch;

static int setup(void **state)
{
        char *command = NULL;

        (void) state;
        scratch = test_make_directory(NULL);
        assert_true(asprintf(&command,
                             "cd '%s' && mkdir -p root/sub outside && touch root/sub/file outside/secret && "
                             "ln -s ../outside root/escape && ln -s /etc root/absolute && ln -s sub root/inner",
                             scratch) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(scratch);
        return 0;
}

static int open_root(void)
{
        char *root = test_path_join(scratch, "root");
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        free(root);
        return fd;
}

static void test_beneath_stays_beneath(void **state)
{
        int root = open_root(), fd;

        (void) state;
        fd = dsh_path_open_beneath(root, "sub/file", true);
        assert_true(fd >= 0);
        close(fd);
        fd = dsh_path_open_beneath(root, "", true);  /* the root itself */
        assert_true(fd >= 0 && dsh_fd_same_file(fd, root));
        close(fd);
        assert_int_equal(dsh_path_open_beneath(root, "../outside/secret", false), -EXDEV);
        assert_int_equal(dsh_path_open_beneath(root, "/etc/passwd", false), -EXDEV);
        assert_int_equal(dsh_path_open_beneath(root, "escape/secret", false), -EXDEV);
        assert_int_equal(dsh_path_open_beneath(root, "absolute/passwd", false), -EXDEV);
        /* A symlink that stays inside is followed only when asked. */
        fd = dsh_path_open_beneath(root, "inner/file", false);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(dsh_path_open_beneath(root, "inner/file", true), -ELOOP);
        /* Magic links never lead out. */
        assert_true(dsh_path_open_beneath(root, "/proc/self/root/etc", false) < 0);
        close(root);
}

static void test_canonical_refuses_a_symlink_on_the_way(void **state)
{
        char *through_link = NULL, *plain = NULL;
        int fd;

        (void) state;
        assert_true(asprintf(&through_link, "%s/root/inner/file", scratch) > 0);
        assert_true(asprintf(&plain, "%s/root/sub/file", scratch) > 0);
        assert_int_equal(dsh_path_open_canonical(through_link, false), -ELOOP);
        assert_int_equal(dsh_path_open_canonical("relative/path", false), -EINVAL);
        fd = dsh_path_open_canonical(plain, false);
        assert_true(fd >= 0);
        close(fd);
        free(plain);
        free(through_link);
}

static void test_relative_to(void **state)
{
        (void) state;
        assert_string_equal(dsh_path_relative_to("/a/b/c", "/a"), "b/c");
        assert_string_equal(dsh_path_relative_to("/a", "/a"), "");
        assert_string_equal(dsh_path_relative_to("/a/b", "/"), "a/b");
        assert_null(dsh_path_relative_to("/ab", "/a"));
        assert_null(dsh_path_relative_to("/b", "/a"));
}

static void test_prepared_policy_opens_the_checked_roots(void **state)
{
        char *root = test_path_join(scratch, "root");
        char *extra = test_path_join(scratch, "outside");
        char *extras[] = { extra, NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int expected;

        (void) state;
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = root;
        policy.additional_writable_roots = extras;
        assert_int_equal(dsh_prepared_policy_init(&prepared, &policy, &error), 0);
        assert_int_equal(prepared.root_count, 2);
        expected = open(root, O_PATH | O_CLOEXEC);
        assert_true(dsh_fd_same_file(dsh_prepared_policy_root_fd(&prepared, prepared.policy.workspace_root), expected));
        close(expected);
        expected = open(extra, O_PATH | O_CLOEXEC);
        assert_true(dsh_fd_same_file(dsh_prepared_policy_root_fd(&prepared, prepared.policy.additional_writable_roots[0]),
                                     expected));
        close(expected);
        assert_int_equal(dsh_prepared_policy_root_fd(&prepared, "/nowhere"), -1);
        dsh_prepared_policy_clear(&prepared);
        /* Read-only grants no root: nothing is opened. */
        policy.mode = DSH_MODE_READ_ONLY;
        assert_int_equal(dsh_prepared_policy_init(&prepared, &policy, &error), 0);
        assert_int_equal(prepared.root_count, 0);
        dsh_prepared_policy_clear(&prepared);
        free(extra);
        free(root);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_beneath_stays_beneath, setup, teardown),
                cmocka_unit_test_setup_teardown(test_canonical_refuses_a_symlink_on_the_way, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_to, setup, teardown),
                cmocka_unit_test_setup_teardown(test_prepared_policy_opens_the_checked_roots, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
