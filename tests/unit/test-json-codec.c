/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec: exact bytes for known values (so the command line's
 * output cannot drift), round trips, strict decoding with the member named,
 * and encoding that refuses a string JSON cannot carry instead of dropping it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "dsh-sandbox/json.h"
#include "base/error.h"
#include "base/json-core.h"
#include "policy/policy-json.h"
#include "test-support.h"

/*
 * Inputs here are built from string literals in the public structs' `char *`
 * members: the encoders only read them (they take const pointers).
 */
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"

/* ------------------------------------------------------------ helpers -- */

/* NULL and an empty vector mean the same thing: none. */
static void assert_strv_equal(char *const *expected, char *const *actual)
{
        size_t length = dsh_strv_length(expected);

        assert_int_equal(dsh_strv_length(actual), length);
        for (size_t i = 0; i < length; i++)
                assert_string_equal(actual[i], expected[i]);
}

static void assert_facts_equal(const dsh_confined_argv *expected, const dsh_confined_argv *actual)
{
        assert_strv_equal(expected->argv, actual->argv);
        assert_int_equal(actual->enforcement, expected->enforcement);
        assert_strv_equal(expected->denial_signatures, actual->denial_signatures);
        assert_int_equal(actual->runner_failure_rule_count, expected->runner_failure_rule_count);
        for (size_t i = 0; i < expected->runner_failure_rule_count; i++) {
                const dsh_runner_failure_rule *want = &expected->runner_failure_rules[i];
                const dsh_runner_failure_rule *got = &actual->runner_failure_rules[i];

                assert_int_equal(got->allowed_exit_code_count, want->allowed_exit_code_count);
                if (want->allowed_exit_code_count > 0)
                        assert_memory_equal(got->allowed_exit_codes, want->allowed_exit_codes,
                                            want->allowed_exit_code_count * sizeof(int));
                assert_strv_equal(want->fatal_signatures, got->fatal_signatures);
                assert_strv_equal(want->informational_lines, got->informational_lines);
        }
        if (expected->backend)
                assert_string_equal(actual->backend, expected->backend);
        else
                assert_null(actual->backend);
        assert_strv_equal(expected->partial_reasons, actual->partial_reasons);
}

static void assert_policy_equal(const dsh_policy *expected, const dsh_policy *actual)
{
        assert_int_equal(actual->mode, expected->mode);
        assert_string_equal(actual->workspace_root, expected->workspace_root);
        assert_strv_equal(expected->additional_writable_roots, actual->additional_writable_roots);
        if (expected->session_id)
                assert_string_equal(actual->session_id, expected->session_id);
        else
                assert_null(actual->session_id);
}

static char **strv(const char *const *strings)
{
        char **copy = dsh_strv_copy((char *const *) strings);

        assert_non_null(copy);
        return copy;
}

/* The facts the Landlock backend returns on a partial ABI, with words that need escaping. */
static void landlock_facts(dsh_confined_argv *facts)
{
        static const int launcher_failure[] = { 125 };
        static const char *const fatal[] = { "landlock-run: ", NULL };
        static const char *const informational[] = { "landlock-run: partial enforcement (older Landlock ABI)", NULL };
        static const char *const bwrap_fatal[] = { "bwrap: ", NULL };

        facts->argv = strv((const char *const[]) { "/usr/libexec/landlock-run", "--rw", "/home/\xc3\xa9 \"q\"\\", "--",
                                                   "printf", "a\tb\n\x01", NULL });
        facts->denial_signatures = strv((const char *const[]) { "permission denied", NULL });
        assert_int_equal(dsh_confined_argv_add_rule(facts, launcher_failure, 1, fatal, informational), 0);
        assert_int_equal(dsh_confined_argv_add_rule(facts, NULL, 0, bwrap_fatal, NULL), 0);
        facts->backend = strdup("landlock");
        assert_int_equal(dsh_confined_argv_add_partial_reason(facts, "older ABI"), 0);
}

static const char landlock_golden[] =
        "{\"argv\":[\"/usr/libexec/landlock-run\",\"--rw\",\"/home/\xc3\xa9 \\\"q\\\"\\\\\",\"--\",\"printf\","
        "\"a\\tb\\n\\u0001\"],\"enforcement\":\"partial\",\"denialSignatures\":[\"permission denied\"],"
        "\"runnerFailureRules\":[{\"allowedExitCodes\":[125],\"fatalSignatures\":[\"landlock-run: \"],"
        "\"informationalLines\":[\"landlock-run: partial enforcement (older Landlock ABI)\"]},"
        "{\"fatalSignatures\":[\"bwrap: \"]}],\"backend\":\"landlock\",\"partialReasons\":[\"older ABI\"]}";

/* An operator's runner command: no denial dialect, full enforcement. */
static void runner_command_facts(dsh_confined_argv *facts)
{
        static const char *const fatal[] = { "runner: ", NULL };

        facts->argv = strv((const char *const[]) { "/opt/runner", "--", "true", NULL });
        facts->denial_signatures = calloc(1, sizeof(char *));
        assert_non_null(facts->denial_signatures);
        assert_int_equal(dsh_confined_argv_add_rule(facts, NULL, 0, fatal, NULL), 0);
        facts->backend = strdup("runner-command");
}

static const char runner_command_golden[] =
        "{\"argv\":[\"/opt/runner\",\"--\",\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[],"
        "\"runnerFailureRules\":[{\"fatalSignatures\":[\"runner: \"]}],\"backend\":\"runner-command\"}";

/* `*text` is read after the call that set it (an argument list has no order of evaluation). */
static void expect_encoded(int result, char **text, const char *golden)
{
        assert_int_equal(result, 0);
        assert_non_null(*text);
        assert_string_equal(*text, golden);
        free(*text);
        *text = NULL;
}

/* ------------------------------------------------------------ facts -- */

static void test_facts_golden_bytes(void **state)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        landlock_facts(&facts);
        expect_encoded(dsh_json_encode_confined_argv(&facts, &text, &error), &text, landlock_golden);
        dsh_confined_argv_clear(&facts);
        runner_command_facts(&facts);
        expect_encoded(dsh_json_encode_confined_argv(&facts, &text, &error), &text, runner_command_golden);
        /* Optional members leave with their values: no backend, an empty informational list. */
        free(facts.backend);
        facts.backend = NULL;
        facts.runner_failure_rules[0].informational_lines = calloc(1, sizeof(char *));
        expect_encoded(dsh_json_encode_confined_argv(&facts, &text, &error), &text,
                       "{\"argv\":[\"/opt/runner\",\"--\",\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[],"
                       "\"runnerFailureRules\":[{\"fatalSignatures\":[\"runner: \"]}]}");
        dsh_confined_argv_clear(&facts);
        assert_null(error.message);
}

/* The secrets held back: written after the network, omitted when none, read back to the same bytes. */
static void test_facts_secrets_members(void **state)
{
        static const char golden[] =
                "{\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[],\"runnerFailureRules\":[{\"fatalSignatures\":[\"x: \"]}],"
                "\"masked\":[\"/home/u/.aws\",\"/home/u/.ssh/id_*\"],\"environmentRemoved\":[\"GITHUB_TOKEN\"]}";
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        assert_int_equal(dsh_json_decode_confined_argv(golden, strlen(golden), &facts, &error), 0);
        assert_int_equal(dsh_strv_length(facts.masked), 2);
        assert_string_equal(facts.masked[1], "/home/u/.ssh/id_*");
        assert_string_equal(facts.environment_removed[0], "GITHUB_TOKEN");
        expect_encoded(dsh_json_encode_confined_argv(&facts, &text, &error), &text, golden);
        dsh_strv_free(facts.masked);
        dsh_strv_free(facts.environment_removed);
        facts.masked = calloc(1, sizeof(char *));
        facts.environment_removed = NULL;
        expect_encoded(dsh_json_encode_confined_argv(&facts, &text, &error), &text,
                       "{\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[],"
                       "\"runnerFailureRules\":[{\"fatalSignatures\":[\"x: \"]}]}");
        dsh_confined_argv_clear(&facts);
        assert_int_equal(dsh_json_decode_confined_argv("{\"argv\":[\"true\"],\"enforcement\":\"full\","
                                                       "\"denialSignatures\":[],\"runnerFailureRules\":[{\"fatalSignatures\":[\"x: \"]}],"
                                                       "\"masked\":[\"\"]}",
                                                       strlen("{\"argv\":[\"true\"],\"enforcement\":\"full\","
                                                              "\"denialSignatures\":[],\"runnerFailureRules\":[{\"fatalSignatures\":[\"x: \"]}],"
                                                              "\"masked\":[\"\"]}"),
                                                       &facts, &error),
                         -EINVAL);
        dsh_error_clear(&error);
}

static void round_trip_facts(const dsh_confined_argv *facts)
{
        dsh_confined_argv decoded = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL, *again = NULL;

        assert_int_equal(dsh_json_encode_confined_argv(facts, &text, &error), 0);
        if (dsh_json_decode_confined_argv(text, strlen(text), &decoded, &error) < 0)
                fail_msg("%s: %s", text, error.message);
        assert_facts_equal(facts, &decoded);
        /* And the text is canonical: what was read writes back byte for byte. */
        assert_int_equal(dsh_json_encode_confined_argv(&decoded, &again, &error), 0);
        assert_string_equal(again, text);
        dsh_confined_argv_clear(&decoded);
        free(again);
        free(text);
}

static void test_facts_round_trip(void **state)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        landlock_facts(&facts);
        round_trip_facts(&facts);
        dsh_confined_argv_clear(&facts);
        runner_command_facts(&facts);
        round_trip_facts(&facts);
        dsh_confined_argv_clear(&facts);

        /* The golden text decodes to what produced it; a trailing newline (as the CLI prints it) is fine. */
        {
                dsh_confined_argv expected = DSH_CONFINED_ARGV_INIT;
                char *line = NULL;

                landlock_facts(&expected);
                assert_true(asprintf(&line, "%s\n", landlock_golden) > 0);
                assert_int_equal(dsh_json_decode_confined_argv(line, strlen(line), &facts, &error), 0);
                assert_facts_equal(&expected, &facts);
                dsh_confined_argv_clear(&facts);
                dsh_confined_argv_clear(&expected);
                free(line);
        }
}

/* Empty optional arrays read as absent; the text need not be NUL-terminated. */
static void test_facts_decode_lenient_where_harmless(void **state)
{
        static const char text[] = "  {\"argv\":[\"\"],\"enforcement\":\"full\",\"denialSignatures\":[],"
                                   "\"runnerFailureRules\":[{\"allowedExitCodes\":[],\"fatalSignatures\":[\"r\"],"
                                   "\"informationalLines\":[]}],\"partialReasons\":[]} \n"
                                   "JUNK PAST THE LENGTH";
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        if (dsh_json_decode_confined_argv(text, strstr(text, "JUNK") - text, &facts, &error) < 0)
                fail_msg("%s", error.message);
        assert_int_equal(dsh_strv_length(facts.argv), 1);
        assert_string_equal(facts.argv[0], "");
        assert_non_null(facts.denial_signatures);
        assert_null(facts.denial_signatures[0]);
        assert_null(facts.runner_failure_rules[0].allowed_exit_codes);
        assert_int_equal(facts.runner_failure_rules[0].allowed_exit_code_count, 0);
        assert_null(facts.runner_failure_rules[0].informational_lines);
        assert_null(facts.partial_reasons);
        assert_null(facts.backend);
        dsh_confined_argv_clear(&facts);
}

#define VALID_RULES "\"runnerFailureRules\":[{\"fatalSignatures\":[\"r: \"]}]"
#define VALID_HEAD "\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[\"x\"]"

typedef struct decode_case {
        const char *text;
        const char *message;    /* exact; a trailing '*' matches any rest */
} decode_case;

static void expect_message(const char *actual, const char *expected, const char *input)
{
        size_t length = strlen(expected);

        if (!actual)
                fail_msg("no message for %s", input);
        if (expected[length - 1] == '*' ? strncmp(actual, expected, length - 1) != 0 : strcmp(actual, expected) != 0)
                fail_msg("for %s\n  got:      %s\n  expected: %s", input, actual, expected);
}

static const decode_case facts_cases[] = {
        { "", "facts: not valid JSON: *" },
        { "[]", "facts: not a JSON object" },
        { "\"argv\"", "facts: not a JSON object" },
        { "{" VALID_HEAD "," VALID_RULES "} x", "facts: not valid JSON: end of file expected near 'x' at line 1*" },
        { "{" VALID_HEAD "," VALID_RULES ",\"argv\":[\"rm\"]}", "facts: not valid JSON: duplicate object key*" },
        { "{\"argv\":[\"\xff\"]}", "facts: not valid JSON: *" },
        /* argv */
        { "{\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}", "facts: \"argv\" is missing" },
        { "{\"argv\":[],\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"argv\" must not be empty" },
        { "{\"argv\":\"true\",\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"argv\" must be an array of strings" },
        { "{\"argv\":[\"true\",1],\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"argv\"[1] must be a string" },
        { "{\"argv\":[\"true\",null],\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"argv\"[1] must be a string" },
        { "{\"argv\":[\"rm\",\"junk\\u0000\",\"/\"],\"enforcement\":\"full\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"argv\"[1] must not contain a NUL byte" },
        /* enforcement */
        { "{\"argv\":[\"true\"],\"denialSignatures\":[]," VALID_RULES "}", "facts: \"enforcement\" is missing" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"none\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"enforcement\" must be \"full\" or \"partial\"" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"FULL\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"enforcement\" must be \"full\" or \"partial\"" },
        { "{\"argv\":[\"true\"],\"enforcement\":true,\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"enforcement\" must be \"full\" or \"partial\"" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"full\\u0000x\",\"denialSignatures\":[]," VALID_RULES "}",
          "facts: \"enforcement\" must be \"full\" or \"partial\"" },
        /* denial signatures: an empty one would make every failure a denial */
        { "{\"argv\":[\"true\"],\"enforcement\":\"full\"," VALID_RULES "}", "facts: \"denialSignatures\" is missing" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[\"\"]," VALID_RULES "}",
          "facts: \"denialSignatures\"[0] must be a non-empty single-line string" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":[\"a\\nb\"]," VALID_RULES "}",
          "facts: \"denialSignatures\"[0] must be a non-empty single-line string" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"full\",\"denialSignatures\":{}," VALID_RULES "}",
          "facts: \"denialSignatures\" must be an array of non-empty single-line strings" },
        /* runner-failure rules */
        { "{" VALID_HEAD "}", "facts: \"runnerFailureRules\" is missing" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[]}", "facts: \"runnerFailureRules\" must be a non-empty array of objects" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":{}}", "facts: \"runnerFailureRules\" must be a non-empty array of objects" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[1]}", "facts: \"runnerFailureRules\"[0] must be an object" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"]},[]]}",
          "facts: \"runnerFailureRules\"[1] must be an object" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{}]}", "facts: \"runnerFailureRules\"[0].\"fatalSignatures\" is missing" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[]}]}",
          "facts: \"runnerFailureRules\"[0].\"fatalSignatures\" must not be empty" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\",\"\"]}]}",
          "facts: \"runnerFailureRules\"[0].\"fatalSignatures\"[1] must be a non-empty single-line string" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\\r\"]}]}",
          "facts: \"runnerFailureRules\"[0].\"fatalSignatures\"[0] must be a non-empty single-line string" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":\"r\"}]}",
          "facts: \"runnerFailureRules\"[0].\"fatalSignatures\" must be an array of non-empty single-line strings" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":125}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\" must be an array of integers" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[0]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[0] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[125,256]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[1] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[-1]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[0] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[125.0]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[0] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[\"125\"]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[0] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"allowedExitCodes\":[4294967421]}]}",
          "facts: \"runnerFailureRules\"[0].\"allowedExitCodes\"[0] must be an integer from 1 to 255" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"informationalLines\":[1]}]}",
          "facts: \"runnerFailureRules\"[0].\"informationalLines\"[0] must be a string" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"informationalLines\":\"x\"}]}",
          "facts: \"runnerFailureRules\"[0].\"informationalLines\" must be an array of strings" },
        /* unknown keys, at the top and in a rule */
        { "{" VALID_HEAD "," VALID_RULES ",\"sandboxed\":false}", "facts: \"sandboxed\" is an unknown key" },
        { "{" VALID_HEAD ",\"runnerFailureRules\":[{\"fatalSignatures\":[\"r\"],\"exitCodes\":[1]}]}",
          "facts: \"runnerFailureRules\"[0].\"exitCodes\" is an unknown key" },
        { "{" VALID_HEAD "," VALID_RULES ",\"\\u001b]0;x\\u0007\":1}",
          "facts: \"\\x1b]0;x\\x07\" is an unknown key" },
        { "{" VALID_HEAD "," VALID_RULES ",\"argv\\u0000x\":1}", "facts: not valid JSON: NUL byte in object key not supported*" },
        /* backend and partial reasons */
        { "{" VALID_HEAD "," VALID_RULES ",\"backend\":\"\"}",
          "facts: \"backend\" must be a non-empty single-line string" },
        { "{" VALID_HEAD "," VALID_RULES ",\"backend\":null}",
          "facts: \"backend\" must be a non-empty single-line string" },
        { "{" VALID_HEAD "," VALID_RULES ",\"backend\":\"bwrap\\nlandlock-run: exec failed\"}",
          "facts: \"backend\" must be a non-empty single-line string" },
        { "{" VALID_HEAD "," VALID_RULES ",\"partialReasons\":[\"an older ABI\"]}",
          "facts: \"partialReasons\" requires \"enforcement\": \"partial\"" },
        { "{\"argv\":[\"true\"],\"enforcement\":\"partial\",\"denialSignatures\":[]," VALID_RULES
          ",\"partialReasons\":[\"\"]}",
          "facts: \"partialReasons\"[0] must be a non-empty string" },
};

static void test_facts_decode_rejects(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(facts_cases) / sizeof(facts_cases[0]); i++) {
                dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
                dsh_error error = DSH_ERROR_INIT;
                const char *text = facts_cases[i].text;

                if (dsh_json_decode_confined_argv(text, strlen(text), &facts, &error) != -EINVAL)
                        fail_msg("accepted: %s", text);
                assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
                expect_message(error.message, facts_cases[i].message, text);
                assert_null(strchr(error.message, '\n'));
                /* Nothing half-decoded is left for the caller. */
                assert_null(facts.argv);
                assert_null(facts.runner_failure_rules);
                dsh_error_clear(&error);
                /* Without an error object the errno still says it. */
                assert_int_equal(dsh_json_decode_confined_argv(text, strlen(text), &facts, NULL), -EINVAL);
        }
        /* The valid base of those cases is valid: each case fails for its own reason. */
        {
                static const char base[] = "{" VALID_HEAD "," VALID_RULES "}";
                dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;

                assert_int_equal(dsh_json_decode_confined_argv(base, strlen(base), &facts, NULL), 0);
                dsh_confined_argv_clear(&facts);
        }
}

/* A string JSON cannot carry fails the whole object and is named; nothing is dropped. */
static void test_facts_encode_refuses_non_utf8(void **state)
{
        static const struct {
                const char *message;
        } cases[] = {
                { "facts: \"argv\"[4] is not valid UTF-8 (byte 0xff at offset 4), and a JSON string cannot carry it" },
                { "facts: \"denialSignatures\"[0] is not valid UTF-8 (byte 0xc0 at offset 0), and a JSON string "
                  "cannot carry it" },
                { "facts: \"runnerFailureRules\"[1].\"fatalSignatures\"[0] is not valid UTF-8 (byte 0xed at offset 1), "
                  "and a JSON string cannot carry it" },
                { "facts: \"runnerFailureRules\"[0].\"informationalLines\"[0] is not valid UTF-8 (byte 0xc3 at offset "
                  "2), and a JSON string cannot carry it" },
                { "facts: \"backend\" is not valid UTF-8 (byte 0x80 at offset 0), and a JSON string cannot carry it" },
                { "facts: \"partialReasons\"[0] is not valid UTF-8 (byte 0xf5 at offset 0), and a JSON string cannot "
                  "carry it" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
                dsh_error error = DSH_ERROR_INIT;
                char *text = (char *) 1;

                landlock_facts(&facts);
                switch (i) {
                case 0:
                        free(facts.argv[4]);
                        facts.argv[4] = strdup("junk\xff");   /* rm -rf "junk\xff" / must not print as rm -rf / */
                        break;
                case 1:
                        free(facts.denial_signatures[0]);
                        facts.denial_signatures[0] = strdup("\xc0\xaf");
                        break;
                case 2:
                        free(facts.runner_failure_rules[1].fatal_signatures[0]);
                        facts.runner_failure_rules[1].fatal_signatures[0] = strdup("b\xed\xa0\x80");  /* a surrogate */
                        break;
                case 3:
                        free(facts.runner_failure_rules[0].informational_lines[0]);
                        facts.runner_failure_rules[0].informational_lines[0] = strdup("ab\xc3");
                        break;
                case 4:
                        free(facts.backend);
                        facts.backend = strdup("\x80");
                        break;
                default:
                        free(facts.partial_reasons[0]);
                        facts.partial_reasons[0] = strdup("\xf5\x80\x80\x80");
                        break;
                }
                assert_int_equal(dsh_json_encode_confined_argv(&facts, &text, &error), -EINVAL);
                assert_null(text);
                assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
                expect_message(error.message, cases[i].message, "an encoded string");
                dsh_error_clear(&error);
                text = (char *) 1;
                assert_int_equal(dsh_json_encode_confined_argv(&facts, &text, NULL), -EINVAL);
                assert_null(text);
                dsh_confined_argv_clear(&facts);
        }
}

/* ------------------------------------------------------------ policy -- */

static void test_policy_golden_and_round_trip(void **state)
{
        dsh_policy full = { DSH_MODE_WORKSPACE_WRITE, "/home/me/w\xc3\xa9", (char *[]) { "/var/tmp/a", "/b", NULL },
                            "01a22c46-33e6-7e53-a9ba-da0afab25b12" };
        dsh_policy minimal = { DSH_MODE_READ_ONLY, "/", NULL, NULL };
        dsh_policy empty_roots = { DSH_MODE_DANGER_FULL_ACCESS, "/w", (char *[]) { NULL }, NULL };
        const dsh_policy *policies[] = { &full, &minimal, &empty_roots };
        const char *goldens[] = {
                "{\"mode\":\"workspace-write\",\"workspaceRoot\":\"/home/me/w\xc3\xa9\",\"additionalWritableRoots\":"
                "[\"/var/tmp/a\",\"/b\"],\"sessionId\":\"01a22c46-33e6-7e53-a9ba-da0afab25b12\"}",
                "{\"mode\":\"read-only\",\"workspaceRoot\":\"/\"}",
                "{\"mode\":\"danger-full-access\",\"workspaceRoot\":\"/w\"}",
        };

        (void) state;
        for (size_t i = 0; i < 3; i++) {
                dsh_policy decoded = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;
                char *text = NULL;

                assert_int_equal(dsh_json_encode_policy(policies[i], &text, &error), 0);
                assert_string_equal(text, goldens[i]);
                if (dsh_json_decode_policy(text, strlen(text), &decoded, &error) < 0)
                        fail_msg("%s: %s", text, error.message);
                assert_policy_equal(policies[i], &decoded);
                dsh_policy_clear(&decoded);
                free(text);
        }
}

static const decode_case policy_cases[] = {
        { "{\"workspaceRoot\":\"/w\"}", "policy: \"mode\" is missing" },
        { "{\"mode\":\"root\",\"workspaceRoot\":\"/w\"}",
          "policy: \"mode\" must be \"read-only\", \"workspace-write\" or \"danger-full-access\"" },
        { "{\"mode\":1,\"workspaceRoot\":\"/w\"}",
          "policy: \"mode\" must be \"read-only\", \"workspace-write\" or \"danger-full-access\"" },
        { "{\"mode\":\"read-only\\u0000x\",\"workspaceRoot\":\"/w\"}",
          "policy: \"mode\" must be \"read-only\", \"workspace-write\" or \"danger-full-access\"" },
        { "{\"mode\":\"read-only\"}", "policy: \"workspaceRoot\" is missing" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":[\"/w\"]}", "policy: \"workspaceRoot\" must be a string" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\\u0000/etc\"}",
          "policy: \"workspaceRoot\" must not contain a NUL byte" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"additionalWritableRoots\":\"/x\"}",
          "policy: \"additionalWritableRoots\" must be an array of strings" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"additionalWritableRoots\":[\"/x\",false]}",
          "policy: \"additionalWritableRoots\"[1] must be a string" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"sessionId\":\"../../etc/passwd\"}",
          "policy: \"sessionId\" is not a valid session id" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"sessionId\":7}", "policy: \"sessionId\" must be a string" },
        /* A key this version does not know may narrow the policy: ignoring it would widen what runs. */
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"readOnlyRoots\":[\"/w/secrets\"]}",
          "policy: \"readOnlyRoots\" is an unknown key" },
        { "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"mode\":\"danger-full-access\"}",
          "policy: not valid JSON: duplicate object key*" },
};

static void test_policy_decode_rejects(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(policy_cases) / sizeof(policy_cases[0]); i++) {
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;
                const char *text = policy_cases[i].text;

                if (dsh_json_decode_policy(text, strlen(text), &policy, &error) != -EINVAL)
                        fail_msg("accepted: %s", text);
                assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
                expect_message(error.message, policy_cases[i].message, text);
                assert_null(policy.workspace_root);
                dsh_error_clear(&error);
        }
}

static void test_policy_encode_refuses(void **state)
{
        dsh_policy root = { DSH_MODE_WORKSPACE_WRITE, "/w/\xc0\xaf", NULL, NULL };
        dsh_policy extra = { DSH_MODE_WORKSPACE_WRITE, "/w", (char *[]) { "/a", "/b\xff", NULL }, NULL };
        dsh_policy unset = { DSH_MODE_READ_ONLY, NULL, NULL, NULL };
        dsh_policy bad_mode = { (dsh_mode) 7, "/w", NULL, NULL };
        const struct {
                const dsh_policy *policy;
                const char *message;
        } cases[] = {
                { &root, "policy: \"workspaceRoot\" is not valid UTF-8 (byte 0xc0 at offset 3), and a JSON string "
                         "cannot carry it" },
                { &extra, "policy: \"additionalWritableRoots\"[1] is not valid UTF-8 (byte 0xff at offset 2), and a "
                          "JSON string cannot carry it" },
                { &unset, "policy: \"workspaceRoot\" is not set" },
                { &bad_mode, "policy: \"mode\" is not a mode" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                dsh_error error = DSH_ERROR_INIT;
                char *text = NULL;

                assert_int_equal(dsh_json_encode_policy(cases[i].policy, &text, &error), -EINVAL);
                assert_null(text);
                expect_message(error.message, cases[i].message, "a policy");
                dsh_error_clear(&error);
        }
}

/* The json_t level names the value as the caller's reader knows it. */
static void test_policy_inside_a_message(void **state)
{
        static const char request[] = "{\"policy\":{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"x\":1}}";
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        json_t *value = NULL;

        (void) state;
        assert_int_equal(dsh_json_load_object(request, strlen(request), "request", &value, &error), 0);
        assert_int_equal(dsh_json_policy_from_value(json_object_get(value, "policy"), "params.policy", &policy, &error),
                         -EINVAL);
        assert_string_equal(error.message, "params.policy: \"x\" is an unknown key");
        assert_int_equal(dsh_json_policy_from_value(json_object_get(value, "missing"), "params.policy", &policy,
                                                    &error), -EINVAL);
        assert_string_equal(error.message, "params.policy: not a JSON object");
        dsh_error_clear(&error);
        json_decref(value);
}

/* ------------------------------------------------------------ errors -- */

static void test_error_round_trip_every_code(void **state)
{
        (void) state;
        for (dsh_error_code code = DSH_ERROR_SANDBOX_UNAVAILABLE; code <= DSH_ERROR_CODE_LAST; code++) {
                dsh_error value = { code, ENOENT, "sandbox mode \"read-only\" is requested \xe2\x80\x94 \\ /" };
                dsh_error decoded = DSH_ERROR_INIT, error = DSH_ERROR_INIT;
                char *text = NULL;

                assert_int_equal(dsh_json_encode_error(&value, &text, &error), 0);
                if (dsh_json_decode_error(text, strlen(text), &decoded, &error) < 0)
                        fail_msg("%s: %s", text, error.message);
                assert_int_equal(decoded.code, code);
                assert_string_equal(decoded.message, value.message);
                assert_int_equal(decoded.errno_value, 0);   /* not carried */
                /* The spec's codes travel under the spec's names. */
                if (dsh_error_code_name(code))
                        assert_true(test_contains(text, dsh_error_code_name(code)));
                dsh_error_clear(&decoded);
                free(text);
        }
}

static void test_error_golden_bytes(void **state)
{
        dsh_error unavailable = { DSH_ERROR_SANDBOX_UNAVAILABLE, ENOSYS, "no backend" };
        dsh_error invalid = { DSH_ERROR_INVALID_INPUT, EINVAL, "facts: \"argv\" is missing" };
        /* A message quotes paths, which are bytes: escaped rather than lost, so the error still gets through. */
        dsh_error path = { DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM, "cannot bind \"/x\xff\xc3\" here" };
        dsh_error no_message = { DSH_ERROR_SYSTEM, ENOENT, NULL };
        dsh_error none = DSH_ERROR_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        expect_encoded(dsh_json_encode_error(&unavailable, &text, &error), &text,
                       "{\"code\":\"SANDBOX_UNAVAILABLE\",\"message\":\"no backend\"}");
        expect_encoded(dsh_json_encode_error(&invalid, &text, &error), &text,
                       "{\"code\":\"INVALID_INPUT\",\"message\":\"facts: \\\"argv\\\" is missing\"}");
        expect_encoded(dsh_json_encode_error(&path, &text, &error), &text,
                       "{\"code\":\"SANDBOX_PREPARATION_FAILED\",\"message\":\"cannot bind \\\"/x\\\\xff\\\\xc3\\\" "
                       "here\"}");
        expect_encoded(dsh_json_encode_error(&no_message, &text, &error), &text,
                       "{\"code\":\"SYSTEM\",\"message\":\"No such file or directory\"}");
        assert_int_equal(dsh_json_encode_error(&none, &text, &error), -EINVAL);
        assert_null(text);
        assert_string_equal(error.message, "error: \"code\" is not set: there is no error to encode");
        dsh_error_clear(&error);
}

static const decode_case error_cases[] = {
        { "{\"message\":\"m\"}", "error: \"code\" is missing" },
        { "{\"code\":\"NONE\",\"message\":\"m\"}",
          "error: \"code\" must be \"SANDBOX_UNAVAILABLE\", \"SANDBOX_PREPARATION_FAILED\", "
          "\"SANDBOX_INVALID_TEMP_ROOT\", \"SANDBOX_INVALID_ROOT\", \"FS_SANDBOX_DENIED\", \"INVARIANT\", "
          "\"INVALID_INPUT\", \"SYSTEM\", \"EXEC_FAILED\", \"FS_NOT_FOUND\", \"FS_NOT_A_DIRECTORY\", "
          "\"FS_IS_A_DIRECTORY\", \"FS_ALREADY_EXISTS\", \"FS_NOT_EMPTY\", \"FS_TEXT_NOT_FOUND\", "
          "\"FS_TEXT_NOT_UNIQUE\" or \"FS_TOO_LARGE\"" },
        { "{\"code\":\"sandbox_unavailable\",\"message\":\"m\"}", "error: \"code\" must be \"SANDBOX_UNAVAILABLE\", *" },
        { "{\"code\":-32000,\"message\":\"m\"}", "error: \"code\" must be \"SANDBOX_UNAVAILABLE\", *" },
        { "{\"code\":\"SANDBOX_UNAVAILABLE\"}", "error: \"message\" is missing" },
        { "{\"code\":\"SANDBOX_UNAVAILABLE\",\"message\":[]}", "error: \"message\" must be a string" },
        { "{\"code\":\"SANDBOX_UNAVAILABLE\",\"message\":\"m\",\"errno\":2}", "error: \"errno\" is an unknown key" },
};

static void test_error_decode_rejects(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
                dsh_error value = DSH_ERROR_INIT, error = DSH_ERROR_INIT;
                const char *text = error_cases[i].text;

                if (dsh_json_decode_error(text, strlen(text), &value, &error) != -EINVAL)
                        fail_msg("accepted: %s", text);
                expect_message(error.message, error_cases[i].message, text);
                assert_null(value.message);
                assert_int_equal(value.code, DSH_ERROR_NONE);
                dsh_error_clear(&error);
        }
}

/* ------------------------------------------------------------- probe -- */

static void test_probe_report_golden_and_refusal(void **state)
{
        dsh_backend_status backends[] = {
                { "bwrap", false, DSH_ENFORCEMENT_FULL, "user namespaces are blocked", "0.8.0", "/usr/bin/bwrap", NULL },
                { "landlock", true, DSH_ENFORCEMENT_PARTIAL, NULL, NULL, "/usr/libexec/landlock-run",
                  (char *[]) { "older ABI", NULL } },
        };
        dsh_probe_report report = { backends, 2, 7, (char *[]) { "abstract-unix-socket", "signal", NULL }, NULL,
                                    "landlock" };
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        expect_encoded(dsh_json_encode_probe_report(&report, &text, &error), &text,
                       "{\"backends\":[{\"name\":\"bwrap\",\"usable\":false,\"reason\":\"user namespaces are blocked\","
                       "\"version\":\"0.8.0\",\"runner\":\"/usr/bin/bwrap\"},{\"name\":\"landlock\",\"usable\":true,"
                       "\"enforcement\":\"partial\",\"runner\":\"/usr/libexec/landlock-run\",\"partialReasons\":"
                       "[\"older ABI\"]}],\"bwrapVersion\":\"0.8.0\",\"landlockAbi\":7,\"landlockScopes\":"
                       "[\"abstract-unix-socket\",\"signal\"],\"landlockScopesMissing\":[],\"selected\":\"landlock\","
                       "\"secrets\":{\"maskedPaths\":[],\"requireMasks\":false,\"environmentDeny\":[],\"environmentAllow\":[]}}");

        /* Nothing usable: selected is null; no bwrap version is known; the ABI is an errno. */
        backends[0].version = NULL;
        backends[1].usable = false;
        report.backend_count = 1;
        report.landlock_abi = -EOPNOTSUPP;
        report.selected = NULL;
        /* What every call holds back, as configured. */
        report.secrets_masked_paths = (char *[]) { ".aws", NULL };
        report.secrets_require_masks = true;
        report.secrets_environment_deny = (char *[]) { "*_TOKEN", NULL };
        report.secrets_environment_allow = (char *[]) { "GH_TOKEN", NULL };
        expect_encoded(dsh_json_encode_probe_report(&report, &text, &error), &text,
                       "{\"backends\":[{\"name\":\"bwrap\",\"usable\":false,\"reason\":\"user namespaces are blocked\","
                       "\"runner\":\"/usr/bin/bwrap\"}],\"landlockAbi\":-95,\"landlockScopes\":"
                       "[\"abstract-unix-socket\",\"signal\"],\"landlockScopesMissing\":[],\"selected\":null,"
                       "\"secrets\":{\"maskedPaths\":[\".aws\"],\"requireMasks\":true,\"environmentDeny\":"
                       "[\"*_TOKEN\"],\"environmentAllow\":[\"GH_TOKEN\"]}}");

        backends[0].runner_path = "/opt/bw\xffrap";
        assert_int_equal(dsh_json_encode_probe_report(&report, &text, &error), -EINVAL);
        assert_null(text);
        assert_string_equal(error.message, "probe: backend bwrap's \"runner\" is not valid UTF-8 (byte 0xff at "
                                           "offset 7), and a JSON string cannot carry it");
        dsh_error_clear(&error);
}

/* ---------------------------------------------------------- sessions -- */

typedef struct skipped_record {
        char *id;
        char *message;
        int calls;
} skipped_record;

static void record_skipped(const char *id, const dsh_error *error, void *data)
{
        skipped_record *record = data;

        record->calls++;
        free(record->id);
        free(record->message);
        record->id = strdup(id);
        record->message = strdup(error->message ? error->message : "");
}

/* The log's first `count` lines (without newlines) joined by commas. */
static char *log_lines(const char *path, size_t first, size_t count)
{
        char *log = test_read_file(path), *joined = calloc(1, strlen(log) + 1), *line = log;

        for (size_t index = 0; line && *line && index < first + count; index++) {
                char *end = strchr(line, '\n');

                *end = '\0';
                if (index >= first) {
                        if (joined[0])
                                strcat(joined, ",");
                        strcat(joined, line);
                }
                line = end + 1;
        }
        free(log);
        return joined;
}

static void test_session_show_and_list(void **state)
{
        char *directory = test_make_directory(NULL), *fifo = test_path_join(directory, "broken.jsonl");
        dsh_session_store *store = NULL;
        dsh_session *first = NULL, *second = NULL;
        dsh_error error = DSH_ERROR_INIT;
        skipped_record skipped = { NULL, NULL, 0 };
        char *text = NULL, *header = NULL, *events = NULL, *expected = NULL;

        (void) state;
        assert_int_equal(dsh_session_store_open(directory, &store, &error), 0);
        assert_int_equal(dsh_session_create(store, directory, NULL, &first, &error), 0);
        assert_int_equal(dsh_session_set_mode(first, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        assert_int_equal(dsh_session_append(first, "user/note", "{\"t\":\"\xc3\xa9\",\"n\":[1,null,true]}", NULL,
                                            &error), 0);
        assert_int_equal(dsh_session_create(store, "/", NULL, &second, &error), 0);

        /* show: the log's own lines, then the effective mode, the path and the override. */
        assert_int_equal(dsh_json_encode_session(first, DSH_MODE_READ_ONLY, &text, &error), 0);
        header = log_lines(dsh_session_path(first), 0, 1);
        events = log_lines(dsh_session_path(first), 1, 2);
        assert_true(asprintf(&expected, "{\"header\":%s,\"events\":[%s],\"effectiveMode\":\"workspace-write\","
                                        "\"path\":\"%s\",\"override\":\"workspace-write\"}",
                             header, events, dsh_session_path(first)) > 0);
        assert_string_equal(text, expected);
        free(text);
        free(expected);
        free(header);
        /* Without an override the default is in effect, and no override is claimed. */
        assert_int_equal(dsh_json_encode_session(second, DSH_MODE_READ_ONLY, &text, &error), 0);
        header = log_lines(dsh_session_path(second), 0, 1);
        assert_true(asprintf(&expected, "{\"header\":%s,\"events\":[],\"effectiveMode\":\"read-only\",\"path\":\"%s\"}",
                             header, dsh_session_path(second)) > 0);
        assert_string_equal(text, expected);
        free(text);
        free(expected);
        free(header);

        /* list: one entry per session that loads, in the store's order; a FIFO is reported and left out. */
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(dsh_json_encode_session_list(store, DSH_MODE_READ_ONLY, record_skipped, &skipped, &text,
                                                       &error), 0);
        assert_true(asprintf(&expected, "[{\"id\":\"%s\",\"cwd\":\"%s\",\"effectiveMode\":\"workspace-write\","
                                        "\"override\":\"workspace-write\"},{\"id\":\"%s\",\"cwd\":\"/\","
                                        "\"effectiveMode\":\"read-only\"}]",
                             dsh_session_id(first), dsh_session_cwd(first, NULL), dsh_session_id(second)) > 0);
        assert_string_equal(text, expected);
        assert_int_equal(skipped.calls, 1);
        assert_string_equal(skipped.id, "broken");
        assert_true(test_contains(skipped.message, "is not a regular file"));
        free(text);
        free(expected);

        /* An event replay accepts (it checks only the syntax of types it ignores) but JSON cannot carry. */
        {
                char *log = test_read_file(dsh_session_path(second)), *appended = NULL;

                assert_true(asprintf(&appended, "%s{\"type\":\"user/x\",\"seq\":1,\"data\":{\"t\":\"\xff\"}}\n", log) > 0);
                test_write_file(dsh_session_path(second), appended);
                text = (char *) 1;
                assert_int_equal(dsh_json_encode_session(second, DSH_MODE_READ_ONLY, &text, &error), -EINVAL);
                assert_null(text);
                assert_int_equal(error.code, DSH_ERROR_INVARIANT);
                assert_true(asprintf(&expected, "session log %s: line 2 is not valid UTF-8 JSON, and JSON cannot "
                                                "carry it", dsh_session_path(second)) > 0);
                assert_string_equal(error.message, expected);
                dsh_error_clear(&error);
                free(appended);
                free(log);
        }

        free(expected);
        free(events);
        free(skipped.id);
        free(skipped.message);
        dsh_session_free(first);
        dsh_session_free(second);
        dsh_session_store_free(store);
        free(fifo);
        test_remove_tree(directory);
}

static void test_mode_event_data(void **state)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        expect_encoded(dsh_json_encode_mode_event_data("a\"b", &text, &error), &text, "{\"mode\":\"a\\\"b\"}");
        assert_int_equal(dsh_json_encode_mode_event_data("bo\xffgus", &text, &error), -EINVAL);
        assert_string_equal(error.message, "sandbox/mode data: \"mode\" is not valid UTF-8 (byte 0xff at offset 2), "
                                           "and a JSON string cannot carry it");
        dsh_error_clear(&error);
}

/* ------------------------------------------------------- file results -- */

/* Each operation's members, in order, exactly. */
static void test_file_result_golden_bytes(void **state)
{
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL, content[] = "a\0b\n";

        (void) state;
        result.path = "/ws/f";
        result.created = true;
        result.bytes = 12;
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"write\",\"path\":\"/ws/f\",\"created\":true,\"bytes\":12}");
        result.operation = DSH_FILE_EDIT;
        result.replacements = 3;
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"edit\",\"path\":\"/ws/f\",\"replacements\":3,\"bytes\":12}");
        result.operation = DSH_FILE_MKDIR;
        result.created = false;
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"mkdir\",\"path\":\"/ws/f\",\"created\":false}");
        result.operation = DSH_FILE_REMOVE;
        result.removed = 4;
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"remove\",\"path\":\"/ws/f\",\"removed\":4}");
        result.operation = DSH_FILE_MOVE;
        result.source = "/ws/e";
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"move\",\"source\":\"/ws/e\",\"path\":\"/ws/f\"}");
        result.operation = DSH_FILE_READ;
        result.content = content;
        result.bytes = 4;
        expect_encoded(dsh_json_encode_file_result(&result, &text, &error), &text,
                       "{\"operation\":\"read\",\"path\":\"/ws/f\",\"bytes\":4,\"content\":\"a\\u0000b\\n\"}");
}

/* What JSON cannot carry is refused, named: a path or a read's content that is not UTF-8. */
static void test_file_result_refuses_what_json_cannot_carry(void **state)
{
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL, content[] = "ok\xff";

        (void) state;
        result.operation = DSH_FILE_READ;
        result.path = "/ws/f";
        result.content = content;
        result.bytes = 3;
        assert_int_equal(dsh_json_encode_file_result(&result, &text, &error), -EINVAL);
        assert_null(text);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_string_equal(error.message, "file result: \"content\" is not valid UTF-8 (byte 0xff at offset 2), and a "
                                           "JSON string cannot carry it");
        dsh_error_clear(&error);
        result.operation = DSH_FILE_WRITE;
        result.path = "/ws/\xfe";
        assert_int_equal(dsh_json_encode_file_result(&result, &text, &error), -EINVAL);
        assert_string_equal(error.message, "file result: \"path\" is not valid UTF-8 (byte 0xfe at offset 4), and a "
                                           "JSON string cannot carry it");
        dsh_error_clear(&error);
}

/* ---------------------------------------------------------- bash tool -- */

/*
 * The bash tool's result, byte for byte: nulls where nothing applies, the
 * markers in order, the optional members only when set, and the output's
 * bytes that are not UTF-8 (and NUL) carried, not dropped.
 */
static void test_bash_result_golden_bytes(void **state)
{
        char *markers[] = { "[sandbox: file access denied under read-only mode]", NULL };
        char *no_markers[] = { NULL };
        char *warnings[] = { "undone", NULL };
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        result.kind = DSH_BASH_DENIED;
        result.exit_code = 1;
        result.standard_output = (dsh_bash_output) { "out\xff\0!", 6, true, 300 };
        result.standard_error = (dsh_bash_output) { "Read-only file system\n", 22, false, 22 };
        result.sandbox = (dsh_bash_sandbox) { DSH_MODE_READ_ONLY, "bwrap", DSH_ENFORCEMENT_PARTIAL, true, true, false };
        result.markers = markers;
        result.warnings = warnings;
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_string_equal(text,
                            "{\"kind\":\"denied\",\"exitCode\":1,\"signal\":null,\"timedOut\":false,"
                            "\"cancelled\":false,\"stdout\":{\"text\":\"out\\\\xff\\u0000!\",\"truncated\":true,"
                            "\"bytes\":300},\"stderr\":{\"text\":\"Read-only file system\\n\",\"truncated\":false,"
                            "\"bytes\":22},\"sandbox\":{\"mode\":\"read-only\",\"backend\":\"bwrap\","
                            "\"enforcement\":\"partial\",\"denied\":true,\"runnerFailed\":false},"
                            "\"markers\":[\"[sandbox: file access denied under read-only mode]\"],"
                            "\"warnings\":[\"undone\"],\"refusedWrites\":[],\"refusedConnections\":[],\"denials\":[]}");
        free(text);

        /* A runner failure: no exit code, no backend or enforcement, the error object. */
        result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        result.kind = DSH_BASH_RUNNER_FAILED;
        result.standard_output = (dsh_bash_output) { "", 0, false, 0 };
        result.standard_error = (dsh_bash_output) { "", 0, false, 0 };
        result.sandbox.mode = DSH_MODE_WORKSPACE_WRITE;
        result.sandbox.runner_failed = true;
        result.markers = no_markers;
        result.error = (dsh_error) { DSH_ERROR_SANDBOX_UNAVAILABLE, ENOSYS, "gone" };
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_string_equal(text,
                            "{\"kind\":\"runner-failed\",\"exitCode\":null,\"signal\":null,\"timedOut\":false,"
                            "\"cancelled\":false,\"stdout\":{\"text\":\"\",\"truncated\":false,\"bytes\":0},"
                            "\"stderr\":{\"text\":\"\",\"truncated\":false,\"bytes\":0},\"sandbox\":{\"mode\":"
                            "\"workspace-write\",\"backend\":null,\"enforcement\":null,\"denied\":false,"
                            "\"runnerFailed\":true},\"markers\":[],\"error\":{\"code\":\"SANDBOX_UNAVAILABLE\","
                            "\"message\":\"gone\"},\"refusedWrites\":[],\"refusedConnections\":[],\"denials\":[]}");
        free(text);

        /* Killed by a signal while cancelled, with the message. */
        result.kind = DSH_BASH_CANCELLED;
        result.exit_code = -1;
        result.signal = 2;
        result.cancelled = true;
        result.message = "cancelled";
        result.error = (dsh_error) DSH_ERROR_INIT;
        result.sandbox.runner_failed = false;
        result.sandbox.backend = "landlock";
        result.sandbox.confined = true;
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_true(strstr(text, "\"kind\":\"cancelled\",\"exitCode\":null,\"signal\":2,\"timedOut\":false,"
                                 "\"cancelled\":true,") != NULL);
        assert_true(strstr(text, "\"backend\":\"landlock\",\"enforcement\":\"full\"") != NULL);
        assert_true(strstr(text, "\"markers\":[],\"message\":\"cancelled\",\"refusedWrites\":[],"
                                 "\"refusedConnections\":[],\"denials\":[]}") != NULL);
        free(text);
}

/*
 * The refusal records: each {op, path, rule} in order, a path byte that is
 * not UTF-8 written \xNN (the command chose the name: it must not cost the
 * result), the dropped count only when some were; read back as written,
 * and a list longer than a call keeps, or a record missing a member, refused.
 */
static void test_bash_result_refused_writes(void **state)
{
        char *no_markers[] = { NULL };
        dsh_write_refusal refusals[] = { { "chmod", "/etc/hostname", "outside-roots" },
                                         { "open", "/w/.git/hooks/\xffpre-commit", "protected-subpath" } };
        dsh_bash_result result = DSH_BASH_RESULT_INIT, decoded = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *text = NULL;
        char *too_many = NULL;
        size_t used = 0;
        FILE *out;

        (void) state;
        result.standard_output = (dsh_bash_output) { "", 0, false, 0 };
        result.standard_error = (dsh_bash_output) { "", 0, false, 0 };
        result.markers = no_markers;
        result.refused_writes = refusals;
        result.refused_write_count = 2;
        result.refused_writes_dropped = 7;
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_true(strstr(text, "\"markers\":[],\"refusedWrites\":[{\"op\":\"chmod\",\"path\":\"/etc/hostname\","
                                 "\"rule\":\"outside-roots\"},{\"op\":\"open\",\"path\":"
                                 "\"/w/.git/hooks/\\\\xffpre-commit\",\"rule\":\"protected-subpath\"}],"
                                 "\"refusedWritesDropped\":7,\"refusedConnections\":[],\"denials\":[]}") != NULL);

        assert_int_equal(dsh_json_decode_bash_result(text, strlen(text), &decoded, &error), 0);
        assert_int_equal(decoded.refused_write_count, 2);
        assert_int_equal(decoded.refused_writes_dropped, 7);
        assert_string_equal(decoded.refused_writes[0].op, "chmod");
        assert_string_equal(decoded.refused_writes[0].path, "/etc/hostname");
        assert_string_equal(decoded.refused_writes[0].rule, "outside-roots");
        assert_string_equal(decoded.refused_writes[1].path, "/w/.git/hooks/\\xffpre-commit");
        assert_string_equal(decoded.refused_writes[1].rule, "protected-subpath");
        dsh_bash_result_clear(&decoded);

        /* A result an older helper wrote (no member): none. */
        {
                const char *old = "{\"kind\":\"completed\",\"exitCode\":0,\"signal\":null,\"timedOut\":false,"
                                  "\"cancelled\":false,\"stdout\":{\"text\":\"\",\"truncated\":false,\"bytes\":0},"
                                  "\"stderr\":{\"text\":\"\",\"truncated\":false,\"bytes\":0},\"sandbox\":{\"mode\":"
                                  "\"read-only\",\"backend\":\"bwrap\",\"enforcement\":\"full\",\"denied\":false,"
                                  "\"runnerFailed\":false},\"markers\":[]}";

                assert_int_equal(dsh_json_decode_bash_result(old, strlen(old), &decoded, &error), 0);
                assert_int_equal(decoded.refused_write_count, 0);
                assert_null(decoded.refused_writes);
                assert_int_equal(decoded.refused_writes_dropped, 0);
                dsh_bash_result_clear(&decoded);
        }

        /* A record without its rule, a negative count, and one record more than a call keeps. */
        {
                static const char *const broken[][2] = {
                        { "{\"op\":\"chmod\",\"path\":\"/x\"}]", "\"refusedWrites\"[0].\"rule\" is missing" },
                        { "]", NULL },
                };
                char *prefix = strndup(text, (size_t) (strstr(text, "\"refusedWrites\"") - text));

                assert_non_null(prefix);
                for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
                        char *bad = NULL;

                        if (!broken[i][1])
                                assert_true(asprintf(&bad, "%s\"refusedWrites\":[],\"refusedWritesDropped\":-1}",
                                                     prefix) > 0);
                        else
                                assert_true(asprintf(&bad, "%s\"refusedWrites\":[%s}", prefix, broken[i][0]) > 0);
                        assert_int_equal(dsh_json_decode_bash_result(bad, strlen(bad), &decoded, &error), -EINVAL);
                        assert_non_null(strstr(error.message, broken[i][1] ? broken[i][1]
                                                                          : "\"refusedWritesDropped\" must be a "
                                                                            "non-negative integer"));
                        dsh_error_clear(&error);
                        free(bad);
                }
                out = open_memstream(&too_many, &used);
                assert_non_null(out);
                fprintf(out, "%s\"refusedWrites\":[", prefix);
                for (int i = 0; i <= DSH_WRITE_REFUSALS_MAX; i++)
                        fprintf(out, "%s{\"op\":\"chmod\",\"path\":\"/x%d\",\"rule\":\"outside-roots\"}", i ? "," : "",
                                i);
                fputs("]}", out);
                assert_int_equal(fclose(out), 0);
                assert_int_equal(dsh_json_decode_bash_result(too_many, used, &decoded, &error), -EINVAL);
                assert_non_null(strstr(error.message, "\"refusedWrites\" must hold at most 64 records"));
                dsh_error_clear(&error);
                free(too_many);
                free(prefix);
        }
}

/*
 * The typed denials: always present, each record as base/denial-json.c
 * writes it, "denialsDropped" only when some were; read back strictly (the
 * remote relays the result): a record of an op this version does not know,
 * or one more than a call keeps, is refused.
 */
static void test_bash_result_denials(void **state)
{
        char *no_markers[] = { NULL };
        dsh_denial records[] = {
                { DSH_DENIAL_WRITE, "open", "/etc/x", NULL, 0, "outside-roots", DSH_DENIAL_SOURCE_SUPERVISOR,
                  { DSH_GRANT_WRITABLE_ROOT, false, DSH_MODE_WORKSPACE_WRITE, "/etc" } },
                { DSH_DENIAL_CONNECT, "connect", NULL, "example.com", 443, "network-off",
                  DSH_DENIAL_SOURCE_PROXY, { DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE, "example.com:443" } },
        };
        dsh_bash_result result = DSH_BASH_RESULT_INIT, decoded = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *text = NULL;
        char *prefix, *bad = NULL;

        (void) state;
        result.standard_output = (dsh_bash_output) { "", 0, false, 0 };
        result.standard_error = (dsh_bash_output) { "", 0, false, 0 };
        result.markers = no_markers;
        result.denials = (dsh_denials) { records, 2, 5 };
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_non_null(strstr(text, "\"denials\":[{\"op\":\"write\",\"call\":\"open\",\"path\":\"/etc/x\","
                                     "\"rule\":\"outside-roots\",\"source\":\"supervisor\",\"grant\":"
                                     "{\"kind\":\"writable-root\",\"target\":\"/etc\"}},"));
        assert_non_null(strstr(text, "\"denialsDropped\":5}"));
        assert_int_equal(dsh_json_decode_bash_result(text, strlen(text), &decoded, &error), 0);
        assert_int_equal(decoded.denials.count, 2);
        assert_int_equal(decoded.denials.dropped, 5);
        assert_string_equal(decoded.denials.items[0].path, "/etc/x");
        assert_int_equal(decoded.denials.items[0].grant.kind, DSH_GRANT_WRITABLE_ROOT);
        assert_string_equal(decoded.denials.items[0].grant.target, "/etc");
        assert_string_equal(decoded.denials.items[1].host, "example.com");
        assert_int_equal(decoded.denials.items[1].port, 443);
        assert_int_equal(decoded.denials.items[1].source, DSH_DENIAL_SOURCE_PROXY);
        dsh_bash_result_clear(&decoded);

        prefix = strndup(text, (size_t) (strstr(text, "\"denials\"") - text));
        assert_non_null(prefix);
        /* An op this version does not know: refused, never read as something else. */
        assert_true(asprintf(&bad, "%s\"denials\":[{\"op\":\"teleport\",\"rule\":\"x\",\"source\":"
                                   "\"supervisor\",\"grant\":{\"kind\":\"none\"}}]}", prefix) > 0);
        assert_int_equal(dsh_json_decode_bash_result(bad, strlen(bad), &decoded, &error), -EINVAL);
        dsh_error_clear(&error);
        free(bad);
        assert_true(asprintf(&bad, "%s\"denials\":[],\"denialsDropped\":-1}", prefix) > 0);
        assert_int_equal(dsh_json_decode_bash_result(bad, strlen(bad), &decoded, &error), -EINVAL);
        assert_non_null(strstr(error.message, "\"denialsDropped\" must be a non-negative integer"));
        dsh_error_clear(&error);
        free(bad);
        /* One record more than a call keeps. */
        {
                size_t used = 0;
                FILE *out = open_memstream(&bad, &used);

                assert_non_null(out);
                fprintf(out, "%s\"denials\":[", prefix);
                for (int i = 0; i <= DSH_DENIALS_MAX; i++)
                        fprintf(out, "%s{\"op\":\"write\",\"path\":\"/x%d\",\"rule\":\"outside-roots\","
                                     "\"source\":\"supervisor\",\"grant\":{\"kind\":\"none\"}}",
                                i ? "," : "", i);
                fputs("]}", out);
                assert_int_equal(fclose(out), 0);
                assert_int_equal(dsh_json_decode_bash_result(bad, used, &decoded, &error), -EINVAL);
                dsh_error_clear(&error);
                free(bad);
        }
        free(prefix);
}

/* The approval request: exact bytes; a command JSON cannot carry is refused, not shown altered. */
static void test_bash_escalation_golden_and_refusal(void **state)
{
        char *roots[] = { "/srv/out", "/w/../x", NULL }, *hosts[] = { "example.com:443", NULL };
        dsh_bash_escalation escalation = { "make install", DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE,
                                           "to install", "/w", NULL, NULL, NULL };
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        assert_int_equal(dsh_json_encode_bash_escalation(&escalation, &text, &error), 0);
        assert_string_equal(text, "{\"command\":\"make install\",\"sandboxPermissions\":\"workspace-write\","
                                  "\"currentMode\":\"read-only\",\"justification\":\"to install\","
                                  "\"workspaceRoot\":\"/w\",\"additionalWrite\":[],\"additionalHosts\":[]}");
        free(text);
        escalation.session_id = "s1";
        assert_int_equal(dsh_json_encode_bash_escalation(&escalation, &text, &error), 0);
        assert_true(strstr(text, ",\"workspaceRoot\":\"/w\",\"sessionId\":\"s1\",\"additionalWrite\":[]") != NULL);
        free(text);
        /* Exactly what is granted beside the mode, in order. */
        escalation.additional_write = roots;
        escalation.additional_hosts = hosts;
        assert_int_equal(dsh_json_encode_bash_escalation(&escalation, &text, &error), 0);
        assert_true(strstr(text, ",\"additionalWrite\":[\"/srv/out\",\"/w/../x\"],"
                                 "\"additionalHosts\":[\"example.com:443\"]}") != NULL);
        free(text);
        escalation.command = "rm -rf \"junk\xff\" /";
        assert_int_equal(dsh_json_encode_bash_escalation(&escalation, &text, &error), -EINVAL);
        assert_null(text);
        assert_string_equal(error.message, "escalation: \"command\" is not valid UTF-8 (byte 0xff at offset 12), "
                                           "and a JSON string cannot carry it");
        dsh_error_clear(&error);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_facts_golden_bytes),
                cmocka_unit_test(test_facts_secrets_members),
                cmocka_unit_test(test_facts_round_trip),
                cmocka_unit_test(test_facts_decode_lenient_where_harmless),
                cmocka_unit_test(test_facts_decode_rejects),
                cmocka_unit_test(test_facts_encode_refuses_non_utf8),
                cmocka_unit_test(test_policy_golden_and_round_trip),
                cmocka_unit_test(test_policy_decode_rejects),
                cmocka_unit_test(test_policy_encode_refuses),
                cmocka_unit_test(test_policy_inside_a_message),
                cmocka_unit_test(test_error_round_trip_every_code),
                cmocka_unit_test(test_file_result_golden_bytes),
                cmocka_unit_test(test_file_result_refuses_what_json_cannot_carry),
                cmocka_unit_test(test_error_golden_bytes),
                cmocka_unit_test(test_error_decode_rejects),
                cmocka_unit_test(test_probe_report_golden_and_refusal),
                cmocka_unit_test(test_session_show_and_list),
                cmocka_unit_test(test_mode_event_data),
                cmocka_unit_test(test_bash_result_golden_bytes),
                cmocka_unit_test(test_bash_result_refused_writes),
                cmocka_unit_test(test_bash_result_denials),
                cmocka_unit_test(test_bash_escalation_golden_and_refusal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
