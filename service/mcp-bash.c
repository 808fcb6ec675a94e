/* SPDX-License-Identifier: MIT */
/*
 * The MCP server's bash tool: the library's bash tool (dsh-sandbox/bash-tool.h)
 * under the server's policy, with the three things MCP adds around a call —
 * the user's approval of an escalation asked through elicitation, progress
 * notifications while the command runs, and cancellation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/json.h"

#include "mcp-tools.h"
#include "service-results.h"

/*
 * Output kept per stream for the model.  The library keeps 256 KiB by
 * default, more than a model should read back for one command; the first
 * and last halves are kept, with the omitted byte count between them.
 */
#define MCP_BASH_OUTPUT_LIMIT (64 * 1024)

/* Progress: at most one notification per interval on output, and one at each heartbeat of a silent command. */
#define PROGRESS_OUTPUT_INTERVAL_MS 250
#define PROGRESS_HEARTBEAT_MS 1000

static long long monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---------------------------------------------------------- escalation -- */

/*
 * The characters a client's display would act on, or that reorder or hide
 * what it shows: C1 controls, the bidirectional marks, embeddings, overrides
 * and isolates, and the Unicode line and paragraph separators.  Returns the
 * code point of the (valid UTF-8) character at `bytes` when it is one, else 0.
 */
static unsigned hidden_character(const unsigned char *bytes)
{
        unsigned code;

        if (bytes[0] == 0xc2 && bytes[1] >= 0x80 && bytes[1] <= 0x9f)
                return bytes[1];
        if (bytes[0] == 0xd8 && bytes[1] == 0x9c)
                return 0x061c;
        if (bytes[0] != 0xe2 || (bytes[1] != 0x80 && bytes[1] != 0x81))
                return 0;
        code = 0x2000 | ((unsigned) (bytes[1] & 0x3f) << 6) | (bytes[2] & 0x3f);
        if (code == 0x200e || code == 0x200f || (code >= 0x2028 && code <= 0x202e) ||
            (code >= 0x2066 && code <= 0x2069))
                return code;
        return 0;
}

/*
 * `text` as the user is shown it in the approval: the user approves what
 * they read, so nothing in the command may pass for something else.
 * Control characters (but the line break and the tab) and the hidden
 * characters above are written by number (\x1b, \u202e), and each line
 * after the first is indented, so that a command cannot draw a fake end of
 * itself.  The command is valid UTF-8 (the library refuses to ask about one
 * that is not).
 */
static void write_shown(FILE *out, const char *text)
{
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++) {
                unsigned hidden = hidden_character(byte);

                if (hidden) {
                        fprintf(out, "\\u%04x", hidden);
                        byte += *byte < 0xe0 ? 1 : 2;   /* the rest of its two or three bytes */
                } else if (*byte == '\n') {
                        fputs("\n    ", out);
                } else if ((*byte < 0x20 && *byte != '\t') || *byte == 0x7f) {
                        fprintf(out, "\\x%02x", *byte);
                } else {
                        fputc(*byte, out);
                }
        }
}

/* "\n\n<title>:" and each entry on a line of its own, shown as the user must read it. */
static void write_shown_list(FILE *out, const char *title, char *const *list)
{
        if (!list || !list[0])
                return;
        fprintf(out, "\n\n%s:", title);
        for (; *list; list++) {
                fputs("\n    ", out);
                write_shown(out, *list);
        }
}

/*
 * The question the user is asked: the command, the mode asked for and the
 * current one, exactly the extra writable roots and allowed hosts that are
 * granted, and why.
 */
static char *elicitation_message(const dsh_bash_escalation *escalation)
{
        char *message = NULL;
        size_t length = 0;
        FILE *out = open_memstream(&message, &length);

        if (!out)
                return NULL;
        if (escalation->requested_mode != escalation->current_mode)
                fprintf(out, "The agent asks to run one command outside its sandbox's limits: under \"%s\" mode "
                             "instead of \"%s\".",
                        dsh_mode_name(escalation->requested_mode), dsh_mode_name(escalation->current_mode));
        else
                fprintf(out, "The agent asks to run one command outside its sandbox's limits: under \"%s\" mode, "
                             "with only what is listed below added.",
                        dsh_mode_name(escalation->current_mode));
        write_shown_list(out, "Also writable, for this call only", escalation->additional_write);
        write_shown_list(out, "Also reachable on the network, for this call only", escalation->additional_hosts);
        fputs("\n\nCommand:\n    ", out);
        write_shown(out, escalation->command);
        fputs("\n\nJustification: ", out);
        write_shown(out, escalation->justification);
        fprintf(out, "\n\nAccept to allow this one call; decline to keep it denied. Nothing is remembered: the "
                     "next call runs under \"%s\" again, without any of it.",
                dsh_mode_name(escalation->current_mode));
        if (fclose(out) != 0) {
                free(message);
                return NULL;
        }
        return message;
}

/* Fills `error` (a system error: the channel could not ask) and returns `result`. */
static int approval_failed(dsh_error *error, int result, const char *why, const json_t *answer)
{
        const char *detail = json_string_value(json_object_get(answer, "message"));

        error->code = DSH_ERROR_SYSTEM;
        error->errno_value = -result;
        if (asprintf(&error->message, "the MCP client could not be asked to approve the escalation (%s%s%s)", why,
                     detail ? ": " : "", detail ? detail : "") < 0)
                error->message = NULL;
        return result;
}

/*
 * The approval channel (dsh_bash_approve_fn): an MCP elicitation, sent to
 * the client through the transport and answered by its user.  "accept"
 * allows this one call; "decline" and "cancel" do not, and neither does an
 * answer this server cannot read.  The requested schema asks for nothing:
 * the answer is the action itself.
 */
static int approve_by_elicitation(const dsh_bash_escalation *escalation, void *data, dsh_error *error)
{
        mcp_tool_call *tool_call = data;
        char *message = elicitation_message(escalation);
        json_t *params, *answer = NULL, *failure = NULL;
        const char *action;
        int result;

        if (!message)
                return approval_failed(error, -ENOMEM, "out of memory", NULL);
        params = json_pack("{s:s, s:{s:s, s:{}}}", "message", message, "requestedSchema", "type", "object",
                           "properties");
        free(message);
        if (!params)
                return approval_failed(error, -ENOMEM, "out of memory", NULL);
        result = rpc_server_request(tool_call->server->rpc, tool_call->call, "elicitation/create", params,
                                    DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS, &answer, &failure);
        if (result == -ECANCELED)
                result = 0;     /* the call was cancelled meanwhile: the run reports it so */
        else if (result == -ETIMEDOUT)
                result = approval_failed(error, result, "no answer within 5 minutes", NULL);
        else if (result == -EPROTO)
                result = approval_failed(error, result, "it answered with an error", failure);
        else if (result < 0)
                result = approval_failed(error, result, "the client went away", NULL);
        else if (!(action = json_string_value(json_object_get(answer, "action"))))
                result = approval_failed(error, -EPROTO, "its answer has no action", NULL);
        else
                result = strcmp(action, "accept") == 0;
        json_decref(answer);
        json_decref(failure);
        return result;
}

/* ------------------------------------------------------------ progress -- */

/*
 * Progress of one call whose client asked for it (a progressToken): a
 * notification when output arrives (at most one per interval) and, while
 * the command is silent, one per heartbeat, so that a client which resets
 * its timeout on progress keeps waiting for a long build.  `progress`
 * counts the notifications: it only grows, as the protocol requires.
 */
struct progress {
        mcp_tool_call *tool_call;
        pthread_mutex_t lock;
        pthread_cond_t finished_signal;
        bool finished;
        long long started_ms, last_sent_ms;
        unsigned long long output_bytes;
        long long sent;
        pthread_t heartbeat;
        bool heartbeat_running;
};

/* Sends one notification (under the lock). */
static void progress_send(struct progress *progress, long long now_ms)
{
        char message[128];
        json_t *params;

        snprintf(message, sizeof(message), "running for %lld s; %llu bytes of output so far",
                 (now_ms - progress->started_ms) / 1000, progress->output_bytes);
        params = json_pack("{s:O, s:I, s:s}", "progressToken", progress->tool_call->progress_token, "progress",
                           (json_int_t) (progress->sent + 1), "message", message);
        if (params && rpc_server_notify(progress->tool_call->server->rpc, "notifications/progress", params) == 0)
                progress->sent++;
        progress->last_sent_ms = now_ms;
}

/* The bash tool's output callback: counts, and reports when the last report is old enough. */
static int progress_on_output(int stream, const char *data, size_t length, void *user_data)
{
        struct progress *progress = user_data;
        long long now_ms = monotonic_ms();

        (void) stream;
        (void) data;
        pthread_mutex_lock(&progress->lock);
        progress->output_bytes += length;
        if (progress->sent == 0 || now_ms - progress->last_sent_ms >= PROGRESS_OUTPUT_INTERVAL_MS)
                progress_send(progress, now_ms);
        pthread_mutex_unlock(&progress->lock);
        return 0;
}

static void *progress_heartbeat(void *data)
{
        struct progress *progress = data;

        pthread_mutex_lock(&progress->lock);
        while (!progress->finished) {
                struct timespec deadline;
                long long now_ms = monotonic_ms();

                if (now_ms - progress->last_sent_ms >= PROGRESS_HEARTBEAT_MS)
                        progress_send(progress, now_ms);
                clock_gettime(CLOCK_MONOTONIC, &deadline);
                deadline.tv_sec += PROGRESS_HEARTBEAT_MS / 1000;
                pthread_cond_timedwait(&progress->finished_signal, &progress->lock, &deadline);
        }
        pthread_mutex_unlock(&progress->lock);
        return NULL;
}

/* Starts reporting (when the client asked) and hooks the output callback into `request`. */
static void progress_start(struct progress *progress, mcp_tool_call *tool_call, dsh_bash_request *request)
{
        pthread_condattr_t attributes;

        *progress = (struct progress) { .tool_call = tool_call };
        if (!tool_call->progress_token)
                return;
        pthread_mutex_init(&progress->lock, NULL);
        pthread_condattr_init(&attributes);
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
        pthread_cond_init(&progress->finished_signal, &attributes);
        pthread_condattr_destroy(&attributes);
        progress->started_ms = progress->last_sent_ms = monotonic_ms();
        request->on_output = progress_on_output;
        request->output_data = progress;
        /* Without the heartbeat thread, output still reports: a failure here costs only the silent stretches. */
        progress->heartbeat_running = pthread_create(&progress->heartbeat, NULL, progress_heartbeat, progress) == 0;
}

static void progress_stop(struct progress *progress)
{
        if (!progress->tool_call->progress_token)
                return;
        pthread_mutex_lock(&progress->lock);
        progress->finished = true;
        pthread_cond_signal(&progress->finished_signal);
        pthread_mutex_unlock(&progress->lock);
        if (progress->heartbeat_running)
                pthread_join(progress->heartbeat, NULL);
        pthread_cond_destroy(&progress->finished_signal);
        pthread_mutex_destroy(&progress->lock);
}

/* -------------------------------------------------------------- result -- */

/* Appends one stream's kept text, ending in a line break. */
static void write_stream(FILE *out, const json_t *stream, const char *heading)
{
        const char *text = json_string_value(json_object_get(stream, "text"));
        size_t length = json_string_length(json_object_get(stream, "text"));

        if (!text || length == 0)
                return;
        if (heading)
                fputs(heading, out);
        fwrite(text, 1, length, out);
        if (text[length - 1] != '\n')
                fputc('\n', out);
}

/*
 * The text the model reads: stdout, stderr under a heading, how it ended,
 * then the markers, the message and the warnings, each on a line of its
 * own, as `dsh-sandbox bash` prints them.  Built from the result's JSON
 * object, whose output is already fit for JSON (a byte that is not UTF-8 is
 * written \xNN).
 */
static char *bash_result_text(const json_t *object, const char *preface)
{
        json_t *exit_code = json_object_get(object, "exitCode"), *signal = json_object_get(object, "signal");
        json_t *error_message = json_object_get(json_object_get(object, "error"), "message");
        json_t *item;
        size_t index, length = 0;
        char *text = NULL;
        FILE *out = open_memstream(&text, &length);

        if (!out)
                return NULL;
        if (preface)
                fprintf(out, "%s\n", preface);
        write_stream(out, json_object_get(object, "stdout"), NULL);
        write_stream(out, json_object_get(object, "stderr"), "[stderr]\n");
        if (json_is_integer(signal))
                fprintf(out, "[killed by signal %lld]\n", (long long) json_integer_value(signal));
        else if (json_is_integer(exit_code))
                fprintf(out, "[exit code %lld]\n", (long long) json_integer_value(exit_code));
        if (json_is_string(error_message))
                fprintf(out, "SANDBOX_UNAVAILABLE: %s\n", json_string_value(error_message));
        json_array_foreach(json_object_get(object, "markers"), index, item)
                fprintf(out, "%s\n", json_string_value(item));
        if (json_is_string(json_object_get(object, "message")))
                fprintf(out, "%s\n", json_string_value(json_object_get(object, "message")));
        json_array_foreach(json_object_get(object, "warnings"), index, item)
                fprintf(out, "warning: %s\n", json_string_value(item));
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

/* The denials the model is shown at most: the rest are counted, and all are in structuredContent. */
#define DENIALS_SHOWN 3

/*
 * A short block for the model: one line per denial (at most
 * DENIALS_SHOWN), naming what was refused and the narrowest grant
 * (dsh_denial_describe()), then how many more; NULL when there are none or
 * memory ran out (the structured content still carries them).
 */
static char *denials_note(const dsh_denials *denials)
{
        unsigned long long total = denials->count + (unsigned long long) denials->dropped;
        size_t shown = denials->count < DENIALS_SHOWN ? denials->count : DENIALS_SHOWN, length = 0;
        char *text = NULL;
        FILE *out;

        if (total == 0 || !(out = open_memstream(&text, &length)))
                return NULL;
        for (size_t i = 0; i < shown; i++) {
                char *line = dsh_denial_describe(&denials->items[i]);

                fprintf(out, "denied: %s\n", line ? line : "(out of memory)");
                free(line);
        }
        if (total > shown)
                fprintf(out, "... and %llu more denial%s\n", total - shown, total - shown == 1 ? "" : "s");
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

/*
 * Replies with the result: the text, isError unless the command ran and
 * exited 0 (a denial, a runner failure, a timeout, a rejection, or a
 * command that failed on its own), the denials' short block after it, and
 * the result object (its `denials` among it) as structuredContent (the
 * bash tool's outputSchema).
 */
static void reply_bash_result(mcp_tool_call *tool_call, const dsh_bash_result *result, const char *preface)
{
        dsh_error error = DSH_ERROR_INIT;
        json_t *object = service_bash_result_json(result, &error);
        char *text = NULL, *note = NULL;

        if (!object) {
                mcp_tool_reply_error(tool_call, &error, NULL);
                dsh_error_clear(&error);
                return;
        }
        text = bash_result_text(object, preface);
        if (!text) {
                json_decref(object);
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                return;
        }
        note = denials_note(&result->denials);
        mcp_tool_reply_note(tool_call, text, note, result->kind != DSH_BASH_COMPLETED || result->exit_code != 0,
                            object);
        free(note);
        free(text);
}

/* ---------------------------------------------------------------- call -- */

static const char no_elicitation_preface[] =
        "This MCP client cannot ask its user (it did not declare the elicitation capability), so no escalation "
        "can be approved through this server: the command did not run.";

void mcp_tool_bash(mcp_tool_call *tool_call)
{
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_bash_cancellation *cancellation = NULL;
        dsh_error error = DSH_ERROR_INIT;
        running_command running = { .call = tool_call->call };
        struct progress progress;
        char **additional_write, **additional_hosts;
        bool write_failed, hosts_failed;
        int status;

        if (dsh_bash_cancellation_new(&cancellation, &error) < 0) {
                mcp_tool_reply_error(tool_call, &error, NULL);
                dsh_error_clear(&error);
                return;
        }
        request.command = mcp_argument_string(tool_call, "command");
        request.timeout_ms = (long) mcp_argument_integer(tool_call, "timeout_ms", 0);
        request.output_limit = MCP_BASH_OUTPUT_LIMIT;
        request.sandbox_permissions = mcp_argument_string(tool_call, "sandbox_permissions");
        request.justification = mcp_argument_string(tool_call, "justification");
        request.cwd = mcp_argument_string(tool_call, "cwd");
        additional_write = mcp_argument_strings(tool_call, "additional_write", &write_failed);
        additional_hosts = mcp_argument_strings(tool_call, "additional_hosts", &hosts_failed);
        if (write_failed || hosts_failed) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                dsh_strv_free(additional_write);
                dsh_strv_free(additional_hosts);
                dsh_bash_cancellation_free(cancellation);
                return;
        }
        request.additional_write = additional_write;
        request.additional_hosts = additional_hosts;
        request.cancellation = cancellation;
        if (tool_call->client_elicits) {
                request.approve = approve_by_elicitation;
                request.approve_data = tool_call;
        }
        running.cancellation = cancellation;
        running_commands_enter(tool_call->server->running, &running);
        progress_start(&progress, tool_call, &request);
        status = service_bash_run(tool_call->server->context, tool_call->server->policy, &request, &result,
                                  &error);
        running_commands_leave(tool_call->server->running, &running);
        progress_stop(&progress);
        if (status < 0)
                mcp_tool_reply_error(tool_call, &error, NULL);
        else if (rpc_call_cancelled(tool_call->call))
                rpc_call_drop(tool_call->call);   /* MCP: no response to a cancelled request */
        else
                reply_bash_result(tool_call, &result,
                                  result.kind == DSH_BASH_REJECTED && !request.approve ? no_elicitation_preface
                                                                                       : NULL);
        dsh_bash_result_clear(&result);
        dsh_error_clear(&error);
        dsh_bash_cancellation_free(cancellation);
        dsh_strv_free(additional_write);
        dsh_strv_free(additional_hosts);
}
