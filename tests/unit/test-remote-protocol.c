/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's frames and messages (src/remote/remote-frame.c,
 * src/remote/remote-protocol.c): frames survive being cut anywhere, an oversized
 * header is a protocol error, a queue in front of a full pipe keeps its
 * bytes, and both ends read messages strictly — another protocol version,
 * an unknown member, a status outside 0..255 are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/json.h"
#include "remote/remote-frame.h"
#include "remote/remote-protocol.h"

/* Two frames written to a pipe one byte at a time: each read ends mid-header or mid-payload. */
static void test_frames_cut_anywhere_come_out_whole(void **state)
{
        dsh_byte_queue bytes = DSH_BYTE_QUEUE_INIT;
        dsh_frame_reader reader = DSH_FRAME_READER_INIT;
        const unsigned char *payload;
        size_t length, frames = 0;
        char type;
        int fds[2];

        (void) state;
        assert_int_equal(pipe(fds), 0);
        assert_int_equal(dsh_byte_queue_append_frame(&bytes, DSH_FRAME_STDOUT, "hello", 5), 0);
        assert_int_equal(dsh_byte_queue_append_frame(&bytes, DSH_FRAME_STDIN_EOF, NULL, 0), 0);
        for (size_t i = 0; i < bytes.used; i++) {
                assert_int_equal(write(fds[1], bytes.data + i, 1), 1);
                assert_int_equal(dsh_frame_reader_fill(&reader, fds[0]), 1);
                while (dsh_frame_reader_next(&reader, &type, &payload, &length) == 1) {
                        frames++;
                        assert_int_equal(i + 1, frames == 1 ? 10 : 15);   /* whole only with its last byte */
                        assert_int_equal(type, frames == 1 ? DSH_FRAME_STDOUT : DSH_FRAME_STDIN_EOF);
                        assert_int_equal(length, frames == 1 ? 5 : 0);
                        if (frames == 1)
                                assert_memory_equal(payload, "hello", 5);
                }
        }
        assert_int_equal(frames, 2);
        close(fds[0]);
        close(fds[1]);
        dsh_byte_queue_clear(&bytes);
        dsh_frame_reader_clear(&reader);
}

static void test_an_oversized_header_is_a_protocol_error(void **state)
{
        static const unsigned char header[] = { 'O', 0x7f, 0xff, 0xff, 0xff };
        dsh_frame_reader reader = DSH_FRAME_READER_INIT;
        const unsigned char *payload;
        size_t length;
        char type;
        int fds[2];

        (void) state;
        assert_int_equal(pipe(fds), 0);
        assert_int_equal(write(fds[1], header, sizeof(header)), (ssize_t) sizeof(header));
        assert_int_equal(dsh_frame_reader_fill(&reader, fds[0]), (ssize_t) sizeof(header));
        assert_int_equal(dsh_frame_reader_next(&reader, &type, &payload, &length), -EPROTO);
        assert_int_equal(dsh_frame_write(fds[1], 'O', "", DSH_FRAME_MAX_PAYLOAD + 1), -EINVAL);
        close(fds[0]);
        close(fds[1]);
        dsh_frame_reader_clear(&reader);
}

/* A credit is 4 bytes big-endian, from 1 to the window; anything else is a protocol error, not a credit. */
static void test_credits_read_back_and_nothing_else_reads(void **state)
{
        static const unsigned char zero[] = { 0, 0, 0, 0 }, above[] = { 0, 0x10, 0, 1 }, longer[] = { 0, 0, 0, 1, 0 };
        unsigned char payload[DSH_FRAME_CREDIT_SIZE];
        size_t count = 0;

        (void) state;
        dsh_frame_credit_encode(payload, 0x010203);
        assert_memory_equal(payload, "\x00\x01\x02\x03", 4);
        assert_int_equal(dsh_frame_credit_decode(payload, sizeof(payload), &count), 0);
        assert_int_equal(count, 0x010203);
        dsh_frame_credit_encode(payload, DSH_REMOTE_STDIN_WINDOW);
        assert_int_equal(dsh_frame_credit_decode(payload, sizeof(payload), &count), 0);
        assert_int_equal(count, DSH_REMOTE_STDIN_WINDOW);
        assert_int_equal(dsh_frame_credit_decode(zero, sizeof(zero), &count), -EPROTO);
        assert_int_equal(dsh_frame_credit_decode(above, sizeof(above), &count), -EPROTO);   /* the window + 1 */
        assert_int_equal(dsh_frame_credit_decode(longer, sizeof(longer), &count), -EPROTO);
        assert_int_equal(dsh_frame_credit_decode(payload, 3, &count), -EPROTO);
        assert_int_equal(count, DSH_REMOTE_STDIN_WINDOW);   /* untouched by the refusals */
}

/* An older helper's hello (protocol 1, without the stdin window) is refused by its version. */
static void test_an_older_hello_is_refused(void **state)
{
        static const char older[] = "{\"protocol\":1,\"version\":\"0.1.0\"}";
        dsh_error error = DSH_ERROR_INIT;
        char *hello = NULL;

        (void) state;
        assert_int_equal(dsh_remote_hello_check((const unsigned char *) older, strlen(older), &error), -EPROTO);
        assert_non_null(strstr(error.message, "speaks protocol 1"));
        dsh_error_clear(&error);
        assert_int_equal(dsh_remote_hello_encode(&hello, &error), 0);
        assert_int_equal(dsh_remote_hello_check((const unsigned char *) hello, strlen(hello), &error), 0);
        free(hello);
}

static void test_a_queue_keeps_what_a_full_pipe_cannot_take(void **state)
{
        dsh_byte_queue queue = DSH_BYTE_QUEUE_INIT;
        size_t size = 4 * 1024 * 1024, drained = 0;
        unsigned char *data = malloc(size), chunk[65536];
        int fds[2];

        (void) state;
        assert_non_null(data);
        for (size_t i = 0; i < size; i++)
                data[i] = (unsigned char) (i * 7);
        assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
        assert_int_equal(dsh_byte_queue_append(&queue, data, size), 0);
        assert_int_equal(dsh_byte_queue_flush(&queue, fds[1]), 0);
        assert_true(dsh_byte_queue_pending(&queue) > 0);   /* the pipe holds far less than 4 MiB */
        while (drained < size) {
                ssize_t got = read(fds[0], chunk, sizeof(chunk));

                if (got > 0) {
                        assert_memory_equal(chunk, data + drained, (size_t) got);
                        drained += (size_t) got;
                }
                assert_int_equal(dsh_byte_queue_flush(&queue, fds[1]), 0);
        }
        assert_int_equal(dsh_byte_queue_pending(&queue), 0);
        close(fds[0]);
        signal(SIGPIPE, SIG_IGN);   /* as every caller does (dsh-sandbox/remote.h) */
        assert_int_equal(dsh_byte_queue_append(&queue, "x", 1), 0);
        assert_int_equal(dsh_byte_queue_flush(&queue, fds[1]), -EPIPE);   /* the reader is gone */
        close(fds[1]);
        dsh_byte_queue_clear(&queue);
        free(data);
}

static void expect_call_refused(const char *text, const char *reason)
{
        dsh_remote_call call = DSH_REMOTE_CALL_INIT;
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_remote_call_decode((const unsigned char *) text, strlen(text), &call, &error) == 0)
                fail_msg("accepted: %s", text);
        if (!strstr(error.message, reason))
                fail_msg("%s: \"%s\" does not say \"%s\"", text, error.message, reason);
        dsh_error_clear(&error);
}

static void test_requests_are_read_strictly(void **state)
{
        dsh_remote_request request = DSH_REMOTE_REQUEST_INIT;
        dsh_remote_call call = DSH_REMOTE_CALL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char make[] = "make", jobs[] = "-j4", extra[] = "/srv/extra";
        char *argv[] = { make, jobs, NULL };
        char *roots[] = { extra, NULL };
        char *text = NULL;

        (void) state;
        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = "relative/is/the/remote's/business";
        request.additional_writable_roots = roots;
        request.backend = "bwrap";
        assert_int_equal(dsh_remote_request_encode(DSH_REMOTE_OPERATION_RUN, &request, argv, NULL, &text, &error), 0);
        assert_int_equal(dsh_remote_call_decode((unsigned char *) text, strlen(text), &call, &error), 0);
        assert_int_equal(call.operation, DSH_REMOTE_OPERATION_RUN);
        assert_string_equal(call.argv[1], "-j4");
        assert_true(call.has_mode);
        assert_int_equal(call.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(call.workspace_root, "relative/is/the/remote's/business");
        assert_string_equal(call.additional_writable_roots[0], "/srv/extra");
        assert_string_equal(call.backend, "bwrap");
        /* No secrets given: none sent (an older remote, which would refuse the members, still serves the call). */
        assert_null(call.masked_paths);
        assert_null(call.allowed_environment);
        assert_null(strstr(text, "maskedPaths"));
        dsh_remote_call_clear(&call);
        free(text);

        /* The call's masks and allowed names cross as given; the remote's prepare checks them. */
        {
                char aws[] = ".aws", keys[] = "~/.ssh/id_*", token[] = "GITHUB_TOKEN";
                char *masks[] = { aws, keys, NULL };
                char *names[] = { token, NULL };

                request.masked_paths = masks;
                request.allowed_environment = names;
                assert_int_equal(dsh_remote_request_encode(DSH_REMOTE_OPERATION_RUN, &request, argv, NULL, &text,
                                                           &error),
                                 0);
                assert_int_equal(dsh_remote_call_decode((unsigned char *) text, strlen(text), &call, &error), 0);
                assert_int_equal(dsh_strv_length(call.masked_paths), 2);
                assert_string_equal(call.masked_paths[1], "~/.ssh/id_*");
                assert_string_equal(call.allowed_environment[0], "GITHUB_TOKEN");
                dsh_remote_call_clear(&call);
                free(text);
        }
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"x\"],\"maskedPaths\":\".aws\"}",
                            "must be an array of strings");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"x\"],\"allowEnvironment\":[1]}",
                            "without NUL");

        /* An older peer (protocol 1 had no stdin window) is refused by its version. */
        expect_call_refused("{\"protocol\":1,\"operation\":\"run\",\"argv\":[\"x\"]}", "speaks protocol 1");
        expect_call_refused("{\"operation\":\"run\",\"argv\":[\"x\"]}", "no protocol version");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"x\"],\"env\":{}}", "unknown member");
        expect_call_refused("{\"protocol\":2,\"operation\":\"exec\",\"argv\":[\"x\"]}", "unknown operation");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[]}", "argv is empty");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\"}", "argv missing");
        expect_call_refused("{\"protocol\":2,\"operation\":\"probe\",\"argv\":[\"x\"]}", "argv given to probe");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"a\\u0000b\"]}", "without NUL");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"x\"],\"mode\":\"root\"}",
                            "unknown mode");
        expect_call_refused("{\"protocol\":2,\"operation\":\"run\",\"argv\":[\"x\"],\"timeoutMs\":5}",
                            "bash options given to run");
        expect_call_refused("{\"protocol\":2,\"operation\":\"bash\",\"argv\":[\"x\",\"y\"]}", "one command line");
        expect_call_refused("{\"protocol\":2,\"operation\":\"bash\",\"argv\":[\"x\"],\"timeoutMs\":0}",
                            "positive integer");
}

static void expect_final_refused(const char *text)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_remote_final_decode((const unsigned char *) text, strlen(text), &final, &error) == 0)
                fail_msg("accepted: %s", text);
        dsh_error_clear(&error);
}

static void test_final_records_are_read_strictly(void **state)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT, read_back = DSH_REMOTE_FINAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        final.outcome = DSH_REMOTE_OUTCOME_REFUSED;
        final.value = ENOENT;
        dsh_error_clear(&final.refusal);
        final.refusal.code = DSH_ERROR_EXEC_FAILED;
        final.refusal.message = strdup("make: No such file or directory");
        assert_int_equal(dsh_remote_final_encode(&final, &text, &error), 0);
        assert_int_equal(dsh_remote_final_decode((unsigned char *) text, strlen(text), &read_back, &error), 0);
        assert_int_equal(read_back.outcome, DSH_REMOTE_OUTCOME_REFUSED);
        assert_int_equal(read_back.value, ENOENT);
        assert_int_equal(read_back.refusal.code, DSH_ERROR_EXEC_FAILED);
        assert_string_equal(read_back.refusal.message, "make: No such file or directory");
        dsh_remote_final_clear(&final);
        dsh_remote_final_clear(&read_back);
        free(text);

        expect_final_refused("{\"outcome\":\"exited\",\"status\":256}");
        expect_final_refused("{\"outcome\":\"exited\",\"status\":-1}");
        expect_final_refused("{\"outcome\":\"exited\",\"status\":0,\"signal\":9}");
        expect_final_refused("{\"outcome\":\"signaled\",\"signal\":0}");
        expect_final_refused("{\"outcome\":\"succeeded\"}");
        expect_final_refused("{\"outcome\":\"answered\",\"answer\":[]}");
        expect_final_refused("{\"outcome\":\"refused\",\"error\":{\"code\":\"NOPE\",\"message\":\"x\"},\"errno\":0}");
        expect_final_refused("[\"exited\",0]");
}

/* What bash --remote relays: a result survives the round trip, NUL bytes of output included. */
static void test_a_bash_result_reads_back(void **state)
{
        dsh_bash_result result = DSH_BASH_RESULT_INIT, read_back = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *markers[] = { NULL, NULL };
        char marker[] = "[sandbox: file access denied under workspace-write mode]", backend[] = "bwrap";
        char out[] = "a\0b", *text = NULL;

        (void) state;
        markers[0] = marker;
        result.kind = DSH_BASH_DENIED;
        result.exit_code = 1;
        result.standard_output = (dsh_bash_output) { out, 3, false, 3 };
        result.standard_error = (dsh_bash_output) { NULL, 0, false, 0 };
        result.sandbox = (dsh_bash_sandbox) { DSH_MODE_WORKSPACE_WRITE, backend, DSH_ENFORCEMENT_PARTIAL, true, true,
                                              false };
        result.markers = markers;
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_int_equal(dsh_json_decode_bash_result(text, strlen(text), &read_back, &error), 0);
        assert_int_equal(read_back.kind, DSH_BASH_DENIED);
        assert_int_equal(read_back.exit_code, 1);
        assert_int_equal(read_back.signal, 0);
        assert_int_equal(read_back.standard_output.length, 3);
        assert_memory_equal(read_back.standard_output.text, "a\0b", 3);
        assert_int_equal(read_back.sandbox.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(read_back.sandbox.backend, "bwrap");
        assert_true(read_back.sandbox.confined);
        assert_int_equal(read_back.sandbox.enforcement, DSH_ENFORCEMENT_PARTIAL);
        assert_true(read_back.sandbox.denied);
        assert_string_equal(read_back.markers[0], marker);
        assert_non_null(read_back.warnings);
        assert_null(read_back.warnings[0]);
        dsh_bash_result_clear(&read_back);
        free(text);

        read_back = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        {
                static const char bad[] = "{\"kind\":\"completed\",\"exitCode\":300}";

                assert_true(dsh_json_decode_bash_result(bad, strlen(bad), &read_back, &error) < 0);
        }
        dsh_error_clear(&error);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_frames_cut_anywhere_come_out_whole),
                cmocka_unit_test(test_an_oversized_header_is_a_protocol_error),
                cmocka_unit_test(test_credits_read_back_and_nothing_else_reads),
                cmocka_unit_test(test_an_older_hello_is_refused),
                cmocka_unit_test(test_a_queue_keeps_what_a_full_pipe_cannot_take),
                cmocka_unit_test(test_requests_are_read_strictly),
                cmocka_unit_test(test_final_records_are_read_strictly),
                cmocka_unit_test(test_a_bash_result_reads_back),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
