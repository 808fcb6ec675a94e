/* SPDX-License-Identifier: MIT */
/*
 * dsh_path_canonical(), walked a component at a time: an existing path is
 * spelled as realpath spells it, a symlink anywhere on the way is followed
 * (`link/..` is the target's parent), and once a component is missing the
 * rest is normalized lexically.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/path.h"
#include "test-support.h"

static char *scratch, *real_scratch;

static int setup(void **state)
{
        char *command = NULL;

        (void) state;
        scratch = test_make_directory(NULL);
        real_scratch = realpath(scratch, NULL);
        assert_non_null(real_scratch);
        assert_true(asprintf(&command,
                             "cd '%s' && mkdir -p a/b c && touch a/file && ln -s a/b inner && ln -s ../c a/up && "
                             "ln -s missing dangling && ln -s loop2 loop1 && ln -s loop1 loop2 && ln -s %s/a absolute",
                             scratch, real_scratch) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(scratch);
        free(real_scratch);
        return 0;
}

/* dsh_path_canonical(scratch/given) is real_scratch/expected. */
static void assert_canonical(const char *given, const char *expected)
{
        char *path = NULL, *want = NULL, *got;

        assert_true(asprintf(&path, "%s/%s", scratch, given) > 0);
        assert_true(asprintf(&want, "%s%s%s", real_scratch, expected[0] ? "/" : "", expected) > 0);
        got = dsh_path_canonical(path);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
        free(want);
        free(path);
}

static void existing_paths_are_spelled_as_realpath_spells_them(void **state)
{
        const char *paths[] = { "a", "a/b", "a/file", "inner", "a/up", "absolute/b", "a/./b/../b", "inner/.." };

        (void) state;
        for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
                char *path = NULL, *got, *real;

                assert_true(asprintf(&path, "%s/%s", scratch, paths[i]) > 0);
                real = realpath(path, NULL);
                got = dsh_path_canonical(path);
                assert_non_null(real);
                assert_non_null(got);
                assert_string_equal(got, real);
                free(real);
                free(got);
                free(path);
        }
}

static void symlinks_on_the_way_are_followed(void **state)
{
        (void) state;
        assert_canonical("inner", "a/b");
        assert_canonical("inner/..", "a");        /* the target's parent, not the link's */
        assert_canonical("a/up/new", "c/new");
        assert_canonical("absolute/b/x/y", "a/b/x/y");
        assert_canonical("inner//x/", "a/b/x");
}

static void missing_tails_are_normalized_lexically(void **state)
{
        (void) state;
        assert_canonical("missing/x/../y", "missing/y");
        assert_canonical("missing/..", "");
        assert_canonical("a/file/under", "a/file/under");   /* ENOTDIR: a missing name, as before */
        assert_canonical("dangling", "dangling");            /* a dangling link is spelled as itself */
        assert_canonical("dangling/x", "dangling/x");
}

/* Whether the walk of real_scratch/given met a link (resolved or dangling), its spelling checked too. */
static bool met_a_link(const char *given)
{
        char *path = NULL, *got;
        bool met_link = false;

        assert_true(asprintf(&path, "%s/%s", real_scratch, given) > 0);
        got = dsh_path_canonical_noting_links(path, &met_link);
        assert_non_null(got);
        free(path);
        free(got);
        return met_link;
}

static void the_walk_says_whether_it_met_a_link(void **state)
{
        (void) state;
        assert_false(met_a_link("a/b"));
        assert_false(met_a_link("a/file"));
        assert_false(met_a_link("a/missing/x"));      /* the first missing component ends the walk */
        assert_true(met_a_link("inner"));
        assert_true(met_a_link("a/up/x"));
        assert_true(met_a_link("dangling"));          /* kept as spelled, and still a link on the route */
        assert_true(met_a_link("dangling/x/y"));
}

static void a_symlink_loop_is_an_error(void **state)
{
        char *path = NULL;

        (void) state;
        assert_true(asprintf(&path, "%s/loop1/x", scratch) > 0);
        errno = 0;
        assert_null(dsh_path_canonical(path));
        assert_int_equal(errno, ELOOP);
        free(path);
}

static void a_relative_path_must_exist(void **state)
{
        char *got;

        (void) state;
        errno = 0;
        assert_null(dsh_path_canonical("surely/not/here"));
        assert_int_equal(errno, EINVAL);
        got = dsh_path_canonical(".");
        assert_non_null(got);
        assert_true(got[0] == '/');
        free(got);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(existing_paths_are_spelled_as_realpath_spells_them),
                cmocka_unit_test(symlinks_on_the_way_are_followed),
                cmocka_unit_test(missing_tails_are_normalized_lexically),
                cmocka_unit_test(the_walk_says_whether_it_met_a_link),
                cmocka_unit_test(a_symlink_loop_is_an_error),
                cmocka_unit_test(a_relative_path_must_exist),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
