/* SPDX-License-Identifier: MIT */
/* The runner-failure algorithm and denial matching (docs/backends.md, "the runner-failure rule"), table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsh-sandbox/sandbox.h"

#define PARTIAL_NOTICE "landlock-run: partial enforcement (older Landlock ABI)"

struct classify_case {
        const char *name;
        int exit_code;
        const char *stderr_text;
        bool runner_failed;
        const char *matched_line;
};

static dsh_confined_argv landlock_dialect(void)
{
        static const int launcher_failure[] = { 125 };
        static const char *const fatal[] = { "landlock-run: ", NULL };
        static const char *const informational[] = { PARTIAL_NOTICE, NULL };
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;

        assert_int_equal(dsh_confined_argv_add_rule(&confined, launcher_failure, 1, fatal, informational), 0);
        assert_int_equal(dsh_strv_append(&confined.denial_signatures, "permission denied"), 0);
        return confined;
}

static void test_landlock_rule_table(void **state)
{
        static const struct classify_case cases[] = {
                { "exit 0 never fails", 0, "landlock-run: exec failed: x\n", false, NULL },
                { "exit status alone proves nothing", 125, "", false, NULL },
                { "fatal line with the allowed code", 125, "landlock-run: exec failed: No such file\n", true,
                  "landlock-run: exec failed: No such file" },
                { "fatal line with another code", 1, "landlock-run: exec failed: No such file\n", false, NULL },
                { "informational line alone", 125, PARTIAL_NOTICE "\n", false, NULL },
                { "informational line, other case", 125, "LANDLOCK-RUN: Partial Enforcement (older landlock ABI)\n",
                  false, NULL },
                { "informational then fatal", 125, PARTIAL_NOTICE "\nlandlock-run: landlock ruleset error: x\n",
                  true, "landlock-run: landlock ruleset error: x" },
                { "signature case-insensitive", 125, "LandLock-Run: cannot open rule path: /x: y", true,
                  "LandLock-Run: cannot open rule path: /x: y" },
                { "signature inside a line", 125, "warning: landlock-run: odd\r\n", true,
                  "warning: landlock-run: odd" },
                { "informational needs the whole line", 125, PARTIAL_NOTICE " extra\n", true,
                  PARTIAL_NOTICE " extra" },
        };
        dsh_confined_argv confined = landlock_dialect();

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *matched = NULL;
                bool failed = dsh_runner_failed(confined.runner_failure_rules, confined.runner_failure_rule_count,
                                                cases[i].exit_code, cases[i].stderr_text, &matched);

                if (failed != cases[i].runner_failed)
                        fail_msg("case \"%s\": expected %d", cases[i].name, cases[i].runner_failed);
                if (cases[i].matched_line)
                        assert_string_equal(matched, cases[i].matched_line);
                else
                        assert_null(matched);
                free(matched);
        }
        dsh_confined_argv_clear(&confined);
}

static void test_rule_without_exit_gate(void **state)
{
        static const char *const fatal[] = { "bwrap: ", NULL };
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;

        (void) state;
        assert_int_equal(dsh_confined_argv_add_rule(&confined, NULL, 0, fatal, NULL), 0);
        assert_true(dsh_runner_failed(confined.runner_failure_rules, 1, 1,
                                      "bwrap: No permissions to create new namespace\n", NULL));
        assert_true(dsh_runner_failed(confined.runner_failure_rules, 1, 255, "x\nbwrap: y", NULL));
        assert_false(dsh_runner_failed(confined.runner_failure_rules, 1, 0, "bwrap: y", NULL));
        assert_false(dsh_runner_failed(confined.runner_failure_rules, 1, 1, "bwrap:y", NULL));
        dsh_confined_argv_clear(&confined);
}

static void test_denial_matching(void **state)
{
        dsh_confined_argv confined = landlock_dialect();

        (void) state;
        assert_true(dsh_is_denial(confined.denial_signatures, 1, "sh: 1: cannot create /x: Permission denied\n"));
        assert_true(dsh_is_denial(confined.denial_signatures, 2, "PERMISSION DENIED"));
        assert_false(dsh_is_denial(confined.denial_signatures, 0, "Permission denied"));
        /* Another backend's dialect is not this backend's denial. */
        assert_false(dsh_is_denial(confined.denial_signatures, 1, "touch: cannot touch '/x': Read-only file system"));
        dsh_confined_argv_clear(&confined);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_landlock_rule_table),
                cmocka_unit_test(test_rule_without_exit_gate),
                cmocka_unit_test(test_denial_matching),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
