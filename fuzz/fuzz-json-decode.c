/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec's decoders over arbitrary bytes: what the remote provider
 * and the service will read from another process.  Every input is read as
 * facts, as a policy and as an error.  Beyond memory errors and UB it checks
 * the decoders' promises: a failure leaves the output cleared and says why
 * on one line naming the value; a success yields only values that pass every
 * rule, which encode again, and whose encoding reads back to the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "fuzz-support.h"

static void check_failure(int result, const dsh_error *error, const char *what)
{
        FUZZ_CHECK(result == -EINVAL || result == -ENOMEM);
        FUZZ_CHECK(error->code == DSH_ERROR_INVALID_INPUT || error->code == DSH_ERROR_SYSTEM);
        FUZZ_CHECK(error->message && strncmp(error->message, what, strlen(what)) == 0 &&
                   strncmp(error->message + strlen(what), ": ", 2) == 0);
        fuzz_check_one_printable_line(error->message);
}

static int is_nonempty_single_line(const char *text)
{
        return text[0] != '\0' && !strpbrk(text, "\r\n");
}

static void check_facts(const dsh_confined_argv *facts)
{
        FUZZ_CHECK(dsh_strv_length(facts->argv) > 0);
        FUZZ_CHECK(facts->enforcement == DSH_ENFORCEMENT_FULL || facts->enforcement == DSH_ENFORCEMENT_PARTIAL);
        FUZZ_CHECK(facts->denial_signatures != NULL);
        for (char **signature = facts->denial_signatures; *signature; signature++)
                FUZZ_CHECK(is_nonempty_single_line(*signature));
        FUZZ_CHECK(facts->runner_failure_rule_count > 0);
        for (size_t i = 0; i < facts->runner_failure_rule_count; i++) {
                const dsh_runner_failure_rule *rule = &facts->runner_failure_rules[i];

                FUZZ_CHECK(dsh_strv_length(rule->fatal_signatures) > 0);
                for (char **signature = rule->fatal_signatures; *signature; signature++)
                        FUZZ_CHECK(is_nonempty_single_line(*signature));
                FUZZ_CHECK((rule->allowed_exit_codes != NULL) == (rule->allowed_exit_code_count > 0));
                for (size_t j = 0; j < rule->allowed_exit_code_count; j++)
                        FUZZ_CHECK(rule->allowed_exit_codes[j] >= 1 && rule->allowed_exit_codes[j] <= 255);
        }
        FUZZ_CHECK(!facts->backend || is_nonempty_single_line(facts->backend));
        FUZZ_CHECK(!facts->partial_reasons || (dsh_strv_length(facts->partial_reasons) > 0 &&
                                               facts->enforcement == DSH_ENFORCEMENT_PARTIAL));
}

static void fuzz_facts(const char *data, size_t size)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT, again = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL, *text_again = NULL;
        int result = dsh_json_decode_confined_argv(data, size, &facts, &error);

        if (result < 0) {
                check_failure(result, &error, "facts");
                FUZZ_CHECK(!facts.argv && !facts.runner_failure_rules && !facts.backend);
                dsh_error_clear(&error);
                return;
        }
        check_facts(&facts);
        FUZZ_CHECK(dsh_json_encode_confined_argv(&facts, &text, &error) == 0);
        FUZZ_CHECK(dsh_json_decode_confined_argv(text, strlen(text), &again, &error) == 0);
        FUZZ_CHECK(dsh_json_encode_confined_argv(&again, &text_again, &error) == 0);
        FUZZ_CHECK(strcmp(text, text_again) == 0);
        free(text_again);
        free(text);
        dsh_confined_argv_clear(&again);
        dsh_confined_argv_clear(&facts);
}

static void fuzz_policy(const char *data, size_t size)
{
        dsh_policy policy = DSH_POLICY_INIT, again = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL, *text_again = NULL;
        int result = dsh_json_decode_policy(data, size, &policy, &error);

        if (result < 0) {
                check_failure(result, &error, "policy");
                FUZZ_CHECK(!policy.workspace_root && !policy.additional_writable_roots && !policy.session_id);
                dsh_error_clear(&error);
                return;
        }
        FUZZ_CHECK((unsigned) policy.mode < DSH_MODE_COUNT && policy.workspace_root);
        FUZZ_CHECK(!policy.session_id || dsh_session_id_is_valid(policy.session_id));
        FUZZ_CHECK(dsh_json_encode_policy(&policy, &text, &error) == 0);
        FUZZ_CHECK(dsh_json_decode_policy(text, strlen(text), &again, &error) == 0);
        FUZZ_CHECK(dsh_json_encode_policy(&again, &text_again, &error) == 0);
        FUZZ_CHECK(strcmp(text, text_again) == 0);
        free(text_again);
        free(text);
        dsh_policy_clear(&again);
        dsh_policy_clear(&policy);
}

static void fuzz_error(const char *data, size_t size)
{
        dsh_error value = DSH_ERROR_INIT, again = DSH_ERROR_INIT, error = DSH_ERROR_INIT;
        char *text = NULL;
        int result = dsh_json_decode_error(data, size, &value, &error);

        if (result < 0) {
                check_failure(result, &error, "error");
                FUZZ_CHECK(value.code == DSH_ERROR_NONE && !value.message);
                dsh_error_clear(&error);
                return;
        }
        FUZZ_CHECK(value.code != DSH_ERROR_NONE && value.message);
        FUZZ_CHECK(dsh_json_encode_error(&value, &text, &error) == 0);
        FUZZ_CHECK(dsh_json_decode_error(text, strlen(text), &again, &error) == 0);
        FUZZ_CHECK(again.code == value.code && strcmp(again.message, value.message) == 0);
        free(text);
        dsh_error_clear(&again);
        dsh_error_clear(&value);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* A copy of exactly `size` bytes, so that ASan sees a read past the end. */
        char *copy = malloc(size ? size : 1);

        FUZZ_CHECK(copy != NULL);
        memcpy(copy, data, size);
        fuzz_facts(copy, size);
        fuzz_policy(copy, size);
        fuzz_error(copy, size);
        free(copy);
        return 0;
}
