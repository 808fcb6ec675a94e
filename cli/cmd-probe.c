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

#include <jansson.h>

#include "cli.h"
#include "options.h"
#include "policy-options.h"

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

static void print_text(const dsh_probe_report *report)
{
        const char *version = bwrap_version(report);
        char abi[64];

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
        }
        printf("%-15s %s\n", "bwrap version", version ? version : "unknown");
        printf("%-15s %s\n", "landlock ABI", abi_text(report->landlock_abi, abi));
        print_scopes(report);
        printf("%-15s %s\n", "auto selects", report->selected ? report->selected : "nothing (no backend is usable)");
}

static json_t *string_array(char *const *strings)
{
        json_t *array = json_array();

        for (char *const *string = strings; array && string && *string; string++)
                json_array_append_new(array, json_string(*string));
        return array;
}

/* A runner path or a reason quotes host paths, which are bytes: check them before building the JSON. */
static int check_report_text(const dsh_probe_report *report)
{
        int result = 0;

        for (size_t i = 0; result == 0 && i < report->backend_count; i++) {
                const dsh_backend_status *status = &report->backends[i];

                if (status->reason)
                        result = cli_require_utf8(status->reason, "probe: backend %s's reason", status->name);
                if (result == 0 && status->version)
                        result = cli_require_utf8(status->version, "probe: backend %s's version", status->name);
                if (result == 0 && status->runner_path)
                        result = cli_require_utf8(status->runner_path, "probe: backend %s's runner path",
                                                  status->name);
        }
        return result;
}

/* json_object_set_new() that remembers a failure (a NULL value included) in `*failed`. */
static void set_member(json_t *object, const char *key, json_t *value, bool *failed)
{
        if (!object || !value || json_object_set_new(object, key, value) < 0)
                *failed = true;
}

/* The report as one JSON object; NULL when any part of it cannot be built (never one with a member missing). */
static json_t *report_object(const dsh_probe_report *report)
{
        json_t *object = json_object(), *backends = json_array();
        const char *version = bwrap_version(report);
        bool failed = false;

        if (!object || !backends) {
                json_decref(object);
                json_decref(backends);
                return NULL;
        }
        for (size_t i = 0; i < report->backend_count; i++) {
                const dsh_backend_status *status = &report->backends[i];
                json_t *entry = json_object();

                set_member(entry, "name", json_string(status->name), &failed);
                set_member(entry, "usable", json_boolean(status->usable), &failed);
                if (status->usable)
                        set_member(entry, "enforcement", json_string(dsh_enforcement_name(status->enforcement)),
                                   &failed);
                if (status->reason)
                        set_member(entry, "reason", json_string(status->reason), &failed);
                if (status->version)
                        set_member(entry, "version", json_string(status->version), &failed);
                if (status->runner_path)
                        set_member(entry, "runner", json_string(status->runner_path), &failed);
                if (status->usable && status->partial_reasons)
                        set_member(entry, "partialReasons", string_array(status->partial_reasons), &failed);
                if (!entry || json_array_append_new(backends, entry) < 0)
                        failed = true;
        }
        set_member(object, "backends", backends, &failed);
        if (version)
                set_member(object, "bwrapVersion", json_string(version), &failed);
        set_member(object, "landlockAbi", json_integer(report->landlock_abi), &failed);
        set_member(object, "landlockScopes", string_array(report->landlock_scopes), &failed);
        set_member(object, "landlockScopesMissing", string_array(report->landlock_scopes_missing), &failed);
        set_member(object, "selected", report->selected ? json_string(report->selected) : json_null(), &failed);
        if (failed) {
                json_decref(object);
                return NULL;
        }
        return object;
}

/* `probe` takes every policy option (a shared command line), but only --config and --backend change the report. */
static int parse_probe_arguments(int argc, char **argv, cli_policy_options *options, bool *json_output)
{
        const cli_command_line line = {
                .name = "probe",
                .help = probe_help,
                .policy_options = CLI_POLICY_ALL,
                .own_options = cli_json_option,
                .own_option = cli_store_json_option,
                .data = json_output,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result == 0)
                cli_policy_options_warn_unused(options, "probe");
        return result;
}

static int probe_and_print(const cli_policy_options *options, const dsh_config *config, bool json_output)
{
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = NULL;
        int result = cli_provider_create(options, config, &provider);

        if (result != 0)
                return result;
        result = dsh_provider_probe(provider, &report, &error);
        dsh_provider_free(provider);
        if (result < 0) {
                cli_print_error(&error);
                dsh_error_clear(&error);
                return CLI_EXIT_SANDBOX;
        }
        result = report.selected ? CLI_EXIT_SUCCESS : CLI_EXIT_SANDBOX;
        if (json_output) {
                int checked = check_report_text(&report);
                json_t *object = checked == 0 ? report_object(&report) : NULL;

                if (checked != 0)
                        result = checked;
                else if (!object || json_dumpf(object, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER) < 0)
                        result = (cli_print_message("cannot print the probe report"), CLI_EXIT_FAILURE);
                else
                        fputc('\n', stdout);
                json_decref(object);
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
        dsh_config config = { 0 };
        bool json_output = false;
        int result;

        result = parse_probe_arguments(argc, argv, &options, &json_output);
        if (result == 0)
                result = cli_policy_resolve(&options, &config, &policy);
        if (result == 0)
                result = probe_and_print(&options, &config, json_output);
        dsh_policy_clear(&policy);
        dsh_config_clear(&config);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
