/* SPDX-License-Identifier: MIT */
/*
 * The operator override (`runnerCommand` + `runnerFailureSignatures`).
 *
 * The confined argv is the operator's command followed by the caller's argv,
 * verbatim: the runner is the operator's, and so is the promise that it
 * confines under the policy the deployment runs with (it receives no policy
 * from us).  Probes are skipped and enforcement is reported as full because
 * the operator vouches for it; the failure rule is the one the operator
 * gave, and no denial dialect is claimed (a dialect we cannot know would
 * call ordinary failures denials).
 *
 * The environment: the runner is spawned with the caller's scrubbed of its
 * secrets (provider/call-environment.h), as bwrap is, so whatever it runs
 * gets none of them; a confined argv the harness spawns itself carries no
 * rules (the operator's runner takes no --deny-env), so confine removes
 * nothing and says so (no environmentRemoved).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/backend.h"
#include "provider/call-environment.h"
#include "provider/process.h"
#include "base/provider-rules.h"
#include "base/error.h"
#include "provider/spawn.h"

static void runner_command_probe(dsh_provider *provider, dsh_backend_report *report)
{
        report->usable = provider->runner_command != NULL;
        report->enforcement = DSH_ENFORCEMENT_FULL;
        if (provider->runner_command)
                report->runner_path = strdup(provider->runner_command[0]);
        else
                report->reason = strdup("no runnerCommand is configured");
}

static int build(dsh_provider *provider, char *const *argv, dsh_confined_argv *out)
{
        for (char **word = provider->runner_command; word && *word; word++)
                if (dsh_strv_append(&out->argv, *word) < 0)
                        return -ENOMEM;
        for (; *argv; argv++)
                if (dsh_strv_append(&out->argv, *argv) < 0)
                        return -ENOMEM;
        out->enforcement = DSH_ENFORCEMENT_FULL;
        out->denial_signatures = calloc(1, sizeof(char *));
        out->backend = strdup("runner-command");
        if (!out->denial_signatures || !out->backend)
                return -ENOMEM;
        return dsh_confined_argv_add_rule(out, NULL, 0, (const char *const *) provider->runner_failure_signatures,
                                          NULL);
}

static int runner_command_confine(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                                  dsh_confined_argv *out, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        if (!provider->runner_command)
                return dsh_error_set_unavailable(error, policy->mode, "no runnerCommand is configured");
        if (build(provider, argv, out) < 0) {
                dsh_confined_argv_clear(out);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        return 0;
}

static int runner_command_spawn(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                                const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(NULL);
        dsh_spawn_failure failure;
        int result = runner_command_confine(provider, argv, prepared, &facts, error);
        pid_t pid;

        if (result < 0)
                return result;
        plan.argv = facts.argv;
        plan.environment = dsh_call_environment_build(&provider->protections, policy, NULL);
        if (!plan.environment || dsh_call_environment_set_facts(&provider->protections, policy, &facts) < 0) {
                dsh_strv_free((char **) plan.environment);
                dsh_confined_argv_clear(&facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        pid = dsh_spawn_exec_plan(&plan, options, &failure);
        dsh_strv_free((char **) plan.environment);
        if (pid < 0) {
                /* The runner itself could not be executed: the command never ran, so this is unavailability. */
                if (pid == -ECHILD && failure.stage == DSH_SPAWN_STAGE_EXEC)
                        failure.stage = DSH_SPAWN_STAGE_SETUP;
                result = pid == -ECHILD ? dsh_spawn_failure_to_error(&failure, policy->mode, facts.argv[0], error)
                                        : dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid,
                                                        "cannot start the runner command: %s", strerror((int) -pid));
                dsh_confined_argv_clear(&facts);
                return result;
        }
        child->pid = pid;
        child->facts = facts;
        child->mode = policy->mode;
        return 0;
}

const dsh_backend_ops dsh_backend_runner_command = {
        .name = "runner-command",
        .probe = runner_command_probe,
        .confine = runner_command_confine,
        .spawn = runner_command_spawn,
        .probe_is_functional = true,
};
