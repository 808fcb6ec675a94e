/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox why [policy options] --op write|read|metadata|connect TARGET
 * [--json]`: would the resolved policy allow it, and if not, the rule and
 * the narrowest grant (dsh_why(), docs/denials.md).  Nothing is tried:
 * the answer is the decision the file guard and the network policy take,
 * over the same prepared plan a confined call gets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "runtime-cli.h"

static const char why_help[] =
        "Usage: dsh-sandbox why [policy options] --op write|read|metadata|connect TARGET [--json]\n"
        "Says whether the policy a confined call would get (the options as for policy resolve)\n"
        "allows the operation, without trying it: TARGET is a path for write, read and metadata\n"
        "(absolute, or relative to the workspace root; one that does not exist yet is judged as\n"
        "the entry it would create), and HOST:PORT, IPV4:PORT, [IPV6]:PORT or an absolute unix\n"
        "socket path for connect.  Prints one line: \"allowed: ...\", or \"denied: ...\" with the\n"
        "rule and the grant that would allow it (docs/denials.md).  --json prints the denial\n"
        "record, or {\"allowed\":true,\"op\":...,\"target\":...}.  Exit status: 0 allowed;\n"
        "1 denied; 2 for a usage error or a target that cannot be judged; 125 if no policy can be\n"
        "resolved or prepared.\n\n"
        "      --op OP            write, read, metadata or connect (required)\n"
        "      --json             print one JSON object instead of text\n";

enum { OPTION_OP = CLI_OPTION_OWN };

static const struct option why_options[] = {
        { "op", required_argument, NULL, OPTION_OP },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

struct why_options {
        const char *op;
        const char *target;
        size_t targets;
        bool json;
};

static int store_why_option(int key, const char *value, void *data)
{
        struct why_options *options = data;

        switch (key) {
        case CLI_OPTION_OPERAND:
                options->target = value;
                options->targets++;
                return 0;
        case CLI_OPTION_JSON:
                options->json = true;
                return 0;
        case OPTION_OP:
                options->op = value;
                return 0;
        default:
                return cli_usage_error("why: unknown option");
        }
}

static int check_why_options(const struct why_options *options, dsh_denial_op *op)
{
        if (!options->op)
                return cli_usage_error("why requires --op write, read, metadata or connect");
        if (dsh_denial_op_parse(options->op, op) < 0 || *op == DSH_DENIAL_DNS || *op == DSH_DENIAL_HTTP)
                return cli_usage_error("why: --op expects write, read, metadata or connect, not \"%s\"",
                                       options->op);
        if (options->targets != 1)
                return cli_usage_error("why requires exactly one TARGET (a path, HOST:PORT or a socket path)");
        if (!options->target[0])
                return cli_usage_error("why: the target is empty");
        return 0;
}

/* `text` as a JSON string's body (UTF-8 checked first): quotes, backslashes and control bytes escaped. */
static void print_json_text(const char *text)
{
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++) {
                if (*byte == '"' || *byte == '\\')
                        printf("\\%c", *byte);
                else if (*byte < 0x20)
                        printf("\\u%04x", *byte);
                else
                        putchar(*byte);
        }
}

static int print_allowed(dsh_denial_op op, const char *target, bool json)
{
        if (!json) {
                printf("allowed: %s %s\n", dsh_denial_op_name(op), target);
                return CLI_EXIT_SUCCESS;
        }
        if (cli_require_utf8(target, "why: the target") != 0)
                return CLI_EXIT_USAGE;
        printf("{\"allowed\":true,\"op\":\"%s\",\"target\":\"", dsh_denial_op_name(op));
        print_json_text(target);
        printf("\"}\n");
        return CLI_EXIT_SUCCESS;
}

static int print_denied(const dsh_denial *denial, bool json)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result;

        if (json) {
                result = dsh_json_encode_denial(denial, &text, &error);
                result = cli_print_json(result, text, &error, CLI_EXIT_SANDBOX);
                return result == CLI_EXIT_SUCCESS ? CLI_EXIT_FAILURE : result;
        }
        text = dsh_denial_describe(denial);
        if (!text)
                return cli_usage_error("out of memory");
        printf("denied: %s\n", text);
        free(text);
        return CLI_EXIT_FAILURE;
}

int cli_command_why(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        struct why_options why = { NULL, NULL, 0, false };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_denial_op op = DSH_DENIAL_WRITE;
        const cli_command_line line = {
                .name = "why",
                .help = why_help,
                .policy_options = CLI_POLICY_ALL,
                .own_options = why_options,
                .own_option = store_why_option,
                .data = &why,
                .operands_anywhere = true,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = check_why_options(&why, &op);
        if (result == 0)
                result = cli_policy_resolve(&options, &runtime, &policy);
        if (result == 0) {
                result = dsh_why(runtime, &policy, op, why.target, &denial, &error);
                if (result < 0)
                        result = cli_library_error(&error, CLI_EXIT_SANDBOX);
                else if (result == 0)
                        result = print_allowed(op, why.target, why.json);
                else
                        result = print_denied(&denial, why.json);
        }
        dsh_denial_clear(&denial);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}
