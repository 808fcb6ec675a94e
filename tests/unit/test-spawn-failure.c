/* SPDX-License-Identifier: MIT */
/* Pre-exec failures become errors, and never a success: the command did not run. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "provider/spawn.h"

static void test_every_failure_is_negative(void **state)
{
        static const dsh_spawn_stage stages[] = { DSH_SPAWN_STAGE_SETUP, DSH_SPAWN_STAGE_CONFINE,
                                                  DSH_SPAWN_STAGE_METADATA, DSH_SPAWN_STAGE_PRIVATE_DEVICES,
                                                  DSH_SPAWN_STAGE_EXEC };
        static const int errnos[] = { 0, EPERM, ENOENT, EACCES };

        (void) state;
        for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
                for (size_t j = 0; j < sizeof(errnos) / sizeof(errnos[0]); j++)
                        for (int mode = 0; mode < DSH_MODE_COUNT; mode++) {
                                dsh_spawn_failure failure = { stages[i], errnos[j] };
                                dsh_error error = DSH_ERROR_INIT;

                                assert_true(dsh_spawn_failure_to_error(&failure, (dsh_mode) mode, "prog", &error) < 0);
                                assert_int_not_equal(error.code, DSH_ERROR_NONE);
                                assert_non_null(error.message);
                                dsh_error_clear(&error);
                        }
}

static void test_stage_decides_the_code(void **state)
{
        dsh_spawn_failure confine = { DSH_SPAWN_STAGE_CONFINE, EPERM };
        dsh_spawn_failure exec = { DSH_SPAWN_STAGE_EXEC, ENOENT };
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(dsh_spawn_failure_to_error(&confine, DSH_MODE_READ_ONLY, "prog", &error), -EPERM);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, " Runner failure: cannot apply the sandbox in the child: "));
        assert_int_equal(dsh_spawn_failure_to_error(&exec, DSH_MODE_READ_ONLY, "prog", &error), -ENOENT);
        assert_int_equal(error.code, DSH_ERROR_EXEC_FAILED);
        assert_string_equal(error.message, "prog: No such file or directory");
        dsh_error_clear(&error);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_failure_is_negative),
                cmocka_unit_test(test_stage_decides_the_code),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
