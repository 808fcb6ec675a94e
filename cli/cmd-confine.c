/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox confine [policy] [--] ARGV...`: the confine seam on the command
 * line.  Prints one JSON object, the confined argv and the facts a harness
 * needs to read its outcome:
 *   {"argv":[...],"enforcement":"full"|"partial","denialSignatures":[...],
 *    "runnerFailureRules":[{"allowedExitCodes":[...],"fatalSignatures":[...],
 *    "informationalLines":[...]}],"backend":"..."}
 * (allowedExitCodes and informationalLines omitted when empty).  Nothing is
 * run.  Errors: one stderr line, exit 125 for the sandbox, 2 for usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "options.h"
#include "policy-options.h"

static const char confine_help[] =
        "Usage: dsh-sandbox confine [policy options] [--] ARGV...\n"
        "Prints, as one JSON object, the argv to spawn instead of ARGV so that it runs confined,\n"
        "with the enforcement, the denial dialect and the runner-failure rules of the selected\n"
        "backend.  Nothing is run.  Exit status: 0; 125 if no backend can confine (nothing to\n"
        "spawn); 2 for a usage error (including a danger-full-access policy, which needs no\n"
        "confinement, and an argument or root that is not valid UTF-8, which JSON cannot carry).\n\n";

/* Fails closed: NULL when any element cannot be added, never an array with one missing. */
static json_t *string_array(char *const *strings)
{
        json_t *array = json_array();

        for (; array && strings && *strings; strings++)
                if (json_array_append_new(array, json_string(*strings)) < 0) {
                        json_decref(array);
                        return NULL;
                }
        return array;
}

/* json_object_set_new() that remembers a failure (a NULL value included) in `*failed`. */
static void set_member(json_t *object, const char *key, json_t *value, bool *failed)
{
        if (!value || json_object_set_new(object, key, value) < 0)
                *failed = true;
}

static json_t *rule_object(const dsh_runner_failure_rule *rule)
{
        json_t *object = json_object();
        bool failed = !object;

        if (failed)
                return NULL;
        if (rule->allowed_exit_code_count > 0) {
                json_t *codes = json_array();

                for (size_t i = 0; codes && i < rule->allowed_exit_code_count; i++)
                        if (json_array_append_new(codes, json_integer(rule->allowed_exit_codes[i])) < 0)
                                failed = true;
                set_member(object, "allowedExitCodes", codes, &failed);
        }
        set_member(object, "fatalSignatures", string_array(rule->fatal_signatures), &failed);
        if (dsh_strv_length(rule->informational_lines) > 0)
                set_member(object, "informationalLines", string_array(rule->informational_lines), &failed);
        if (failed) {
                json_decref(object);
                return NULL;
        }
        return object;
}

/* The facts as the JSON object of docs/cli.md; NULL when any part of it cannot be built. */
static json_t *confined_object(const dsh_confined_argv *confined)
{
        json_t *object = json_object();
        json_t *rules = json_array();
        bool failed = !object || !rules;

        if (failed) {
                json_decref(object);
                json_decref(rules);
                return NULL;
        }
        set_member(object, "argv", string_array(confined->argv), &failed);
        set_member(object, "enforcement", json_string(dsh_enforcement_name(confined->enforcement)), &failed);
        set_member(object, "denialSignatures", string_array(confined->denial_signatures), &failed);
        for (size_t i = 0; i < confined->runner_failure_rule_count; i++) {
                json_t *rule = rule_object(&confined->runner_failure_rules[i]);

                if (!rule || json_array_append_new(rules, rule) < 0)
                        failed = true;
        }
        set_member(object, "runnerFailureRules", rules, &failed);
        if (confined->backend)
                set_member(object, "backend", json_string(confined->backend), &failed);
        if (confined->partial_reasons)
                set_member(object, "partialReasons", string_array(confined->partial_reasons), &failed);
        if (failed) {
                json_decref(object);
                return NULL;
        }
        return object;
}

/* What the caller gave: the command's words and the policy's roots, named as the caller knows them. */
static int check_policy_text(const dsh_policy *policy)
{
        int result = cli_require_utf8(policy->workspace_root, "confine: the workspace root");

        for (size_t i = 0; result == 0 && policy->additional_writable_roots && policy->additional_writable_roots[i];
             i++)
                result = cli_require_utf8(policy->additional_writable_roots[i], "confine: additional writable root %zu",
                                          i);
        return result;
}

/*
 * And what the backend added (the runner's path, protected paths beneath a
 * root, a configured runner command): the last check before printing, so
 * that no string of the object can go missing.
 */
static int check_confined_text(const dsh_confined_argv *confined)
{
        int result = 0;

        for (size_t i = 0; result == 0 && confined->argv[i]; i++)
                result = cli_require_utf8(confined->argv[i], "confine: element %zu of the confined argv", i);
        for (size_t i = 0; result == 0 && confined->denial_signatures && confined->denial_signatures[i]; i++)
                result = cli_require_utf8(confined->denial_signatures[i], "confine: denial signature %zu", i);
        for (size_t i = 0; result == 0 && i < confined->runner_failure_rule_count; i++) {
                const dsh_runner_failure_rule *rule = &confined->runner_failure_rules[i];

                for (size_t j = 0; result == 0 && rule->fatal_signatures && rule->fatal_signatures[j]; j++)
                        result = cli_require_utf8(rule->fatal_signatures[j], "confine: fatal signature %zu", j);
                for (size_t j = 0; result == 0 && rule->informational_lines && rule->informational_lines[j]; j++)
                        result = cli_require_utf8(rule->informational_lines[j], "confine: informational line %zu", j);
        }
        return result;
}

static int confine_and_print(const cli_policy_options *options, const dsh_config *config, const dsh_policy *policy,
                             char **command)
{
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = NULL;
        json_t *object;
        int result;

        if (!dsh_mode_is_confined(policy->mode))
                return cli_usage_error("confine: mode \"%s\" needs no confinement; spawn the argv as it is",
                                       dsh_mode_name(policy->mode));
        result = check_policy_text(policy);
        if (result != 0)
                return result;
        result = cli_provider_create(options, config, &provider);
        if (result != 0)
                return result;
        result = dsh_provider_confine(provider, command, policy, &confined, &error);
        dsh_provider_free(provider);
        if (result < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                dsh_error_clear(&error);
                return result;
        }
        result = check_confined_text(&confined);
        if (result != 0) {
                dsh_confined_argv_clear(&confined);
                return result;
        }
        object = confined_object(&confined);
        dsh_confined_argv_clear(&confined);
        if (!object || json_dumpf(object, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER) < 0) {
                json_decref(object);
                cli_print_message("cannot print the confined argv");
                return CLI_EXIT_SANDBOX;
        }
        json_decref(object);
        fputc('\n', stdout);
        return fflush(stdout) == 0 ? CLI_EXIT_SUCCESS : CLI_EXIT_FAILURE;
}

int cli_command_confine(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_config config = { 0 };
        char **command = NULL;
        int result;

        result = cli_parse_policy_and_command(argc, argv, confine_help, &options, &command);
        /* First, before any config, session or probe: a command that cannot be printed is not confined. */
        for (size_t i = 0; result == 0 && command[i]; i++)
                result = cli_require_utf8(command[i], "confine: argv[%zu]", i);
        if (result == 0)
                result = cli_policy_resolve(&options, &config, &policy);
        /* danger-full-access is refused below, with a reason of its own. */
        if (result == 0 && dsh_mode_is_confined(policy.mode))
                cli_policy_options_warn_without_effect(&options, policy.mode);
        if (result == 0)
                result = confine_and_print(&options, &config, &policy, command);
        dsh_policy_clear(&policy);
        dsh_config_clear(&config);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
