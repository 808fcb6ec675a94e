/* SPDX-License-Identifier: MIT */
/*
 * One run of `bash -c COMMAND` for the bash tool, to its end (see
 * bash-execution.h): the spawn through the runtime's provider in a session of
 * its own, both streams read into bounded captures, the timeout, the
 * caller's cancellation, and the end of the command's process group.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bash/bash-execution.h"
#include "base/error.h"
#include "provider/process.h"
#include "provider/spawn.h"

/* One read from a stream: large enough that 100 MB of output costs few system calls. */
#define READ_CHUNK (128 * 1024)
/* The pipe buffer asked for (best effort): fewer wake-ups for a command that writes fast. */
#define PIPE_SIZE (1024 * 1024)
/* Without a pidfd (Linux < 5.3), how often the loop looks whether the command has exited. */
#define EXIT_CHECK_MS 20

/*
 * A signal for the command (dsh_signal_command(): its group; a bwrap
 * sandbox still starting is ended), and SIGKILL for all of it.  Only while
 * `pid` is unreaped: its pid, the group it leads and the sandbox's init
 * cannot be reused before.
 */
static void signal_command(dsh_bash_execution *run, int signal_number)
{
        if (!run->exited)
                dsh_signal_command(run->pid, run->group, signal_number);
}

static void kill_command(dsh_bash_execution *run)
{
        if (run->exited || run->killed)
                return;
        run->killed = true;
        dsh_signal_command(run->pid, run->group, SIGKILL);
}

static void close_stream(dsh_bash_execution *run, int stream)
{
        if (run->streams[stream] >= 0)
                close(run->streams[stream]);
        run->streams[stream] = -1;
}

static void take_cancellation(dsh_bash_execution *run)
{
        int signal_number = dsh_bash_cancellation_take(run->request->cancellation);

        if (!signal_number)
                return;
        if (run->exited) {
                /* The command had ended on its own: only the drain is cut short. */
                for (int stream = 0; stream < DSH_BASH_STREAM_COUNT; stream++)
                        close_stream(run, stream);
                return;
        }
        run->cancelled = true;
        if (!run->cancel_signal || signal_number == SIGKILL)
                run->cancel_signal = signal_number;
        if (signal_number == SIGKILL) {
                kill_command(run);
                return;
        }
        signal_command(run, signal_number);
        if (!run->grace_deadline_ms)
                run->grace_deadline_ms = dsh_monotonic_ms() + DSH_BASH_CANCEL_GRACE_MS;
}

/*
 * The spawned process has exited (it is a zombie, not yet reaped).  When it
 * leads the command's group, whatever is left of the group goes now, while
 * the zombie still holds the group's id (after the reap the id could name
 * another group).  A group it does not lead (bwrap's sandbox) ended with its
 * runner: the sandbox's pid namespace dies with its init, and that group's
 * id is no longer ours to signal.  Then the reap, and the runner's status
 * channels are read (dsh_child_wait).
 */
static int finish_spawned(dsh_bash_execution *run)
{
        int result;

        if (run->group == run->pid)
                kill(-run->group, SIGKILL);
        result = dsh_child_wait(run->child, &run->wait_status);
        run->exited = true;
        run->drain_deadline_ms = dsh_monotonic_ms() + DSH_BASH_DRAIN_MS;
        return result;
}

/* One read of a ready stream into its capture (and the caller's live view).  Returns 0 or -ENOMEM. */
static int read_stream(dsh_bash_execution *run, int stream, char *buffer)
{
        ssize_t length = read(run->streams[stream], buffer, READ_CHUNK);

        if (length < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (length <= 0) {
                close_stream(run, stream);
                return 0;
        }
        if (dsh_capture_append(&run->captures[stream], buffer, (size_t) length) < 0)
                return -ENOMEM;
        /* A live view whose reader went away: the command's next write fails, as in a pipeline. */
        if (run->request->on_output && run->request->on_output(stream == DSH_BASH_STREAM_OUT ? 1 : 2, buffer,
                                                               (size_t) length, run->request->output_data) < 0)
                close_stream(run, stream);
        return 0;
}

static long long earlier(long long current, long long candidate)
{
        if (!candidate)
                return current;
        return !current || candidate < current ? candidate : current;
}

/* The next moment the loop must act without any fd being ready; 0: none. */
static long long next_deadline(const dsh_bash_execution *run)
{
        long long next = 0;

        if (run->exited)
                return run->drain_deadline_ms;
        if (!run->killed) {
                next = earlier(next, run->deadline_ms);
                next = earlier(next, run->grace_deadline_ms);
        }
        if (run->pidfd < 0)
                next = earlier(next, dsh_monotonic_ms() + EXIT_CHECK_MS);
        return next;
}

/* Acts on the clock: the timeout, the end of a cancellation's grace, the end of the drain. */
static void check_deadlines(dsh_bash_execution *run)
{
        long long now = dsh_monotonic_ms();

        if (!run->exited && !run->killed && run->deadline_ms && now >= run->deadline_ms) {
                run->timed_out = true;
                kill_command(run);
        }
        if (!run->exited && !run->killed && run->grace_deadline_ms && now >= run->grace_deadline_ms)
                kill_command(run);
        if (run->exited && now >= run->drain_deadline_ms) {
                for (int stream = 0; stream < DSH_BASH_STREAM_COUNT; stream++)
                        if (run->streams[stream] >= 0) {
                                run->drain_cut = true;
                                close_stream(run, stream);
                        }
        }
}

/*
 * Until the spawned process has exited and both streams are at EOF (or the
 * drain's bound): reads the streams as they fill, acts on cancellation and
 * the clock.  Returns 0, or a negative errno (poll, memory, the wait).
 */
static int run_loop(dsh_bash_execution *run)
{
        dsh_autofree char *buffer = malloc(READ_CHUNK);
        int cancel_fd = dsh_bash_cancellation_fd(run->request->cancellation);

        if (!buffer)
                return -ENOMEM;
        while (!run->exited || run->streams[DSH_BASH_STREAM_OUT] >= 0 || run->streams[DSH_BASH_STREAM_ERR] >= 0) {
                struct pollfd fds[DSH_BASH_STREAM_COUNT + 2];
                int slots[DSH_BASH_STREAM_COUNT] = { -1, -1 }, exit_slot = -1, cancel_slot = -1;
                int count = 0, ready;
                bool has_exited = false;

                for (int stream = 0; stream < DSH_BASH_STREAM_COUNT; stream++)
                        if (run->streams[stream] >= 0) {
                                slots[stream] = count;
                                fds[count++] = (struct pollfd) { run->streams[stream], POLLIN, 0 };
                        }
                if (!run->exited && run->pidfd >= 0) {
                        exit_slot = count;
                        fds[count++] = (struct pollfd) { run->pidfd, POLLIN, 0 };
                }
                if (cancel_fd >= 0) {
                        cancel_slot = count;
                        fds[count++] = (struct pollfd) { cancel_fd, POLLIN, 0 };
                }
                ready = poll(fds, (nfds_t) count, dsh_poll_timeout_ms(next_deadline(run)));
                if (ready < 0 && errno != EINTR)
                        return -errno;
                if (ready < 0)
                        continue;
                if (cancel_slot >= 0 && fds[cancel_slot].revents)
                        take_cancellation(run);
                for (int stream = 0; stream < DSH_BASH_STREAM_COUNT; stream++)
                        if (slots[stream] >= 0 && run->streams[stream] >= 0 && fds[slots[stream]].revents &&
                            read_stream(run, stream, buffer) < 0)
                                return -ENOMEM;
                if (!run->exited)
                        has_exited = exit_slot >= 0 ? fds[exit_slot].revents != 0 : dsh_process_has_exited(run->pid);
                if (has_exited) {
                        int result = finish_spawned(run);

                        if (result < 0)
                                return result;
                }
                check_deadlines(run);
        }
        return 0;
}

/* /dev/null for the command's stdin, and a pipe per output stream (read ends non-blocking, above stdio). */
static int open_stdio(int *null_fd, int out_pipe[2], int err_pipe[2], dsh_error *error)
{
        int result;

        *null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (*null_fd < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot open /dev/null: %s", strerror(errno));
        result = dsh_pipe_above_stdio(out_pipe);
        if (result == 0) {
                result = dsh_pipe_above_stdio(err_pipe);
                if (result < 0) {
                        close(out_pipe[0]);
                        close(out_pipe[1]);
                }
        }
        if (result < 0) {
                close(*null_fd);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the output pipes: %s",
                                     strerror(-result));
        }
        fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
        fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
        fcntl(out_pipe[0], F_SETPIPE_SZ, PIPE_SIZE);
        fcntl(err_pipe[0], F_SETPIPE_SZ, PIPE_SIZE);
        return 0;
}

void dsh_bash_execution_clear(dsh_bash_execution *run)
{
        for (int stream = 0; stream < DSH_BASH_STREAM_COUNT; stream++) {
                close_stream(run, stream);
                dsh_capture_clear(&run->captures[stream]);
        }
        if (run->pidfd >= 0)
                close(run->pidfd);
        run->pidfd = -1;
        dsh_child_free(run->child);
        run->child = NULL;
}

/* A system failure while the command runs: it must not outlive the call. */
static void abandon(dsh_bash_execution *run)
{
        if (run->exited)
                return;
        kill_command(run);
        if (run->group == run->pid)
                kill(-run->group, SIGKILL);
        (void) dsh_child_wait(run->child, &run->wait_status);
        run->exited = true;
}


int dsh_bash_execute(dsh_runtime *runtime, const dsh_bash_request *request, const dsh_policy *policy, int cwd_fd,
                     dsh_bash_execution *run, dsh_error *error)
{
        char *argv[] = { (char *) "bash", (char *) "-c", (char *) request->command, NULL };
        size_t limit = request->output_limit ? request->output_limit : DSH_BASH_OUTPUT_LIMIT_DEFAULT;
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        int null_fd, out_pipe[2], err_pipe[2], result;

        *run = (dsh_bash_execution) { .request = request, .pidfd = -1, .streams = { -1, -1 } };
        result = open_stdio(&null_fd, out_pipe, err_pipe, error);
        if (result < 0)
                return result;
        run->streams[DSH_BASH_STREAM_OUT] = out_pipe[0];
        run->streams[DSH_BASH_STREAM_ERR] = err_pipe[0];
        options.stdin_fd = null_fd;
        options.stdout_fd = out_pipe[1];
        options.stderr_fd = err_pipe[1];
        /*
         * A session of its own: no controlling terminal, so the command can
         * neither read the user's keystrokes (an approval prompt's answer
         * included) nor draw on the terminal, and the terminal's Ctrl-C
         * reaches only the caller, which decides (a cancellation).  The
         * session is one process group, ended as a whole.
         */
        options.new_session = true;
        options.cwd_fd = cwd_fd;
        /*
         * No held-back watch (inotify on .git and the like): the supervisor
         * records a change refused to a held-back file on both backends (the
         * rename over .git/config, an open in .git/hooks), and the records
         * are the whole of the evidence (docs/bash-tool.md, "Held-back files").
         */
        result = dsh_provider_spawn(dsh_runtime_provider(runtime), argv, policy, &options, &run->child, error);
        close(null_fd);
        close(out_pipe[1]);
        close(err_pipe[1]);
        if (result < 0)
                return result;
        run->pid = dsh_child_pid(run->child);
        run->group = dsh_child_process_group(run->child);
        run->pidfd = dsh_pidfd_open(run->pid);
        if (request->timeout_ms > 0)
                run->deadline_ms = dsh_monotonic_ms() + request->timeout_ms;
        dsh_capture_init(&run->captures[DSH_BASH_STREAM_OUT], limit);
        dsh_capture_init(&run->captures[DSH_BASH_STREAM_ERR], limit);
        /* A cancellation that came during the spawn acts now. */
        take_cancellation(run);
        result = run_loop(run);
        if (result < 0) {
                abandon(run);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "while the command ran: %s", strerror(-result));
        }
        return 0;
}
