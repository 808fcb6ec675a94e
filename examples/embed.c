/* SPDX-License-Identifier: MIT */
/*
 * embed: the smallest program that confines a command through the library.
 *
 *     embed ROOT -- COMMAND [ARG...]
 *
 * Runs COMMAND in ROOT so that it can write only beneath ROOT (and the
 * backend's temp area): the workspace-write policy rooted at ROOT, resolved and
 * enforced through a runtime with the default configuration
 * ($DSH_SANDBOX_CONFIG, else $XDG_CONFIG_HOME/dsh-sandbox/config.json when it
 * exists).  The runtime sets up every protection the dsh-sandbox tool has: a
 * command confined here cannot rewrite the sandbox's config, its session
 * store or its verdict cache, nor replace a program the sandbox runs later.
 *
 * Exit status, as `dsh-sandbox run`: the command's own; 128+N when signal N
 * killed it; 125 when it could not be confined (it never ran); 126 / 127
 * when it could not be executed / was not found; 2 for a usage error.
 *
 * Build it against an installed copy:
 *
 *     cc -o embed embed.c $(pkg-config --cflags --libs dsh-sandbox)
 *
 * A front end that stays in the terminal should also pass the terminal's
 * signals on to the command, as `dsh-sandbox run` does: under bwrap the
 * command runs in a process group of its own, and Ctrl-C reaches only this
 * program, whose death ends the sandbox.
 */
/* O_PATH, for the fd the command enters. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dsh-sandbox/runtime.h>

enum {
        EXIT_USAGE = 2,
        EXIT_NOT_CONFINED = 125,
        EXIT_CANNOT_EXECUTE = 126,
        EXIT_NOT_FOUND = 127,
};

/* One line on stderr, and the exit status that tells the caller the command did not run. */
static int report(dsh_error *error)
{
        const char *code = dsh_error_code_name(error->code);
        const char *message = error->message ? error->message : strerror(error->errno_value);
        int status = EXIT_NOT_CONFINED;

        if (error->code == DSH_ERROR_EXEC_FAILED)
                status = error->errno_value == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
        fprintf(stderr, "embed: %s%s%s\n", code ? code : "", code ? ": " : "", message);
        dsh_error_clear(error);
        return status;
}

/* The command's own status, as a shell reports it. */
static int command_status(int wait_status)
{
        if (WIFSIGNALED(wait_status))
                return 128 + WTERMSIG(wait_status);
        return WEXITSTATUS(wait_status);
}

/* Partial enforcement is a fact the user must see, with each reason. */
static void announce_partial(const dsh_confined_argv *facts)
{
        if (facts->enforcement != DSH_ENFORCEMENT_PARTIAL)
                return;
        for (char **reason = facts->partial_reasons; reason && *reason; reason++)
                fprintf(stderr, "embed: notice: partial enforcement under %s: %s\n",
                        facts->backend ? facts->backend : "the backend", *reason);
}

/*
 * Spawns in the workspace root and waits.  The root is opened once and the
 * command enters that fd (cwd_fd), never the name again.  A runner (bwrap)
 * that failed before the command was executed is told apart from the
 * command by the library, out of band: its exit status is never passed off
 * as the command's.
 */
static int spawn_and_wait(dsh_runtime *runtime, const dsh_policy *policy, char *const *command)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int wait_status = 0, result;

        options.cwd_fd = open(policy->workspace_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (options.cwd_fd < 0) {
                fprintf(stderr, "embed: cannot enter the workspace root \"%s\": %s\n", policy->workspace_root,
                        strerror(errno));
                return EXIT_NOT_CONFINED;
        }
        result = dsh_provider_spawn(dsh_runtime_provider(runtime), command, policy, &options, &child, &error);
        close(options.cwd_fd);
        if (result < 0)
                return report(&error);
        announce_partial(dsh_child_facts(child));
        result = dsh_child_wait(child, &wait_status);
        if (result < 0) {
                fprintf(stderr, "embed: cannot wait for the command: %s\n", strerror(-result));
                result = EXIT_NOT_CONFINED;
        } else if (dsh_child_runner_error(child, &error) < 0) {
                result = report(&error);
        } else {
                result = command_status(wait_status);
        }
        dsh_child_free(child);
        return result;
}

static int run_in_workspace(dsh_runtime *runtime, const char *root, char *const *command)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int result;

        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = root;  /* a relative root is taken against the cwd */
        if (dsh_runtime_resolve(runtime, &request, &policy, &error) < 0)
                return report(&error);
        result = spawn_and_wait(runtime, &policy, command);
        dsh_policy_clear(&policy);
        return result;
}

int main(int argc, char **argv)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        int result;

        if (argc < 4 || strcmp(argv[2], "--") != 0 || argv[1][0] == '\0') {
                fprintf(stderr, "usage: embed ROOT -- COMMAND [ARG...]\n");
                return EXIT_USAGE;
        }
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                return report(&error);
        result = run_in_workspace(runtime, argv[1], &argv[3]);
        dsh_runtime_free(runtime);
        return result;
}
