/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC line transport (service/jsonrpc.c), driven over two pipes by
 * a client written here: protocol errors answered and survived, requests
 * answered out of order when a slow one waits, cancellation, the server's
 * own requests, params readers, and end of input waiting for what is in
 * flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonrpc.h"

typedef struct fixture {
        int to_server[2];
        int from_server[2];
        rpc_server *server;
        pthread_t thread;
        int run_result;
        sem_t release;          /* posted by the "release" notification */
        bool input_ended;       /* on_input_end ran */
        char pending[65536];    /* bytes read from the server past the last line returned */
        size_t pending_length;
} fixture;

/* ---------------------------------------------------- the handlers -- */

static void on_cancel(void *data)
{
        sem_post(data);
}

static void handle_cancellable(rpc_call *call)
{
        sem_t cancelled;

        sem_init(&cancelled, 0, 0);
        rpc_call_on_cancel(call, on_cancel, &cancelled);
        while (sem_wait(&cancelled) < 0 && errno == EINTR)
                ;
        rpc_call_on_cancel(call, NULL, NULL);
        sem_destroy(&cancelled);
        if (strcmp(rpc_call_method(call), "cancellable") == 0)
                rpc_call_fail(call, RPC_REQUEST_CANCELLED, "cancelled", NULL);
        else
                rpc_call_drop(call);
}

static void handle_ask(rpc_call *call)
{
        json_t *result = NULL, *error = NULL;
        int asked = rpc_server_request(rpc_call_server(call), call, "approval/request",
                                       json_pack("{s:s}", "command", "rm -rf /"), 0, &result, &error);

        if (asked == 0)
                rpc_call_reply(call, json_pack("{s:o}", "answer", result));
        else if (asked == -EPROTO)
                rpc_call_reply(call, json_pack("{s:o}", "error", error));
        else
                rpc_call_reply(call, json_pack("{s:i}", "errno", -asked));
}

static void handle_params(rpc_call *call)
{
        const char *name, *text = "";
        size_t text_length = 0;
        long long number = -1;
        char **list = NULL;

        if (rpc_param_string(call, "name", true, &name) < 0 || rpc_param_integer(call, "n", false, &number) < 0 ||
            rpc_param_string_array(call, "list", false, &list) < 0 ||
            rpc_param_text(call, "text", false, &text, &text_length) < 0)
                return;
        rpc_call_reply(call, json_pack("{s:s, s:I, s:i, s:s%}", "name", name, "n", (json_int_t) number, "listed",
                                       (int) (list ? dsh_strv_length(list) : 0), "text", text, text_length));
        dsh_strv_free(list);
}

static void on_request(rpc_call *call, void *data)
{
        fixture *f = data;
        const char *method = rpc_call_method(call);

        if (strcmp(method, "echo") == 0) {
                rpc_call_reply(call, json_incref(rpc_call_params(call)));
        } else if (strcmp(method, "wait") == 0) {
                while (sem_wait(&f->release) < 0 && errno == EINTR)
                        ;
                rpc_call_reply(call, json_pack("{s:b}", "waited", 1));
        } else if (strcmp(method, "sleep") == 0) {
                usleep(200 * 1000);
                rpc_call_reply(call, json_pack("{s:b}", "slept", 1));
        } else if (strcmp(method, "cancellable") == 0 || strcmp(method, "cancellable-silent") == 0) {
                handle_cancellable(call);
        } else if (strcmp(method, "ask") == 0) {
                handle_ask(call);
        } else if (strcmp(method, "params") == 0) {
                handle_params(call);
        } else if (strcmp(method, "forgets") != 0) {
                rpc_call_fail(call, RPC_METHOD_NOT_FOUND, "method not found", NULL);
        }
}

static void on_notification(rpc_server *server, const char *method, json_t *params, void *data)
{
        fixture *f = data;

        if (strcmp(method, "release") == 0)
                sem_post(&f->release);
        else if (strcmp(method, "cancel") == 0)
                rpc_server_cancel(server, json_object_get(params, "id"));
}

static void on_input_end(rpc_server *server, void *data)
{
        fixture *f = data;

        (void) server;
        f->input_ended = true;
        sem_post(&f->release);  /* what only the client could have ended: a "wait" in flight */
}

/* ------------------------------------------------------ the client -- */

static void *server_thread(void *data)
{
        fixture *f = data;

        f->run_result = rpc_server_run(f->server);
        close(f->from_server[1]);
        return NULL;
}

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        rpc_handlers handlers = { on_request, on_notification, f, on_input_end };

        assert_non_null(f);
        assert_int_equal(pipe2(f->to_server, O_CLOEXEC), 0);
        assert_int_equal(pipe2(f->from_server, O_CLOEXEC), 0);
        sem_init(&f->release, 0, 0);
        f->server = rpc_server_new(f->to_server[0], f->from_server[1], &handlers);
        assert_non_null(f->server);
        assert_int_equal(pthread_create(&f->thread, NULL, server_thread, f), 0);
        *state = f;
        return 0;
}

/* Ends the input and waits for the server; returns what rpc_server_run() returned. */
static int finish(fixture *f)
{
        if (f->to_server[1] >= 0)
                close(f->to_server[1]);
        f->to_server[1] = -1;
        pthread_join(f->thread, NULL);
        f->thread = 0;
        return f->run_result;
}

static int teardown(void **state)
{
        fixture *f = *state;

        if (f->thread)
                finish(f);
        rpc_server_free(f->server);
        close(f->to_server[0]);
        close(f->from_server[0]);
        sem_destroy(&f->release);
        free(f);
        return 0;
}

static void send_text(fixture *f, const char *text)
{
        size_t length = strlen(text);

        assert_int_equal(write(f->to_server[1], text, length), (ssize_t) length);
}

/*
 * The next line from the server, parsed.  The bound only keeps a broken
 * transport from hanging the suite; nothing is judged by how long it took.
 */
static json_t *next_message(fixture *f)
{
        for (;;) {
                char *newline = memchr(f->pending, '\n', f->pending_length);
                struct pollfd readable = { f->from_server[0], POLLIN, 0 };
                ssize_t count;

                if (newline) {
                        size_t length = (size_t) (newline - f->pending);
                        json_t *message = json_loadb(f->pending, length, JSON_ALLOW_NUL, NULL);

                        memmove(f->pending, newline + 1, f->pending_length - length - 1);
                        f->pending_length -= length + 1;
                        assert_non_null(message);
                        return message;
                }
                assert_int_equal(poll(&readable, 1, 30000), 1);
                count = read(f->from_server[0], f->pending + f->pending_length,
                             sizeof(f->pending) - f->pending_length);
                assert_true(count > 0);
                f->pending_length += (size_t) count;
        }
}

static void assert_error(json_t *message, int code)
{
        json_t *error = json_object_get(message, "error");

        assert_non_null(error);
        assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
}

static long long id_of(json_t *message)
{
        json_t *id = json_object_get(message, "id");

        assert_true(json_is_integer(id));
        return json_integer_value(id);
}

/* -------------------------------------------------------------- tests -- */

static void test_parse_error_then_a_request(void **state)
{
        fixture *f = *state;
        json_t *message;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n");
        message = next_message(f);
        assert_error(message, RPC_PARSE_ERROR);
        assert_true(json_is_null(json_object_get(message, "id")));
        json_decref(message);

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":{\"a\":1}}\n");
        message = next_message(f);
        assert_int_equal(id_of(message), 2);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(message, "result"), "a")), 1);
        json_decref(message);
        assert_int_equal(finish(f), 0);
}

static void test_invalid_requests_are_answered(void **state)
{
        fixture *f = *state;
        const char *lines[] = {
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}]\n",
                "42\n",
                "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"echo\"}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"echo\"}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"echo\",\"params\":\"x\"}\n",
        };
        const int ids[] = { -1, -1, 3, -1, 5, 6 };

        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                json_t *message;

                send_text(f, lines[i]);
                message = next_message(f);
                assert_error(message, RPC_INVALID_REQUEST);
                if (ids[i] < 0)
                        assert_true(json_is_null(json_object_get(message, "id")));
                else
                        assert_int_equal(id_of(message), ids[i]);
                json_decref(message);
        }
        send_text(f, "\n   \n{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"nope\"}\n");
        {
                json_t *message = next_message(f);

                assert_error(message, RPC_METHOD_NOT_FOUND);
                assert_string_equal(json_string_value(json_object_get(message, "id")), "last");
                json_decref(message);
        }
}

/* A request that waits does not hold up the one after it: the second is answered first. */
static void test_a_slow_request_does_not_hold_up_a_quick_one(void **state)
{
        fixture *f = *state;
        json_t *message;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"wait\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":{}}\n");
        message = next_message(f);
        assert_int_equal(id_of(message), 2);
        json_decref(message);

        send_text(f, "{\"jsonrpc\":\"2.0\",\"method\":\"release\"}\n");
        message = next_message(f);
        assert_int_equal(id_of(message), 1);
        assert_true(json_is_true(json_object_get(json_object_get(message, "result"), "waited")));
        json_decref(message);
}

static void test_cancellation_runs_the_hook(void **state)
{
        fixture *f = *state;
        json_t *message;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"cancellable\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"cancel\",\"params\":{\"id\":\"unknown\"}}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"cancel\",\"params\":{\"id\":\"c1\"}}\n");
        message = next_message(f);
        assert_string_equal(json_string_value(json_object_get(message, "id")), "c1");
        assert_error(message, RPC_REQUEST_CANCELLED);
        json_decref(message);
}

/* A call dropped after its cancellation writes nothing: once the server has ended, its output is empty. */
static void test_a_dropped_call_writes_nothing(void **state)
{
        fixture *f = *state;
        char rest[64];

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancellable-silent\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"cancel\",\"params\":{\"id\":1}}\n");
        assert_int_equal(finish(f), 0);
        assert_int_equal(f->pending_length, 0);
        assert_int_equal(read(f->from_server[0], rest, sizeof(rest)), 0);
}

/* The server asks the client; the answer (a result, or an error) comes back to the handler that asked. */
static void test_the_server_asks_the_client(void **state)
{
        fixture *f = *state;
        json_t *request, *message;
        char answer[256];

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ask\"}\n");
        request = next_message(f);
        assert_string_equal(json_string_value(json_object_get(request, "method")), "approval/request");
        snprintf(answer, sizeof(answer), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"approved\":true}}\n",
                 id_of(request));
        json_decref(request);
        send_text(f, answer);
        message = next_message(f);
        assert_int_equal(id_of(message), 7);
        assert_true(json_is_true(
                json_object_get(json_object_get(json_object_get(message, "result"), "answer"), "approved")));
        json_decref(message);

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ask\"}\n");
        request = next_message(f);
        snprintf(answer, sizeof(answer),
                 "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-1,\"message\":\"no\"}}\n", id_of(request));
        json_decref(request);
        send_text(f, answer);
        message = next_message(f);
        assert_int_equal(id_of(message), 8);
        assert_string_equal(
                json_string_value(json_object_get(
                        json_object_get(json_object_get(message, "result"), "error"), "message")),
                "no");
        json_decref(message);
}

static void expect_bad_param(fixture *f, const char *params, const char *message_text, const char *parameter)
{
        char line[512];
        json_t *message, *error;

        snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"params\",\"params\":%s}\n", params);
        send_text(f, line);
        message = next_message(f);
        assert_error(message, RPC_INVALID_PARAMS);
        error = json_object_get(message, "error");
        assert_string_equal(json_string_value(json_object_get(error, "message")), message_text);
        if (parameter)
                assert_string_equal(
                        json_string_value(json_object_get(json_object_get(error, "data"), "parameter")), parameter);
        json_decref(message);
}

static void test_params_are_checked_and_named(void **state)
{
        fixture *f = *state;
        json_t *message;

        expect_bad_param(f, "{}", "invalid params: name: missing", "name");
        expect_bad_param(f, "{\"name\":null}", "invalid params: name: missing", "name");
        expect_bad_param(f, "{\"name\":3}", "invalid params: name: expected a string", "name");
        expect_bad_param(f, "{\"name\":\"\"}", "invalid params: name: must not be empty", "name");
        expect_bad_param(f, "{\"name\":\"a\\u0000b\"}", "invalid params: name: must not contain a NUL character",
                         "name");
        expect_bad_param(f, "{\"name\":\"a\",\"n\":1.5}", "invalid params: n: expected an integer", "n");
        expect_bad_param(f, "{\"name\":\"a\",\"list\":[\"x\",2]}",
                         "invalid params: list: element 1 expected a string", "list");
        expect_bad_param(f, "[\"a\"]", "invalid params: params must be an object", NULL);
        expect_bad_param(f, "{\"name\":\"a\",\"text\":[]}", "invalid params: text: expected a string", "text");

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"params\",\"params\":"
                     "{\"name\":\"a\",\"n\":9,\"list\":[\"x\",\"y\"]}}\n");
        message = next_message(f);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(message, "result"), "n")), 9);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(message, "result"), "listed")), 2);
        json_decref(message);

        /* Free text may be empty and may hold a NUL: it comes back whole. */
        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"params\",\"params\":{\"name\":\"a\",\"text\":\"x\\u0000y\"}}\n");
        message = next_message(f);
        assert_int_equal(json_string_length(json_object_get(json_object_get(message, "result"), "text")), 3);
        json_decref(message);
        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"params\",\"params\":{\"name\":\"a\",\"text\":\"\"}}\n");
        message = next_message(f);
        assert_int_equal(json_string_length(json_object_get(json_object_get(message, "result"), "text")), 0);
        json_decref(message);
}

/* End of input: what is in flight still answers; a question to the client gets -EPIPE instead of hanging. */
static void test_end_of_input_waits_for_requests_in_flight(void **state)
{
        fixture *f = *state;
        json_t *first, *second, *request;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ask\"}\n");
        request = next_message(f);
        assert_string_equal(json_string_value(json_object_get(request, "method")), "approval/request");
        json_decref(request);
        assert_int_equal(finish(f), 0);
        assert_true(f->input_ended);

        first = next_message(f);
        second = next_message(f);
        if (id_of(first) == 2) {
                json_t *swap = first;
                first = second;
                second = swap;
        }
        assert_int_equal(id_of(first), 1);
        assert_true(json_is_true(json_object_get(json_object_get(first, "result"), "slept")));
        assert_int_equal(id_of(second), 2);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(second, "result"), "errno")), EPIPE);
        json_decref(first);
        json_decref(second);
}

/* The end-of-input hook runs before the server waits for what is in flight: here it ends a "wait". */
static void test_the_input_end_hook_runs_before_the_wait(void **state)
{
        fixture *f = *state;
        json_t *message;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"wait\"}\n");
        assert_int_equal(finish(f), 0);
        message = next_message(f);
        assert_int_equal(id_of(message), 1);
        assert_true(json_is_true(json_object_get(json_object_get(message, "result"), "waited")));
        json_decref(message);
}

/* A handler that returns without answering still gets its caller an answer. */
static void test_a_request_left_unanswered_is_answered(void **state)
{
        fixture *f = *state;
        json_t *message;

        send_text(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"forgets\"}\n");
        message = next_message(f);
        assert_int_equal(id_of(message), 4);
        assert_error(message, RPC_INTERNAL_ERROR);
        json_decref(message);
}

static void *write_long_line(void *data)
{
        fixture *f = data;
        size_t chunk_size = 1024 * 1024;
        char *chunk = malloc(chunk_size);

        memset(chunk, 'x', chunk_size);
        for (size_t written = 0; written < RPC_LINE_LIMIT + chunk_size; written += chunk_size) {
                if (write(f->to_server[1], chunk, chunk_size) != (ssize_t) chunk_size)
                        break;
        }
        free(chunk);
        send_text(f, "\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"echo\",\"params\":{}}\n");
        return NULL;
}

/* A line over the limit is answered once and skipped; memory stays bounded, and the next line is read. */
static void test_a_line_over_the_limit_is_skipped(void **state)
{
        fixture *f = *state;
        pthread_t writer;
        json_t *message;

        assert_int_equal(pthread_create(&writer, NULL, write_long_line, f), 0);
        message = next_message(f);
        assert_error(message, RPC_INVALID_REQUEST);
        json_decref(message);
        message = next_message(f);
        assert_int_equal(id_of(message), 9);
        json_decref(message);
        pthread_join(writer, NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_parse_error_then_a_request, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invalid_requests_are_answered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_slow_request_does_not_hold_up_a_quick_one, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cancellation_runs_the_hook, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_dropped_call_writes_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_the_server_asks_the_client, setup, teardown),
                cmocka_unit_test_setup_teardown(test_params_are_checked_and_named, setup, teardown),
                cmocka_unit_test_setup_teardown(test_end_of_input_waits_for_requests_in_flight, setup, teardown),
                cmocka_unit_test_setup_teardown(test_the_input_end_hook_runs_before_the_wait, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_request_left_unanswered_is_answered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_line_over_the_limit_is_skipped, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
