/* SPDX-License-Identifier: MIT */
/* The library's stand-in for a confined command: see stand-in-spawn.h for why and how. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/leftovers.h"
#include "provider/stand-in-spawn.h"

/*
 * The stand-ins this process spawned and has not reaped: the one piece of
 * global state here, so that dsh_signal_command(), given only pids (from a
 * signal handler, too), never sends SIGKILL to one.  Slots are claimed and
 * freed with atomic compare-and-swap; a lookup is a scan of atomic loads.
 */
#define STAND_IN_SLOTS 256

static pid_t known_stand_ins[STAND_IN_SLOTS];

static bool remember(pid_t pid)
{
        for (size_t i = 0; i < STAND_IN_SLOTS; i++) {
                pid_t expected = 0;

                if (__atomic_compare_exchange_n(&known_stand_ins[i], &expected, pid, false, __ATOMIC_SEQ_CST,
                                                __ATOMIC_SEQ_CST))
                        return true;
        }
        return false;
}

bool dsh_stand_in_is_known(pid_t pid)
{
        if (pid <= 0)
                return false;
        for (size_t i = 0; i < STAND_IN_SLOTS; i++)
                if (__atomic_load_n(&known_stand_ins[i], __ATOMIC_SEQ_CST) == pid)
                        return true;
        return false;
}

void dsh_stand_in_forget(pid_t pid)
{
        for (size_t i = 0; pid > 0 && i < STAND_IN_SLOTS; i++) {
                pid_t expected = pid;

                __atomic_compare_exchange_n(&known_stand_ins[i], &expected, 0, false, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST);
        }
}

void dsh_stand_in_signal(pid_t stand_in, pid_t group, int signal_number)
{
        /* Never SIGKILL: the stand-in would die before the leftovers it alone can end. */
        if (signal_number == SIGKILL) {
                kill(stand_in, DSH_STAND_IN_END_SIGNAL);
                return;
        }
        if (group > 0 && kill(-group, signal_number) == 0)
                return;
        kill(stand_in, signal_number);
}

/* The stand-in's one message to the caller: the command's pid, or why it never ran. */
struct stand_in_report {
        pid_t command;
        dsh_spawn_failure failure;
};

static void report_and_exit(int report_fd, dsh_spawn_stage stage, int errno_value)
{
        struct stand_in_report report = { -1, { stage, errno_value } };
        /* Unreported (the caller is gone), the caller's end of file would be a failure all the same. */
        ssize_t written = write(report_fd, &report, sizeof(report));

        (void) written;
        _exit(125);
}

/*
 * Waits for the command, passing signals on (stand-in-spawn.h), and returns
 * its wait status.  Every signal is blocked: each is taken here in turn.
 */
static int wait_for_command(pid_t command)
{
        sigset_t every;
        int status = 0;

        sigfillset(&every);
        for (;;) {
                siginfo_t info;
                int signal_number = sigwaitinfo(&every, &info);

                if (signal_number < 0)
                        continue;
                if (signal_number == SIGCHLD) {
                        if (waitpid(command, &status, WNOHANG | __WALL) == command)
                                return status;
                } else if (signal_number == DSH_STAND_IN_END_SIGNAL) {
                        kill(command, SIGKILL);
                } else if (info.si_code <= 0) {
                        /* Sent to the stand-in by a process: the command's, as if it were exec'd here. */
                        kill(command, signal_number);
                }
        }
}

/*
 * Ends as the command ended (core/stand-in.h's rule), with system calls
 * only: dsh_stand_in_end_like() flushes stdio, whose locks another thread
 * of the caller may have held when this copy was forked.
 */
static void end_like(int wait_status)
{
        struct sigaction fallback = { 0 };
        sigset_t only;
        int signal_number;

        if (WIFEXITED(wait_status))
                _exit(WEXITSTATUS(wait_status));
        if (!WIFSIGNALED(wait_status))
                _exit(125);
        signal_number = WTERMSIG(wait_status);
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);   /* the command's core, if any, is the command's */
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        sigaction(signal_number, &fallback, NULL);
        kill(getpid(), signal_number);
        sigemptyset(&only);
        sigaddset(&only, signal_number);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        _exit(128 + signal_number);
}

/*
 * The stand-in's whole life, in a child forked from the caller: only system
 * calls (the caller may have other threads, whose locks this copy holds).
 * Every signal is blocked on entry; the command starts with the caller's
 * mask.  Never returns.
 */
static void stand_in_main(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                          const sigset_t *command_mask, pid_t caller, int report_fd)
{
        dsh_spawn_options command_options = *options;
        struct stand_in_report report = { -1, { DSH_SPAWN_STAGE_NONE, 0 } };
        pid_t command;
        int wait_status;

        /*
         * The raw call: this process is a fork of a threaded one, and a
         * prctl() wrapper that takes a lock (a sanitizer's, which records
         * thread names) could wait forever on one another thread held at
         * the fork.
         */
        (void) syscall(__NR_prctl, PR_SET_NAME, "dsh-stand-in", 0, 0, 0);
        /* The caller's end is the call's end: the end request, which this process acts on, never a bare kill. */
        if (options->die_with_parent &&
            (prctl(PR_SET_PDEATHSIG, DSH_STAND_IN_END_SIGNAL, 0, 0, 0) < 0 || getppid() != caller))
                report_and_exit(report_fd, DSH_SPAWN_STAGE_SETUP, errno ? errno : ESRCH);
        /* Fail closed: a stand-in that cannot adopt would let the command's leftovers go. */
        if (dsh_leftovers_adopt() < 0)
                report_and_exit(report_fd, DSH_SPAWN_STAGE_SETUP, errno);
        /* Group, session, terminal and stdio are the command's to take, as without a stand-in. */
        command_options.die_with_parent = true;   /* a SIGKILL to this process still ends the command */
        command = dsh_spawn_exec_plan_masked(plan, &command_options, command_mask, &report.failure);
        if (command < 0 && command != -ECHILD)
                report.failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_SETUP, (int) -command };
        report.command = command;
        /* Unreported, the call must not go on: the caller reads end of file and refuses it. */
        if (write(report_fd, &report, sizeof(report)) != (ssize_t) sizeof(report) || command < 0) {
                if (command > 0) {
                        kill(command, SIGKILL);
                        (void) dsh_leftovers_end();
                }
                _exit(125);
        }
        /* Nothing of the caller's stays open here: no pipe of another call waits on this process. */
        if (syscall(__NR_close_range, 0U, ~0U, 0U) < 0)
                for (int fd = 0; fd < 1024; fd++)
                        close(fd);
        wait_status = wait_for_command(command);
        /* The command has ended: so does everything it started, before the caller learns of its end. */
        (void) dsh_leftovers_end();
        end_like(wait_status);
}

/* Reads the stand-in's report; false when it ended without one. */
static bool read_report(int fd, struct stand_in_report *report)
{
        size_t used = 0;

        while (used < sizeof(*report)) {
                ssize_t length = read(fd, (char *) report + used, sizeof(*report) - used);

                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        return false;
                used += (size_t) length;
        }
        return true;
}

static void reap(pid_t pid)
{
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

pid_t dsh_spawn_standing_in(const dsh_exec_plan *plan, const dsh_spawn_options *options, pid_t *command_out,
                            dsh_spawn_failure *failure)
{
        struct stand_in_report report = { -1, { DSH_SPAWN_STAGE_SETUP, EIO } };
        sigset_t every, caller_mask;
        pid_t caller = getpid(), stand_in;
        int report_pipe[2], fork_errno;

        *failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_NONE, 0 };
        *command_out = -1;
        if (pipe2(report_pipe, O_CLOEXEC) < 0)
                return -errno;
        sigfillset(&every);
        pthread_sigmask(SIG_BLOCK, &every, &caller_mask);
        stand_in = fork();
        if (stand_in == 0) {
                close(report_pipe[0]);
                stand_in_main(plan, options, &caller_mask, caller, report_pipe[1]);
        }
        fork_errno = errno;
        pthread_sigmask(SIG_SETMASK, &caller_mask, NULL);
        close(report_pipe[1]);
        if (stand_in < 0) {
                close(report_pipe[0]);
                return -fork_errno;
        }
        if (!read_report(report_pipe[0], &report))
                report.command = -1;
        close(report_pipe[0]);
        if (report.command < 0) {
                reap(stand_in);
                *failure = report.failure;
                return -ECHILD;
        }
        if (!remember(stand_in)) {
                /* Unknown to dsh_signal_command(), it could be SIGKILLed past its leftovers: refused. */
                kill(stand_in, DSH_STAND_IN_END_SIGNAL);
                reap(stand_in);
                *failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_SETUP, EAGAIN };
                return -ECHILD;
        }
        *command_out = report.command;
        return stand_in;
}
