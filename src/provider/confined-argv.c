/* SPDX-License-Identifier: MIT */
/* The confined argv: what a provider hands back for the caller to spawn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static void runner_failure_rule_clear(dsh_runner_failure_rule *rule)
{
        free(rule->allowed_exit_codes);
        dsh_strv_free(rule->fatal_signatures);
        dsh_strv_free(rule->informational_lines);
        memset(rule, 0, sizeof(*rule));
}

void dsh_confined_argv_clear(dsh_confined_argv *confined)
{
        if (!confined)
                return;
        dsh_strv_free(confined->argv);
        dsh_strv_free(confined->denial_signatures);
        for (size_t i = 0; i < confined->runner_failure_rule_count; i++)
                runner_failure_rule_clear(&confined->runner_failure_rules[i]);
        free(confined->runner_failure_rules);
        free(confined->backend);
        dsh_strv_free(confined->partial_reasons);
        dsh_strv_free(confined->masked);
        dsh_strv_free(confined->environment_removed);
        free(confined->network);
        *confined = (dsh_confined_argv) DSH_CONFINED_ARGV_INIT;
}

int dsh_confined_argv_add_rule(dsh_confined_argv *confined,
                               const int *allowed_exit_codes, size_t allowed_exit_code_count,
                               const char *const *fatal_signatures,
                               const char *const *informational_lines)
{
        dsh_runner_failure_rule rule = { 0 };
        dsh_runner_failure_rule *grown;

        if (allowed_exit_code_count > 0) {
                rule.allowed_exit_codes = calloc(allowed_exit_code_count, sizeof(int));
                if (!rule.allowed_exit_codes)
                        goto out_of_memory;
                memcpy(rule.allowed_exit_codes, allowed_exit_codes, allowed_exit_code_count * sizeof(int));
                rule.allowed_exit_code_count = allowed_exit_code_count;
        }
        rule.fatal_signatures = dsh_strv_copy((char *const *) fatal_signatures);
        if (!rule.fatal_signatures)
                goto out_of_memory;
        if (informational_lines) {
                rule.informational_lines = dsh_strv_copy((char *const *) informational_lines);
                if (!rule.informational_lines)
                        goto out_of_memory;
        }
        grown = realloc(confined->runner_failure_rules,
                        (confined->runner_failure_rule_count + 1) * sizeof(dsh_runner_failure_rule));
        if (!grown)
                goto out_of_memory;
        grown[confined->runner_failure_rule_count++] = rule;
        confined->runner_failure_rules = grown;
        return 0;
out_of_memory:
        runner_failure_rule_clear(&rule);
        return -ENOMEM;
}

int dsh_confined_argv_add_partial_reason(dsh_confined_argv *confined, const char *reason)
{
        confined->enforcement = DSH_ENFORCEMENT_PARTIAL;
        return dsh_strv_append(&confined->partial_reasons, reason);
}
