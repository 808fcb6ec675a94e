/* SPDX-License-Identifier: MIT */
/*
 * The verdict cache file: what is read back, and what is ignored rather than
 * read.  A confined command may own the cache directory (a workspace of ~
 * covers ~/.cache), so a FIFO, a symlink or a directory at the cache path
 * must read as "no verdict" at once, never block or be followed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "provider/verdict-cache.h"
#include "test-support.h"

#define KEY "{\"format\":1,\"kernel\":\"test\"}"
#define READ_DEADLINE_SECONDS 10

static int read_bounded(const char *path, char **selected)
{
        int result;

        alarm(READ_DEADLINE_SECONDS);
        result = dsh_verdict_cache_read(path, KEY, selected);
        alarm(0);
        return result;
}

static void test_round_trip_and_key_mismatch(void **state)
{
        char *directory = test_make_directory(NULL), *path = test_path_join(directory, "verdict.json");
        char *selected = NULL;

        (void) state;
        assert_int_equal(dsh_verdict_cache_write(path, KEY, "landlock"), 0);
        assert_int_equal(read_bounded(path, &selected), 0);
        assert_string_equal(selected, "landlock");
        free(selected);
        assert_int_equal(dsh_verdict_cache_read(path, "{\"format\":1,\"kernel\":\"other\"}", &selected), -ENOENT);
        assert_null(selected);
        free(path);
        test_remove_tree(directory);
}

static void test_unusable_files_are_absent(void **state)
{
        char *directory = test_make_directory(NULL), *path = test_path_join(directory, "verdict.json");
        char *real = test_path_join(directory, "real.json"), *selected = NULL;

        (void) state;
        /* A FIFO: opening it for reading would wait for a writer forever. */
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(read_bounded(path, &selected), -ENOENT);
        assert_null(selected);
        /* ... and the next write replaces it with a real entry. */
        assert_int_equal(dsh_verdict_cache_write(path, KEY, "bwrap"), 0);
        assert_int_equal(read_bounded(path, &selected), 0);
        assert_string_equal(selected, "bwrap");
        free(selected);
        selected = NULL;

        /* A symlink, even to a valid entry, is not followed. */
        assert_int_equal(rename(path, real), 0);
        assert_int_equal(symlink(real, path), 0);
        assert_int_equal(read_bounded(path, &selected), -ENOENT);
        assert_null(selected);
        unlink(path);

        /* A directory, and garbage. */
        assert_int_equal(mkdir(path, 0700), 0);
        assert_int_equal(read_bounded(path, &selected), -ENOENT);
        rmdir(path);
        test_write_file(path, "not json");
        assert_int_equal(read_bounded(path, &selected), -ENOENT);
        assert_null(selected);
        free(real);
        free(path);
        test_remove_tree(directory);
}

/*
 * The stored entry is decoded strictly (base/json-core.h): a file of another shape is a miss, so the
 * probe runs again rather than trusting a member this reader does not know or one of two "selected".
 */
static void test_other_shapes_are_absent(void **state)
{
        static const char *const shapes[] = {
                "{\"key\":" KEY ",\"selected\":\"bwrap\",\"selected\":\"landlock\"}",   /* duplicate key */
                "{\"key\":" KEY ",\"selected\":\"bwrap\",\"trusted\":true}",             /* unknown key */
                "{\"key\":" KEY ",\"selected\":\"bw\\u0000rap\"}",                         /* a NUL byte */
                "{\"key\":" KEY ",\"selected\":\"\"}",                                     /* empty */
                "{\"key\":" KEY ",\"selected\":\"bwrap\\nlandlock\"}",                     /* two lines */
                "{\"key\":" KEY "}",                                                        /* no verdict */
                "{\"selected\":\"bwrap\"}",                                                 /* no key */
                "[" KEY ",\"bwrap\"]",                                                      /* not an object */
        };
        char *directory = test_make_directory(NULL), *path = test_path_join(directory, "verdict.json");
        char *selected = NULL;

        (void) state;
        /* The shape every case departs from reads back, so a miss below is the departure's doing. */
        test_write_file(path, "{\"key\":" KEY ",\"selected\":\"bwrap\"}");
        assert_int_equal(read_bounded(path, &selected), 0);
        assert_string_equal(selected, "bwrap");
        free(selected);
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                selected = NULL;
                test_write_file(path, shapes[i]);
                if (read_bounded(path, &selected) != -ENOENT || selected)
                        fail_msg("shape %zu read as a verdict: %s", i, shapes[i]);
        }
        free(path);
        test_remove_tree(directory);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip_and_key_mismatch),
                cmocka_unit_test(test_unusable_files_are_absent),
                cmocka_unit_test(test_other_shapes_are_absent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
