/* SPDX-License-Identifier: MIT */
/*
 * What `dsh-sandbox mcp` tells the model about the policy in force (the
 * initialize instructions and the bash tool's description): the mode, the
 * workspace root, the extra writable roots and what /tmp is.  A model that
 * is not told where it may write guesses, and a guess that meets a denial
 * reads as a bug to work around.
 *
 * The facts come from the runtime, never from an assumption: the policy as
 * service_resolve() resolves it for a call, and the backend as the
 * provider's selection confines a call under it (dsh_provider_confine: the
 * same probe verdict every call uses).  Finding no backend here is the
 * server's refusal to serve, said to the client (mcp.c), not a policy text
 * with a guess in it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "service-results.h"

/*
 * What /tmp is for the command, by backend and mode (docs/backends.md, "the
 * temporary area").  The backends make it so; this only says it.
 */
static const char *temp_area_text(const char *backend, dsh_mode mode)
{
        bool writable_mode = mode == DSH_MODE_WORKSPACE_WRITE;

        if (mode == DSH_MODE_DANGER_FULL_ACCESS)
                return "/tmp is the host's /tmp, writable (nothing is confined)";
        if (strcmp(backend, "bwrap") == 0)
                return writable_mode ? "/tmp is private to this session and kept across its calls (not the host's "
                                       "/tmp)"
                                     : "/tmp is an empty private scratch area for each call, gone when the call "
                                       "ends (not the host's /tmp)";
        if (strcmp(backend, "landlock") == 0)
                return writable_mode ? "/tmp is the host's /tmp, writable" : "/tmp is the host's /tmp, not writable";
        return "/tmp is whatever the operator's runner command makes it";
}

/* The backend the runtime's selection confines a call under `policy` with: a new string, or NULL with `error` set. */
static char *selected_backend(service_context *context, const service_policy_fields *fields, const dsh_policy *policy,
                              dsh_error *error)
{
        char *argv[] = { (char *) "true", NULL };
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_runtime *runtime = NULL;
        dsh_policy file_effects;
        char *backend = NULL;
        int result;

        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS && policy->network.mode != DSH_NETWORK_ON) {
                /* Every call would be refused (nothing confines that mode, so no network policy is held): said now. */
                dsh_policy prepared;

                if (dsh_policy_copy(&prepared, policy) < 0) {
                        service_error_set(error, ENOMEM, "out of memory");
                        return NULL;
                }
                result = dsh_policy_prepare(&prepared, error);
                dsh_policy_clear(&prepared);
                if (result < 0)
                        return NULL;
        }
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS)
                return strdup("none");
        /*
         * The backend is asked of the file effects alone: an argv the caller
         * runs itself cannot hold the allow-list (its proxy lives in the
         * process that spawns the command), so confine() refuses it, while
         * every call of this server is a spawn, which holds it or refuses it
         * with its own reason.  A shallow copy: confine() copies what it keeps.
         */
        file_effects = *policy;
        file_effects.network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        result = service_runtime_acquire(context, fields->backend, &runtime, error);
        if (result == 0)
                result = dsh_provider_confine(dsh_runtime_provider(runtime), argv, &file_effects, &facts, error);
        if (runtime)
                service_runtime_release(context, runtime);
        if (result == 0 && !(backend = strdup(facts.backend ? facts.backend : "unknown")))
                service_error_set(error, ENOMEM, "out of memory");
        dsh_confined_argv_clear(&facts);
        return backend;
}

static void write_quoted_list(FILE *out, char *const *paths)
{
        if (!paths || !*paths) {
                fputs("none", out);
                return;
        }
        for (char *const *path = paths; *path; path++)
                fprintf(out, "%s\"%s\"", path == paths ? "" : ", ", *path);
}

/* Said only when the network is not on, which is what a model assumes. */
static void write_network(FILE *out, const dsh_network_policy *network)
{
        if (network->mode == DSH_NETWORK_OFF)
                fputs(" The network is off: nothing outside the sandbox is reached, the host's loopback included (a "
                      "server a command starts itself is reached)",
                      out);
        if (network->mode == DSH_NETWORK_ALLOW_LIST) {
                fputs(" The network is an allow-list: only these hosts are reached, through a proxy the proxy "
                      "variables name, and only their names resolve: ",
                      out);
                write_quoted_list(out, network->allow_hosts);
        }
        if (network->mode != DSH_NETWORK_ON && network->allow_local_port_count > 0) {
                fputs("; host loopback ports reached: ", out);
                for (size_t i = 0; i < network->allow_local_port_count; i++)
                        fprintf(out, "%s%u", i == 0 ? "" : ", ", network->allow_local_ports[i]);
        }
        if (network->mode != DSH_NETWORK_ON)
                fputs(".", out);
}

int mcp_describe_policy(service_context *context, const service_policy_fields *fields, char **text_out,
                        dsh_error *error)
{
        dsh_policy policy = DSH_POLICY_INIT;
        char *backend = NULL, *text = NULL;
        size_t length = 0;
        FILE *out = NULL;
        int result = service_resolve(context, fields, &policy, error);

        *text_out = NULL;
        if (result == 0 && !(backend = selected_backend(context, fields, &policy, error)))
                result = error->code != DSH_ERROR_NONE ? -EINVAL : -ENOMEM;
        if (result == 0 && !(out = open_memstream(&text, &length)))
                result = -ENOMEM;
        if (result == 0) {
                fprintf(out, "The policy in force: mode \"%s\"; workspace root \"%s\" (commands start there unless the "
                             "bash tool's cwd says otherwise, and relative file paths are taken from it); extra "
                             "writable roots: ",
                        dsh_mode_name(policy.mode), policy.workspace_root);
                write_quoted_list(out, policy.additional_writable_roots);
                fprintf(out, "; sandbox backend \"%s\". %s, and TMPDIR points there.", backend,
                        temp_area_text(backend, policy.mode));
                write_network(out, &policy.network);
                /* Said so that a model reads an empty or refused credential as the policy, not as a fault. */
                if (policy.mode != DSH_MODE_DANGER_FULL_ACCESS)
                        fputs(" Credentials on disk (SSH private keys, cloud, registry and agent tokens) are masked: "
                              "they read as empty or are refused; environment variables holding secrets (tokens, "
                              "passwords, API keys) are removed.",
                              out);
                if (fields->session_id)
                        fprintf(out, " The mode is the session's: the user may change it between calls, and each "
                                     "bash result names the mode it ran under.");
                if (fclose(out) != 0)
                        result = -ENOMEM;
        }
        if (result == -ENOMEM && error->code == DSH_ERROR_NONE)
                service_error_set(error, ENOMEM, "out of memory");
        if (result == 0)
                *text_out = text;
        else
                free(text);
        free(backend);
        dsh_policy_clear(&policy);
        return result;
}
