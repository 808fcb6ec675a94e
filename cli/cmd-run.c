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
#include <unistd.h>

#include "cli.h"
#include "policy-options.h"

static const char run_help[] =
        "Usage: dsh-sandbox run [policy options] -- PROGRAM [ARG...]\n"
        "Runs PROGRAM so that it can write only where the policy allows, or not at all.\n"
        "Exit status: the program's own; 128+N if killed by signal N; 125 if the sandbox could\n"
        "not confine it (it never ran); 126/127 if it could not be executed / was not found;\n"
        "2 for a usage error.\n\n";

/* Partial enforcement is a fact the user must see before the command runs. */
static void announce_enforcement(const dsh_confined_argv *facts, void *data)
{
        (void) data;
        if (facts->enforcement == DSH_ENFORCEMENT_PARTIAL)
                cli_print_message("notice: partial enforcement: the %s backend cannot govern every file effect "
                                  "on this host (older kernel ABI)",
                                  facts->backend ? facts->backend : "selected");
}

/*
 * Signals while a runner process (bwrap) is waited for.
 *
 * The runner is spawned in a process group of its own (new_process_group),
 * so the terminal's Ctrl-C and Ctrl-\ reach only this process; bwrap's
 * sandbox is a session of its own (--new-session) that no terminal signal
 * reaches either.  This process passes every signal a command is usually
 * told to stop or reload with — SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
 * SIGUSR2, from the terminal or from kill alike — on to the command's process
 * group (dsh_child.process_group: under bwrap the sandbox's, whose init
 * ignores what it does not handle and whose command and its children get
 * it), so the command's own handlers run and its own status comes back, as
 * when Landlock execs it in place.  While no group is known, or before the
 * sandbox's init has made it, the signal goes to the runner itself: bwrap
 * dies of it and --die-with-parent ends the sandbox, before the command was
 * exec'd (so it could not have handled it yet).
 *
 * A signal that arrives before the child exists (or before this process
 * learned of it) is kept and acted on as soon as it does: the handlers are
 * installed before the spawn, which resets caught signals to their defaults
 * in the child.  A signal ignored when this process started (nohup, a
 * shell's background job) stays ignored, for the runner and the command too.
 *
 * Job control: Ctrl-Z (SIGTSTP) stops the command's group with SIGSTOP and
 * then this process; SIGCONT (fg, bg) continues the group.  A SIGTSTP sent on
 * would not do: the sandbox's group has no terminal and is orphaned, and the
 * kernel discards a default SIGTSTP there.  The command therefore cannot
 * catch the stop.
 *
 * SIGKILL to this process cannot be passed on: bwrap's --die-with-parent
 * kills the runner, and with it the whole sandbox.
 *
 * What a handler touches is volatile sig_atomic_t and kill()/getpid(), all
 * async-signal-safe; errno is preserved.
 */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

enum { FORWARDING_PENDING, FORWARDING_ACTIVE, FORWARDING_CLOSED };

static volatile sig_atomic_t forwarding_state = FORWARDING_PENDING;
static volatile sig_atomic_t forward_group;   /* the command's process group, or 0 */
static volatile sig_atomic_t forward_pid;     /* the runner, while it is not reaped */
static volatile sig_atomic_t pending_signals[NSIG];

static void send_on(int signal_number)
{
        /* ESRCH: the sandbox's init has not made its group yet; the runner then takes it. */
        if (forward_group > 0 && kill(-(pid_t) forward_group, signal_number) == 0)
                return;
        if (forward_pid > 0)
                kill((pid_t) forward_pid, signal_number);
}

/* What a signal means once the child exists. */
static void act_on(int signal_number)
{
        switch (signal_number) {
        case SIGTSTP:
                if (forward_group > 0)
                        kill(-(pid_t) forward_group, SIGSTOP);
                kill(getpid(), SIGSTOP);
                break;
        case SIGCONT:
                if (forward_group > 0)
                        kill(-(pid_t) forward_group, SIGCONT);
                break;
        default:
                send_on(signal_number);
                break;
        }
}

static void forward_signal(int signal_number)
{
        int saved_errno = errno;

        if (forwarding_state == FORWARDING_ACTIVE)
                act_on(signal_number);
        else if (forwarding_state == FORWARDING_PENDING)
                pending_signals[signal_number] = 1;
        errno = saved_errno;
}

/* Installs `handler` for `signal_number` unless the signal was ignored when this process started. */
static void catch_unless_ignored(int signal_number, void (*handler)(int))
{
        struct sigaction action = { 0 };
        struct sigaction previous;

        if (sigaction(signal_number, NULL, &previous) < 0 || previous.sa_handler == SIG_IGN)
                return;
        action.sa_handler = handler;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(signal_number, &action, NULL);
}

static void forwarding_mask(sigset_t *set)
{
        sigemptyset(set);
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
                sigaddset(set, forwarded_signals[i]);
        sigaddset(set, SIGTSTP);
        sigaddset(set, SIGCONT);
}

/* Before the spawn: signals from now on are kept until the child exists. */
static void forwarding_prepare(void)
{
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
                catch_unless_ignored(forwarded_signals[i], forward_signal);
        catch_unless_ignored(SIGTSTP, forward_signal);
        catch_unless_ignored(SIGCONT, forward_signal);
}

/* The child exists: aim at it, and send on what came in the meantime. */
static void forwarding_start(const dsh_child *child)
{
        sigset_t blocked, previous;

        forwarding_mask(&blocked);
        sigprocmask(SIG_BLOCK, &blocked, &previous);
        forward_group = child->process_group;
        forward_pid = child->pid;
        forwarding_state = FORWARDING_ACTIVE;
        for (int signal_number = 1; signal_number < NSIG; signal_number++)
                if (pending_signals[signal_number]) {
                        pending_signals[signal_number] = 0;
                        act_on(signal_number);
                }
        sigprocmask(SIG_SETMASK, &previous, NULL);
}

/*
 * Once the runner has exited, before it is reaped: from here on nothing is
 * sent.  Until now its pid was safe to signal (a zombie's pid is not reused).
 * The sandbox's init is reaped by bwrap just before bwrap exits, so a signal
 * in that last instant could only reach another process if the kernel's pid
 * counter wrapped around to that number in between.
 */
static void forwarding_close(void)
{
        sigset_t blocked, previous;

        forwarding_mask(&blocked);
        sigprocmask(SIG_BLOCK, &blocked, &previous);
        forwarding_state = FORWARDING_CLOSED;
        forward_group = 0;
        forward_pid = 0;
        sigprocmask(SIG_SETMASK, &previous, NULL);
}

/*
 * The spawn failed: the command never ran.  A signal kept meanwhile was
 * meant to stop this process; it now does, as it would have uncaught.
 */
static void forwarding_abandon(void)
{
        forwarding_close();
        if (pending_signals[SIGTSTP])
                kill(getpid(), SIGSTOP);
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++) {
                int signal_number = forwarded_signals[i];

                if (!pending_signals[signal_number])
                        continue;
                signal(signal_number, SIG_DFL);
                raise(signal_number);
        }
}

/* Waits until `pid` has exited, without reaping it. */
static int wait_for_exit(pid_t pid)
{
        siginfo_t info;

        while (waitid(P_PID, (id_t) pid, &info, WEXITED | WNOWAIT) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
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
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        int wait_status = 0, result;

        options.new_process_group = true;
        forwarding_prepare();
        if (dsh_provider_spawn(provider, program, policy, &options, &child, &error) < 0) {
                result = print_error_status(&error);
                forwarding_abandon();
                return result;
        }
        forwarding_start(&child);
        announce_enforcement(&child.facts, NULL);
        result = wait_for_exit(child.pid);
        forwarding_close();
        if (result == 0)
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
