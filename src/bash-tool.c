/* SPDX-License-Identifier: MIT */
/*
 * The bash tool (dsh-sandbox/bash-tool.h, docs/bash-tool.md): validation and
 * escalation, the run itself (a bounded capture of both streams, the
 * timeout, the caller's cancellation, the end of the command's process
 * group), and the attribution of what happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bash-capture.h"
#include "dsh-sandbox/bash-tool.h"
#include "error.h"
#include "process.h"
#include "spawn.h"

/* The exact texts (docs/bash-tool.md); "%s" is a mode. */
#define MARKER_DENIED "[sandbox: file access denied under %s mode]"
#define MARKER_ESCALATION                                                                                     \
        "[sandbox: escalation available \xe2\x80\x94 retry this exact command once with sandbox_permissions " \
        "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
#define MARKER_RUNNER_FAILED                                                                                  \
        "[sandbox: the sandbox runner itself failed under %s mode \xe2\x80\x94 the command did not run; this " \
        "is a sandbox problem, not a command failure]"
#define STAYS_DENIED "it stays denied, so stop and explain instead of working around it"
#define REJECTED_TEXT "the user rejected escalating this command to \"%s\"; " STAYS_DENIED
#define NO_CHANNEL_TEXT                                                                                       \
        "escalating this command to \"%s\" needs the user's approval, and there is no approval channel to ask " \
        "the user; " STAYS_DENIED

/* One read from a stream: large enough that 100 MB of output costs few system calls. */
#define READ_CHUNK (128 * 1024)
/* The pipe buffer asked for (best effort): fewer wake-ups for a command that writes fast. */
#define PIPE_SIZE (1024 * 1024)
/* Without a pidfd (Linux < 5.3), how often the loop looks whether the command has exited. */
#define EXIT_CHECK_MS 20
/* The highest signal number on Linux (SIGRTMAX is a function call in glibc). */
#define SIGRTMAX_LINUX 64

enum { STREAM_OUT, STREAM_ERR, STREAM_COUNT };

const char *dsh_bash_kind_name(dsh_bash_kind kind)
{
        switch (kind) {
        case DSH_BASH_COMPLETED:
                return "completed";
        case DSH_BASH_DENIED:
                return "denied";
        case DSH_BASH_RUNNER_FAILED:
                return "runner-failed";
        case DSH_BASH_TIMED_OUT:
                return "timed-out";
        case DSH_BASH_CANCELLED:
                return "cancelled";
        case DSH_BASH_REJECTED:
                return "rejected";
        }
        return "invalid";
}

/* ------------------------------------------------------- cancellation -- */

struct dsh_bash_cancellation {
        int read_fd;
        int write_fd;
        bool requested;   /* a request was read: the run's side only */
};

int dsh_bash_cancellation_new(dsh_bash_cancellation **cancellation_out, dsh_error *error)
{
        dsh_bash_cancellation *cancellation = calloc(1, sizeof(*cancellation));
        int fds[2], result;

        *cancellation_out = NULL;
        if (!cancellation)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_pipe_above_stdio(fds);
        if (result < 0) {
                free(cancellation);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the cancellation pipe: %s",
                                     strerror(-result));
        }
        /* Non-blocking both ways: a signal handler must never block on a full pipe (it is cancelled already). */
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        cancellation->read_fd = fds[0];
        cancellation->write_fd = fds[1];
        *cancellation_out = cancellation;
        return 0;
}

void dsh_bash_cancellation_free(dsh_bash_cancellation *cancellation)
{
        if (!cancellation)
                return;
        close(cancellation->read_fd);
        close(cancellation->write_fd);
        free(cancellation);
}

void dsh_bash_cancel(dsh_bash_cancellation *cancellation, int signal_number)
{
        int saved_errno = errno;
        unsigned char request = signal_number > 0 && signal_number < NSIG && signal_number < 256
                                        ? (unsigned char) signal_number
                                        : (unsigned char) SIGKILL;

        if (cancellation && write(cancellation->write_fd, &request, 1) < 0) {
                /* EAGAIN: the pipe is full of earlier requests, which say the same. */
        }
        errno = saved_errno;
}

/*
 * Reads the requests that came since the last look.  Returns the signal to
 * send (SIGKILL when any request asked for it), or 0 when none came.
 */
static int cancellation_take(dsh_bash_cancellation *cancellation)
{
        unsigned char requests[64];
        int signal_number = 0;
        ssize_t length;

        if (!cancellation)
                return 0;
        while ((length = read(cancellation->read_fd, requests, sizeof(requests))) > 0 ||
               (length < 0 && errno == EINTR))
                for (ssize_t i = 0; i < length; i++)
                        if (signal_number != SIGKILL)
                                signal_number = requests[i];
        if (signal_number)
                cancellation->requested = true;
        return signal_number;
}

static bool cancellation_requested(dsh_bash_cancellation *cancellation)
{
        if (!cancellation)
                return false;
        (void) cancellation_take(cancellation);
        return cancellation->requested;
}

/* --------------------------------------------------------- the result -- */

static int result_set_message(dsh_bash_result *result, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int result_set_message(dsh_bash_result *result, const char *format, ...)
{
        va_list arguments;
        char *message = NULL;
        int length;

        va_start(arguments, format);
        length = vasprintf(&message, format, arguments);
        va_end(arguments);
        if (length < 0)
                return -ENOMEM;
        free(result->message);
        result->message = message;
        return 0;
}

/* Appends the runner-failure or the denial marker for the call's mode. */
static int result_add_marker(dsh_bash_result *result, bool runner_failed)
{
        dsh_autofree char *marker = NULL;
        int length = runner_failed ? asprintf(&marker, MARKER_RUNNER_FAILED, dsh_mode_name(result->sandbox.mode))
                                   : asprintf(&marker, MARKER_DENIED, dsh_mode_name(result->sandbox.mode));

        if (length < 0) {
                marker = NULL;
                return -ENOMEM;
        }
        return dsh_strv_append(&result->markers, marker);
}

static int result_add_runner_marker(dsh_bash_result *result)
{
        return result_add_marker(result, true);
}

/* The denial, and the way out where a wider mode exists (which the hint names without choosing). */
static int result_add_denial_markers(dsh_bash_result *result)
{
        int appended = result_add_marker(result, false);

        if (appended == 0 && result->sandbox.mode != DSH_MODE_DANGER_FULL_ACCESS)
                appended = dsh_strv_append(&result->markers, MARKER_ESCALATION);
        return appended;
}

static int result_add_warning(dsh_bash_result *result, const char *warning)
{
        return dsh_strv_append(&result->warnings, warning);
}

void dsh_bash_result_clear(dsh_bash_result *result)
{
        if (!result)
                return;
        free(result->standard_output.text);
        free(result->standard_error.text);
        free(result->sandbox.backend);
        dsh_strv_free(result->markers);
        free(result->message);
        dsh_error_clear(&result->error);
        dsh_strv_free(result->warnings);
        *result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
}

/* A result before anything ran: empty output, the lists allocated (the header promises never NULL). */
static int result_start(dsh_bash_result *result, dsh_mode mode)
{
        *result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        result->sandbox.mode = mode;
        result->markers = calloc(1, sizeof(char *));
        result->warnings = calloc(1, sizeof(char *));
        result->standard_output.text = strdup("");
        result->standard_error.text = strdup("");
        if (!result->markers || !result->warnings || !result->standard_output.text || !result->standard_error.text)
                return -ENOMEM;
        return 0;
}

/*
 * The sandbox runner failed (or could not be spawned): the command never ran,
 * and no status is the command's.  `runner_error` (moved into the result)
 * says why; the marker tells the model this is not the command's failure,
 * so that it never "fixes" it by dropping the sandbox.
 */
static int result_runner_failed(dsh_bash_result *result, dsh_error *runner_error)
{
        result->kind = DSH_BASH_RUNNER_FAILED;
        result->sandbox.runner_failed = true;
        result->exit_code = -1;
        result->signal = 0;
        result->error = *runner_error;
        *runner_error = (dsh_error) DSH_ERROR_INIT;
        return result_add_runner_marker(result);
}

static int result_cancelled_before_start(dsh_bash_result *result)
{
        result->kind = DSH_BASH_CANCELLED;
        result->cancelled = true;
        return result_set_message(result, "cancelled before the command started: it did not run");
}

/* ----------------------------------------------------------- validation -- */

/* True when `text` has something besides blanks. */
static bool has_content(const char *text)
{
        for (; *text; text++)
                if (*text != ' ' && *text != '\t' && *text != '\n' && *text != '\r' && *text != '\v' && *text != '\f')
                        return true;
        return false;
}

/*
 * A justification is shown to the user in the approval prompt: one line of
 * text, so that it can neither hide the request behind line breaks nor
 * carry a terminal escape sequence that redraws what the user reads.
 */
static bool justification_is_sentence(const char *text)
{
        if (!has_content(text) || !dsh_text_is_utf8(text, strlen(text), NULL))
                return false;
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++)
                if (*byte < 0x20 || *byte == 0x7f)
                        return false;
        return true;
}

/* The request's own checks, in the order of docs/bash-tool.md.  Sets *escalate and *requested. */
static int validate_request(const dsh_bash_request *request, bool *escalate, dsh_mode *requested, dsh_error *error)
{
        *escalate = false;
        if (!request || !request->policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the bash tool needs a resolved policy");
        if (!request->command || !has_content(request->command))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command is empty");
        if (request->sandbox_permissions && !request->justification)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: sandbox_permissions requires a justification");
        if (request->justification && !request->sandbox_permissions)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: justification is only valid together with "
                                     "sandbox_permissions");
        if (!request->sandbox_permissions)
                return 0;
        if (dsh_mode_parse(request->sandbox_permissions, requested) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: sandbox_permissions must be \"read-only\", "
                                     "\"workspace-write\" or \"danger-full-access\"");
        if (!justification_is_sentence(request->justification))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid justification: expected a non-empty sentence");
        *escalate = true;
        return 0;
}

/*
 * Asks the approval channel about one call under `requested`.  Returns 0
 * with *approved set (a channel that could not ask leaves a warning and
 * counts as a no), or -ENOMEM.
 */
static int ask_approval(const dsh_bash_request *request, const dsh_policy *policy, dsh_mode requested,
                        dsh_bash_result *result, bool *approved)
{
        const dsh_bash_escalation escalation = {
                request->command, policy->mode, requested, request->justification, policy->workspace_root,
                policy->session_id,
        };
        dsh_error channel_error = DSH_ERROR_INIT;
        int answer;

        *approved = false;
        if (!request->approve)
                return 0;
        answer = request->approve(&escalation, request->approve_data, &channel_error);
        if (answer < 0) {
                dsh_autofree char *warning = NULL;

                if (asprintf(&warning, "the approval channel could not ask the user: %s",
                             channel_error.message ? channel_error.message : strerror(-answer)) < 0 ||
                    result_add_warning(result, warning) < 0) {
                        dsh_error_clear(&channel_error);
                        return -ENOMEM;
                }
        }
        dsh_error_clear(&channel_error);
        *approved = answer == 1;
        return 0;
}

/* ----------------------------------------------------------- the run -- */

struct bash_run {
        const dsh_bash_request *request;
        dsh_child *child;
        pid_t pid;                      /* the process the provider spawned: the command, or its runner */
        pid_t group;                    /* where signals for the command go */
        int pidfd;                      /* readable once `pid` exited; -1: looked at every EXIT_CHECK_MS */
        int streams[STREAM_COUNT];      /* the read ends; -1 once at EOF or given up */
        dsh_capture captures[STREAM_COUNT];
        long long deadline_ms;          /* the timeout; 0: none */
        long long grace_deadline_ms;    /* SIGKILL after a cancellation's signal; 0: none */
        long long drain_deadline_ms;    /* the end of reading once `pid` has exited */
        bool exited;                    /* `pid` has exited and was reaped */
        bool killed;                    /* SIGKILL went to the group */
        bool timed_out;
        bool cancelled;
        int cancel_signal;
        bool drain_cut;                 /* a process outside the group still held the output at the drain's end */
        int wait_status;
};

/*
 * A signal for the command: to its process group.  Under bwrap that is the
 * sandbox's group, which exists only once the sandbox's init made it: until
 * then (ESRCH) the runner itself takes it, and dies of it before the
 * command was exec'd.  Only while `pid` is unreaped: its pid, and the group
 * it leads, cannot be reused before.
 */
static void signal_command(struct bash_run *run, int signal_number)
{
        if (run->exited)
                return;
        if (run->group > 0 && kill(-run->group, signal_number) == 0)
                return;
        kill(run->pid, signal_number);
}

/* Ends everything of the command: its group, and the runner when the group is not the runner's own. */
static void kill_command(struct bash_run *run)
{
        if (run->exited || run->killed)
                return;
        run->killed = true;
        if (run->group > 0)
                kill(-run->group, SIGKILL);
        if (run->group != run->pid)
                kill(run->pid, SIGKILL);
}

static void close_stream(struct bash_run *run, int stream)
{
        if (run->streams[stream] >= 0)
                close(run->streams[stream]);
        run->streams[stream] = -1;
}

static void take_cancellation(struct bash_run *run)
{
        int signal_number = cancellation_take(run->request->cancellation);

        if (!signal_number)
                return;
        if (run->exited) {
                /* The command had ended on its own: only the drain is cut short. */
                for (int stream = 0; stream < STREAM_COUNT; stream++)
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
static int finish_spawned(struct bash_run *run)
{
        int result;

        if (run->group == run->pid)
                kill(-run->group, SIGKILL);
        result = dsh_child_wait(run->child, &run->wait_status);
        run->exited = true;
        run->drain_deadline_ms = dsh_monotonic_ms() + DSH_BASH_DRAIN_MS;
        return result;
}

/*
 * One read of a ready stream into its capture (and the caller's live view).
 * Once only the tail is kept and no one looks at the bytes (stdout, no live
 * view), they are read straight into the ring: a command that writes
 * hundreds of megabytes costs one copy, as any reader of a pipe pays.
 * Returns 0 or -ENOMEM.
 */
static int read_stream(struct bash_run *run, int stream, char *buffer)
{
        char *where = NULL;
        ssize_t room = run->request->on_output ? 0 : dsh_capture_room(&run->captures[stream], &where);
        ssize_t length;

        if (room < 0)
                return -ENOMEM;
        if (room > 0) {
                length = read(run->streams[stream], where, (size_t) room);
                if (length > 0)
                        dsh_capture_commit(&run->captures[stream], (size_t) length);
                else if (length == 0 || (errno != EINTR && errno != EAGAIN))
                        close_stream(run, stream);
                return 0;
        }
        length = read(run->streams[stream], buffer, READ_CHUNK);

        if (length < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (length <= 0) {
                close_stream(run, stream);
                return 0;
        }
        if (dsh_capture_append(&run->captures[stream], buffer, (size_t) length) < 0)
                return -ENOMEM;
        if (run->request->on_output &&
            run->request->on_output(stream == STREAM_OUT ? 1 : 2, buffer, (size_t) length, run->request->output_data) < 0)
                close_stream(run, stream);   /* its reader went away: the command's next write fails, as in a pipeline */
        return 0;
}

static long long earlier(long long current, long long candidate)
{
        if (!candidate)
                return current;
        return !current || candidate < current ? candidate : current;
}

/* The next moment the loop must act without any fd being ready; 0: none. */
static long long next_deadline(const struct bash_run *run)
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
static void check_deadlines(struct bash_run *run)
{
        long long now = dsh_monotonic_ms();

        if (!run->exited && !run->killed && run->deadline_ms && now >= run->deadline_ms) {
                run->timed_out = true;
                kill_command(run);
        }
        if (!run->exited && !run->killed && run->grace_deadline_ms && now >= run->grace_deadline_ms)
                kill_command(run);
        if (run->exited && now >= run->drain_deadline_ms) {
                for (int stream = 0; stream < STREAM_COUNT; stream++)
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
static int run_loop(struct bash_run *run)
{
        dsh_autofree char *buffer = malloc(READ_CHUNK);
        int cancel_fd = run->request->cancellation ? run->request->cancellation->read_fd : -1;

        if (!buffer)
                return -ENOMEM;
        while (!run->exited || run->streams[STREAM_OUT] >= 0 || run->streams[STREAM_ERR] >= 0) {
                struct pollfd fds[STREAM_COUNT + 2];
                int slots[STREAM_COUNT] = { -1, -1 }, exit_slot = -1, cancel_slot = -1, count = 0, ready;
                bool has_exited = false;

                for (int stream = 0; stream < STREAM_COUNT; stream++)
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
                for (int stream = 0; stream < STREAM_COUNT; stream++)
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

/* `wait_status` as the result's exit code and signal. */
static void result_set_status(dsh_bash_result *result, int wait_status)
{
        result->exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
        result->signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
}

/*
 * The runner failed, as its status channel proved: the command never ran,
 * so every line on stderr is the runner's, and the first fatal one (by the
 * backend's rules) names the failure better than the channel's bare "exited
 * with status N".  The channel decides whether; the text only says which.
 */
static void name_runner_failure(const struct bash_run *run, dsh_error *runner_error)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);
        dsh_autofree char *head = dsh_capture_head_text(&run->captures[STREAM_ERR]);
        dsh_autofree char *line = NULL;
        int exit_code = WIFEXITED(run->wait_status) ? WEXITSTATUS(run->wait_status) : 128;

        if (head && dsh_runner_failed(facts->runner_failure_rules, facts->runner_failure_rule_count, exit_code, head,
                                      &line) &&
            line)
                dsh_error_set_unavailable(runner_error, dsh_child_mode(run->child), line);
}

/*
 * A signal death is never a denial, and it does not always arrive as one: a
 * shell reports its child's as the exit status 128+N, and so does bwrap for
 * the command it ran.  An exit status in 129..128+64 is read as a signal
 * death: a command that exits with one of those on its own, after a denied
 * write, loses the denial marker — the lesser error of the two.
 */
static bool exit_reads_as_signal(int exit_code)
{
        return exit_code > 128 && exit_code <= 128 + SIGRTMAX_LINUX;
}

/*
 * What happened, in the order of docs/bash-tool.md: cancellation, the
 * timeout, the runner's failure (out of band; by its rules over stderr only
 * where the backend has no channel), denial, the ordinary result.  Returns
 * 0, or a negative errno with `error` set when bash itself could not be
 * executed (the command never ran, and it is not the sandbox's doing).
 */
static int attribute(struct bash_run *run, dsh_bash_result *result, dsh_error *error)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);
        dsh_error runner_error = DSH_ERROR_INIT;
        int exit_code = WIFEXITED(run->wait_status) ? WEXITSTATUS(run->wait_status) : -1;
        int result_code;

        result_set_status(result, run->wait_status);
        result->timed_out = run->timed_out;
        result->cancelled = run->cancelled;
        if (run->cancelled) {
                result->kind = DSH_BASH_CANCELLED;
                return result_set_message(result, "cancelled: SIG%s went to the command's process group%s",
                                          sigabbrev_np(run->cancel_signal) ? sigabbrev_np(run->cancel_signal) : "?",
                                          run->killed ? ", and SIGKILL to what was left of it" : "");
        }
        if (run->timed_out) {
                result->kind = DSH_BASH_TIMED_OUT;
                return result_set_message(result, "the command did not finish within %ld ms: its process group was "
                                                  "killed",
                                          run->request->timeout_ms);
        }
        result_code = dsh_child_runner_error(run->child, &runner_error);
        if (result_code < 0 && dsh_child_runner_failed(run->child)) {
                name_runner_failure(run, &runner_error);
                result_code = result_runner_failed(result, &runner_error);
                dsh_error_clear(&runner_error);
                return result_code;
        }
        if (result_code < 0) {
                /* bash could not be executed inside the sandbox: out of band, so not a guess. */
                *error = runner_error;
                return result_code;
        }
        /* No channel says the command ran (an operator's runner command): its rules over stderr, as upstream. */
        if (!dsh_child_command_started(run->child)) {
                dsh_autofree char *head = dsh_capture_head_text(&run->captures[STREAM_ERR]);
                dsh_autofree char *line = NULL;

                if (!head)
                        return -ENOMEM;
                if (exit_code > 0 && dsh_runner_failed(facts->runner_failure_rules, facts->runner_failure_rule_count,
                                                       exit_code, head, &line)) {
                        dsh_error_set_unavailable(&runner_error, result->sandbox.mode,
                                                  line ? line : "the runner failed before exec");
                        result_code = result_runner_failed(result, &runner_error);
                        dsh_error_clear(&runner_error);
                        return result_code;
                }
        }
        if (exit_code > 0 && !exit_reads_as_signal(exit_code) && run->captures[STREAM_ERR].signature_seen) {
                result->kind = DSH_BASH_DENIED;
                result->sandbox.denied = true;
                return result_add_denial_markers(result);
        }
        result->kind = DSH_BASH_COMPLETED;
        return 0;
}

/* The child's facts and warnings, the streams as kept, and what the drain left behind. */
static int collect_facts(struct bash_run *run, const dsh_policy *policy, dsh_bash_result *result)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);

        free(result->standard_output.text);
        free(result->standard_error.text);
        result->standard_output.text = NULL;
        result->standard_error.text = NULL;
        if (dsh_capture_finish(&run->captures[STREAM_OUT], &result->standard_output) < 0 ||
            dsh_capture_finish(&run->captures[STREAM_ERR], &result->standard_error) < 0)
                return -ENOMEM;
        if (facts->backend) {
                result->sandbox.backend = strdup(facts->backend);
                if (!result->sandbox.backend)
                        return -ENOMEM;
        }
        result->sandbox.confined = policy->mode != DSH_MODE_DANGER_FULL_ACCESS;
        result->sandbox.enforcement = facts->enforcement;
        for (const char *const *warning = dsh_child_warnings(run->child); *warning; warning++)
                if (result_add_warning(result, *warning) < 0)
                        return -ENOMEM;
        if (run->drain_cut &&
            result_add_warning(result, "a process that left the command's process group (setsid) still held its "
                                       "output when the command ended: the output was not read further, and that "
                                       "process was not ended") < 0)
                return -ENOMEM;
        return 0;
}

static void run_clear(struct bash_run *run)
{
        for (int stream = 0; stream < STREAM_COUNT; stream++) {
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
static void abandon(struct bash_run *run)
{
        if (run->exited)
                return;
        kill_command(run);
        if (run->group == run->pid)
                kill(-run->group, SIGKILL);
        (void) dsh_child_wait(run->child, &run->wait_status);
        run->exited = true;
}

static int run_command(dsh_runtime *runtime, const dsh_bash_request *request, const dsh_policy *policy,
                       dsh_bash_result *outcome, dsh_error *error)
{
        char *argv[] = { (char *) "bash", (char *) "-c", (char *) request->command, NULL };
        size_t limit = request->output_limit ? request->output_limit : DSH_BASH_OUTPUT_LIMIT_DEFAULT;
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        struct bash_run run = { .request = request, .pidfd = -1, .streams = { -1, -1 } };
        dsh_error spawn_error = DSH_ERROR_INIT;
        int null_fd, out_pipe[2], err_pipe[2], result;

        result = open_stdio(&null_fd, out_pipe, err_pipe, error);
        if (result < 0)
                return result;
        run.streams[STREAM_OUT] = out_pipe[0];
        run.streams[STREAM_ERR] = err_pipe[0];
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
        result = dsh_provider_spawn(dsh_runtime_provider(runtime), argv, policy, &options, &run.child, &spawn_error);
        close(null_fd);
        close(out_pipe[1]);
        close(err_pipe[1]);
        if (result < 0) {
                run_clear(&run);
                if (cancellation_requested(request->cancellation)) {
                        dsh_error_clear(&spawn_error);
                        return result_cancelled_before_start(outcome) < 0 ? dsh_error_set(error, DSH_ERROR_SYSTEM,
                                                                                          ENOMEM, "out of memory")
                                                                         : 0;
                }
                /* The runner could not be spawned: a sandbox problem, the command never ran. */
                if (spawn_error.code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                        result = result_runner_failed(outcome, &spawn_error);
                        dsh_error_clear(&spawn_error);
                        return result < 0 ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory") : 0;
                }
                *error = spawn_error;
                return result;
        }
        run.pid = dsh_child_pid(run.child);
        run.group = dsh_child_process_group(run.child);
        run.pidfd = dsh_pidfd_open(run.pid);
        if (request->timeout_ms > 0)
                run.deadline_ms = dsh_monotonic_ms() + request->timeout_ms;
        dsh_capture_init(&run.captures[STREAM_OUT], limit, NULL);
        dsh_capture_init(&run.captures[STREAM_ERR], limit, dsh_child_facts(run.child)->denial_signatures);
        /* A cancellation that came during the spawn acts now. */
        take_cancellation(&run);
        result = run_loop(&run);
        if (result < 0) {
                abandon(&run);
                run_clear(&run);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "while the command ran: %s", strerror(-result));
        }
        result = collect_facts(&run, policy, outcome);
        if (result == 0)
                result = attribute(&run, outcome, error);
        run_clear(&run);
        if (result == -ENOMEM && error->code == DSH_ERROR_NONE)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return result;
}

/* ------------------------------------------------------------ the call -- */

int dsh_bash_run(dsh_runtime *runtime, const dsh_bash_request *request, dsh_bash_result *result_out,
                 dsh_error *error)
{
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_mode requested = DSH_MODE_READ_ONLY;
        bool escalate = false, approved = false;
        int result;

        if (!error)
                error = &local_error;
        *result_out = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        result = validate_request(request, &escalate, &requested, error);
        if (result == 0 && dsh_policy_copy(&policy, request->policy) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result == 0 && escalate && requested != policy.mode && !dsh_mode_is_wider(requested, policy.mode))
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                       "sandbox escalation to \"%s\" is not strictly wider than this call's current "
                                       "\"%s\" mode",
                                       dsh_mode_name(requested), dsh_mode_name(policy.mode));
        if (result == 0 && result_start(result_out, policy.mode) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result < 0)
                goto out;
        if (cancellation_requested(request->cancellation)) {
                result = result_cancelled_before_start(result_out);
                goto out;
        }
        /* The same mode needs no approval: the call simply runs. */
        if (escalate && requested != policy.mode) {
                result = ask_approval(request, &policy, requested, result_out, &approved);
                if (result == 0 && cancellation_requested(request->cancellation)) {
                        result = result_cancelled_before_start(result_out);
                        goto out;
                }
                if (result == 0 && !approved) {
                        result_out->kind = DSH_BASH_REJECTED;
                        if (request->approve)
                                result = result_set_message(result_out, REJECTED_TEXT, dsh_mode_name(requested));
                        else
                                result = result_set_message(result_out, NO_CHANNEL_TEXT, dsh_mode_name(requested));
                        goto out;
                }
                /* Granted for this call only: the policy copy changes, nothing that outlives the call does. */
                policy.mode = requested;
                result_out->sandbox.mode = requested;
        }
        if (result == 0)
                result = run_command(runtime, request, &policy, result_out, error);
out:
        if (result == -ENOMEM && error->code == DSH_ERROR_NONE)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result < 0)
                dsh_bash_result_clear(result_out);
        dsh_policy_clear(&policy);
        dsh_error_clear(&local_error);
        return result < 0 ? result : 0;
}
