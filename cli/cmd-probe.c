/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox probe [--json] [--config FILE] [--backend NAME]`: every
 * backend, probed functionally (a confined `true` really runs): usable or
 * not and why not, the enforcement it gives, the bwrap version, the kernel's
 * Landlock ABI and scopes, and which one `auto` (the configured chain) selects.  The
 * probe refreshes the cached verdict.  Exit 0 when something is selected,
 * 125 when no backend is usable, 2 for a usage error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "remote-cli.h"

static const char probe_help[] =
        "Usage: dsh-sandbox probe [--json] [--config FILE] [--backend NAME]\n"
        "Probes every sandbox backend on this host by running a confined `true` under each, and\n"
        "reports whether it is usable (and why not), the enforcement it gives, the bwrap version,\n"
        "the kernel's Landlock ABI, the Landlock scopes in force (a confined command cannot signal,\n"
        "or connect to the abstract unix sockets of, processes outside its sandbox) and those the\n"
        "ABI cannot give, and which backend `auto` selects (the config's `backends` order, or\n"
        "`runnerCommand` when configured; --backend NAME reports a sole candidate).\n"
        "Exit status: 0 when a backend is selected; 125 when none is usable; 2 for a usage error\n"
        "(with --json, also a path in the report that is not valid UTF-8, which JSON cannot carry).\n\n"
        "      --json             print one JSON object instead of text\n";

static const char *abi_text(int abi, char buffer[64])
{
        if (abi > 0)
                snprintf(buffer, 64, "%d", abi);
        else
                snprintf(buffer, 64, "unavailable (%s)", strerror(-abi));
        return buffer;
}

static const char *bwrap_version(const dsh_probe_report *report)
{
        for (size_t i = 0; i < report->backend_count; i++)
                if (strcmp(report->backends[i].name, "bwrap") == 0)
                        return report->backends[i].version;
        return NULL;
}

/* "a, b" into `buffer`; "none" for an empty list. */
static const char *list_text(char *const *names, char *buffer, size_t size)
{
        size_t used = 0;

        buffer[0] = '\0';
        for (char *const *name = names; name && *name && used < size; name++)
                used += (size_t) snprintf(buffer + used, size - used, "%s%s", name == names ? "" : ", ", *name);
        return buffer[0] ? buffer : "none";
}

/* The scopes in force, and what the ABI could not scope: a fact beside the enforcement, not part of it. */
static void print_scopes(const dsh_probe_report *report)
{
        char in_force_buffer[256], missing_buffer[256];
        const char *in_force = list_text(report->landlock_scopes, in_force_buffer, sizeof(in_force_buffer));

        if (!report->landlock_scopes_missing)
                printf("%-15s %s\n", "landlock scopes", in_force);
        else
                printf("%-15s %s (this kernel's Landlock ABI cannot scope: %s)\n", "landlock scopes", in_force,
                       list_text(report->landlock_scopes_missing, missing_buffer, sizeof(missing_buffer)));
}

/* One line per list: what every confined call holds back (docs/secrets.md). */
static void print_secrets(const dsh_probe_report *report)
{
        char buffer[2048];

        printf("%-15s %s%s\n", "masked paths", list_text(report->secrets_masked_paths, buffer, sizeof(buffer)),
               report->secrets_require_masks ? " (required: a mask not held refuses the call)" : "");
        printf("%-15s %s\n", "env denied", list_text(report->secrets_environment_deny, buffer, sizeof(buffer)));
        printf("%-15s %s\n", "env allowed", list_text(report->secrets_environment_allow, buffer, sizeof(buffer)));
}

static void print_text(const dsh_probe_report *report)
{
        const char *version = bwrap_version(report);
        char abi[64], network_buffer[64];

        for (size_t i = 0; i < report->backend_count; i++) {
                const dsh_backend_status *status = &report->backends[i];

                if (status->usable)
                        printf("%-15s usable, %s enforcement%s%s%s\n", status->name,
                               dsh_enforcement_name(status->enforcement), status->runner_path ? " (" : "",
                               status->runner_path ? status->runner_path : "", status->runner_path ? ")" : "");
                else
                        printf("%-15s not usable: %s\n", status->name, status->reason ? status->reason : "unknown");
                for (char **reason = status->partial_reasons; status->usable && reason && *reason; reason++)
                        printf("%-15s   partial: %s\n", "", *reason);
                for (char **note = status->notes; status->usable && note && *note; note++)
                        printf("%-15s   note: %s\n", "", *note);
                if (status->usable && status->network)
                        printf("%-15s   network: %s\n", "",
                               list_text(status->network, network_buffer, sizeof(network_buffer)));
        }
        printf("%-15s %s\n", "bwrap version", version ? version : "unknown");
        printf("%-15s %s\n", "landlock ABI", abi_text(report->landlock_abi, abi));
        print_scopes(report);
        printf("%-15s %s\n", "auto selects", report->selected ? report->selected : "nothing (no backend is usable)");
        print_secrets(report);
}

/* `probe` takes the shared options that change its report (--config, --backend, --remote), and no others:
 * a mode, a root or a session would change nothing, so they are usage errors rather than silence. */
static int parse_probe_arguments(int argc, char **argv, cli_policy_options *options, bool *json_output)
{
        const cli_command_line line = {
                .name = "probe",
                .help = probe_help,
                .policy_options = CLI_POLICY_CONFIG | CLI_POLICY_BACKEND | CLI_POLICY_REMOTE,
                .own_options = cli_json_option,
                .own_option = cli_store_json_option,
                .data = json_output,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        return result;
}

static int probe_and_print(dsh_runtime *runtime, bool json_output)
{
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_provider_probe(dsh_runtime_provider(runtime), &report, &error);

        if (result < 0) {
                cli_print_error(&error);
                dsh_error_clear(&error);
                return CLI_EXIT_SANDBOX;
        }
        result = report.selected ? CLI_EXIT_SUCCESS : CLI_EXIT_SANDBOX;
        if (json_output) {
                char *text = NULL;
                int encoded = dsh_json_encode_probe_report(&report, &text, &error);
                int printed = cli_print_json(encoded, text, &error, CLI_EXIT_FAILURE);

                if (printed != CLI_EXIT_SUCCESS)
                        result = printed;
        } else {
                print_text(&report);
        }
        dsh_probe_report_clear(&report);
        return result;
}

int cli_command_probe(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        bool json_output = false;
        int result;

        result = parse_probe_arguments(argc, argv, &options, &json_output);
        if (result == 0 && options.remote) {
                result = cli_remote_probe(&options);
                cli_policy_options_clear(&options);
                return result;
        }
        if (result == 0)
                result = cli_policy_resolve(&options, &runtime, &policy);
        if (result == 0)
                result = probe_and_print(runtime, json_output);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}
