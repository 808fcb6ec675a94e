/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox policy resolve|context`: the policy service's answers, as
 * every enforcing tool receives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "runtime-cli.h"

static const char policy_help[] =
        "Usage: dsh-sandbox policy COMMAND ...\n\n"
        "Commands:\n"
        "  resolve [policy options] [--json]   print the resolved execution policy\n"
        "  context --session ID                print the runtime-context text when the session's\n"
        "                                      policy changed since it was last told (and log it)\n";

static const char resolve_help[] =
        "Usage: dsh-sandbox policy resolve [policy options] [--json]\n"
        "Prints the execution policy a confined call would get: mode = --mode, else the session's\n"
        "override, else the config's mode; root = --root, else the session's cwd, else the config's\n"
        "workspaceRoot, else the current directory; network = the network options, else the\n"
        "config's network.  --json prints\n"
        "{\"mode\":...,\"workspaceRoot\":...,\"additionalWritableRoots\":[...],\"sessionId\":...,\n"
        "\"network\":...} (optional keys omitted when empty, network when on).  Exit status: 0;\n"
        "125 if no policy can be resolved; 2 for a usage error (with --json, also a root that is\n"
        "not valid UTF-8, which JSON cannot carry).\n\n"
        "      --json             print one JSON object instead of text\n";

static const char context_help[] =
        "Usage: dsh-sandbox policy context --session ID [--config FILE]\n"
        "Prints the session's runtime-context line (what the model is told about the file policy)\n"
        "when it differs from the last one logged in the session, and logs it; prints nothing when\n"
        "unchanged.  Exit status: 0; 1 on failure; 2 for a usage error.\n\n"
        "  -s, --session ID       the session (required)\n"
        "  -c, --config FILE      config file (see policy resolve --help)\n";

/* The roots are checked first, to be named as the caller knows them; the codec checks the whole object again. */
static int print_policy_json(const dsh_policy *policy)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result = cli_require_utf8(policy->workspace_root, "policy resolve: the workspace root");

        for (size_t i = 0; result == 0 && policy->additional_writable_roots && policy->additional_writable_roots[i];
             i++)
                result = cli_require_utf8(policy->additional_writable_roots[i],
                                          "policy resolve: additional writable root %zu", i);
        if (result != 0)
                return result;
        result = dsh_json_encode_policy(policy, &text, &error);
        return cli_print_json(result, text, &error, CLI_EXIT_FAILURE);
}

static void print_policy_text(const dsh_policy *policy)
{
        printf("mode: %s\n", dsh_mode_name(policy->mode));
        printf("workspaceRoot: %s\n", policy->workspace_root);
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                printf("additionalWritableRoot: %s\n", *root);
        if (policy->session_id)
                printf("sessionId: %s\n", policy->session_id);
        for (char **entry = policy->masked_paths; entry && *entry; entry++)
                printf("maskedPath: %s\n", *entry);
        for (char **name = policy->allowed_environment; name && *name; name++)
                printf("allowEnvironment: %s\n", *name);
        /* Said only when it is not on, as the JSON does: today's output is unchanged for today's policies. */
        if (policy->network.mode == DSH_NETWORK_ON)
                return;
        printf("network: %s\n", dsh_network_mode_name(policy->network.mode));
        for (char **host = policy->network.allow_hosts; host && *host; host++)
                printf("allowHost: %s\n", *host);
        for (size_t i = 0; i < policy->network.allow_local_port_count; i++)
                printf("allowLocalPort: %u\n", policy->network.allow_local_ports[i]);
        if (policy->network.dns_upstream)
                printf("dnsUpstream: %s\n", policy->network.dns_upstream);
}

static int command_resolve(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        bool json = false;
        const cli_command_line line = {
                .name = "policy resolve",
                .help = resolve_help,
                .policy_options = CLI_POLICY_ALL,
                .own_options = cli_json_option,
                .own_option = cli_store_json_option,
                .data = &json,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result == 0)
                result = cli_policy_resolve(&options, &runtime, &policy);
        if (result == 0)
                cli_policy_options_warn_without_effect(&options, policy.mode);
        if (result == 0 && json)
                result = print_policy_json(&policy);
        else if (result == 0)
                print_policy_text(&policy);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}

static int command_context(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_runtime_options runtime_options;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_session *session = NULL;
        char *text = NULL;
        const cli_command_line line = {
                .name = "policy context",
                .help = context_help,
                /* The context describes the standing policy: a per-call mode, root or backend has no place in it. */
                .policy_options = CLI_POLICY_SESSION | CLI_POLICY_CONFIG,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == CLI_PARSE_DONE) {
                cli_policy_options_clear(&options);
                return CLI_EXIT_SUCCESS;
        }
        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result == 0 && !options.session)
                result = cli_usage_error("policy context requires --session ID");
        cli_policy_runtime_options(&options, &runtime_options);
        if (result == 0)
                result = cli_runtime_new(&runtime_options, CLI_EXIT_FAILURE, &runtime);
        if (result == 0)
                result = cli_session_open(runtime, options.session, CLI_EXIT_FAILURE, &session);
        if (result == 0 && dsh_policy_service_context(dsh_runtime_policy_service(runtime), session, &text, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0 && text)
                printf("%s\n", text);
        free(text);
        dsh_session_free(session);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return result;
}

int cli_command_policy(int argc, char **argv)
{
        const cli_command_line line = { .name = "policy", .help = policy_help };
        int first = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &first);

        if (result != 0)
                return cli_command_status(result);
        if (first >= argc)
                return cli_usage_error("policy requires a command: resolve or context");
        if (strcmp(argv[first], "resolve") == 0)
                return command_resolve(argc - first, argv + first);
        if (strcmp(argv[first], "context") == 0)
                return command_context(argc - first, argv + first);
        return cli_usage_error("unknown policy command \"%s\"", argv[first]);
}
