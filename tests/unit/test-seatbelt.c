/* SPDX-License-Identifier: MIT */
/* The Seatbelt profile generator against golden strings: quoting, de-duplication, canonical roots. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsh-sandbox/seatbelt.h"

#define READ_ONLY_PROFILE \
        "(version 1) (allow default) (deny file-write*) (allow file-write* (literal \"/dev/null\"))"

static char *profile_of(dsh_mode mode, const char *root, const char *const *extra)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *profile = NULL;

        policy.mode = mode;
        policy.workspace_root = strdup(root);
        for (; extra && *extra; extra++)
                assert_int_equal(dsh_strv_append(&policy.additional_writable_roots, *extra), 0);
        assert_int_equal(dsh_seatbelt_profile(&policy, &profile, &error), 0);
        dsh_policy_clear(&policy);
        return profile;
}

static void test_read_only_grants_only_the_sink(void **state)
{
        const char *extra[] = { "/ignored", NULL };
        char *profile = profile_of(DSH_MODE_READ_ONLY, "/Users/me/work", extra);

        (void) state;
        assert_string_equal(profile, READ_ONLY_PROFILE);
        free(profile);
}

static void test_workspace_write_roots(void **state)
{
        const char *extra[] = { "/private/var/folders/x", NULL };
        char *profile = profile_of(DSH_MODE_WORKSPACE_WRITE, "/Users/me/work", extra);

        (void) state;
        assert_string_equal(profile, READ_ONLY_PROFILE
                            " (allow file-write* (subpath \"/Users/me/work\") (subpath \"/private/var/folders/x\"))");
        free(profile);
}

static void test_quoting_of_quote_and_backslash(void **state)
{
        const char *extra[] = { "/a\\b", NULL };
        char *profile = profile_of(DSH_MODE_WORKSPACE_WRITE, "/Users/me/say \"hi\"", extra);

        (void) state;
        assert_string_equal(profile, READ_ONLY_PROFILE
                            " (allow file-write* (subpath \"/Users/me/say \\\"hi\\\"\") (subpath \"/a\\\\b\"))");
        free(profile);
}

static void test_duplicates_and_spellings_collapse(void **state)
{
        const char *extra[] = { "/w/", "//w//./sub/..", "/x", "/x/.", "/y//z/", NULL };
        char *profile = profile_of(DSH_MODE_WORKSPACE_WRITE, "/w", extra);

        (void) state;
        assert_string_equal(profile, READ_ONLY_PROFILE
                            " (allow file-write* (subpath \"/w\") (subpath \"/x\") (subpath \"/y/z\"))");
        free(profile);
}

static void test_confine_argv_and_dialect(void **state)
{
        char *const argv[] = { (char *) "bash", (char *) "-c", (char *) "echo hi", NULL };
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup("/ws");
        assert_int_equal(dsh_seatbelt_confine(argv, &policy, &confined, &error), 0);
        assert_int_equal(dsh_strv_length(confined.argv), 7);
        assert_string_equal(confined.argv[0], "/usr/bin/sandbox-exec");
        assert_string_equal(confined.argv[1], "-p");
        assert_string_equal(confined.argv[2], READ_ONLY_PROFILE " (allow file-write* (subpath \"/ws\"))");
        assert_string_equal(confined.argv[3], "--");
        assert_string_equal(confined.argv[4], "bash");
        assert_string_equal(confined.argv[6], "echo hi");
        assert_int_equal(confined.enforcement, DSH_ENFORCEMENT_FULL);
        assert_string_equal(confined.denial_signatures[0], "operation not permitted");
        assert_null(confined.denial_signatures[1]);
        assert_int_equal(confined.runner_failure_rule_count, 1);
        assert_string_equal(confined.runner_failure_rules[0].fatal_signatures[0], "sandbox-exec: ");
        assert_int_equal(confined.runner_failure_rules[0].allowed_exit_code_count, 0);
        assert_null(confined.runner_failure_rules[0].informational_lines);
        assert_string_equal(confined.backend, "seatbelt");
        dsh_confined_argv_clear(&confined);
        dsh_policy_clear(&policy);
}

static void test_bad_policies(void **state)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *profile = NULL;

        (void) state;
        policy.mode = DSH_MODE_DANGER_FULL_ACCESS;
        policy.workspace_root = strdup("/ws");
        assert_int_equal(dsh_seatbelt_profile(&policy, &profile, &error), -EINVAL);
        assert_null(profile);
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        free(policy.workspace_root);
        policy.workspace_root = strdup("relative");
        assert_int_equal(dsh_seatbelt_profile(&policy, &profile, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_only_grants_only_the_sink),
                cmocka_unit_test(test_workspace_write_roots),
                cmocka_unit_test(test_quoting_of_quote_and_backslash),
                cmocka_unit_test(test_duplicates_and_spellings_collapse),
                cmocka_unit_test(test_confine_argv_and_dialect),
                cmocka_unit_test(test_bad_policies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
