/* SPDX-License-Identifier: MIT */
/*
 * The JSON core (src/base/json-core.c) on its own, apart from any shape: the
 * strict load (one object, a duplicate key refused, a bounded read from a
 * file), the strict decoder (an unknown key named by its path, a NUL byte, an
 * empty or multi-line string, an empty list), the encoder's UTF-8 check and
 * the \xNN escape.  The shapes built on it are tested in test-json-codec.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/json-core.h"

/* ------------------------------------------------------------ helpers -- */

static json_t *loaded(const char *text)
{
        dsh_error error = DSH_ERROR_INIT;
        json_t *value = NULL;

        assert_int_equal(dsh_json_load_object(text, strlen(text), "test", &value, &error), 0);
        dsh_error_clear(&error);
        return value;
}

/* `message` is the error's start: the parser's own words after it (and its column) are jansson's. */
static void assert_load_fails(const char *text, const char *message)
{
        dsh_error error = DSH_ERROR_INIT;
        json_t *value = loaded("{}");

        json_decref(value);
        assert_int_equal(dsh_json_load_object(text, strlen(text), "test", &value, &error), -EINVAL);
        assert_null(value);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        if (strncmp(error.message, message, strlen(message)) != 0)
                fail_msg("\"%s\" does not start with \"%s\"", error.message, message);
        assert_null(strchr(error.message, '\n'));
        dsh_error_clear(&error);
}

/* A pipe holding `length` bytes of `text`, write end closed: what a file of that size reads as. */
static int pipe_holding(const char *text, size_t length)
{
        int ends[2];

        assert_int_equal(pipe(ends), 0);
        assert_true(length < 65536);    /* the pipe's buffer holds it without a reader */
        assert_int_equal(write(ends[1], text, length), (ssize_t) length);
        close(ends[1]);
        return ends[0];
}

/* --------------------------------------------------------------- load -- */

static void test_load_refuses_duplicates_and_non_objects(void **state)
{
        (void) state;
        json_decref(loaded(" {\"a\":1} \n"));
        assert_load_fails("{\"a\":1,\"a\":2}", "test: not valid JSON: duplicate object key");
        assert_load_fails("{\"a\":1,\n\"b\":{\"c\":1,\"c\":1}}", "test: not valid JSON: duplicate object key");
        assert_load_fails("[1]", "test: not a JSON object");
        assert_load_fails("\"text\"", "test: not a JSON object");
        assert_load_fails("{} {}", "test: not valid JSON: ");
        assert_load_fails("", "test: not valid JSON: ");
}

static void test_load_fd_is_bounded(void **state)
{
        static const char text[] = "{\"selected\":\"bwrap\"}";
        dsh_error error = DSH_ERROR_INIT;
        json_t *value = NULL;
        int fd;

        (void) state;
        /* Exactly the limit reads. */
        fd = pipe_holding(text, strlen(text));
        assert_int_equal(dsh_json_load_object_fd(fd, strlen(text), "cache", &value, &error), 0);
        assert_string_equal(json_string_value(json_object_get(value, "selected")), "bwrap");
        json_decref(value);
        close(fd);
        /* One byte more is refused, whatever the bytes are. */
        fd = pipe_holding(text, strlen(text));
        assert_int_equal(dsh_json_load_object_fd(fd, strlen(text) - 1, "cache", &value, &error), -EFBIG);
        assert_null(value);
        assert_string_equal(error.message, "cache: longer than 19 bytes");
        close(fd);
        /* And the strict load applies to what was read. */
        fd = pipe_holding("{\"a\":1,\"a\":1}", 13);
        assert_int_equal(dsh_json_load_object_fd(fd, 1024, "cache", &value, &error), -EINVAL);
        assert_null(value);
        close(fd);
        /* A descriptor that cannot be read is its errno. */
        assert_int_equal(dsh_json_load_object_fd(-1, 1024, "cache", &value, &error), -EBADF);
        assert_string_equal(error.message, "cache: cannot read: Bad file descriptor");
        dsh_error_clear(&error);
}

/* ------------------------------------------------------------- decode -- */

static void test_check_object_names_the_unknown_key(void **state)
{
        static const char *const known[] = { "argv", "rules", NULL };
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "facts", &error };
        dsh_json_path rules = dsh_json_path_key(&dsh_json_root, "rules"), first = dsh_json_path_index(&rules, 0);
        json_t *value = loaded("{\"argv\":[],\"rules\":[{\"x\":1}],\"extra\\n\":true}");

        (void) state;
        assert_int_equal(dsh_json_check_object(&decoder, value, &dsh_json_root, known), -EINVAL);
        /* The sender's key made one printable line. */
        assert_string_equal(error.message, "facts: \"extra\\x0a\" is an unknown key");
        assert_int_equal(dsh_json_check_object(&decoder, json_array_get(json_object_get(value, "rules"), 0), &first,
                                               known),
                         -EINVAL);
        assert_string_equal(error.message, "facts: \"rules\"[0].\"x\" is an unknown key");
        assert_int_equal(dsh_json_check_object(&decoder, json_object_get(value, "rules"), &rules, known), -EINVAL);
        assert_string_equal(error.message, "facts: \"rules\" must be an object");
        json_decref(value);
        dsh_error_clear(&error);
}

static void test_decode_text_rules(void **state)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "test", &error };
        json_t *value = loaded("{\"nul\":\"a\\u0000b\",\"empty\":\"\",\"lines\":\"a\\nb\",\"number\":1,\"ok\":\"x\"}");
        char *text = NULL;

        (void) state;
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "nul", 0, &text), -EINVAL);
        assert_string_equal(error.message, "test: \"nul\" must not contain a NUL byte");
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "empty",
                                                       DSH_JSON_TEXT_NON_EMPTY, &text),
                         -EINVAL);
        assert_string_equal(error.message, "test: \"empty\" must be a non-empty string");
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "lines",
                                                       DSH_JSON_TEXT_SINGLE_LINE, &text),
                         -EINVAL);
        assert_string_equal(error.message, "test: \"lines\" must be a single-line string");
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "number", 0, &text), -EINVAL);
        assert_string_equal(error.message, "test: \"number\" must be a string");
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "absent", DSH_JSON_REQUIRED,
                                                       &text),
                         -EINVAL);
        assert_string_equal(error.message, "test: \"absent\" is missing");
        assert_null(text);
        /* Absent and optional is not an error: none. */
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "absent", 0, &text), 0);
        assert_null(text);
        assert_int_equal(dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "ok", DSH_JSON_REQUIRED,
                                                       &text),
                         0);
        assert_string_equal(text, "x");
        free(text);
        json_decref(value);
        dsh_error_clear(&error);
}

static void test_decode_string_list_rules(void **state)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "test", &error };
        json_t *value = loaded("{\"empty\":[],\"mixed\":[\"a\",2],\"one\":[\"a\"]}");
        char **strings = NULL;

        (void) state;
        /* An optional empty list reads as none, a required one as an empty vector. */
        assert_int_equal(dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "empty", 0, &strings), 0);
        assert_null(strings);
        assert_int_equal(dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "empty", DSH_JSON_REQUIRED,
                                                     &strings),
                         0);
        assert_non_null(strings);
        assert_null(strings[0]);
        dsh_strv_free(strings);
        assert_int_equal(dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "empty",
                                                     DSH_JSON_REQUIRED | DSH_JSON_LIST_NON_EMPTY, &strings),
                         -EINVAL);
        assert_string_equal(error.message, "test: \"empty\" must not be empty");
        assert_int_equal(dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "mixed", 0, &strings), -EINVAL);
        assert_string_equal(error.message, "test: \"mixed\"[1] must be a string");
        assert_null(strings);
        assert_int_equal(dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "one", DSH_JSON_TEXT_NON_EMPTY,
                                                     &strings),
                         0);
        assert_string_equal(strings[0], "a");
        assert_null(strings[1]);
        dsh_strv_free(strings);
        json_decref(value);
        dsh_error_clear(&error);
}

static void test_decode_names_and_numbers(void **state)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "test", &error };
        json_t *value = loaded("{\"mode\":\"read-only\",\"enforcement\":\"Full\",\"code\":256,\"signal\":null}");
        dsh_enforcement enforcement;
        dsh_mode mode;
        int number = 7;

        (void) state;
        assert_int_equal(dsh_json_decode_mode(&decoder, value, &mode), 0);
        assert_int_equal(mode, DSH_MODE_READ_ONLY);
        assert_int_equal(dsh_json_decode_enforcement(&decoder, value, &enforcement), -EINVAL);
        assert_string_equal(error.message, "test: \"enforcement\" must be \"full\" or \"partial\"");
        assert_int_equal(dsh_json_decode_number_or_null(&decoder, value, "code", 0, 255, -1, &number), -EINVAL);
        assert_string_equal(error.message, "test: \"code\" must be null or an integer from 0 to 255");
        assert_int_equal(number, 7);
        assert_int_equal(dsh_json_decode_number_or_null(&decoder, value, "signal", 1, 64, 0, &number), 0);
        assert_int_equal(number, 0);
        json_decref(value);
        dsh_error_clear(&error);
}

/* ------------------------------------------------------------- encode -- */

static void test_encoder_refuses_what_json_cannot_carry(void **state)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_encoder encoder = { "test", &error, false };
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "argv");
        char ok[] = "ok", junk[] = "junk\xff";
        char *argv[] = { ok, junk, NULL };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());

        (void) state;
        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "argv", argv);
        assert_true(encoder.failed);
        assert_null(dsh_json_encoder_finish(&encoder, object));
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_string_equal(error.message, "test: \"argv\"[1] is not valid UTF-8 (byte 0xff at offset 4), and a JSON "
                            "string cannot carry it");
        /* After a failure nothing more is built, and the first failure stays the one reported. */
        assert_null(dsh_json_string_value(&encoder, "fine", &path));
        assert_string_equal(error.message, "test: \"argv\"[1] is not valid UTF-8 (byte 0xff at offset 4), and a JSON "
                            "string cannot carry it");
        dsh_error_clear(&error);
}

static void test_escape_and_long_paths(void **state)
{
        char long_key[400];
        size_t length = 0;
        char *escaped = dsh_json_utf8_escaped_length("a\xff\0b\xc3\xa9", 6, &length);
        dsh_json_path path;

        (void) state;
        /* A NUL byte is valid UTF-8 and kept; only the byte that is not is written as \xNN. */
        assert_int_equal(length, 9);
        assert_memory_equal(escaped, "a\\xff\0b\xc3\xa9", 10);
        free(escaped);
        /* A path longer than its buffer is cut, never overrun. */
        memset(long_key, 'k', sizeof(long_key) - 1);
        long_key[sizeof(long_key) - 1] = '\0';
        path = dsh_json_path_key(&dsh_json_root, long_key);
        assert_int_equal(strlen(path.text), sizeof(path.text) - 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_load_refuses_duplicates_and_non_objects),
                cmocka_unit_test(test_load_fd_is_bounded),
                cmocka_unit_test(test_check_object_names_the_unknown_key),
                cmocka_unit_test(test_decode_text_rules),
                cmocka_unit_test(test_decode_string_list_rules),
                cmocka_unit_test(test_decode_names_and_numbers),
                cmocka_unit_test(test_encoder_refuses_what_json_cannot_carry),
                cmocka_unit_test(test_escape_and_long_paths),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
