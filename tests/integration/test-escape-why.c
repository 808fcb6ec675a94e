/* SPDX-License-Identifier: MIT */
/*
 * The escape matrix's cases through `dsh-sandbox why`
 * (escape_matrix_check_why(), tests/support/escape-matrix.c): one cmocka
 * test per operation; each case's why answer, asked before it runs, must be
 * what bwrap or Landlock then did on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>

#include <cmocka.h>

#include "escape-matrix.h"

static void check_operation(void **state)
{
        escape_matrix_check_why(*state);
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
        failures = _cmocka_run_group_tests("escape-matrix-why", tests, count, NULL, NULL);
        free(tests);
        return failures;
}
