/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox run [policy] -- PROGRAM [ARG...]`: runs PROGRAM confined, stdio
 * passed through.  The exit status is the program's own, 128+N for a signal,
 * 125 when the sandbox could not confine it (it never ran), 126/127 when it
 * could not be executed / was not found, 2 for usage errors.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "policy-options.h"

static const char run_help[] =
        "Usage: dsh-sandbox run [policy options] -- PROGRAM [ARG...]\n"
        "Runs PROGRAM so that it can write only where the policy allows, or not at all.\n"
        "Exit status: the program's own; 128+N if killed by signal N; 125 if the sandbox could\n"
        "not confine it (it never ran); 126/127 if it could not be executed / was not found;\n"
        "2 for a usage error.\n\n";

/* Partial enforcement is a fact the user must see before the command runs, with each reason. */
static void announce_enforcement(const dsh_confined_argv *facts, void *data)
{
        (void) data;
        if (facts->enforcement != DSH_ENFORCEMENT_PARTIAL)
                return;
        if (!facts->partial_reasons)
                cli_print_message("notice: partial enforcement: the %s backend cannot govern every file effect here",
                                  facts->backend ? facts->backend : "selected");
        for (char **reason = facts->partial_reasons; reason && *reason; reason++)
                cli_print_message("notice: partial enforcement under %s: %s", facts->backend ? facts->backend : "the backend",
                                  *reason);
}

static volatile sig_atomic_t forwarded_child_pid;

/*
 * While a runner process is waited for: a signal sent to this process by
 * another process (kill, a supervisor's SIGTERM) is passed on to the runner.
 * Signals the terminal generates (Ctrl-C, Ctrl-\) already reach it through the
 * shared process group, so they are not sent a second time.
 */
static void forward_signal(int signal_number, siginfo_t *info, void *context)
{
        (void) context;
        if (forwarded_child_pid > 0 && info->si_code <= 0)
                kill((pid_t) forwarded_child_pid, signal_number);
}

static void install_forwarding(pid_t child_pid)
{
        static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
        struct sigaction action = { 0 };

        forwarded_child_pid = child_pid;
        action.sa_sigaction = forward_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
                sigaction(forwarded[i], &action, NULL);
}

static int print_error_status(dsh_error *error)
{
        int status;

        cli_print_error(error);
        status = cli_exit_status_for_error(error);
        dsh_error_clear(error);
        return status;
}

/*
 * A backend with a runner process (bwrap): spawn it and stay, so that a
 * runner that fails before exec is reported as 125 with its reason — learned
 * out of band, never guessed from the exit status — instead of passing off
 * its exit status as the command's.
 */
static int spawn_and_wait(dsh_provider *provider, const dsh_policy *policy, char **program)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_child child = DSH_CHILD_INIT;
        int wait_status = 0, result;

        if (dsh_provider_spawn(provider, program, policy, NULL, &child, &error) < 0)
                return print_error_status(&error);
        announce_enforcement(&child.facts, NULL);
        install_forwarding(child.pid);
        result = dsh_child_wait(&child, &wait_status);
        if (result < 0) {
                cli_print_message("cannot wait for the command: %s", strerror(-result));
                dsh_child_clear(&child);
                return CLI_EXIT_SANDBOX;
        }
        if (dsh_child_runner_error(&child, &error) < 0) {
                dsh_child_clear(&child);
                return print_error_status(&error);
        }
        dsh_child_clear(&child);
        if (WIFSIGNALED(wait_status))
                return 128 + WTERMSIG(wait_status);
        return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : CLI_EXIT_SANDBOX;
}

/*
 * Where the backend can confine this process itself (Landlock), the command
 * replaces it, as with env, nice and chroot: nothing stays behind, so Ctrl-C,
 * job control and a supervisor's kill reach the command directly, its exit
 * status is its own, and a signal death is seen by the caller as such (a
 * shell reports 128+N).  The only cost over a bare exec is the handful of
 * system calls that build and apply the Landlock domain.
 */
static int run_confined(const cli_policy_options *options, const dsh_config *config, const dsh_policy *policy,
                        char **program)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = NULL;
        int result;

        result = cli_provider_create(options, config, &provider);
        if (result != 0)
                return result;
        fflush(NULL);
        if (dsh_provider_exec(provider, program, policy, announce_enforcement, NULL, &error) == -EOPNOTSUPP)
                result = spawn_and_wait(provider, policy, program);
        else
                result = print_error_status(&error);
        dsh_provider_free(provider);
        return result;
}

int cli_command_run(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_config config = { 0 };
        char **program = NULL;
        int result;

        result = cli_parse_policy_and_command(argc, argv, run_help, &options, &program);
        if (result == 0)
                result = cli_policy_resolve(&options, &config, &policy);
        if (result == 0)
                result = run_confined(&options, &config, &policy, program);
        dsh_policy_clear(&policy);
        dsh_config_clear(&config);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
