/* SPDX-License-Identifier: MIT */
/*
 * The approval command channel of the bash tool (dsh_bash_approve_with_command):
 * a harness's program asked, within a bound, whether one escalated call may
 * run.  It is the harness's program, not the model's: it runs unconfined,
 * with the request on stdin (JSON) and in its environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/json.h"
#include "base/error.h"
#include "provider/process.h"
#include "provider/spawn.h"

extern char **environ;

#define ENVIRONMENT_PREFIX "DSH_SANDBOX_ESCALATION_"
/* Without a pidfd (Linux < 5.3), how often the wait looks whether the approval command has exited. */
#define EXIT_CHECK_MS 20

/* Appends NAME=VALUE (a copy) unless `value` is NULL. */
static int append_variable(char ***environment, const char *name, const char *value)
{
        dsh_autofree char *assignment = NULL;

        if (!value)
                return 0;
        if (asprintf(&assignment, ENVIRONMENT_PREFIX "%s=%s", name, value) < 0) {
                assignment = NULL;
                return -ENOMEM;
        }
        return dsh_strv_append(environment, assignment);
}

/*
 * NAME=the entries of `list`, one per line, unless there are none.  No entry
 * holds a line break (bash-escalation.c refuses one), so each line is one
 * granted root or host.
 */
static int append_list_variable(char ***environment, const char *name, char *const *list)
{
        dsh_autofree char *joined = NULL;
        size_t length = 0;

        if (!list || !list[0])
                return 0;
        for (char *const *entry = list; *entry; entry++)
                length += strlen(*entry) + 1;
        joined = malloc(length);
        if (!joined)
                return -ENOMEM;
        joined[0] = '\0';
        for (char *const *entry = list; *entry; entry++) {
                if (entry != list)
                        strcat(joined, "\n");
                strcat(joined, *entry);
        }
        return append_variable(environment, name, joined);
}

/* The caller's environment, with the request's variables in place of any of that name already there. */
static char **approval_environment(const dsh_bash_escalation *escalation)
{
        char **environment = calloc(1, sizeof(char *));

        for (char **variable = environ; environment && variable && *variable; variable++)
                if (strncmp(*variable, ENVIRONMENT_PREFIX, strlen(ENVIRONMENT_PREFIX)) != 0 &&
                    dsh_strv_append(&environment, *variable) < 0)
                        goto out_of_memory;
        if (!environment || append_variable(&environment, "COMMAND", escalation->command) < 0 ||
            append_variable(&environment, "MODE", dsh_mode_name(escalation->requested_mode)) < 0 ||
            append_variable(&environment, "CURRENT_MODE", dsh_mode_name(escalation->current_mode)) < 0 ||
            append_variable(&environment, "JUSTIFICATION", escalation->justification) < 0 ||
            append_variable(&environment, "WORKSPACE_ROOT", escalation->workspace_root) < 0 ||
            append_variable(&environment, "SESSION_ID", escalation->session_id) < 0 ||
            append_list_variable(&environment, "ADDITIONAL_WRITE", escalation->additional_write) < 0 ||
            append_list_variable(&environment, "ADDITIONAL_HOSTS", escalation->additional_hosts) < 0)
                goto out_of_memory;
        return environment;
out_of_memory:
        dsh_strv_free(environment);
        return NULL;
}

/* `fd` moved above stdio (the spawn puts the child's stdio in 0..2 and must not overwrite it first). */
static int above_stdio(int fd)
{
        int moved;

        if (fd > 2)
                return fd;
        moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        return moved;
}

struct approval_process {
        pid_t pid;
        int pidfd;
        int request_fd;         /* our end of its stdin; -1 once all was sent or it stopped reading */
        const char *request;
        size_t request_length;
        size_t sent;
};

/* Sends what the approval command will take of the request now; a peer that stopped reading ends the sending. */
static void send_request(struct approval_process *process)
{
        ssize_t length = send(process->request_fd, process->request + process->sent,
                              process->request_length - process->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (length > 0)
                process->sent += (size_t) length;
        if ((length < 0 && errno != EAGAIN && errno != EINTR) || process->sent == process->request_length) {
                /* All sent (EOF for its reader), or it will not read it (EPIPE): its answer still counts. */
                close(process->request_fd);
                process->request_fd = -1;
        }
}

/* Waits until the approval command exits (unreaped), sending the request meanwhile.  Returns 0 or -ETIMEDOUT. */
static int wait_for_answer(struct approval_process *process, long long deadline_ms)
{
        for (;;) {
                struct pollfd fds[2];
                int count = 0, exit_slot = -1, request_slot = -1, timeout, ready;

                if (process->request_fd >= 0) {
                        request_slot = count;
                        fds[count++] = (struct pollfd) { process->request_fd, POLLOUT, 0 };
                }
                if (process->pidfd >= 0) {
                        exit_slot = count;
                        fds[count++] = (struct pollfd) { process->pidfd, POLLIN, 0 };
                }
                timeout = dsh_poll_timeout_ms(deadline_ms);
                if (process->pidfd < 0 && (timeout < 0 || timeout > EXIT_CHECK_MS))
                        timeout = EXIT_CHECK_MS;
                ready = poll(fds, (nfds_t) count, timeout);
                if (ready < 0 && errno != EINTR)
                        return -errno;
                if (ready > 0 && request_slot >= 0 && fds[request_slot].revents)
                        send_request(process);
                if (exit_slot >= 0 ? ready > 0 && fds[exit_slot].revents != 0 : dsh_process_has_exited(process->pid))
                        return 0;
                if (dsh_monotonic_ms() >= deadline_ms)
                        return -ETIMEDOUT;
        }
}

/* Starts `/bin/sh -c COMMAND` with the request's environment, stdin `request_fd`, its output to `output_fd`. */
static int start_approval_command(const dsh_bash_approval_command *approval, char **environment, int stdin_fd,
                                  int output_fd, pid_t *pid_out, dsh_error *error)
{
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) approval->command, NULL };
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure;
        pid_t pid;

        plan.environment = environment;
        options.stdin_fd = stdin_fd;
        options.stdout_fd = output_fd;
        options.stderr_fd = output_fd;
        /* A group of its own: at the bound, all of it (a script's children too) can be ended. */
        options.new_process_group = true;
        pid = dsh_spawn_exec_plan(&plan, &options, &failure);
        if (pid == -ECHILD)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, failure.errno_value,
                                     "cannot run the approval command: %s", strerror(failure.errno_value));
        if (pid < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid, "cannot run the approval command: %s",
                                     strerror((int) -pid));
        *pid_out = pid;
        return 0;
}

int dsh_bash_approve_with_command(const dsh_bash_escalation *escalation, void *data, dsh_error *error)
{
        const dsh_bash_approval_command *approval = data;
        long timeout_ms = approval->timeout_ms > 0 ? approval->timeout_ms : DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS;
        struct approval_process process = { -1, -1, -1, NULL, 0, 0 };
        dsh_autofree char *request = NULL;
        char **environment = NULL;
        int sockets[2] = { -1, -1 }, output_fd = -1, wait_status = 0, result;

        if (!approval || !approval->command || !approval->command[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "no approval command");
        result = dsh_json_encode_bash_escalation(escalation, &request, error);
        if (result < 0)
                return result;
        environment = approval_environment(escalation);
        if (!environment)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        /* A socket, not a pipe: send(MSG_NOSIGNAL) to a reader that went away fails (EPIPE) without a SIGPIPE. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) < 0) {
                dsh_strv_free(environment);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot create the approval socket: %s",
                                     strerror(errno));
        }
        sockets[1] = above_stdio(sockets[1]);
        output_fd = approval->output_fd >= 0 ? dup(approval->output_fd) : open("/dev/null", O_WRONLY | O_CLOEXEC);
        output_fd = output_fd >= 0 ? above_stdio(output_fd) : -1;
        if (sockets[1] < 0 || output_fd < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot prepare the approval command: %s",
                                       strerror(errno));
        if (result == 0)
                result = start_approval_command(approval, environment, sockets[1], output_fd, &process.pid, error);
        dsh_strv_free(environment);
        if (sockets[1] >= 0)
                close(sockets[1]);
        if (output_fd >= 0)
                close(output_fd);
        if (result < 0) {
                close(sockets[0]);
                return result;
        }
        process.request_fd = sockets[0];
        process.request = request;
        process.request_length = strlen(request);
        process.pidfd = dsh_pidfd_open(process.pid);
        result = wait_for_answer(&process, dsh_monotonic_ms() + timeout_ms);
        if (process.request_fd >= 0)
                close(process.request_fd);
        if (process.pidfd >= 0)
                close(process.pidfd);
        /* Nothing of it outlives the question: its group goes while its unreaped pid still holds the group id. */
        dsh_kill_and_reap(process.pid, process.pid, &wait_status);
        if (result == -ETIMEDOUT)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ETIMEDOUT,
                                     "the approval command did not answer within %ld ms", timeout_ms);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "while waiting for the approval command: %s",
                                     strerror(-result));
        return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 ? 1 : 0;
}
