/* SPDX-License-Identifier: MIT */
/*
 * The held-back watch (src/provider/held-back-watch.h) on a real directory: what counts as an attempted
 * replacement of a held-back file, what does not, and which failure lines name one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "provider/held-back-watch.h"
#include "test-support.h"

struct fixture {
        char *directory;
        char *config;           /* DIRECTORY/config: the held-back file */
        char *lock;             /* DIRECTORY/config.lock */
        dsh_held_back_watch *watch;
};

static int set_up(void **state)
{
        struct fixture *fixture = calloc(1, sizeof(*fixture));
        char *held_back[2] = { NULL, NULL };

        fixture->directory = test_make_directory(NULL);
        fixture->config = test_path_join(fixture->directory, "config");
        fixture->lock = test_path_join(fixture->directory, "config.lock");
        test_write_file(fixture->config, "[core]\n");
        held_back[0] = fixture->config;
        assert_int_equal(dsh_held_back_watch_start(held_back, &fixture->watch), 0);
        assert_true(dsh_held_back_watch_fd(fixture->watch) >= 0);
        *state = fixture;
        return 0;
}

static int tear_down(void **state)
{
        struct fixture *fixture = *state;

        dsh_held_back_watch_free(fixture->watch);
        free(fixture->config);
        free(fixture->lock);
        test_remove_tree(fixture->directory);
        free(fixture);
        return 0;
}

static void test_nothing_seen_is_no_attempt(void **state)
{
        struct fixture *fixture = *state;
        char *other = test_path_join(fixture->directory, "index.lock");

        test_write_file(other, "");
        unlink(other);
        free(other);
        dsh_held_back_watch_read(fixture->watch);
        assert_false(dsh_held_back_watch_saw_attempt(fixture->watch));
        assert_null(dsh_held_back_watch_refused_paths(fixture->watch));
}

/* The creation is queued when it happens: a lock deleted at once is still an attempt. */
static void test_lock_created_and_deleted_is_an_attempt(void **state)
{
        struct fixture *fixture = *state;
        char *paths;

        test_write_file(fixture->lock, "");
        assert_int_equal(unlink(fixture->lock), 0);
        dsh_held_back_watch_read(fixture->watch);
        assert_true(dsh_held_back_watch_saw_attempt(fixture->watch));
        paths = dsh_held_back_watch_refused_paths(fixture->watch);
        assert_non_null(paths);
        assert_non_null(strstr(paths, fixture->config));
        free(paths);
}

/* A lock renamed over the file is a replacement that succeeded: a writer outside the sandbox. */
static void test_lock_renamed_over_the_file_is_no_refusal(void **state)
{
        struct fixture *fixture = *state;

        test_write_file(fixture->lock, "[core]\n\tx = y\n");
        assert_int_equal(rename(fixture->lock, fixture->config), 0);
        dsh_held_back_watch_read(fixture->watch);
        assert_false(dsh_held_back_watch_saw_attempt(fixture->watch));
        /* A second lock that does not replace it is one attempt more than replacements. */
        test_write_file(fixture->lock, "");
        assert_int_equal(unlink(fixture->lock), 0);
        dsh_held_back_watch_read(fixture->watch);
        assert_true(dsh_held_back_watch_saw_attempt(fixture->watch));
}

/* A lock renamed elsewhere does not stand for a replacement of the file. */
static void test_lock_renamed_away_is_still_an_attempt(void **state)
{
        struct fixture *fixture = *state;
        char *away = test_path_join(fixture->directory, "away");

        test_write_file(fixture->lock, "");
        assert_int_equal(rename(fixture->lock, away), 0);
        free(away);
        dsh_held_back_watch_read(fixture->watch);
        assert_true(dsh_held_back_watch_saw_attempt(fixture->watch));
}

static void test_failure_lines_that_name_a_held_back_path(void **state)
{
        struct fixture *fixture = *state;
        static const struct {
                const char *line;
                bool names;
        } cases[] = {
                { "error: could not write config file .git/config: Device or resource busy\n", false },
                { "mv: cannot move 'x' to 'y': Device or resource busy\n", false },
                { "somewhere/config is fine\n", false },
                { "busy: /nowhere/config: device or resource busy\n", false },
        };
        char short_form[4096], line[8192];
        const char *last_slash = strrchr(fixture->directory, '/');

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                dsh_held_back_watch_match_text(fixture->watch, cases[i].line, strlen(cases[i].line));
                assert_false(dsh_held_back_watch_named(fixture->watch));
        }
        /* The words on one line, the path on another: no. */
        snprintf(line, sizeof(line), "%s\nDevice or resource busy\n", fixture->config);
        dsh_held_back_watch_match_text(fixture->watch, line, strlen(line));
        assert_false(dsh_held_back_watch_named(fixture->watch));
        /* The last two components, as a tool names it relative to the root. */
        snprintf(short_form, sizeof(short_form), "%s/config", last_slash + 1);
        snprintf(line, sizeof(line), "x\nerror: could not write config file %s: Device or resource busy", short_form);
        dsh_held_back_watch_match_text(fixture->watch, line, strlen(line));
        assert_true(dsh_held_back_watch_named(fixture->watch));
        assert_false(dsh_held_back_watch_saw_attempt(fixture->watch));
}

static void test_absolute_path_with_erofs_words(void **state)
{
        struct fixture *fixture = *state;
        char line[8192];

        snprintf(line, sizeof(line), "bash: %s: Read-only file system\n", fixture->config);
        dsh_held_back_watch_match_text(fixture->watch, line, strlen(line));
        assert_true(dsh_held_back_watch_named(fixture->watch));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_nothing_seen_is_no_attempt, set_up, tear_down),
                cmocka_unit_test_setup_teardown(test_lock_created_and_deleted_is_an_attempt, set_up, tear_down),
                cmocka_unit_test_setup_teardown(test_lock_renamed_over_the_file_is_no_refusal, set_up, tear_down),
                cmocka_unit_test_setup_teardown(test_lock_renamed_away_is_still_an_attempt, set_up, tear_down),
                cmocka_unit_test_setup_teardown(test_failure_lines_that_name_a_held_back_path, set_up, tear_down),
                cmocka_unit_test_setup_teardown(test_absolute_path_with_erofs_words, set_up, tear_down),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
