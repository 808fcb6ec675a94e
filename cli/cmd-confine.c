/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox confine [policy] -- ARGV...`: the confine seam on the command
 * line.  Prints one JSON object, the confined argv and the facts a harness
 * needs to read its outcome:
 *   {"argv":[...],"enforcement":"full"|"partial","denialSignatures":[...],
 *    "runnerFailureRules":[{"allowedExitCodes":[...],"fatalSignatures":[...],
 *    "informationalLines":[...]}],"backend":"..."}
 * (allowedExitCodes and informationalLines omitted when empty).  Nothing is
 * run.  Errors: one stderr line, exit 125 for the sandbox, 2 for usage.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "policy-options.h"

static const char confine_help[] =
        "Usage: dsh-sandbox confine [policy options] -- ARGV...\n"
        "Prints, as one JSON object, the argv to spawn instead of ARGV so that it runs confined,\n"
        "with the enforcement, the denial dialect and the runner-failure rules of the selected\n"
        "backend.  Nothing is run.  Exit status: 0; 125 if no backend can confine (nothing to\n"
        "spawn); 2 for a usage error (including a danger-full-access policy, which needs no\n"
        "confinement).\n\n";

static json_t *string_array(char *const *strings)
{
        json_t *array = json_array();

        for (; array && strings && *strings; strings++)
                json_array_append_new(array, json_string(*strings));
        return array;
}

static json_t *rule_object(const dsh_runner_failure_rule *rule)
{
        json_t *object = json_object();

        if (!object)
                return NULL;
        if (rule->allowed_exit_code_count > 0) {
                json_t *codes = json_array();

                for (size_t i = 0; codes && i < rule->allowed_exit_code_count; i++)
                        json_array_append_new(codes, json_integer(rule->allowed_exit_codes[i]));
                json_object_set_new(object, "allowedExitCodes", codes);
        }
        json_object_set_new(object, "fatalSignatures", string_array(rule->fatal_signatures));
        if (dsh_strv_length(rule->informational_lines) > 0)
                json_object_set_new(object, "informationalLines", string_array(rule->informational_lines));
        return object;
}

/* The facts as the JSON object of CLI.md; NULL when out of memory. */
static json_t *confined_object(const dsh_confined_argv *confined)
{
        json_t *object = json_object();
        json_t *rules = json_array();

        if (!object || !rules) {
                json_decref(object);
                json_decref(rules);
                return NULL;
        }
        json_object_set_new(object, "argv", string_array(confined->argv));
        json_object_set_new(object, "enforcement", json_string(dsh_enforcement_name(confined->enforcement)));
        json_object_set_new(object, "denialSignatures", string_array(confined->denial_signatures));
        for (size_t i = 0; i < confined->runner_failure_rule_count; i++)
                json_array_append_new(rules, rule_object(&confined->runner_failure_rules[i]));
        json_object_set_new(object, "runnerFailureRules", rules);
        if (confined->backend)
                json_object_set_new(object, "backend", json_string(confined->backend));
        if (confined->partial_reasons)
                json_object_set_new(object, "partialReasons", string_array(confined->partial_reasons));
        return object;
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
        if (result == 0)
                result = cli_policy_resolve(&options, &config, &policy);
        if (result == 0)
                result = confine_and_print(&options, &config, &policy, command);
        dsh_policy_clear(&policy);
        dsh_config_clear(&config);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
