/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox run [policy] [--] PROGRAM [ARG...]`: runs PROGRAM confined, stdio
 * passed through.  The exit status is the program's own, 128+N for a signal,
 * 125 when the sandbox could not confine it (it never ran), 126/127 when it
 * could not be executed / was not found, 2 for usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "remote-cli.h"
#include "terminal-proxy.h"

static const char run_help[] =
        "Usage: dsh-sandbox run [policy options] [--] PROGRAM [ARG...]\n"
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

/*
 * Signals while a runner process (bwrap, an operator's runner command) is
 * waited for.
 *
 * bwrap runs in a process group of its own and its sandbox in a session of
 * its own, so the terminal's Ctrl-C and Ctrl-\ reach only this process, which
 * passes every signal a command is usually told to stop or reload with —
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, from the terminal or
 * from kill alike — on to the command's process group
 * (dsh_child.process_group: the sandbox's, whose init ignores what it does
 * not handle and whose command and its children get it).  The command's own
 * handlers run and its own status comes back, as when Landlock execs it in
 * place.  Until the sandbox's init has made that group and forked the
 * command's process into it, the command was not exec'd yet (so it could not have handled the signal): the sandbox is
 * ended — SIGKILL to its init by pid, since the init asks to die with bwrap
 * only after it made the group — and bwrap dies of the signal itself
 * (dsh_signal_command()).  Whenever a signal passed on ended the sandbox
 * before the command was exec'd, this process then dies of it too, as for
 * a signal that came before the spawn, rather than report a runner failure.
 * A child that shares this process's group (no process_group: an
 * operator's runner command) already gets what the terminal sends the
 * group; only signals sent to this process alone are passed on, to its pid.
 *
 * A signal that arrives before the child exists (or before this process
 * learned of it) is kept and acted on as soon as it does: the handlers are
 * installed before the spawn, which resets caught signals to their defaults
 * in the child.  A signal ignored when this process started (nohup, a
 * shell's background job) stays ignored, for the runner and the command too.
 *
 * Job control: Ctrl-Z (SIGTSTP) stops the command's group with SIGSTOP and
 * then this process; SIGCONT (fg, bg) continues the group.  A SIGTSTP passed
 * on would not do: the sandbox's group has no terminal and is orphaned, and
 * the kernel discards a default SIGTSTP there.  So the command cannot catch
 * the stop.
 *
 * At a terminal (cli/terminal-proxy.h) the command has a pty of its own as
 * its controlling terminal, in a session of its own: the terminal's keys
 * reach it as bytes (Ctrl-C and Ctrl-Z are its own, as over `ssh -t`), so
 * none of the above comes from the terminal; and a signal sent to this
 * process alone ends the sandbox (SIGKILL to it: the command is in no group
 * this process can name), and this process then dies of that signal.
 *
 * SIGKILL to this process cannot be passed on: bwrap's --die-with-parent
 * kills the runner, and with it the whole sandbox — except in the
 * sandbox's first moments, before its init asked to die with bwrap: a
 * SIGKILL then leaves the init running (nothing of this process is left to
 * end it).
 *
 * What a handler touches is volatile sig_atomic_t, kill()/getpid() and
 * dsh_signal_command() (system calls only), all async-signal-safe; errno is
 * preserved.
 */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

enum { FORWARDING_PENDING, FORWARDING_ACTIVE, FORWARDING_CLOSED };

/* A kept signal: sent to this process alone, or (also) to its whole group by the terminal. */
enum { NOT_KEPT, KEPT_FROM_TERMINAL, KEPT_FROM_SENDER };

static volatile sig_atomic_t forwarding_state = FORWARDING_PENDING;
static volatile sig_atomic_t forward_group;   /* the command's process group, or 0: it shares ours */
static volatile sig_atomic_t forward_pid;     /* the runner, while it is not reaped */
static volatile sig_atomic_t kept_signals[NSIG];
static volatile sig_atomic_t passed_on;   /* the last signal passed on to the command, or 0 */
static volatile sig_atomic_t serving_terminal;   /* the command has a pty of its own (cli/terminal-proxy.h) */

/* To the command's group; a sandbox still starting is ended and the runner dies of it (dsh_signal_command). */
static void send_on(int signal_number)
{
        int sent = signal_number;

        if (forward_pid <= 0)
                return;
        /* In a session of its own, the command is in no group of the sandbox's init: the sandbox is ended. */
        if (serving_terminal)
                sent = SIGKILL;
        dsh_signal_command((pid_t) forward_pid, (pid_t) forward_group, sent);
        passed_on = signal_number;
}

/* What a signal means once the child exists.  `from_terminal`: the kernel sent it to this whole group. */
static void act_on(int signal_number, bool from_terminal)
{
        switch (signal_number) {
        case SIGTSTP:
                /* A command in this group got the terminal's own; one sent to run alone is its to handle too. */
                if (forward_group > 0)
                        kill(-(pid_t) forward_group, SIGSTOP);
                else if (!from_terminal && forward_pid > 0)
                        kill((pid_t) forward_pid, SIGTSTP);
                /* Stopped, the user's terminal goes back to its shell as it was, raw again on the way on. */
                cli_terminal_proxy_suspend();
                kill(getpid(), SIGSTOP);
                cli_terminal_proxy_resume();
                break;
        case SIGCONT:
                if (forward_group > 0)
                        kill(-(pid_t) forward_group, SIGCONT);
                else if (!from_terminal && forward_pid > 0)
                        kill((pid_t) forward_pid, SIGCONT);
                break;
        default:
                if (forward_group > 0 || !from_terminal)
                        send_on(signal_number);
                break;
        }
}

static void forward_signal(int signal_number, siginfo_t *info, void *context)
{
        int saved_errno = errno;
        bool from_terminal = info->si_code > 0;   /* SI_KERNEL: the terminal; <= 0: kill(), sigqueue() */

        (void) context;
        if (forwarding_state == FORWARDING_ACTIVE)
                act_on(signal_number, from_terminal);
        else if (forwarding_state == FORWARDING_PENDING && kept_signals[signal_number] != KEPT_FROM_SENDER)
                kept_signals[signal_number] = from_terminal ? KEPT_FROM_TERMINAL : KEPT_FROM_SENDER;
        errno = saved_errno;
}

/* Catches `signal_number` unless it was ignored when this process started. */
static void catch_unless_ignored(int signal_number)
{
        struct sigaction action = { 0 };
        struct sigaction previous;

        if (sigaction(signal_number, NULL, &previous) < 0 || previous.sa_handler == SIG_IGN)
                return;
        action.sa_sigaction = forward_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
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
                catch_unless_ignored(forwarded_signals[i]);
        catch_unless_ignored(SIGTSTP);
        catch_unless_ignored(SIGCONT);
}

/* The child exists: aim at it, and act on what came in the meantime. */
static void forwarding_start(const dsh_child *child)
{
        sigset_t blocked, previous;

        forwarding_mask(&blocked);
        sigprocmask(SIG_BLOCK, &blocked, &previous);
        forward_group = dsh_child_process_group(child);
        forward_pid = dsh_child_pid(child);
        forwarding_state = FORWARDING_ACTIVE;
        for (int signal_number = 1; signal_number < NSIG; signal_number++)
                if (kept_signals[signal_number] != NOT_KEPT) {
                        act_on(signal_number, kept_signals[signal_number] == KEPT_FROM_TERMINAL);
                        kept_signals[signal_number] = NOT_KEPT;
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

/* Ends this process by `signal_number`, as it would have ended uncaught. */
static void die_of(int signal_number)
{
        signal(signal_number, SIG_DFL);
        raise(signal_number);
}

/*
 * The spawn failed: the command never ran.  A signal kept meanwhile was
 * meant to stop this process; it now does, as it would have uncaught.
 */
static void forwarding_abandon(void)
{
        forwarding_close();
        if (kept_signals[SIGTSTP] != NOT_KEPT)
                kill(getpid(), SIGSTOP);
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
                if (kept_signals[forwarded_signals[i]] != NOT_KEPT)
                        die_of(forwarded_signals[i]);
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
 * A backend with a runner process (bwrap), or Landlock under
 * workspace-write (its metadata supervisor is a thread of this process):
 * spawn and stay, so that a runner that fails before exec is reported as
 * 125 with its reason — learned out of band, never guessed from the exit
 * status — instead of passing off its exit status as the command's.
 *
 * run stands in for the command: the command dies with it (a SIGKILL to run,
 * which cannot be passed on, still ends the command, as when it was exec'd
 * in run's place), and run ends the way the command ended — its exit
 * status, or a death by the same signal, so that a shell sees the command
 * killed by SIGINT rather than an exit status that only says so.
 */
static int spawn_and_wait(dsh_provider *provider, const dsh_policy *policy, char **program)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        cli_terminal_proxy terminal = CLI_TERMINAL_PROXY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        int wait_status = 0, result;

        options.die_with_parent = true;
        /*
         * The caller's cwd, by fd: under bwrap the command starts on the
         * sandbox's own mount of it, and a cwd the sandbox does not show (a
         * host /tmp directory behind the session's /tmp) is a runner failure
         * (125, saying so) rather than bwrap's silent fallback to $HOME.
         */
        options.cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cli_terminal_proxy_open(&terminal) > 0) {
                cli_terminal_proxy_attach(&terminal, &options);
                serving_terminal = true;
        }
        forwarding_prepare();
        if (dsh_provider_spawn(provider, program, policy, &options, &child, &error) < 0) {
                cli_terminal_proxy_close(&terminal);
                if (options.cwd_fd >= 0)
                        close(options.cwd_fd);
                result = print_error_status(&error);
                forwarding_abandon();
                return result;
        }
        forwarding_start(child);
        announce_enforcement(dsh_child_facts(child), NULL);
        if (options.cwd_fd >= 0)
                close(options.cwd_fd);
        if (serving_terminal && cli_terminal_proxy_serve(&terminal, dsh_child_pid(child)) < 0)
                cli_terminal_proxy_close(&terminal);
        result = wait_for_exit(dsh_child_pid(child));
        forwarding_close();
        if (result == 0)
                result = dsh_child_wait(child, &wait_status);
        if (result < 0) {
                cli_print_message("cannot wait for the command: %s", strerror(-result));
                dsh_child_free(child);
                return CLI_EXIT_SANDBOX;
        }
        /*
         * A signal passed on, and the runner ended without running the
         * command: the signal ended the sandbox (or the launcher in it)
         * before the exec.  At a terminal, a signal passed on always ended
         * the sandbox (SIGKILL): this process ends as the signal said.  Not a runner failure to report (125): this
         * process ends by the signal, as when it came before the spawn.
         * Nothing ran unconfined either way.
         */
        if (passed_on && (dsh_child_runner_failed(child) || serving_terminal)) {
                dsh_child_free(child);
                die_of(passed_on);
                return 128 + passed_on;
        }
        if (dsh_child_runner_error(child, &error) < 0) {
                dsh_child_free(child);
                return print_error_status(&error);
        }
        for (const char *const *warning = dsh_child_warnings(child); *warning; warning++)
                cli_print_message("warning: %s", *warning);
        dsh_child_free(child);
        return dsh_end_like_child(wait_status);
}

/*
 * Where a backend can confine this process itself (none does today: the
 * Landlock backend's supervisor performs the command's connect calls under
 * both modes and lives in a process that stays), the command replaces it,
 * as with env, nice and chroot: nothing
 * stays behind, so Ctrl-C, job control and a supervisor's kill reach the
 * command directly, its exit status is its own, and a signal death is seen
 * by the caller as such (a shell reports 128+N).  The only cost over a bare
 * exec is the handful of system calls that build and apply the Landlock
 * domain and the metadata filter.  Otherwise (-EOPNOTSUPP) run spawns the
 * command and stands in for it (spawn_and_wait).
 */
static int run_confined(dsh_runtime *runtime, const dsh_policy *policy, char **program)
{
        dsh_provider *provider = dsh_runtime_provider(runtime);
        dsh_error error = DSH_ERROR_INIT;

        fflush(NULL);
        if (dsh_provider_exec(provider, program, policy, announce_enforcement, NULL, &error) == -EOPNOTSUPP)
                return spawn_and_wait(provider, policy, program);
        return print_error_status(&error);
}

int cli_command_run(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        char **program = NULL;
        int result;

        result = cli_parse_policy_and_command(argc, argv, run_help, &options, &program);
        if (result == 0 && options.remote) {
                result = cli_remote_run(&options, program);
                cli_policy_options_clear(&options);
                return result;
        }
        if (result == 0)
                result = cli_policy_resolve(&options, &runtime, &policy);
        if (result == 0)
                cli_policy_options_warn_without_effect(&options, policy.mode);
        if (result == 0)
                result = run_confined(runtime, &policy, program);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}
