/* SPDX-License-Identifier: MIT */
/*
 * The escape matrix (tests/support/escape-matrix.c) on the real kernel and
 * the real bwrap: one cmocka test per operation, each running the
 * operation's targets × {read-only, workspace-write} × every backend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>

#include <cmocka.h>

#include "escape-matrix.h"

static void check_operation(void **state)
{
        escape_matrix_check_operation(*state);
}

int main(void)
{
        const char *const *operations = escape_matrix_operations();
        struct CMUnitTest *tests;
        size_t count = 0;
        int failures;

        while (operations[count])
                count++;
        tests = calloc(count, sizeof(*tests));
        if (!tests)
                return 1;
        for (size_t i = 0; i < count; i++) {
                tests[i].name = operations[i];
                tests[i].test_func = check_operation;
                tests[i].initial_state = (void *) operations[i];
        }
        failures = _cmocka_run_group_tests("escape-matrix", tests, count, NULL, NULL);
        free(tests);
        return failures;
}
