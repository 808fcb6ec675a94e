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

#include <cmocka.h>

#include "escape-matrix.h"

int main(void)
{
        return escape_matrix_run_group("escape-matrix-why", escape_matrix_check_why);
}
