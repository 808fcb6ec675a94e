/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's local side: one ssh per call, one frame pump.
 *
 * The exit contract is carried out of band: the command's status is only
 * ever read from the helper's final record, a frame the command cannot
 * write (the helper frames every byte of its output).  Without a final
 * record the call failed in transport — whatever ssh's exit status, 255
 * or any other, and whatever the remote printed — and is reported as
 * SANDBOX_UNAVAILABLE with ssh's own last line of stderr as the reason.
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

#include "dsh-sandbox/json.h"
#include "base/error.h"
#include "base/json-core.h"
#include "bash/bash-json.h"
#include "provider/provider-json.h"
#include "remote/remote-endpoint.h"
#include "remote/remote-frame.h"
#include "remote/remote-protocol.h"
#include "remote/remote-ssh.h"

/* The tail of ssh's stderr kept for the reason of a transport failure. */
#define DIAGNOSTICS_TAIL 4096

typedef struct remote_call {
        const dsh_remote_target *target;
        const dsh_remote_stdio *stdio;
        dsh_bash_output_fn on_output;       /* where the command's output frames go; NULL: none expected */
        void *output_data;
        dsh_remote_connection connection;
        dsh_frame_reader frames;
        dsh_byte_queue outgoing;            /* frames for the helper */
        size_t stdin_uncredited;            /* stdin bytes sent, not yet credited: at most the window */
        char diagnostics[DIAGNOSTICS_TAIL]; /* the last bytes ssh wrote to its stderr */
        size_t diagnostics_used;
        bool stdin_open, signals_open, hello_seen, final_seen;
        bool remote_gone;                   /* ssh's stdin broke: nothing more is sent */
        bool via_service;                   /* over the destination's remote service, not a session of its own */
        dsh_remote_final final;
        dsh_error protocol_error;           /* the helper answered something that is not the protocol */
} remote_call;

__attribute__((format(printf, 3, 4))) static int remote_unavailable(dsh_error *error, const char *destination,
                                                                    const char *format, ...)
{
        char prefix[256];
        va_list arguments;
        int result;

        snprintf(prefix, sizeof(prefix), "remote \"%s\": ", destination);
        va_start(arguments, format);
        result = dsh_error_vset(error, DSH_ERROR_SANDBOX_UNAVAILABLE, ENOSYS, prefix, format, arguments);
        va_end(arguments);
        return result;
}

/* run's output: to the local stdout and stderr.  A reader that went away loses the rest, as a pipe's writer would. */
static int write_to_stdio(int stream, const char *data, size_t length, void *user_data)
{
        const dsh_remote_stdio *stdio = user_data;
        int fd = stream == 1 ? stdio->stdout_fd : stdio->stderr_fd;

        while (fd >= 0 && length > 0) {
                ssize_t written = write(fd, data, length);

                if (written < 0 && errno == EINTR)
                        continue;
                if (written <= 0)
                        return -1;
                data += written;
                length -= (size_t) written;
        }
        return 0;
}

/* Keeps the last DIAGNOSTICS_TAIL bytes of ssh's stderr.  Returns false at EOF or on an error. */
static bool read_diagnostics(remote_call *call)
{
        char chunk[DIAGNOSTICS_TAIL / 4];
        ssize_t got = read(call->connection.diagnostics, chunk, sizeof(chunk));
        size_t keep = got > 0 ? (size_t) got : 0;

        if (got <= 0)
                return got < 0 && (errno == EINTR || errno == EAGAIN);
        if (call->diagnostics_used + keep > sizeof(call->diagnostics)) {
                size_t drop = call->diagnostics_used + keep - sizeof(call->diagnostics);

                memmove(call->diagnostics, call->diagnostics + drop, call->diagnostics_used - drop);
                call->diagnostics_used -= drop;
        }
        memcpy(call->diagnostics + call->diagnostics_used, chunk, keep);
        call->diagnostics_used += keep;
        return true;
}

/* ssh's last non-empty line of stderr (printable, one line), or a placeholder.  Caller frees. */
static char *last_diagnostic_line(remote_call *call)
{
        size_t end = call->diagnostics_used, start;
        char line[DIAGNOSTICS_TAIL + 1];

        while (end > 0 && (call->diagnostics[end - 1] == '\n' || call->diagnostics[end - 1] == '\r'))
                end--;
        start = end;
        while (start > 0 && call->diagnostics[start - 1] != '\n')
                start--;
        if (start == end)
                return strdup("it printed nothing");
        memcpy(line, call->diagnostics + start, end - start);
        line[end - start] = '\0';
        return dsh_error_printable_text(line);
}

static int protocol_failure(remote_call *call, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int protocol_failure(remote_call *call, const char *format, ...)
{
        va_list arguments;

        va_start(arguments, format);
        dsh_error_vset(&call->protocol_error, DSH_ERROR_SANDBOX_UNAVAILABLE, EPROTO, NULL, format, arguments);
        va_end(arguments);
        return -EPROTO;
}

/* The helper's command took (or dropped) `count` more stdin bytes: the window reopens by as many. */
static int take_credit(remote_call *call, const unsigned char *payload, size_t length)
{
        size_t count;

        if (dsh_frame_credit_decode(payload, length, &count) < 0 || count > call->stdin_uncredited)
                return protocol_failure(call, "the remote credited stdin it was never sent");
        call->stdin_uncredited -= count;
        return 0;
}

/* One frame from the helper. */
static int handle_frame(remote_call *call, char type, const unsigned char *payload, size_t length)
{
        dsh_error reason = DSH_ERROR_INIT;
        int result;

        if (!call->hello_seen && type != DSH_FRAME_HELLO)
                return protocol_failure(call, "the remote program did not greet as dsh-sandbox's remote-helper "
                                              "(an older dsh-sandbox, or another program?)");
        switch (type) {
        case DSH_FRAME_HELLO:
                result = dsh_remote_hello_check(payload, length, &reason);
                call->hello_seen = result == 0;
                if (result < 0)
                        protocol_failure(call, "%s", reason.message ? reason.message : "bad hello");
                break;
        case DSH_FRAME_STDOUT:
        case DSH_FRAME_STDERR:
                if (!call->on_output)
                        return protocol_failure(call, "the remote sent output where none was asked for");
                call->on_output(type == DSH_FRAME_STDOUT ? 1 : 2, (const char *) payload, length, call->output_data);
                return 0;
        case DSH_FRAME_STDIN_CREDIT:
                return take_credit(call, payload, length);
        case DSH_FRAME_FINAL:
                result = dsh_remote_final_decode(payload, length, &call->final, &reason);
                call->final_seen = result == 0;
                if (result < 0)
                        protocol_failure(call, "%s", reason.message ? reason.message : "bad final record");
                break;
        default:
                return protocol_failure(call, "the remote sent a frame of unknown type 0x%02x",
                                        (unsigned char) type);
        }
        dsh_error_clear(&reason);
        return result;
}

/* What ssh's stdout holds: frames, handled in order.  Returns 0, or -EPROTO / another negative errno. */
static int read_from_remote(remote_call *call, bool *eof)
{
        const unsigned char *payload;
        size_t length;
        char type;
        ssize_t got = dsh_frame_reader_fill(&call->frames, call->connection.from_remote);
        int result;

        if (got < 0)
                return got == -EINTR || got == -EAGAIN ? 0 : (int) got;
        *eof = got == 0;
        while (!call->final_seen && (result = dsh_frame_reader_next(&call->frames, &type, &payload, &length)) != 0) {
                if (result < 0)
                        return protocol_failure(call, "the remote program answered with something other than "
                                                      "dsh-sandbox frames");
                result = handle_frame(call, type, payload, length);
                if (result < 0)
                        return result;
        }
        return 0;
}

static int queue_frame(remote_call *call, char type, const void *payload, size_t length)
{
        return dsh_byte_queue_append_frame(&call->outgoing, type, payload, length);
}

/*
 * At most what the window has room for (remote-frame.h): while the remote
 * command takes none of it, the local stdin is not read, and its writer
 * blocks as it would on a local command's pipe.  The helper keeps reading
 * the channel meanwhile, so signal frames still pass.
 */
static int read_local_stdin(remote_call *call)
{
        unsigned char chunk[DSH_FRAME_CHUNK];
        size_t room = DSH_REMOTE_STDIN_WINDOW - call->stdin_uncredited;
        ssize_t got = read(call->stdio->stdin_fd, chunk, room < sizeof(chunk) ? room : sizeof(chunk));

        if (got < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (got > 0) {
                call->stdin_uncredited += (size_t) got;
                return queue_frame(call, DSH_FRAME_STDIN, chunk, (size_t) got);
        }
        call->stdin_open = false;   /* EOF, or a stdin that cannot be read: the command sees its end */
        return queue_frame(call, DSH_FRAME_STDIN_EOF, NULL, 0);
}

static int read_signals(remote_call *call)
{
        unsigned char numbers[16];
        ssize_t got = read(call->stdio->signal_fd, numbers, sizeof(numbers));
        int result = 0;

        if (got < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (got <= 0)
                call->signals_open = false;
        for (ssize_t i = 0; i < got && result == 0; i++)
                result = queue_frame(call, DSH_FRAME_SIGNAL, &numbers[i], 1);
        return result;
}

enum { POLL_REMOTE, POLL_DIAGNOSTICS, POLL_TO_REMOTE, POLL_STDIN, POLL_SIGNALS, POLL_COUNT };

static void poll_set(remote_call *call, struct pollfd fds[POLL_COUNT])
{
        bool backlog = dsh_byte_queue_pending(&call->outgoing) > 0;

        fds[POLL_REMOTE] = (struct pollfd) { call->connection.from_remote, POLLIN, 0 };
        fds[POLL_DIAGNOSTICS] = (struct pollfd) { call->connection.diagnostics, POLLIN, 0 };
        fds[POLL_TO_REMOTE] = (struct pollfd) { backlog && !call->remote_gone ? call->connection.to_remote : -1,
                                                POLLOUT, 0 };
        fds[POLL_STDIN] = (struct pollfd) { -1, POLLIN, 0 };
        fds[POLL_SIGNALS] = (struct pollfd) { -1, POLLIN, 0 };
        if (call->remote_gone)
                return;
        if (call->stdin_open && call->stdin_uncredited < DSH_REMOTE_STDIN_WINDOW)
                fds[POLL_STDIN].fd = call->stdio->stdin_fd;
        if (call->signals_open)
                fds[POLL_SIGNALS].fd = call->stdio->signal_fd;
}

/* Moves bytes until the final record arrives or the transport ends.  Returns 0 or a negative errno. */
static int pump(remote_call *call)
{
        struct pollfd fds[POLL_COUNT];
        bool eof = false;
        int result = 0;

        while (result == 0 && !call->final_seen && !eof) {
                result = dsh_byte_queue_flush(&call->outgoing, call->connection.to_remote);
                if (result == -EPIPE) {
                        /* ssh is gone: what it said, and its status, tell why.  Nothing more is sent. */
                        call->remote_gone = true;
                        dsh_byte_queue_clear(&call->outgoing);
                        result = 0;
                }
                poll_set(call, fds);
                if (result == 0 && poll(fds, POLL_COUNT, -1) < 0)
                        result = errno == EINTR ? 0 : -errno;
                if (result < 0)
                        break;
                if (fds[POLL_DIAGNOSTICS].revents && !read_diagnostics(call)) {
                        close(call->connection.diagnostics);
                        call->connection.diagnostics = -1;
                }
                if (fds[POLL_STDIN].revents)
                        result = read_local_stdin(call);
                if (result == 0 && fds[POLL_SIGNALS].revents)
                        result = read_signals(call);
                if (result == 0 && fds[POLL_REMOTE].revents)
                        result = read_from_remote(call, &eof);
        }
        return result;
}

/* Reads what ssh still has to say on stderr (it has exited), then closes it. */
static void drain_diagnostics(remote_call *call)
{
        while (call->connection.diagnostics >= 0 && read_diagnostics(call)) {
                struct pollfd readable = { call->connection.diagnostics, POLLIN, 0 };

                if (poll(&readable, 1, 0) <= 0)
                        break;
        }
        if (call->connection.diagnostics >= 0)
                close(call->connection.diagnostics);
        call->connection.diagnostics = -1;
}

/* Why there is no final record, from ssh's status and its last words. */
static int transport_failure(remote_call *call, int wait_status, dsh_error *error)
{
        const char *destination = call->target->destination;
        const char *program = dsh_remote_program(call->target);
        dsh_autofree char *said = last_diagnostic_line(call);
        int status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;

        if (call->protocol_error.code != DSH_ERROR_NONE)
                return remote_unavailable(error, destination, "%s", call->protocol_error.message);
        if (call->via_service)
                return remote_unavailable(error, destination, "the connection to the remote service dropped before "
                                                              "the final record");
        if (status == 255)
                return remote_unavailable(error, destination, "ssh failed or the connection dropped (exit 255): %s",
                                          said);
        if (status == 127)
                return remote_unavailable(error, destination, "no \"%s\" on the remote host (the remote shell "
                                                              "exited 127): %s", program, said);
        if (status == 126)
                return remote_unavailable(error, destination, "\"%s\" cannot be executed on the remote host: %s",
                                          program, said);
        if (status >= 0)
                return remote_unavailable(error, destination, "the remote program exited with %d without a final "
                                                              "record: %s", status, said);
        return remote_unavailable(error, destination, "ssh was killed by signal %d", WTERMSIG(wait_status));
}

/*
 * The destination's remote service when there is one to use (its hello
 * already checked, nothing sent yet), else ssh started for this call alone.
 */
static int connect_remote(remote_call *call, dsh_error *error)
{
        int fd = dsh_remote_service_connect(call->target);
        int to_remote = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;

        if (to_remote < 0) {
                if (fd >= 0)
                        close(fd);
                return dsh_remote_ssh_start(call->target, &call->connection, error);
        }
        fcntl(fd, F_SETFL, O_NONBLOCK);   /* both ends: they share the one open socket */
        call->connection = (dsh_remote_connection) { -1, to_remote, fd, -1 };
        call->via_service = true;
        call->hello_seen = true;
        return 0;
}

/*
 * One call: ssh started (or the remote service reached), the request sent, frames pumped until the final
 * record, ssh reaped.  Returns 0 with call->final filled, or a negative
 * errno with `error` set (SANDBOX_UNAVAILABLE: the transport or the protocol).
 */
static int call_remote(remote_call *call, dsh_remote_operation operation, const dsh_remote_request *request,
                       char *const *argv, const dsh_remote_bash_options *bash, dsh_error *error)
{
        dsh_autofree char *request_text = NULL;
        int result = dsh_remote_request_encode(operation, request, argv, bash, &request_text, error);
        int wait_status = 0;

        if (result == 0)
                result = connect_remote(call, error);
        if (result < 0)
                return result;
        result = queue_frame(call, DSH_FRAME_REQUEST, request_text, strlen(request_text));
        if (result == 0 && !call->stdin_open)
                result = queue_frame(call, DSH_FRAME_STDIN_EOF, NULL, 0);
        if (result == 0)
                result = pump(call);
        /* A remote that does not speak the protocol is not waited for: nothing it does can count. */
        if (!call->final_seen && call->protocol_error.code != DSH_ERROR_NONE && call->connection.pid > 0)
                kill(call->connection.pid, SIGTERM);
        dsh_remote_ssh_finish(&call->connection, &wait_status);
        drain_diagnostics(call);
        if (call->final_seen)
                return 0;
        if (result < 0 && result != -EPROTO)
                return remote_unavailable(error, call->target->destination, "%s", strerror(-result));
        return transport_failure(call, wait_status, error);
}

static void call_init(remote_call *call, const dsh_remote_target *target, const dsh_remote_stdio *stdio)
{
        *call = (remote_call) { .target = target, .stdio = stdio, .connection = DSH_REMOTE_CONNECTION_INIT,
                                .frames = DSH_FRAME_READER_INIT, .outgoing = DSH_BYTE_QUEUE_INIT,
                                .final = DSH_REMOTE_FINAL_INIT, .protocol_error = DSH_ERROR_INIT };
        call->stdin_open = stdio && stdio->stdin_fd >= 0;
        call->signals_open = stdio && stdio->signal_fd >= 0;
}

static void call_clear(remote_call *call)
{
        dsh_frame_reader_clear(&call->frames);
        dsh_byte_queue_clear(&call->outgoing);
        dsh_remote_final_clear(&call->final);
        dsh_error_clear(&call->protocol_error);
}

/*
 * A refusal keeps the remote's code and message, behind the destination
 * (EXEC_FAILED its errno too), the message made one printable line: it is
 * another machine's text, shown here as one line of ours.
 */
static int relay_refusal(remote_call *call, dsh_error *error)
{
        dsh_error *refusal = &call->final.refusal;
        int errno_value = refusal->code == DSH_ERROR_EXEC_FAILED && call->final.value ? call->final.value : ENOSYS;
        dsh_autofree char *message = dsh_error_printable_text(refusal->message ? refusal->message : "refused");

        return dsh_error_set(error, refusal->code, errno_value, "remote \"%s\": %s", call->target->destination,
                             message ? message : "refused");
}

/* A call whose final record must be an answer (confine, probe, bash): 0 with call->final.answer, or why not. */
static int answered_call(remote_call *call, dsh_remote_operation operation, const dsh_remote_request *request,
                         char *const *argv, const dsh_remote_bash_options *bash, dsh_error *error)
{
        int result = call_remote(call, operation, request, argv, bash, error);

        if (result < 0)
                return result;
        if (call->final.outcome == DSH_REMOTE_OUTCOME_REFUSED)
                return relay_refusal(call, error);
        if (call->final.outcome != DSH_REMOTE_OUTCOME_ANSWERED)
                return remote_unavailable(error, call->target->destination, "the remote ran something instead of "
                                                                            "answering");
        return 0;
}

/* An answer that does not validate says nothing reliable: SANDBOX_UNAVAILABLE with the decoder's reason. */
static int invalid_answer(remote_call *call, dsh_error *invalid, dsh_error *error)
{
        int result = remote_unavailable(error, call->target->destination, "%s", invalid->message);

        dsh_error_clear(invalid);
        return result;
}

int dsh_remote_confine(const dsh_remote_target *target, const dsh_remote_request *request, char *const *argv,
                       dsh_confined_argv *facts_out, dsh_error *error)
{
        dsh_error invalid = DSH_ERROR_INIT;
        remote_call call;
        int result;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "remote confine: the argv is empty");
        call_init(&call, target, NULL);
        result = answered_call(&call, DSH_REMOTE_OPERATION_CONFINE, request, argv, NULL, error);
        /* Facts that do not validate are no facts: nothing may be spawned from them. */
        if (result == 0 && dsh_json_confined_argv_from_value(call.final.answer, "facts", facts_out, &invalid) < 0)
                result = invalid_answer(&call, &invalid, error);
        call_clear(&call);
        return result;
}

int dsh_remote_probe(const dsh_remote_target *target, const dsh_remote_request *request, char **report_json_out,
                     bool *selected_out, dsh_error *error)
{
        json_t *selected;
        remote_call call;
        int result;

        call_init(&call, target, NULL);
        result = answered_call(&call, DSH_REMOTE_OPERATION_PROBE, request, NULL, NULL, error);
        selected = result == 0 ? json_object_get(call.final.answer, "selected") : NULL;
        if (result == 0 && (!json_is_array(json_object_get(call.final.answer, "backends")) ||
                            !(json_is_null(selected) || json_is_string(selected))))
                result = remote_unavailable(error, target->destination, "the probe report lacks its \"backends\" "
                                                                        "array or its \"selected\" member");
        if (result == 0)
                *selected_out = json_is_string(selected);
        if (result == 0)
                result = dsh_json_dump(call.final.answer, report_json_out, error);
        call_clear(&call);
        return result;
}

int dsh_remote_run(const dsh_remote_target *target, const dsh_remote_request *request, char *const *argv,
                   const dsh_remote_stdio *stdio, int *wait_status_out, dsh_error *error)
{
        remote_call call;
        int result;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "remote run: the argv is empty");
        call_init(&call, target, stdio);
        call.on_output = write_to_stdio;
        call.output_data = (void *) stdio;
        result = call_remote(&call, DSH_REMOTE_OPERATION_RUN, request, argv, NULL, error);
        if (result == 0) {
                switch (call.final.outcome) {
                case DSH_REMOTE_OUTCOME_EXITED:
                        *wait_status_out = W_EXITCODE(call.final.value, 0);
                        break;
                case DSH_REMOTE_OUTCOME_SIGNALED:
                        *wait_status_out = W_EXITCODE(0, call.final.value);
                        break;
                case DSH_REMOTE_OUTCOME_REFUSED:
                        result = relay_refusal(&call, error);
                        break;
                case DSH_REMOTE_OUTCOME_ANSWERED:
                        result = remote_unavailable(error, target->destination, "the remote answered instead of "
                                                                                "running the command");
                        break;
                }
        }
        call_clear(&call);
        return result;
}

int dsh_remote_bash(const dsh_remote_target *target, const dsh_remote_request *request, const char *command,
                    const dsh_remote_bash_options *options, dsh_bash_result *result_out, dsh_error *error)
{
        const dsh_remote_bash_options defaults = DSH_REMOTE_BASH_OPTIONS_INIT;
        const dsh_remote_bash_options *bash = options ? options : &defaults;
        /* The bash tool's stdin is /dev/null: only signals go the other way. */
        const dsh_remote_stdio stdio = { -1, -1, -1, bash->signal_fd };
        char *argv[] = { (char *) command, NULL };
        dsh_error invalid = DSH_ERROR_INIT;
        remote_call call;
        int result;

        if (!command || !command[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "remote bash: the command is empty");
        call_init(&call, target, &stdio);
        call.on_output = bash->on_output;
        call.output_data = bash->output_data;
        result = answered_call(&call, DSH_REMOTE_OPERATION_BASH, request, argv, bash, error);
        if (result == 0 && dsh_json_bash_result_from_value(call.final.answer, "bash result", result_out, &invalid) < 0)
                result = invalid_answer(&call, &invalid, error);
        call_clear(&call);
        return result;
}
