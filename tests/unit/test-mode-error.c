/* SPDX-License-Identifier: MIT */
/* Modes, enforcement names and the spec's exact error texts. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"

static void test_modes_round_trip(void **state)
{
        (void) state;
        for (int i = 0; i < DSH_MODE_COUNT; i++) {
                dsh_mode mode;

                assert_int_equal(dsh_mode_parse(dsh_sandbox_modes[i], &mode), 0);
                assert_int_equal(mode, i);
                assert_string_equal(dsh_mode_name(mode), dsh_sandbox_modes[i]);
        }
        assert_null(dsh_sandbox_modes[DSH_MODE_COUNT]);
        assert_string_equal(dsh_sandbox_modes[0], "read-only");
        assert_string_equal(dsh_sandbox_modes[1], "workspace-write");
        assert_string_equal(dsh_sandbox_modes[2], "danger-full-access");
}

static void test_unknown_modes_rejected(void **state)
{
        const char *bad[] = { "", "Read-Only", "read_only", "full", "workspace-write ", NULL };
        dsh_mode mode = DSH_MODE_WORKSPACE_WRITE;

        (void) state;
        for (int i = 0; bad[i]; i++)
                assert_int_equal(dsh_mode_parse(bad[i], &mode), -EINVAL);
        assert_int_equal(dsh_mode_parse(NULL, &mode), -EINVAL);
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
}

static void test_escalation_order(void **state)
{
        (void) state;
        assert_true(dsh_mode_is_wider(DSH_MODE_WORKSPACE_WRITE, DSH_MODE_READ_ONLY));
        assert_true(dsh_mode_is_wider(DSH_MODE_DANGER_FULL_ACCESS, DSH_MODE_READ_ONLY));
        assert_true(dsh_mode_is_wider(DSH_MODE_DANGER_FULL_ACCESS, DSH_MODE_WORKSPACE_WRITE));
        assert_false(dsh_mode_is_wider(DSH_MODE_READ_ONLY, DSH_MODE_READ_ONLY));
        assert_false(dsh_mode_is_wider(DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE));
        assert_false(dsh_mode_is_wider(DSH_MODE_WORKSPACE_WRITE, DSH_MODE_DANGER_FULL_ACCESS));
        assert_true(dsh_mode_is_confined(DSH_MODE_READ_ONLY));
        assert_true(dsh_mode_is_confined(DSH_MODE_WORKSPACE_WRITE));
        assert_false(dsh_mode_is_confined(DSH_MODE_DANGER_FULL_ACCESS));
        assert_string_equal(dsh_enforcement_name(DSH_ENFORCEMENT_FULL), "full");
        assert_string_equal(dsh_enforcement_name(DSH_ENFORCEMENT_PARTIAL), "partial");
}

static void test_unavailable_message_exact(void **state)
{
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(dsh_error_set_unavailable(&error, DSH_MODE_WORKSPACE_WRITE, NULL), -ENOSYS);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_string_equal(dsh_error_code_name(error.code), "SANDBOX_UNAVAILABLE");
        assert_string_equal(error.message,
                            "sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on this "
                            "host; refusing to run the command unconfined. Install bubblewrap or run a "
                            "Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure "
                            "the ACL restricted-token runner can start (Windows) \u2014 otherwise switch the "
                            "consumer to danger-full-access.");
        dsh_error_set_unavailable(&error, DSH_MODE_READ_ONLY, "bwrap: setting up uid map: Permission denied");
        assert_true(strstr(error.message, "sandbox mode \"read-only\" is requested") == error.message);
        assert_non_null(strstr(error.message,
                               "danger-full-access. Runner failure: bwrap: setting up uid map: Permission denied"));
        dsh_error_clear(&error);
        assert_null(error.message);
        assert_int_equal(error.code, DSH_ERROR_NONE);
}

static void test_code_names(void **state)
{
        (void) state;
        assert_string_equal(dsh_error_code_name(DSH_ERROR_SANDBOX_PREPARATION_FAILED), "SANDBOX_PREPARATION_FAILED");
        assert_string_equal(dsh_error_code_name(DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT), "SANDBOX_INVALID_TEMP_ROOT");
        assert_string_equal(dsh_error_code_name(DSH_ERROR_SANDBOX_INVALID_ROOT), "SANDBOX_INVALID_ROOT");
        assert_string_equal(dsh_error_code_name(DSH_ERROR_FS_SANDBOX_DENIED), "FS_SANDBOX_DENIED");
        assert_null(dsh_error_code_name(DSH_ERROR_SYSTEM));
        assert_null(dsh_error_code_name(DSH_ERROR_INVALID_INPUT));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_modes_round_trip),
                cmocka_unit_test(test_unknown_modes_rejected),
                cmocka_unit_test(test_escalation_order),
                cmocka_unit_test(test_unavailable_message_exact),
                cmocka_unit_test(test_code_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
