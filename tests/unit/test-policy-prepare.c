/* SPDX-License-Identifier: MIT */
/* dsh_policy_prepare: the per-call checks every backend relies on. */
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

#include "dsh-sandbox/sandbox.h"
#include "test-support.h"

static int prepare(dsh_mode mode, const char *root, const char *extra, dsh_policy *policy, dsh_error *error)
{
        *policy = (dsh_policy) DSH_POLICY_INIT;
        policy->mode = mode;
        policy->workspace_root = strdup(root);
        if (extra)
                assert_int_equal(dsh_strv_append(&policy->additional_writable_roots, extra), 0);
        return dsh_policy_prepare(policy, error);
}

static void test_root_canonicalized_through_symlink_dotdot(void **state)
{
        char *base = test_make_directory(NULL);
        char *inner = test_path_join(base, "a");
        char *deep = test_path_join(inner, "b");
        char *link = test_path_join(base, "link");
        char *spelled = NULL;
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(mkdir(inner, 0755), 0);
        assert_int_equal(mkdir(deep, 0755), 0);
        assert_int_equal(symlink(deep, link), 0);
        /* link/.. is where chdir lands (base/a), not the lexical parent (base). */
        assert_true(asprintf(&spelled, "%s/link/..", base) > 0);
        assert_int_equal(prepare(DSH_MODE_WORKSPACE_WRITE, spelled, NULL, &policy, &error), 0);
        assert_string_equal(policy.workspace_root, inner);
        dsh_policy_clear(&policy);
        free(spelled);
        free(link);
        free(deep);
        free(inner);
        test_remove_tree(base);
}

static void test_bad_roots(void **state)
{
        char *base = test_make_directory(NULL);
        char *file = test_path_join(base, "file");
        char *link = test_path_join(base, "link");
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        test_write_file(file, "x");
        assert_int_equal(symlink(base, link), 0);

        assert_true(prepare(DSH_MODE_READ_ONLY, "relative/dir", NULL, &policy, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        dsh_policy_clear(&policy);

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, "/nonexistent/dsh", NULL, &policy, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        dsh_policy_clear(&policy);

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, file, NULL, &policy, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        dsh_policy_clear(&policy);

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, base, link, &policy, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        assert_non_null(strstr(error.message, "is a symlink"));
        dsh_policy_clear(&policy);

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, base, file, &policy, &error) < 0);
        assert_non_null(strstr(error.message, "is not a directory"));
        dsh_policy_clear(&policy);

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, base, "/nonexistent/dsh", &policy, &error) < 0);
        assert_non_null(strstr(error.message, "does not exist"));
        dsh_policy_clear(&policy);

        {
                /* A symlink on the way, not only at the end: base/link/sub really is elsewhere/sub. */
                char *elsewhere = test_make_directory(NULL);
                char *elsewhere_sub = test_path_join(elsewhere, "sub");
                char *through = NULL;

                assert_int_equal(mkdir(elsewhere_sub, 0755), 0);
                assert_int_equal(unlink(link), 0);
                assert_int_equal(symlink(elsewhere, link), 0);
                assert_true(asprintf(&through, "%s/sub", link) > 0);
                assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, base, through, &policy, &error) < 0);
                assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
                assert_non_null(strstr(error.message, "goes through a symlink"));
                dsh_policy_clear(&policy);
                free(through);
                free(elsewhere_sub);
                test_remove_tree(elsewhere);
        }

        assert_true(prepare(DSH_MODE_WORKSPACE_WRITE, base, "relative", &policy, &error) < 0);
        assert_non_null(strstr(error.message, "absolute"));
        dsh_policy_clear(&policy);

        dsh_error_clear(&error);
        free(file);
        free(link);
        test_remove_tree(base);
}

static void test_duplicate_extra_roots_dropped(void **state)
{
        char *base = test_make_directory(NULL);
        char *spelled = NULL;
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_true(asprintf(&spelled, "%s/.", base) > 0);
        assert_int_equal(prepare(DSH_MODE_WORKSPACE_WRITE, base, base, &policy, &error), 0);
        assert_int_equal(dsh_strv_append(&policy.additional_writable_roots, spelled), 0);
        assert_int_equal(dsh_policy_prepare(&policy, &error), 0);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 1);
        assert_string_equal(policy.additional_writable_roots[0], base);
        dsh_policy_clear(&policy);
        free(spelled);
        test_remove_tree(base);
}

/* The call's own masks and allowed names: checked as the config checks them, duplicates dropped, a copy kept. */
static void test_secrets_entries_checked_and_deduplicated(void **state)
{
        char *base = test_make_directory(NULL);
        dsh_policy policy, copy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(prepare(DSH_MODE_READ_ONLY, base, NULL, &policy, &error), 0);
        assert_int_equal(dsh_strv_append(&policy.masked_paths, ".aws"), 0);
        assert_int_equal(dsh_strv_append(&policy.masked_paths, "/srv/keys/*.pem"), 0);
        assert_int_equal(dsh_strv_append(&policy.masked_paths, ".aws"), 0);
        assert_int_equal(dsh_strv_append(&policy.allowed_environment, "GITHUB_TOKEN"), 0);
        assert_int_equal(dsh_strv_append(&policy.allowed_environment, "GITHUB_TOKEN"), 0);
        assert_int_equal(dsh_policy_prepare(&policy, &error), 0);
        assert_int_equal(dsh_strv_length(policy.masked_paths), 2);
        assert_string_equal(policy.masked_paths[1], "/srv/keys/*.pem");
        assert_int_equal(dsh_strv_length(policy.allowed_environment), 1);
        assert_int_equal(dsh_policy_copy(&copy, &policy), 0);
        assert_string_equal(copy.masked_paths[0], ".aws");
        assert_string_equal(copy.allowed_environment[0], "GITHUB_TOKEN");
        dsh_policy_clear(&copy);

        assert_int_equal(dsh_strv_append(&policy.masked_paths, "a/../b"), 0);
        assert_int_equal(dsh_policy_prepare(&policy, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, "masked path \"a/../b\": "));
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);

        /* An allowed name is one name: a wildcard would let every matching secret through. */
        assert_int_equal(prepare(DSH_MODE_READ_ONLY, base, NULL, &policy, &error), 0);
        assert_int_equal(dsh_strv_append(&policy.allowed_environment, "*_TOKEN"), 0);
        assert_int_equal(dsh_policy_prepare(&policy, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, "allowed environment variable \"*_TOKEN\": "));
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        test_remove_tree(base);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_root_canonicalized_through_symlink_dotdot),
                cmocka_unit_test(test_bad_roots),
                cmocka_unit_test(test_duplicate_extra_roots_dropped),
                cmocka_unit_test(test_secrets_entries_checked_and_deduplicated),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
