/* SPDX-License-Identifier: MIT */
/*
 * JSON-RPC 2.0 over a pair of file descriptors, one message per line
 * (service/jsonrpc.h).
 *
 * Threads: the caller of rpc_server_run() reads; each request of the
 * client's runs on a detached thread of its own; every write takes the
 * write lock, so a message is one write of one line and two never mix.
 * One lock (`lock`) guards the calls in flight and the server's own
 * pending requests; one condition variable (`changed`) wakes whoever waits
 * on either: an answer arrived, a call was cancelled or ended, the input
 * ended.
 *
 * The client is the harness, so its input is trusted only as far as the
 * protocol goes: a line too long, not JSON, or not a message is answered
 * and skipped, never fatal, and never grows memory beyond RPC_LINE_LIMIT.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jsonrpc.h"

struct rpc_call {
        rpc_server *server;
        json_t *message;        /* the request as read; owns method, params and id */
        const char *method;
        json_t *params;
        json_t *id;
        bool cancelled;
        bool answered;
        void (*cancel_hook)(void *data);
        void *cancel_data;
        rpc_call *next;
};

/* One request of the server's own, waiting for the client's answer. */
typedef struct rpc_pending {
        json_int_t id;
        json_t *result;
        json_t *error;
        bool answered;
        struct rpc_pending *next;
} rpc_pending;

struct rpc_server {
        int input_fd;
        int output_fd;
        rpc_handlers handlers;
        pthread_mutex_t lock;
        pthread_cond_t changed;         /* CLOCK_MONOTONIC, for the timed waits of rpc_server_request() */
        pthread_mutex_t write_lock;
        rpc_call *calls;                /* in flight */
        size_t calls_in_flight;
        rpc_pending *pending;
        json_int_t last_request_id;
        bool input_ended;
};

/* ------------------------------------------------------------ output -- */

/*
 * Writes all of `text` and a newline.  SIGPIPE is blocked around the write
 * on this thread only, and a pending one consumed: a client that went away
 * must be an EPIPE here, not the death of the service; and the process's
 * disposition stays the default, which the commands the service spawns
 * inherit (an ignored SIGPIPE would change how `yes | head` ends).
 */
static int write_line(rpc_server *server, const char *text)
{
        sigset_t pipe_only, previous;
        size_t length = strlen(text);
        int result = 0;

        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
        pthread_mutex_lock(&server->write_lock);
        for (size_t done = 0; done <= length && result == 0;) {
                const char *from = done < length ? text + done : "\n";
                size_t count = done < length ? length - done : 1;
                ssize_t written = write(server->output_fd, from, count);

                if (written < 0 && errno == EINTR)
                        continue;
                if (written <= 0)
                        result = written < 0 ? -errno : -EIO;
                else
                        done += (size_t) written;
        }
        pthread_mutex_unlock(&server->write_lock);
        if (result == -EPIPE) {
                const struct timespec now = { 0, 0 };
                sigtimedwait(&pipe_only, NULL, &now);
        }
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        return result;
}

/* Sends `message` (stolen) as one line. */
static int send_message(rpc_server *server, json_t *message)
{
        char *text;
        int result;

        if (!message)
                return -ENOMEM;
        text = json_dumps(message, JSON_COMPACT);
        json_decref(message);
        if (!text)
                return -ENOMEM;
        result = write_line(server, text);
        free(text);
        return result;
}

static json_t *error_object(int code, const char *message, json_t *data)
{
        json_t *error = json_pack("{s:i, s:s}", "code", code, "message", message ? message : "error");

        if (error && data)
                json_object_set_new(error, "data", data);
        else
                json_decref(data);
        return error;
}

/* An error answer to the client's request `id` (borrowed; NULL: id null). */
static int send_error(rpc_server *server, const json_t *id, int code, const char *message, json_t *data)
{
        json_t *error = error_object(code, message, data);

        if (!error)
                return -ENOMEM;
        return send_message(server, json_pack("{s:s, s:O?, s:o}", "jsonrpc", "2.0", "id", (json_t *) id, "error",
                                              error));
}

/* ----------------------------------------------------- the server -- */

rpc_server *rpc_server_new(int input_fd, int output_fd, const rpc_handlers *handlers)
{
        rpc_server *server = calloc(1, sizeof(*server));
        pthread_condattr_t attributes;

        if (!server)
                return NULL;
        server->input_fd = input_fd;
        server->output_fd = output_fd;
        server->handlers = *handlers;
        pthread_mutex_init(&server->lock, NULL);
        pthread_mutex_init(&server->write_lock, NULL);
        pthread_condattr_init(&attributes);
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
        pthread_cond_init(&server->changed, &attributes);
        pthread_condattr_destroy(&attributes);
        return server;
}

void rpc_server_free(rpc_server *server)
{
        if (!server)
                return;
        pthread_cond_destroy(&server->changed);
        pthread_mutex_destroy(&server->write_lock);
        pthread_mutex_destroy(&server->lock);
        free(server);
}

/* ------------------------------------------------------------- calls -- */

static void unlink_call(rpc_server *server, rpc_call *call)
{
        for (rpc_call **link = &server->calls; *link; link = &(*link)->next) {
                if (*link == call) {
                        *link = call->next;
                        return;
                }
        }
}

static void *call_thread(void *argument)
{
        rpc_call *call = argument;
        rpc_server *server = call->server;

        server->handlers.on_request(call, server->handlers.data);
        if (!call->answered)
                rpc_call_fail(call, RPC_INTERNAL_ERROR, "internal error: the request ended without an answer", NULL);

        pthread_mutex_lock(&server->lock);
        unlink_call(server, call);
        server->calls_in_flight--;
        pthread_cond_broadcast(&server->changed);
        pthread_mutex_unlock(&server->lock);
        json_decref(call->message);
        free(call);
        return NULL;
}

/* Starts the handler of a request on a thread of its own; `message` is stolen. */
static void start_call(rpc_server *server, json_t *message, const char *method, json_t *id)
{
        rpc_call *call = calloc(1, sizeof(*call));
        pthread_attr_t attributes;
        pthread_t thread;
        int started;

        if (!call) {
                send_error(server, id, RPC_INTERNAL_ERROR, "internal error: out of memory", NULL);
                json_decref(message);
                return;
        }
        *call = (rpc_call) { .server = server, .message = message, .method = method, .id = id,
                             .params = json_object_get(message, "params") };
        pthread_mutex_lock(&server->lock);
        call->next = server->calls;
        server->calls = call;
        server->calls_in_flight++;
        pthread_mutex_unlock(&server->lock);

        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&thread, &attributes, call_thread, call);
        pthread_attr_destroy(&attributes);
        if (started == 0)
                return;
        pthread_mutex_lock(&server->lock);
        unlink_call(server, call);
        server->calls_in_flight--;
        pthread_mutex_unlock(&server->lock);
        send_error(server, id, RPC_INTERNAL_ERROR, "internal error: cannot start a thread for the request", NULL);
        json_decref(message);
        free(call);
}

const char *rpc_call_method(const rpc_call *call)
{
        return call->method;
}

json_t *rpc_call_params(const rpc_call *call)
{
        return call->params;
}

const json_t *rpc_call_id(const rpc_call *call)
{
        return call->id;
}

rpc_server *rpc_call_server(const rpc_call *call)
{
        return call->server;
}

bool rpc_call_cancelled(const rpc_call *call)
{
        bool cancelled;

        pthread_mutex_lock(&call->server->lock);
        cancelled = call->cancelled;
        pthread_mutex_unlock(&call->server->lock);
        return cancelled;
}

/*
 * The hook runs under the server's lock, here and in rpc_server_cancel():
 * that is what makes removing it safe — once rpc_call_on_cancel(call, NULL,
 * NULL) has returned, no cancellation can still be inside the old hook, and
 * its data may be freed.
 */
void rpc_call_on_cancel(rpc_call *call, void (*hook)(void *data), void *data)
{
        pthread_mutex_lock(&call->server->lock);
        call->cancel_hook = hook;
        call->cancel_data = data;
        if (hook && call->cancelled)
                hook(data);
        pthread_mutex_unlock(&call->server->lock);
}

void rpc_server_cancel(rpc_server *server, const json_t *id)
{
        pthread_mutex_lock(&server->lock);
        for (rpc_call *call = server->calls; call; call = call->next) {
                if (call->cancelled || !json_equal(call->id, (json_t *) id))
                        continue;
                call->cancelled = true;
                if (call->cancel_hook)
                        call->cancel_hook(call->cancel_data);
        }
        pthread_cond_broadcast(&server->changed);
        pthread_mutex_unlock(&server->lock);
}

int rpc_call_reply(rpc_call *call, json_t *result)
{
        if (call->answered) {
                json_decref(result);
                return -EALREADY;
        }
        call->answered = true;
        if (!result)
                result = json_object();
        return send_message(call->server,
                            json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", call->id, "result", result));
}

int rpc_call_fail(rpc_call *call, int code, const char *message, json_t *data)
{
        if (call->answered) {
                json_decref(data);
                return -EALREADY;
        }
        call->answered = true;
        return send_error(call->server, call->id, code, message, data);
}

void rpc_call_drop(rpc_call *call)
{
        call->answered = true;
}

int rpc_call_fail_sandbox(rpc_call *call, const dsh_error *error)
{
        return rpc_call_fail_sandbox_with(call, error, NULL);
}

int rpc_call_fail_sandbox_with(rpc_call *call, const dsh_error *error, json_t *members)
{
        const char *code = dsh_error_code_name(error->code);
        const char *message = error->message ? error->message : "the sandbox failed without a message";
        json_t *data = json_pack("{s:s?, s:s}", "code", code, "message", message);

        if (data && error->errno_value)
                json_object_set_new(data, "errno", json_integer(error->errno_value));
        if (data && members)
                json_object_update_missing(data, members);
        json_decref(members);
        return rpc_call_fail(call, RPC_SANDBOX_ERROR, message, data);
}

int rpc_call_fail_params(rpc_call *call, const char *parameter, const char *what)
{
        char message[512];

        if (parameter)
                snprintf(message, sizeof(message), "invalid params: %s: %s", parameter, what);
        else
                snprintf(message, sizeof(message), "invalid params: %s", what);
        return rpc_call_fail(call, RPC_INVALID_PARAMS, message, json_pack("{s:s?}", "parameter", parameter));
}

/* ----------------------------------------------------------- params -- */

/*
 * The member `name` of the params: 0 with it, 1 when absent or null (an
 * optional member), -1 after answering (a required one missing, params that
 * are not an object).
 */
static int param_member(rpc_call *call, const char *name, bool required, json_t **value_out)
{
        json_t *value = NULL;

        if (call->params && !json_is_object(call->params))
                return rpc_call_fail_params(call, NULL, "params must be an object"), -1;
        if (call->params)
                value = json_object_get(call->params, name);
        if (value && !json_is_null(value)) {
                *value_out = value;
                return 0;
        }
        if (required)
                return rpc_call_fail_params(call, name, "missing"), -1;
        return 1;
}

/* A string JSON carried is usable as a C string: not empty, no NUL byte inside. */
static const char *usable_string(json_t *value, const char **problem)
{
        if (!json_is_string(value))
                *problem = "expected a string";
        else if (json_string_length(value) == 0)
                *problem = "must not be empty";
        else if (strlen(json_string_value(value)) != json_string_length(value))
                *problem = "must not contain a NUL character";
        else
                return json_string_value(value);
        return NULL;
}

int rpc_param_string(rpc_call *call, const char *name, bool required, const char **value_out)
{
        const char *problem = NULL, *text;
        json_t *value;
        int found = param_member(call, name, required, &value);

        if (found != 0)
                return found;
        text = usable_string(value, &problem);
        if (!text)
                return rpc_call_fail_params(call, name, problem), -1;
        *value_out = text;
        return 0;
}

int rpc_param_text(rpc_call *call, const char *name, bool required, const char **text_out, size_t *length_out)
{
        json_t *value;
        int found = param_member(call, name, required, &value);

        if (found != 0)
                return found;
        if (!json_is_string(value))
                return rpc_call_fail_params(call, name, "expected a string"), -1;
        *text_out = json_string_value(value);
        *length_out = json_string_length(value);
        return 0;
}

int rpc_param_bool(rpc_call *call, const char *name, bool required, bool *value_out)
{
        json_t *value;
        int found = param_member(call, name, required, &value);

        if (found != 0)
                return found;
        if (!json_is_boolean(value))
                return rpc_call_fail_params(call, name, "expected true or false"), -1;
        *value_out = json_is_true(value);
        return 0;
}

int rpc_param_integer(rpc_call *call, const char *name, bool required, long long *value_out)
{
        json_t *value;
        int found = param_member(call, name, required, &value);

        if (found != 0)
                return found;
        if (!json_is_integer(value))
                return rpc_call_fail_params(call, name, "expected an integer"), -1;
        *value_out = json_integer_value(value);
        return 0;
}

int rpc_param_string_array(rpc_call *call, const char *name, bool required, char ***value_out)
{
        char **strings = NULL;
        const char *problem = NULL;
        json_t *value, *element;
        size_t index;
        int found = param_member(call, name, required, &value);

        if (found != 0)
                return found;
        if (!json_is_array(value))
                return rpc_call_fail_params(call, name, "expected an array of strings"), -1;
        strings = calloc(json_array_size(value) + 1, sizeof(*strings));
        if (!strings)
                return rpc_call_fail(call, RPC_INTERNAL_ERROR, "internal error: out of memory", NULL), -1;
        json_array_foreach(value, index, element) {
                const char *text = usable_string(element, &problem);
                char what[128];

                if (!text) {
                        snprintf(what, sizeof(what), "element %zu %s", index, problem);
                        dsh_strv_free(strings);
                        return rpc_call_fail_params(call, name, what), -1;
                }
                strings[index] = strdup(text);
                if (!strings[index]) {
                        dsh_strv_free(strings);
                        return rpc_call_fail(call, RPC_INTERNAL_ERROR, "internal error: out of memory", NULL), -1;
                }
        }
        *value_out = strings;
        return 0;
}

/* ------------------------------------------- the server's own requests -- */

int rpc_server_notify(rpc_server *server, const char *method, json_t *params)
{
        return send_message(server, json_pack("{s:s, s:s, s:o?}", "jsonrpc", "2.0", "method", method, "params",
                                              params));
}

static void unlink_pending(rpc_server *server, rpc_pending *pending)
{
        for (rpc_pending **link = &server->pending; *link; link = &(*link)->next) {
                if (*link == pending) {
                        *link = pending->next;
                        return;
                }
        }
}

static struct timespec deadline_after(long timeout_ms)
{
        struct timespec deadline;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        return deadline;
}

/* Waits (under the lock) until `pending` is answered or given up on; returns 0 or why it was given up. */
static int wait_for_answer(rpc_server *server, rpc_call *call, rpc_pending *pending, long timeout_ms)
{
        struct timespec deadline = deadline_after(timeout_ms);

        while (!pending->answered) {
                if (server->input_ended)
                        return -EPIPE;
                if (call && call->cancelled)
                        return -ECANCELED;
                if (timeout_ms <= 0)
                        pthread_cond_wait(&server->changed, &server->lock);
                else if (pthread_cond_timedwait(&server->changed, &server->lock, &deadline) == ETIMEDOUT)
                        return pending->answered ? 0 : -ETIMEDOUT;
        }
        return 0;
}

int rpc_server_request(rpc_server *server, rpc_call *call, const char *method, json_t *params, long timeout_ms,
                       json_t **result_out, json_t **error_out)
{
        rpc_pending pending = { 0 };
        int result;

        pthread_mutex_lock(&server->lock);
        if (server->input_ended) {
                pthread_mutex_unlock(&server->lock);
                json_decref(params);
                return -EPIPE;
        }
        pending.id = ++server->last_request_id;
        pending.next = server->pending;
        server->pending = &pending;
        pthread_mutex_unlock(&server->lock);

        result = send_message(server, json_pack("{s:s, s:I, s:s, s:o?}", "jsonrpc", "2.0", "id", pending.id, "method",
                                                method, "params", params));
        pthread_mutex_lock(&server->lock);
        if (result == 0)
                result = wait_for_answer(server, call, &pending, timeout_ms);
        unlink_pending(server, &pending);
        pthread_mutex_unlock(&server->lock);

        if (result == 0 && pending.error) {
                *error_out = pending.error;
                pending.error = NULL;
                result = -EPROTO;
        } else if (result == 0) {
                *result_out = pending.result;
                pending.result = NULL;
        }
        json_decref(pending.result);
        json_decref(pending.error);
        return result;
}

/* The client's answer to one of the server's requests; an answer nobody waits for is dropped. */
static void take_answer(rpc_server *server, json_t *message)
{
        json_t *id = json_object_get(message, "id");

        pthread_mutex_lock(&server->lock);
        for (rpc_pending *pending = server->pending; pending; pending = pending->next) {
                if (!json_is_integer(id) || json_integer_value(id) != pending->id || pending->answered)
                        continue;
                pending->answered = true;
                pending->error = json_incref(json_object_get(message, "error"));
                if (!pending->error)
                        pending->result = json_incref(json_object_get(message, "result"));
                pthread_cond_broadcast(&server->changed);
        }
        pthread_mutex_unlock(&server->lock);
}

/* --------------------------------------------------------- reading -- */

static bool valid_id(const json_t *id)
{
        return json_is_string(id) || json_is_integer(id) || json_is_null(id);
}

/* One message: a request, a notification, or an answer to one of ours. `message` is stolen. */
static void dispatch(rpc_server *server, json_t *message)
{
        json_t *id = json_object_get(message, "id");
        json_t *method = json_object_get(message, "method");
        json_t *params = json_object_get(message, "params");
        const json_t *reply_id = id && valid_id(id) ? id : NULL;

        if (!json_is_string(json_object_get(message, "jsonrpc")) ||
            strcmp(json_string_value(json_object_get(message, "jsonrpc")), "2.0") != 0) {
                send_error(server, reply_id, RPC_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"", NULL);
        } else if (!method && (json_object_get(message, "result") || json_object_get(message, "error"))) {
                take_answer(server, message);
        } else if (!json_is_string(method) || (id && !valid_id(id)) || (params && !json_is_object(params) &&
                                                                         !json_is_array(params))) {
                send_error(server, reply_id, RPC_INVALID_REQUEST,
                           "invalid request: expected a string \"method\", an \"id\" that is a string or an integer, "
                           "and \"params\" that are an object or an array",
                           NULL);
        } else if (!id) {
                if (server->handlers.on_notification)
                        server->handlers.on_notification(server, json_string_value(method), params,
                                                         server->handlers.data);
        } else {
                start_call(server, message, json_string_value(method), id);
                return;
        }
        json_decref(message);
}

static void handle_line(rpc_server *server, const char *line, size_t length)
{
        json_error_t parse_error;
        json_t *message;
        char text[300];
        size_t blank = 0;

        while (blank < length && strchr(" \t\r", line[blank]))
                blank++;
        if (blank == length)
                return;
        /* Any JSON value parses (a bare 42 is an invalid request, not a parse error), and a NUL inside a
         * string is left for the params readers, which name the member that holds it. */
        message = json_loadb(line, length, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &parse_error);
        if (!message) {
                snprintf(text, sizeof(text), "parse error: %s at character %d", parse_error.text,
                         parse_error.position);
                send_error(server, NULL, RPC_PARSE_ERROR, text, NULL);
        } else if (!json_is_object(message)) {
                send_error(server, NULL, RPC_INVALID_REQUEST,
                           json_is_array(message) ? "invalid request: batches are not supported"
                                                  : "invalid request: a message is a JSON object",
                           NULL);
                json_decref(message);
        } else {
                dispatch(server, message);
        }
}

/*
 * The line reader: a buffer that grows to at most RPC_LINE_LIMIT.  A line
 * over the limit is answered once and its bytes are skipped up to its end.
 */
typedef struct line_reader {
        char *buffer;
        size_t used;
        size_t size;
        bool skipping;
} line_reader;

/* Handles every whole line in the buffer and keeps the rest. */
static void handle_lines(rpc_server *server, line_reader *reader)
{
        size_t start = 0;
        char *newline;

        while ((newline = memchr(reader->buffer + start, '\n', reader->used - start))) {
                size_t end = (size_t) (newline - reader->buffer);

                if (!reader->skipping)
                        handle_line(server, reader->buffer + start, end - start);
                reader->skipping = false;
                start = end + 1;
        }
        memmove(reader->buffer, reader->buffer + start, reader->used - start);
        reader->used -= start;
        if (reader->used >= RPC_LINE_LIMIT) {
                if (!reader->skipping)
                        send_error(server, NULL, RPC_INVALID_REQUEST,
                                   "invalid request: a line is longer than the limit of 64 MiB", NULL);
                reader->skipping = true;
                reader->used = 0;
        }
}

static int read_messages(rpc_server *server)
{
        line_reader reader = { 0 };
        int result = 0;

        for (;;) {
                ssize_t count;

                if (reader.size - reader.used < 65536) {
                        size_t size = reader.size ? reader.size * 2 : 65536;
                        char *grown = realloc(reader.buffer, size);

                        if (!grown) {
                                result = -ENOMEM;
                                break;
                        }
                        reader.buffer = grown;
                        reader.size = size;
                }
                count = read(server->input_fd, reader.buffer + reader.used, reader.size - reader.used);
                if (count < 0 && errno == EINTR)
                        continue;
                if (count < 0) {
                        result = -errno;
                        break;
                }
                if (count == 0) {
                        /* A last message without its newline is still a message. */
                        if (reader.used > 0 && !reader.skipping)
                                handle_line(server, reader.buffer, reader.used);
                        break;
                }
                reader.used += (size_t) count;
                handle_lines(server, &reader);
        }
        free(reader.buffer);
        return result;
}

int rpc_server_run(rpc_server *server)
{
        int result = read_messages(server);

        pthread_mutex_lock(&server->lock);
        server->input_ended = true;
        pthread_cond_broadcast(&server->changed);
        pthread_mutex_unlock(&server->lock);
        if (server->handlers.on_input_end)
                server->handlers.on_input_end(server, server->handlers.data);
        pthread_mutex_lock(&server->lock);
        while (server->calls_in_flight > 0)
                pthread_cond_wait(&server->changed, &server->lock);
        pthread_mutex_unlock(&server->lock);
        return result;
}
