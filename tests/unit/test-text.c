/* SPDX-License-Identifier: MIT */
/*
 * dsh_text_is_utf8: exactly the strings jansson's json_string() accepts, so
 * that a check passed is a JSON string built, and a check failed names the
 * first byte that does not decode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "dsh-sandbox/sandbox.h"

static bool jansson_accepts(const unsigned char *bytes, size_t length)
{
        json_t *string = json_stringn((const char *) bytes, length);

        json_decref(string);
        return string != NULL;
}

static void expect_same_as_jansson(const unsigned char *bytes, size_t length)
{
        bool ours = dsh_text_is_utf8((const char *) bytes, length, NULL);

        if (ours != jansson_accepts(bytes, length))
                fail_msg("%02x %02x %02x %02x (length %zu): dsh_text_is_utf8 says %d, jansson the opposite",
                         bytes[0], length > 1 ? bytes[1] : 0, length > 2 ? bytes[2] : 0, length > 3 ? bytes[3] : 0,
                         length, ours);
}

/* Every one- and two-byte string, every three-byte one, and four-byte ones over every lead and second byte. */
static void test_agrees_with_jansson(void **state)
{
        static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff };
        unsigned char bytes[4];

        (void) state;
        for (unsigned first = 1; first < 256; first++) {
                bytes[0] = (unsigned char) first;
                expect_same_as_jansson(bytes, 1);
                for (unsigned second = 1; second < 256; second++) {
                        bytes[1] = (unsigned char) second;
                        expect_same_as_jansson(bytes, 2);
                        if (first < 0xe0)
                                continue;
                        for (unsigned third = 1; third < 256; third++) {
                                bytes[2] = (unsigned char) third;
                                expect_same_as_jansson(bytes, 3);
                        }
                        if (first < 0xf0)
                                continue;
                        for (size_t i = 1; i < sizeof(tails); i++)
                                for (size_t j = 1; j < sizeof(tails); j++) {
                                        bytes[2] = tails[i];
                                        bytes[3] = tails[j];
                                        expect_same_as_jansson(bytes, 4);
                                }
                }
        }
}

static void test_invalid_offset(void **state)
{
        size_t offset = 99;

        (void) state;
        assert_true(dsh_text_is_utf8("", 0, &offset));
        assert_int_equal(offset, 99);
        assert_true(dsh_text_is_utf8("caf\xc3\xa9 \xf0\x9f\x99\x82", 10, &offset));
        assert_false(dsh_text_is_utf8("junk\xff", 5, &offset));
        assert_int_equal(offset, 4);
        assert_false(dsh_text_is_utf8("ab\xc3", 3, &offset));          /* truncated */
        assert_int_equal(offset, 2);
        assert_false(dsh_text_is_utf8("\xc0\xaf", 2, &offset));        /* overlong "/" */
        assert_int_equal(offset, 0);
        assert_false(dsh_text_is_utf8("x\xed\xa0\x80", 4, &offset));   /* the surrogate U+D800 */
        assert_int_equal(offset, 1);
        assert_false(dsh_text_is_utf8("\xf4\x90\x80\x80", 4, &offset)); /* U+110000 */
        assert_int_equal(offset, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_agrees_with_jansson),
                cmocka_unit_test(test_invalid_offset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
