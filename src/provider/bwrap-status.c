/* SPDX-License-Identifier: MIT */
/*
 * The bwrap backend's status channels: bwrap's --json-status-fd records
 * (the sandbox exists, its init's pid; the command was exec'd) and
 * dsh-sandbox-exec's --status-fd record (the exec failed, or the helper
 * could not prepare the command).  A failure before exec is read here as
 * the runner's, never as the command's own exit status (backend-bwrap.c's
 * opening says why the channels exist).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "provider/bwrap-status.h"
#include "core/sandbox-exec-status.h"
#include "provider/process.h"
#include "provider/spawn.h"
#include "shield/shield.h"

/* The number after "child-pid": in a status record, or 0. */
static pid_t parse_child_pid(const char *record)
{
        const char *field = strstr(record, "\"child-pid\"");
        char *end;
        long value;

        if (!field)
                return 0;
        field += strlen("\"child-pid\"");
        field += strspn(field, " \t\n");
        if (*field != ':')
                return 0;
        field++;
        field += strspn(field, " \t\n");
        errno = 0;
        value = strtol(field, &end, 10);
        if (errno || end == field || value <= 1 || value > INT_MAX)
                return 0;
        return (pid_t) value;
}

/* The first record of --json-status-fd: see bwrap-status.h. */
int dsh_bwrap_read_first_record(int fd, long long deadline_ms, pid_t *child_pid, bool *exec_seen)
{
        char buffer[1024];
        size_t used = 0;
        ssize_t length;

        *exec_seen = false;
        *child_pid = 0;
        for (;;) {
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                int ready = poll(&poll_fd, 1, dsh_poll_timeout_ms(deadline_ms));

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready == 0)
                        return -ETIMEDOUT;
                if (ready < 0)
                        break;
                length = read(fd, buffer + used, sizeof(buffer) - 1 - used);
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        break;
                used += (size_t) length;
                buffer[used] = '\0';
                if (strchr(buffer, '\n') || used == sizeof(buffer) - 1)
                        break;
        }
        buffer[used] = '\0';
        *exec_seen = strstr(buffer, "\"exit-code\"") != NULL;
        if (!strstr(buffer, "\"child-pid\""))
                return 0;
        *child_pid = parse_child_pid(buffer);
        return 1;
}

/*
 * The process group signals for the command go to: bwrap's --new-session
 * makes the sandbox's init (pid 1 inside, `reported` outside) a session and
 * group leader, and the command runs in its group.  Taken only when
 * `reported` is a child of `runner`: whatever a runner writes (a fake that
 * says "child-pid": 1) must never aim signals at the caller's own group or
 * at every process (kill(-1, ...)).  Returns 0 when it cannot be confirmed.
 */
pid_t dsh_bwrap_sandbox_process_group(pid_t runner, pid_t reported)
{
        char path[64], stat_line[512];
        const char *fields;
        long parent = 0;
        ssize_t length;
        int fd;

        if (reported <= 1 || reported == runner)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) reported);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        length = read(fd, stat_line, sizeof(stat_line) - 1);
        close(fd);
        if (length <= 0)
                return 0;
        stat_line[length] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold anything, so the fields start after the last ')'. */
        fields = strrchr(stat_line, ')');
        if (!fields || sscanf(fields + 1, " %*c %ld", &parent) != 1)
                return 0;
        return parent == (long) runner ? reported : 0;
}

/* Everything a finished runner left in `fd` (non-blocking), NUL-terminated in `buffer`; closes the fd. */
static void drain_status_fd(int *fd, char *buffer, size_t size)
{
        size_t used = 0;
        ssize_t length;

        buffer[0] = '\0';
        if (*fd < 0)
                return;
        fcntl(*fd, F_SETFL, O_NONBLOCK);
        while (used < size - 1 &&
               ((length = read(*fd, buffer + used, size - 1 - used)) > 0 || (length < 0 && errno == EINTR)))
                if (length > 0)
                        used += (size_t) length;
        buffer[used] = '\0';
        close(*fd);
        *fd = -1;
}

/*
 * What the runner's last step inside the sandbox (dsh-sandbox-exec) said on
 * its own channel: that the program could not be executed (the command's
 * failure, 126/127), or that it could not prepare the command (the runner's).
 */
static void settle_exec_status(dsh_child *child)
{
        char record[700], text[600];
        int errno_value;

        drain_status_fd(&child->exec_status_fd, record, sizeof(record));
        switch (dsh_sandbox_exec_status_parse(record, &errno_value, text, sizeof(text))) {
        case DSH_SANDBOX_EXEC_STATUS_EXEC:
                child->exec_errno = errno_value > 0 ? errno_value : EIO;
                break;
        case DSH_SANDBOX_EXEC_STATUS_HELPER:
                child->runner_failed = true;
                free(child->runner_failure_detail);
                child->runner_failure_detail = strdup(text);
                break;
        case DSH_SANDBOX_EXEC_STATUS_NONE:
                break;
        }
}

/*
 * After waitpid(): bwrap writes its "exit-code" record only once it exec'd,
 * and dsh-sandbox-exec its record only when the exec failed.
 */
void dsh_bwrap_settle(dsh_child *child, int wait_status)
{
        /* No process of the sandbox is left (they die with its init): nothing can race this check. */
        child->moved_aside = dsh_shield_audit(child->audit_absent, &child->warnings, &child->moved_aside_paths);
        char buffer[4096];

        if (child->runner_status_fd < 0)
                return;
        /*
         * bwrap writes its "exit-code" record before it exits, so after
         * waitpid() the record is in the pipe if it was ever written.  The
         * read does not block: a daemon the command left behind cannot hold
         * the status fd (bwrap closes it before exec), but nothing here
         * should wait on anyone else's goodwill either.
         */
        drain_status_fd(&child->runner_status_fd, buffer, sizeof(buffer));
        if (strstr(buffer, "\"exit-code\""))
                child->command_started = true;
        /* The last step's refusal (stdio it could not hand over) is no sign of a broken runner: the verdict stays. */
        settle_exec_status(child);
        if (child->runner_failed)
                return;
        /*
         * Only a runner that exited with a failure status and never reported
         * an exec is called failed.  A runner killed by a signal may have been
         * running the command when it died: that is the command's outcome.
         */
        if (child->command_started || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) == 0)
                return;
        child->runner_failed = true;
        free(child->runner_failure_detail);
        if (asprintf(&child->runner_failure_detail, "%s exited with status %d before it executed the command",
                     child->facts.backend ? child->facts.backend : "the runner", WEXITSTATUS(wait_status)) < 0)
                child->runner_failure_detail = NULL;
}

/* Two status pipes above stdio: bwrap's --json-status-fd and dsh-sandbox-exec's --status-fd. */
int dsh_bwrap_open_status_pipes(int json_pipe[2], int exec_pipe[2], dsh_error *error)
{
        int result = dsh_pipe_above_stdio(json_pipe);

        if (result == 0) {
                result = dsh_pipe_above_stdio(exec_pipe);
                if (result < 0) {
                        close(json_pipe[0]);
                        close(json_pipe[1]);
                }
        }
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the runner status pipes: %s",
                                     strerror(-result));
        return 0;
}

/*
 * bwrap is gone before the sandbox existed: the command never ran.  Reaps
 * it; -ECHILD tells the provider to learn bwrap's own reason from a probe
 * (its stderr was the caller's).
 */
int dsh_bwrap_report_early_failure(pid_t pid, dsh_mode mode, dsh_error *error)
{
        char detail[96];
        int wait_status = 0;

        while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
                ;
        snprintf(detail, sizeof(detail), "bwrap exited with status %d before it created the sandbox",
                 WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
        dsh_error_set_unavailable(error, mode, detail);
        return -ECHILD;
}
