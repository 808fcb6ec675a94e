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

#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "remote-cli.h"

static const char confine_help[] =
        "Usage: dsh-sandbox confine [policy options] [--] ARGV...\n"
        "Prints, as one JSON object, the argv to spawn instead of ARGV so that it runs confined,\n"
        "with the enforcement, the denial dialect and the runner-failure rules of the selected\n"
        "backend.  Nothing is run.  Exit status: 0; 125 if no backend can confine (nothing to\n"
        "spawn); 2 for a usage error (including a danger-full-access policy, which needs no\n"
        "confinement, and an argument or root that is not valid UTF-8, which JSON cannot carry).\n\n";

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

static int confine_and_print(dsh_runtime *runtime, const dsh_policy *policy, char **command)
{
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result;

        if (!dsh_mode_is_confined(policy->mode))
                return cli_usage_error("confine: mode \"%s\" needs no confinement; spawn the argv as it is",
                                       dsh_mode_name(policy->mode));
        result = check_policy_text(policy);
        if (result != 0)
                return result;
        result = dsh_provider_confine(dsh_runtime_provider(runtime), command, policy, &confined, &error);
        if (result < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                dsh_error_clear(&error);
                return result;
        }
        /*
         * The codec checks every string, what the backend added too (the
         * runner's path, protected paths beneath a root, a configured runner
         * command): no string of the object can go missing.
         */
        result = dsh_json_encode_confined_argv(&confined, &text, &error);
        dsh_confined_argv_clear(&confined);
        return cli_print_json(result, text, &error, CLI_EXIT_SANDBOX);
}

int cli_command_confine(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        char **command = NULL;
        int result;

        result = cli_parse_policy_and_command(argc, argv, confine_help, &options, &command);
        /* First, before any config, session or probe: a command that cannot be printed is not confined. */
        for (size_t i = 0; result == 0 && command[i]; i++)
                result = cli_require_utf8(command[i], "confine: argv[%zu]", i);
        if (result == 0 && options.remote) {
                result = cli_remote_confine(&options, command);
                cli_policy_options_clear(&options);
                return result;
        }
        if (result == 0)
                result = cli_policy_resolve(&options, &runtime, &policy);
        /* danger-full-access is refused below, with a reason of its own. */
        if (result == 0 && dsh_mode_is_confined(policy.mode))
                cli_policy_options_warn_without_effect(&options, policy.mode);
        if (result == 0)
                result = confine_and_print(runtime, &policy, command);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}
