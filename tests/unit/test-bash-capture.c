/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's bounded capture (src/bash/bash-capture.c): the whole stream
 * within the limit; beyond it the first and the last half with the omission
 * line, cut on UTF-8 boundaries, the same however the stream was split into
 * reads; memory that never exceeds the limit.  (The capture reads nothing
 * for meaning: a denial is a record, never a line of the output.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bash/bash-capture.h"

/* Captures `text` with `limit`, in reads of `step` bytes (0: one read), and returns the kept output. */
static dsh_bash_output capture_in_steps(const char *text, size_t length, size_t limit, size_t step)
{
        dsh_capture capture;
        dsh_bash_output output;

        dsh_capture_init(&capture, limit);
        for (size_t offset = 0; offset < length;) {
                size_t piece = step == 0 || length - offset < step ? length - offset : step;

                assert_int_equal(dsh_capture_append(&capture, text + offset, piece), 0);
                offset += piece;
                /* Memory stays within the limit whatever came. */
                assert_true(capture.head_capacity <= capture.head_limit);
                assert_true(capture.tail_used <= capture.tail_limit);
        }
        assert_int_equal(dsh_capture_finish(&capture, &output), 0);
        dsh_capture_clear(&capture);
        return output;
}

static void test_within_the_limit_everything_is_kept(void **state)
{
        static const size_t steps[] = { 0, 1, 3, 7 };

        (void) state;
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                dsh_bash_output output = capture_in_steps("0123456789", 10, 10, steps[i]);

                assert_false(output.truncated);
                assert_int_equal(output.total_bytes, 10);
                assert_int_equal(output.length, 10);
                assert_string_equal(output.text, "0123456789");
                free(output.text);
        }
        {
                dsh_bash_output output = capture_in_steps("", 0, 10, 0);

                assert_false(output.truncated);
                assert_string_equal(output.text, "");
                free(output.text);
        }
}

static void test_beyond_the_limit_head_and_tail(void **state)
{
        static const size_t steps[] = { 0, 1, 2, 5, 6, 13 };
        const char *text = "abcdefghijklmnopqrstuvwxyz";

        (void) state;
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                dsh_bash_output output = capture_in_steps(text, 26, 10, steps[i]);

                assert_true(output.truncated);
                assert_int_equal(output.total_bytes, 26);
                assert_string_equal(output.text, "abcde\n[... 16 bytes omitted ...]\nvwxyz");
                assert_int_equal(output.length, strlen(output.text));
                free(output.text);
        }
        {
                /* One byte over. */
                dsh_bash_output output = capture_in_steps("0123456789X", 11, 10, 4);

                assert_string_equal(output.text, "01234\n[... 1 bytes omitted ...]\n6789X");
                free(output.text);
        }
}

/* A character the cut would split is left out whole, on either side, and counted as omitted. */
static void test_cuts_fall_on_character_boundaries(void **state)
{
        /* "ab", é (c3 a9), ten dots, € (e2 82 ac), "yz": 3 bytes kept at each end would split é and €. */
        const char text[] = "ab\xc3\xa9..........\xe2\x82\xacyz";
        dsh_bash_output output;

        (void) state;
        output = capture_in_steps(text, sizeof(text) - 1, 6, 1);
        assert_true(output.truncated);
        assert_string_equal(output.text, "ab\n[... 15 bytes omitted ...]\nyz");
        free(output.text);
        /* A whole character at the edge stays. */
        output = capture_in_steps("\xc3\xa9" "0123456789" "\xc3\xa9", 14, 4, 0);
        assert_string_equal(output.text, "\xc3\xa9\n[... 10 bytes omitted ...]\n\xc3\xa9");
        free(output.text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_within_the_limit_everything_is_kept),
                cmocka_unit_test(test_beyond_the_limit_head_and_tail),
                cmocka_unit_test(test_cuts_fall_on_character_boundaries),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
