/* SPDX-License-Identifier: MIT */
/*
 * The escape matrix (tests/support/escape-matrix.c) on the real kernel and
 * the real bwrap: one cmocka test per operation, each running the
 * operation's targets × {read-only, workspace-write} × every backend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "escape-matrix.h"

int main(void)
{
        return escape_matrix_run_group("escape-matrix", escape_matrix_check_operation);
}
