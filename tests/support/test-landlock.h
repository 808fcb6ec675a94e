/* SPDX-License-Identifier: MIT */
/* The Landlock check the tests share: skip, saying why, where the kernel cannot confine. */
#ifndef DSH_SANDBOX_TEST_LANDLOCK_H
#define DSH_SANDBOX_TEST_LANDLOCK_H

#include <stdbool.h>
#include <stdio.h>

#include "core/landlock.h"

/* Whether this kernel enforces the Landlock ABI the sandbox needs; prints why not. */
static inline bool test_landlock_works(void)
{
        int abi = dsh_landlock_abi();

        if (abi >= DSH_LANDLOCK_MINIMUM_ABI)
                return true;
        printf("# SKIP: this kernel does not enforce Landlock ABI >= %d (abi %d)\n",
               DSH_LANDLOCK_MINIMUM_ABI, abi);
        return false;
}

/* In a cmocka test: skips it where Landlock cannot confine (the reason printed). */
#define TEST_REQUIRE_LANDLOCK()                                                                  \
        do {                                                                                     \
                if (!test_landlock_works())                                                      \
                        skip();                                                                  \
        } while (0)

#endif
