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

static volatile sig_atomic_t forwarded_child_pid;

/*
 * A signal sent to this process by another process (kill, a supervisor's
 * SIGTERM) is passed on to the command.  Signals the terminal generates
 * (Ctrl-C, Ctrl-\) already reach the command through the shared process
 * group, so they are not sent a second time.
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

static int exit_status_of(int wait_status)
{
        if (WIFEXITED(wait_status))
                return WEXITSTATUS(wait_status);
        if (WIFSIGNALED(wait_status))
                return 128 + WTERMSIG(wait_status);
        return CLI_EXIT_SANDBOX;
}

/* Parses the command line; *program receives the argv after `--`.  Returns 0 or an exit status. */
static int parse_run_arguments(int argc, char **argv, cli_policy_options *options, char ***program)
{
        int index = 1;

        while (index < argc) {
                int result;

                if (strcmp(argv[index], "--") == 0) {
                        if (index + 1 >= argc)
                                return cli_usage_error("run: missing PROGRAM after `--`");
                        *program = &argv[index + 1];
                        return 0;
                }
                if (cli_is_help(argv[index])) {
                        printf("%s%s", run_help, cli_policy_options_help);
                        return -1;
                }
                result = cli_policy_option_parse(argc, argv, &index, options);
                if (result == 0)
                        return cli_usage_error("run: unknown argument \"%s\" (the command goes after `--`)",
                                               argv[index]);
                if (result != 1)
                        return result;
        }
        return cli_usage_error("run: missing `-- PROGRAM [ARG...]`");
}

static int run_confined(const cli_policy_options *options, const dsh_config *config, const dsh_policy *policy,
                        char **program)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_child child = DSH_CHILD_INIT;
        dsh_provider *provider = NULL;
        int wait_status = 0, result;

        result = cli_provider_create(options, config, &provider);
        if (result != 0)
                return result;
        result = dsh_provider_spawn(provider, program, policy, NULL, &child, &error);
        dsh_provider_free(provider);
        if (result < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                dsh_error_clear(&error);
                return result;
        }
        if (child.facts.enforcement == DSH_ENFORCEMENT_PARTIAL)
                cli_print_message("notice: partial enforcement (the %s backend on this kernel cannot govern "
                                  "every file effect)",
                                  child.facts.backend ? child.facts.backend : "selected");
        install_forwarding(child.pid);
        result = dsh_child_wait(&child, &wait_status);
        dsh_child_clear(&child);
        if (result < 0) {
                cli_print_message("cannot wait for the command: %s", strerror(-result));
                return CLI_EXIT_SANDBOX;
        }
        return exit_status_of(wait_status);
}

int cli_command_run(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_config config = { 0 };
        char **program = NULL;
        int result;

        result = parse_run_arguments(argc, argv, &options, &program);
        if (result == 0)
                result = cli_policy_resolve(&options, &config, &policy);
        if (result == 0)
                result = run_confined(&options, &config, &policy, program);
        dsh_policy_clear(&policy);
        dsh_config_clear(&config);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
