/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/landlock.h"
#include "core/process-hardening.h"
#include "error.h"
#include "spawn.h"

static int child_redirect(int fd, int target)
{
        if (fd < 0 || fd == target)
                return 0;
        return dup2(fd, target) < 0 ? -errno : 0;
}

/*
 * The order is the security argument:
 *  1. stdio and session are arranged while nothing is restricted yet;
 *  2. the terminal filter and the Landlock domain are applied (both set
 *     no_new_privs first); after this point every path the process opens is
 *     checked against the policy, and every failure so far returns with the
 *     command never run;
 *  3. every inherited fd above 2 is closed (an fd opened before the domain
 *     would bypass it), keeping only the status pipe (close-on-exec) and a
 *     documented keep_fd;
 *  4. exec.
 * Only raw system calls: safe in a forked child of a multi-threaded process.
 */
void dsh_exec_plan_apply(const dsh_exec_plan *plan, const dsh_spawn_options *options, int status_fd,
                         dsh_spawn_failure *failure)
{
        int result;

        *failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_SETUP, 0 };
        if (child_redirect(options->stdin_fd, 0) < 0 || child_redirect(options->stdout_fd, 1) < 0 ||
            child_redirect(options->stderr_fd, 2) < 0 || (options->new_session && setsid() < 0)) {
                failure->errno_value = errno;
                return;
        }
        failure->stage = DSH_SPAWN_STAGE_CONFINE;
        if (plan->terminal_filter) {
                result = dsh_install_terminal_injection_filter();
                if (result < 0) {
                        failure->errno_value = -result;
                        return;
                }
        }
        if (plan->landlock_ruleset_fd >= 0) {
                result = dsh_landlock_enforce(plan->landlock_ruleset_fd);
                if (result < 0) {
                        failure->errno_value = -result;
                        return;
                }
        }
        failure->stage = DSH_SPAWN_STAGE_SETUP;
        result = dsh_close_inherited_fds(status_fd, plan->keep_fd);
        if (result < 0) {
                failure->errno_value = -result;
                return;
        }
        if (plan->keep_fd >= 0 && fcntl(plan->keep_fd, F_SETFD, 0) < 0) {
                failure->errno_value = errno;
                return;
        }
        /* Signal dispositions set to "ignore" survive exec; the command starts with defaults. */
        signal(SIGPIPE, SIG_DFL);
        execvp(plan->argv[0], plan->argv);
        failure->stage = DSH_SPAWN_STAGE_EXEC;
        failure->errno_value = errno;
}

/* Runs in the forked child: apply the plan, or report why not and leave. */
__attribute__((noreturn)) static void child_exec(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                                 int status_fd)
{
        dsh_spawn_failure failure;
        ssize_t ignored;

        dsh_exec_plan_apply(plan, options, status_fd, &failure);
        ignored = write(status_fd, &failure, sizeof(failure));
        (void) ignored;
        _exit(125);
}

static int wait_for_exec(int status_fd, dsh_spawn_failure *failure)
{
        ssize_t length;

        do
                length = read(status_fd, failure, sizeof(*failure));
        while (length < 0 && errno == EINTR);
        if (length == 0)
                return 0;  /* EOF: the pipe was closed by a successful exec */
        if (length != (ssize_t) sizeof(*failure)) {
                failure->stage = DSH_SPAWN_STAGE_SETUP;
                failure->errno_value = length < 0 ? errno : EPROTO;
        }
        return -ECHILD;
}

pid_t dsh_spawn_exec_plan(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                          dsh_spawn_failure *failure)
{
        int status_pipe[2];
        pid_t pid;
        int result;

        *failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_NONE, 0 };
        if (pipe2(status_pipe, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                result = -errno;
                close(status_pipe[0]);
                close(status_pipe[1]);
                return result;
        }
        if (pid == 0) {
                close(status_pipe[0]);
                child_exec(plan, options, status_pipe[1]);
        }
        close(status_pipe[1]);
        result = wait_for_exec(status_pipe[0], failure);
        close(status_pipe[0]);
        if (result < 0) {
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                return result;
        }
        return pid;
}

int dsh_spawn_failure_to_error(const dsh_spawn_failure *failure, dsh_mode mode, const char *argv0, dsh_error *error)
{
        char detail[512];

        switch (failure->stage) {
        case DSH_SPAWN_STAGE_EXEC:
                return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, failure->errno_value, "%s: %s", argv0,
                                     strerror(failure->errno_value));
        case DSH_SPAWN_STAGE_CONFINE:
                snprintf(detail, sizeof(detail), "cannot apply the sandbox in the child: %s",
                         strerror(failure->errno_value));
                break;
        case DSH_SPAWN_STAGE_SETUP:
        case DSH_SPAWN_STAGE_NONE:
                snprintf(detail, sizeof(detail), "cannot prepare the child process: %s",
                         strerror(failure->errno_value));
                break;
        }
        if (!dsh_mode_is_confined(mode))
                return dsh_error_set(error, DSH_ERROR_SYSTEM, failure->errno_value, "%s", detail);
        dsh_error_set_unavailable(error, mode, detail);
        return -failure->errno_value;
}
