/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's remote side (`dsh-sandbox remote-helper`): one
 * request per ssh session, served with this host's own runtime.
 *
 * The helper writes every byte on the channel, as frames: the hello, the
 * command's stdout and stderr (each read becomes one data frame, so the
 * command's bytes are always a payload and never a header), and the final
 * record last.  The command cannot forge a final record or cut a frame
 * short; what it prints reaches the caller as output, never as a status.
 *
 * The policy is resolved here, from the request and this host's config:
 * the root and the writable roots are this host's paths, canonicalized by
 * this host's policy service, and a refusal is this host's own reason.
 * When the channel ends before the command did (the caller, its ssh or the
 * connection gone), the command's process group is killed: nobody is left
 * to read its output or its status.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsh-sandbox/remote.h"
#include "base/error.h"
#include "base/json-core.h"
#include "bash/bash-json.h"
#include "provider/provider-json.h"
#include "provider/process.h"
#include "remote/remote-frame.h"
#include "remote/remote-protocol.h"
#include "provider/spawn.h"

typedef struct helper {
        int in_fd, out_fd;
        dsh_frame_reader frames;
        dsh_remote_call call;
        dsh_runtime *runtime;
        dsh_policy policy;
} helper;

/* One final record; the call's last frame. */
static int send_final(helper *self, const dsh_remote_final *final)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *text = NULL;
        int result = dsh_remote_final_encode(final, &text, &error);

        dsh_error_clear(&error);
        return result < 0 ? result : dsh_frame_write(self->out_fd, DSH_FRAME_FINAL, text, strlen(text));
}

/* The call ends with `refusal` (cleared here): nothing ran. */
static int refuse(helper *self, dsh_error *refusal)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        int result;

        final.outcome = DSH_REMOTE_OUTCOME_REFUSED;
        final.refusal = *refusal;
        final.value = refusal->code == DSH_ERROR_EXEC_FAILED ? refusal->errno_value : 0;
        *refusal = (dsh_error) DSH_ERROR_INIT;
        result = send_final(self, &final);
        dsh_remote_final_clear(&final);
        return result;
}

static int send_text(helper *self, char type, const char *text)
{
        return dsh_frame_write(self->out_fd, type, text, strlen(text));
}

/* Waits for the request, the first frame the caller sends.  Returns 0, or -EPROTO / the channel's errno. */
static int receive_call(helper *self, dsh_error *error)
{
        const unsigned char *payload;
        size_t length;
        char type;

        for (;;) {
                int next = dsh_frame_reader_next(&self->frames, &type, &payload, &length);
                ssize_t got;

                if (next > 0 && type != DSH_FRAME_REQUEST)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO, "remote request: expected "
                                                                                     "a request frame first");
                if (next > 0)
                        return dsh_remote_call_decode(payload, length, &self->call, error);
                if (next < 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO, "remote request: not a frame");
                got = dsh_frame_reader_fill(&self->frames, self->in_fd);
                if (got == 0)
                        return -EPIPE;
                if (got < 0 && got != -EINTR)
                        return (int) got;
        }
}

/* This host's runtime, its policy resolved for the request. */
static int prepare(helper *self, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_runtime_options runtime_options = options ? *options : (dsh_runtime_options) DSH_RUNTIME_OPTIONS_INIT;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        int result;

        if (self->call.backend)
                runtime_options.backend = strcmp(self->call.backend, "auto") == 0 ? NULL : self->call.backend;
        result = dsh_runtime_new(&runtime_options, &self->runtime, error);
        if (result < 0)
                return result;
        request.has_mode = self->call.has_mode;
        request.mode = self->call.mode;
        request.workspace_root = self->call.workspace_root;
        request.additional_writable_roots = self->call.additional_writable_roots;
        /* The caller's masks add to this host's, checked by this host's prepare like a local call's. */
        request.masked_paths = self->call.masked_paths;
        request.allowed_environment = self->call.allowed_environment;
        result = dsh_runtime_resolve(self->runtime, &request, &self->policy, error);
        /*
         * The caller's network policy replaces this host's config's whole,
         * and is held by this host's provider like a local call's: a backend
         * here that cannot hold it refuses the call, which the client reports.
         */
        if (result == 0 && self->call.has_network) {
                dsh_network_policy_clear(&self->policy.network);
                if (dsh_network_policy_copy(&self->policy.network, &self->call.network) < 0)
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        return result;
}

static int answer(helper *self, json_t *value)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        int result;

        final.outcome = DSH_REMOTE_OUTCOME_ANSWERED;
        final.answer = value;
        result = send_final(self, &final);
        dsh_remote_final_clear(&final);
        return result;
}

static int serve_confine(helper *self, dsh_error *error)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        json_t *value;
        int result;

        if (!dsh_mode_is_confined(self->policy.mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "confine: mode \"%s\" needs no "
                                     "confinement; spawn the argv as it is", dsh_mode_name(self->policy.mode));
        result = dsh_provider_confine(dsh_runtime_provider(self->runtime), self->call.argv, &self->policy, &facts,
                                      error);
        if (result < 0)
                return result;
        value = dsh_json_confined_argv_value(&facts, "facts", error);
        dsh_confined_argv_clear(&facts);
        return value ? answer(self, value) : -EINVAL;
}

static int serve_probe(helper *self, dsh_error *error)
{
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        json_t *value = NULL;
        int result = dsh_provider_probe(dsh_runtime_provider(self->runtime), &report, error);

        if (result == 0 && !(value = dsh_json_probe_report_value(&report, "probe", error)))
                result = -EINVAL;
        dsh_probe_report_clear(&report);
        return result < 0 ? result : answer(self, value);
}

/* ------------------------------------------------------------------- run -- */

typedef struct command_streams {
        dsh_child *child;
        int pidfd;
        int stdin_fd, stdout_fd, stderr_fd;     /* this side's ends; -1 once closed */
        dsh_byte_queue to_stdin;
        size_t stdin_in_window;                 /* stdin bytes received and not yet credited back */
        size_t stdin_credit_due;                /* of those, the bytes the command took or that were dropped */
        bool stdin_eof;                         /* the caller's stdin ended: close once the queue is empty */
        bool exited;
} command_streams;

static void close_stream(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

/* The spawn's stdio: pipes whose far ends the command gets; this side's ends are non-blocking. */
static int spawn_command(helper *self, command_streams *streams, dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
        int result = dsh_pipe_above_stdio(in);

        if (result == 0)
                result = dsh_pipe_above_stdio(out);
        if (result == 0)
                result = dsh_pipe_above_stdio(err);
        if (result < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot make pipes: %s", strerror(-result));
        options.stdin_fd = in[0];
        options.stdout_fd = out[1];
        options.stderr_fd = err[1];
        /* Its own group: a signal frame reaches the command and its children, never this helper. */
        options.new_process_group = true;
        options.die_with_parent = true;
        if (result == 0)
                result = dsh_provider_spawn(dsh_runtime_provider(self->runtime), self->call.argv, &self->policy,
                                            &options, &streams->child, error);
        close_stream(&in[0]);
        close_stream(&out[1]);
        close_stream(&err[1]);
        streams->stdin_fd = in[1];
        streams->stdout_fd = out[0];
        streams->stderr_fd = err[0];
        if (result < 0)
                return result;
        fcntl(streams->stdin_fd, F_SETFL, O_NONBLOCK);
        fcntl(streams->stdout_fd, F_SETFL, O_NONBLOCK);
        fcntl(streams->stderr_fd, F_SETFL, O_NONBLOCK);
        streams->pidfd = dsh_pidfd_open(dsh_child_pid(streams->child));
        if (streams->pidfd < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot watch the command: %s", strerror(errno));
        return 0;
}

/*
 * A signal the caller passed on (a signal frame), or the end of the
 * channel (SIGKILL): through the one rule every front end uses, so that a
 * bwrap sandbox still starting is ended rather than left running without
 * its parent.  Called only while the child is unreaped.
 */
static void signal_command(const command_streams *streams, int signal_number)
{
        dsh_signal_command(dsh_child_pid(streams->child), dsh_child_process_group(streams->child), signal_number);
}

/* Partial enforcement is a fact the caller must see before the command's output, as a local run says it. */
static int announce_enforcement(helper *self, const dsh_confined_argv *facts)
{
        const char *backend = facts->backend ? facts->backend : "the backend";
        int result = 0;

        for (char **reason = facts->partial_reasons; result == 0 && reason && *reason; reason++) {
                dsh_autofree char *line = NULL;

                if (asprintf(&line, "dsh-sandbox: notice: partial enforcement under %s: %s\n", backend, *reason) < 0)
                        return -ENOMEM;
                result = send_text(self, DSH_FRAME_STDERR, line);
        }
        return result;
}

/*
 * The helper reads the channel at all times, so that a signal frame is
 * never stuck behind stdin the command does not read; what bounds the
 * queue in front of the command's stdin is the caller's window instead
 * (remote-frame.h): it sends at most DSH_REMOTE_STDIN_WINDOW bytes not yet
 * credited back.  A caller past its window — broken, or hostile and
 * aiming at this host's memory — ends the channel with -EPROTO (the
 * command is killed, the caller sees no final record: 125), never a
 * bigger queue.  A command that closed its stdin loses what comes after,
 * as it would locally; those bytes are credited all the same, or the
 * caller would wait for credit forever.
 */
static int accept_stdin(command_streams *streams, const unsigned char *payload, size_t length)
{
        if (length > DSH_REMOTE_STDIN_WINDOW - streams->stdin_in_window)
                return -EPROTO;
        streams->stdin_in_window += length;
        if (streams->stdin_fd < 0) {
                streams->stdin_credit_due += length;
                return 0;
        }
        return dsh_byte_queue_append(&streams->to_stdin, payload, length);
}

/* One frame from the caller during the run.  Returns 0, or -EPROTO for anything but stdin and signals. */
static int handle_caller_frame(command_streams *streams, char type, const unsigned char *payload, size_t length)
{
        switch (type) {
        case DSH_FRAME_STDIN:
                return accept_stdin(streams, payload, length);
        case DSH_FRAME_STDIN_EOF:
                streams->stdin_eof = true;
                return 0;
        case DSH_FRAME_SIGNAL:
                if (length != 1 || payload[0] == 0 || payload[0] >= NSIG)
                        return -EPROTO;
                signal_command(streams, payload[0]);
                return 0;
        default:
                return -EPROTO;
        }
}

/* The frames already read: those the caller sent right behind its request, then each batch. */
static int handle_buffered_frames(helper *self, command_streams *streams)
{
        const unsigned char *payload;
        size_t length;
        char type;
        int result = 0, next;

        while (result == 0 && (next = dsh_frame_reader_next(&self->frames, &type, &payload, &length)) != 0)
                result = next < 0 ? next : handle_caller_frame(streams, type, payload, length);
        return result;
}

static int read_caller(helper *self, command_streams *streams)
{
        ssize_t got = dsh_frame_reader_fill(&self->frames, self->in_fd);

        if (got == 0)
                return -EPIPE;
        if (got < 0)
                return got == -EINTR || got == -EAGAIN ? 0 : (int) got;
        return handle_buffered_frames(self, streams);
}

/* Frames what the command wrote on `*fd`; closes it at EOF.  Returns 0 or the channel's negative errno. */
static int forward_output(helper *self, int *fd, char type)
{
        unsigned char chunk[DSH_FRAME_CHUNK];
        ssize_t got = read(*fd, chunk, sizeof(chunk));

        if (got < 0)
                return 0;   /* EAGAIN, EINTR: later */
        if (got == 0) {
                close_stream(fd);
                return 0;
        }
        return dsh_frame_write(self->out_fd, type, chunk, (size_t) got);
}

/*
 * What the command's stdin takes now; closed once the caller's ended and
 * all of it went, or the command closed it (what is left is dropped).
 * Either way the bytes that left the queue are due back as credit.
 */
static void feed_stdin(command_streams *streams)
{
        size_t queued = dsh_byte_queue_pending(&streams->to_stdin);
        int result = streams->stdin_fd >= 0 ? dsh_byte_queue_flush(&streams->to_stdin, streams->stdin_fd) : 0;

        if (result < 0 || (streams->stdin_eof && dsh_byte_queue_pending(&streams->to_stdin) == 0))
                close_stream(&streams->stdin_fd);
        if (streams->stdin_fd < 0)
                dsh_byte_queue_clear(&streams->to_stdin);
        streams->stdin_credit_due += queued - dsh_byte_queue_pending(&streams->to_stdin);
}

/* The caller's window reopens by what left the queue.  Returns 0 or the channel's negative errno. */
static int return_credit(helper *self, command_streams *streams)
{
        unsigned char payload[DSH_FRAME_CREDIT_SIZE];

        if (streams->stdin_credit_due == 0)
                return 0;
        dsh_frame_credit_encode(payload, streams->stdin_credit_due);
        streams->stdin_in_window -= streams->stdin_credit_due;
        streams->stdin_credit_due = 0;
        return dsh_frame_write(self->out_fd, DSH_FRAME_STDIN_CREDIT, payload, sizeof(payload));
}

enum { POLL_CALLER, POLL_STDOUT, POLL_STDERR, POLL_STDIN, POLL_EXIT, POLL_COUNT };

/* Moves bytes both ways until the command has exited.  Returns 0 or a negative errno (the channel broke). */
static int pump_until_exit(helper *self, command_streams *streams)
{
        struct pollfd fds[POLL_COUNT];
        int result = handle_buffered_frames(self, streams);

        while (result == 0 && !streams->exited) {
                feed_stdin(streams);
                if ((result = return_credit(self, streams)) < 0)
                        break;
                fds[POLL_CALLER] = (struct pollfd) { self->in_fd, POLLIN, 0 };
                fds[POLL_STDOUT] = (struct pollfd) { streams->stdout_fd, POLLIN, 0 };
                fds[POLL_STDERR] = (struct pollfd) { streams->stderr_fd, POLLIN, 0 };
                fds[POLL_STDIN] = (struct pollfd) {
                        dsh_byte_queue_pending(&streams->to_stdin) ? streams->stdin_fd : -1, POLLOUT, 0 };
                fds[POLL_EXIT] = (struct pollfd) { streams->pidfd, POLLIN, 0 };
                if (poll(fds, POLL_COUNT, -1) < 0) {
                        result = errno == EINTR ? 0 : -errno;
                        continue;
                }
                if (fds[POLL_CALLER].revents)
                        result = read_caller(self, streams);
                if (result == 0 && fds[POLL_STDOUT].revents)
                        result = forward_output(self, &streams->stdout_fd, DSH_FRAME_STDOUT);
                if (result == 0 && fds[POLL_STDERR].revents)
                        result = forward_output(self, &streams->stderr_fd, DSH_FRAME_STDERR);
                streams->exited = fds[POLL_EXIT].revents != 0;
        }
        return result;
}

/*
 * After the exit: what the command wrote before it ended is in the pipe,
 * and is sent before the status.  Only what is there now: a process the
 * command left behind may hold the pipe open, and is not waited for.
 */
static int drain_output(helper *self, int *fd, char type)
{
        int result = 0;

        while (result == 0 && *fd >= 0) {
                struct pollfd readable = { *fd, POLLIN, 0 };

                if (poll(&readable, 1, 0) <= 0)
                        break;
                result = forward_output(self, fd, type);
        }
        return result;
}

/* The command ended: its status, or the runner's failure (it never ran), as the final record. */
static int report_end(helper *self, command_streams *streams)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int wait_status = 0;
        int result = dsh_child_wait(streams->child, &wait_status);

        if (result < 0)
                dsh_error_set(&error, DSH_ERROR_SYSTEM, -result, "cannot wait for the command: %s", strerror(-result));
        else if (dsh_child_runner_error(streams->child, &error) == 0) {
                for (const char *const *warning = dsh_child_warnings(streams->child); *warning; warning++) {
                        dsh_autofree char *line = NULL;

                        if (asprintf(&line, "dsh-sandbox: warning: %s\n", *warning) >= 0)
                                send_text(self, DSH_FRAME_STDERR, line);
                }
                final.outcome = WIFSIGNALED(wait_status) ? DSH_REMOTE_OUTCOME_SIGNALED : DSH_REMOTE_OUTCOME_EXITED;
                final.value = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
                return send_final(self, &final);
        }
        return refuse(self, &error);
}

static void streams_clear(command_streams *streams)
{
        close_stream(&streams->stdin_fd);
        close_stream(&streams->stdout_fd);
        close_stream(&streams->stderr_fd);
        close_stream(&streams->pidfd);
        dsh_byte_queue_clear(&streams->to_stdin);
        dsh_child_free(streams->child);
}

static int serve_run(helper *self, dsh_error *error)
{
        command_streams streams = { NULL, -1, -1, -1, -1, DSH_BYTE_QUEUE_INIT, 0, 0, false, false };
        int result = spawn_command(self, &streams, error);

        if (result == 0) {
                /* From here on the command runs: every way out ends with its status, or with it killed. */
                result = announce_enforcement(self, dsh_child_facts(streams.child));
                if (result == 0)
                        result = pump_until_exit(self, &streams);
                if (result == 0)
                        result = drain_output(self, &streams.stdout_fd, DSH_FRAME_STDOUT);
                if (result == 0)
                        result = drain_output(self, &streams.stderr_fd, DSH_FRAME_STDERR);
                if (result == 0)
                        result = report_end(self, &streams);
                else if (!streams.exited) {
                        int ignored;

                        signal_command(&streams, SIGKILL);
                        dsh_child_wait(streams.child, &ignored);
                }
                streams_clear(&streams);
                return result < 0 ? result : 1;
        }
        streams_clear(&streams);
        return result;
}

/* ------------------------------------------------------------------ bash -- */

/*
 * While the bash tool runs (it waits inside dsh_bash_run), a thread reads
 * the caller's frames: a signal frame cancels the call (the tool sends it
 * to the command's group, then kills what is left after its grace), and
 * the channel's end kills at once — nobody is left to read the result.
 * The thread reads and cancels only; every write is the main thread's.
 */
typedef struct bash_watch {
        helper *self;
        dsh_bash_cancellation *cancellation;
} bash_watch;

static void *watch_caller(void *data)
{
        bash_watch *watch = data;
        const unsigned char *payload;
        size_t length;
        char type;

        for (;;) {
                int next = dsh_frame_reader_next(&watch->self->frames, &type, &payload, &length);

                if (next > 0 && type == DSH_FRAME_SIGNAL && length == 1 && payload[0] > 0 && payload[0] < NSIG) {
                        dsh_bash_cancel(watch->cancellation, payload[0]);
                        continue;
                }
                if (next > 0 && (type == DSH_FRAME_STDIN || type == DSH_FRAME_STDIN_EOF))
                        continue;   /* the tool's stdin is /dev/null */
                if (next != 0 || dsh_frame_reader_fill(&watch->self->frames, watch->self->in_fd) <= 0)
                        break;      /* the channel ended, or spoke out of turn */
        }
        dsh_bash_cancel(watch->cancellation, SIGKILL);
        return NULL;
}

static int send_output(int stream, const char *data, size_t length, void *user_data)
{
        helper *self = user_data;

        return dsh_frame_write(self->out_fd, stream == 1 ? DSH_FRAME_STDOUT : DSH_FRAME_STDERR, data, length);
}

static int serve_bash(helper *self, dsh_error *error)
{
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        bash_watch watch = { self, NULL };
        json_t *value = NULL;
        pthread_t watcher;
        int outcome = dsh_bash_cancellation_new(&watch.cancellation, error);

        if (outcome < 0)
                return outcome;
        if ((outcome = -pthread_create(&watcher, NULL, watch_caller, &watch)) < 0) {
                dsh_bash_cancellation_free(watch.cancellation);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -outcome, "cannot watch the caller: %s",
                                     strerror(-outcome));
        }
        request.command = self->call.argv[0];
        request.policy = &self->policy;
        request.timeout_ms = self->call.timeout_ms;
        request.output_limit = (size_t) self->call.output_limit;
        request.cancellation = watch.cancellation;
        request.on_output = self->call.live_output ? send_output : NULL;
        request.output_data = self;
        outcome = dsh_bash_run(self->runtime, &request, &result, error);
        if (outcome == 0 && !(value = dsh_json_bash_result_value(&result, "bash result", error)))
                outcome = -EINVAL;
        dsh_bash_result_clear(&result);
        outcome = outcome < 0 ? refuse(self, error) : answer(self, value);
        /* The caller closes its end once it has the final record: the watcher ends there. */
        pthread_join(watcher, NULL);
        dsh_bash_cancellation_free(watch.cancellation);
        return outcome < 0 ? outcome : 1;
}

/* Runs the operation.  Returns 1 once it sent the final record itself, 0 with an answer sent, or a negative errno with `error` set. */
static int serve_call(helper *self, const dsh_runtime_options *options, dsh_error *error)
{
        int result = prepare(self, options, error);

        if (result < 0)
                return result;
        switch (self->call.operation) {
        case DSH_REMOTE_OPERATION_CONFINE:
                return serve_confine(self, error);
        case DSH_REMOTE_OPERATION_PROBE:
                return serve_probe(self, error);
        case DSH_REMOTE_OPERATION_RUN:
                return serve_run(self, error);
        case DSH_REMOTE_OPERATION_BASH:
                return serve_bash(self, error);
        }
        return -EINVAL;
}

int dsh_remote_serve(const dsh_runtime_options *options, int in_fd, int out_fd)
{
        helper self = { in_fd, out_fd, DSH_FRAME_READER_INIT, DSH_REMOTE_CALL_INIT, NULL, DSH_POLICY_INIT };
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *hello = NULL;
        int result = dsh_remote_hello_encode(&hello, &error);

        if (result == 0)
                result = send_text(&self, DSH_FRAME_HELLO, hello);
        if (result == 0) {
                result = receive_call(&self, &error);
                if (result == 0)
                        result = serve_call(&self, options, &error);
                /* A broken channel (-EPIPE with nothing set) has nobody to tell; every other failure is a refusal. */
                if (result < 0 && error.code != DSH_ERROR_NONE)
                        result = refuse(&self, &error);
        }
        dsh_error_clear(&error);
        dsh_policy_clear(&self.policy);
        dsh_runtime_free(self.runtime);
        dsh_remote_call_clear(&self.call);
        dsh_frame_reader_clear(&self.frames);
        return result < 0 ? result : 0;
}
