/* SPDX-License-Identifier: MIT */
/*
 * What the remote provider reads from the other end of an SSH channel,
 * over arbitrary bytes: the frame reader cut at every length the input
 * gives, and each frame's payload read as the message its type names — a
 * hello, a request, a stdin credit, a final record, and (what `bash
 * --remote` relays) a bash result.  Beyond memory errors and UB it checks
 * the readers' promises: a frame never claims more than the bytes that
 * came; a credit that reads is within the stdin window; a refused message
 * says why on one line; a final record that reads holds a status from 0
 * to 255, a signal number, a known error, or an object.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/json.h"
#include "fuzz-support.h"
#include "remote/remote-frame.h"
#include "remote/remote-protocol.h"

static void check_refusal(int result, dsh_error *error)
{
        FUZZ_CHECK(result < 0);
        FUZZ_CHECK(error->message != NULL);
        fuzz_check_one_printable_line(error->message);
        dsh_error_clear(error);
}

static void read_final(const unsigned char *payload, size_t length)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_remote_final_decode(payload, length, &final, &error);

        if (result < 0) {
                check_refusal(result, &error);
                FUZZ_CHECK(final.answer == NULL && final.refusal.message == NULL);
                return;
        }
        switch (final.outcome) {
        case DSH_REMOTE_OUTCOME_EXITED:
                FUZZ_CHECK(final.value >= 0 && final.value <= 255);
                break;
        case DSH_REMOTE_OUTCOME_SIGNALED:
                FUZZ_CHECK(final.value >= 1 && final.value < NSIG);
                break;
        case DSH_REMOTE_OUTCOME_REFUSED:
                FUZZ_CHECK(final.refusal.code != DSH_ERROR_NONE && final.refusal.message != NULL);
                break;
        case DSH_REMOTE_OUTCOME_ANSWERED:
                FUZZ_CHECK(json_is_object(final.answer));
                break;
        }
        dsh_remote_final_clear(&final);
}

static void read_call(const unsigned char *payload, size_t length)
{
        dsh_remote_call call = DSH_REMOTE_CALL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_remote_call_decode(payload, length, &call, &error);

        if (result < 0) {
                check_refusal(result, &error);
                return;
        }
        FUZZ_CHECK((call.operation == DSH_REMOTE_OPERATION_PROBE) == (call.argv == NULL));
        FUZZ_CHECK(!call.argv || call.argv[0] != NULL);
        dsh_remote_call_clear(&call);
}

static void read_bash_result(const unsigned char *payload, size_t length)
{
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int decoded = dsh_json_decode_bash_result((const char *) payload, length, &result, &error);

        if (decoded < 0) {
                check_refusal(decoded, &error);
                return;
        }
        FUZZ_CHECK(result.exit_code >= -1 && result.exit_code <= 255);
        FUZZ_CHECK(result.markers != NULL && result.warnings != NULL);
        dsh_bash_result_clear(&result);
}

/* A credit that reads is 1..the window: the caller's count of bytes in flight can never go below zero on it alone. */
static void read_credit(const unsigned char *payload, size_t length)
{
        size_t count = 0;

        if (dsh_frame_credit_decode(payload, length, &count) < 0)
                return;
        FUZZ_CHECK(length == DSH_FRAME_CREDIT_SIZE);
        FUZZ_CHECK(count >= 1 && count <= DSH_REMOTE_STDIN_WINDOW);
}

static void read_payload(char type, const unsigned char *payload, size_t length)
{
        dsh_error error = DSH_ERROR_INIT;
        int result;

        switch (type) {
        case DSH_FRAME_HELLO:
                result = dsh_remote_hello_check(payload, length, &error);
                if (result < 0)
                        check_refusal(result, &error);
                break;
        case DSH_FRAME_REQUEST:
                read_call(payload, length);
                break;
        case DSH_FRAME_STDIN_CREDIT:
                read_credit(payload, length);
                break;
        case DSH_FRAME_FINAL:
                read_final(payload, length);
                read_bash_result(payload, length);
                break;
        default:
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dsh_frame_reader reader = DSH_FRAME_READER_INIT;
        const unsigned char *payload;
        size_t length, offset = 0, step = size > 0 ? (size_t) data[0] % 7 + 1 : 1;
        char type;
        int fds[2];

        if (pipe(fds) < 0)
                return 0;
        /* The input arrives `step` bytes at a time: frames cut mid-header and mid-payload. */
        while (offset < size) {
                size_t chunk = size - offset < step ? size - offset : step;
                int next;

                if (write(fds[1], data + offset, chunk) != (ssize_t) chunk)
                        break;
                offset += chunk;
                FUZZ_CHECK(dsh_frame_reader_fill(&reader, fds[0]) == (ssize_t) chunk);
                while ((next = dsh_frame_reader_next(&reader, &type, &payload, &length)) == 1) {
                        FUZZ_CHECK(length <= offset && length <= DSH_FRAME_MAX_PAYLOAD);
                        read_payload(type, payload, length);
                }
                if (next < 0) {
                        FUZZ_CHECK(next == -EPROTO);
                        break;
                }
        }
        close(fds[0]);
        close(fds[1]);
        dsh_frame_reader_clear(&reader);
        return 0;
}
