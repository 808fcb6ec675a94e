/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox mcp`: the Model Context Protocol's server side over stdio —
 * the lifecycle (initialize and the revision it negotiates, initialized,
 * ping), the tools (tools/list, tools/call: mcp-tools.c, mcp-bash.c) and
 * cancellation (notifications/cancelled).  The framing, one JSON-RPC message
 * per line, is the transport's (jsonrpc.h); every request runs on a thread
 * of its own there, so a long command does not hold up a ping or a read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mcp-tools.h"
#include "mcp.h"
#include "stop-watch.h"

/* One client's connection: the server's state for the life of the stdio stream. */
typedef struct mcp_connection {
        mcp_tool_server tool_server;    /* what the tools use of it, handed to every tools/call */
        rpc_server *rpc;
        json_t *tools;                  /* the tool definitions tools/list answers with */
        char *instructions;             /* initialize's: the rules, then the policy in force */
        pthread_mutex_t lock;           /* over what initialize sets: requests run on threads of their own */
        const char *protocol_version;   /* negotiated (a static string); NULL before initialize */
        bool client_elicits;            /* the client declared form elicitation */
        running_commands running;       /* the bash tool's commands: the end of input or a stop kills them */
} mcp_connection;

/*
 * The revisions this server speaks, newest first: those the official SDKs
 * speak today.  The differences that matter here: elicitation (2025-06-18
 * on; form mode by name from 2025-11-25), structured tool output
 * (2025-06-18 on, ignored by older clients), and invalid tool arguments
 * reported as a tool error rather than a protocol error (2025-11-25 on).
 */
static const char *const supported_revisions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

#define REVISION_COUNT (sizeof(supported_revisions) / sizeof(supported_revisions[0]))
#define FIRST_REVISION_WITH_TOOL_ARGUMENT_ERRORS "2025-11-25"

static const char server_rules[] =
        "Every command (bash) and every file change (write_file, edit_file, create_directory, remove, move) runs "
        "inside the dsh-sandbox sandbox, under a policy the user chose: a change it does not allow is refused "
        "with an error saying so. Do not work around a denial; retry the one command that needs more with the "
        "bash tool's sandbox_permissions + justification, which asks the user to approve that call.";

/* The client's revision when this server speaks it, else the newest it speaks (the client then decides). */
static const char *negotiate_revision(const char *requested)
{
        for (size_t i = 0; i < REVISION_COUNT; i++)
                if (strcmp(requested, supported_revisions[i]) == 0)
                        return supported_revisions[i];
        return supported_revisions[0];
}

/*
 * Form elicitation: a client of 2025-06-18 declares {"elicitation": {}};
 * from 2025-11-25 one may declare the modes it has, {"form": {}} and/or
 * {"url": {}}, an empty object still meaning form.  This server asks with a
 * form (an empty one: the answer is the action).
 */
static bool declares_form_elicitation(const json_t *capabilities)
{
        json_t *elicitation = json_object_get(capabilities, "elicitation");

        return json_is_object(elicitation) &&
               (json_object_get(elicitation, "form") || !json_object_get(elicitation, "url"));
}

/*
 * What initialize negotiated, as it stands when a tools/call comes in,
 * copied onto the call (the tools read it there, never the connection).
 */
static void copy_negotiated(mcp_connection *connection, mcp_tool_call *tool_call)
{
        pthread_mutex_lock(&connection->lock);
        tool_call->client_elicits = connection->client_elicits;
        tool_call->invalid_arguments_as_tool_errors =
                connection->protocol_version &&
                strcmp(connection->protocol_version, FIRST_REVISION_WITH_TOOL_ARGUMENT_ERRORS) >= 0;
        pthread_mutex_unlock(&connection->lock);
}

/* ------------------------------------------------------------- methods -- */

static void answer_initialize(mcp_connection *connection, rpc_call *call)
{
        const char *requested = NULL, *revision;
        json_t *capabilities = json_object_get(rpc_call_params(call), "capabilities");

        if (rpc_param_string(call, "protocolVersion", true, &requested) < 0)
                return;
        if (capabilities && !json_is_object(capabilities)) {
                rpc_call_fail_params(call, "capabilities", "expected an object");
                return;
        }
        revision = negotiate_revision(requested);
        pthread_mutex_lock(&connection->lock);
        connection->protocol_version = revision;
        connection->client_elicits = declares_form_elicitation(capabilities);
        pthread_mutex_unlock(&connection->lock);
        rpc_call_reply(call, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", revision,
                                       "capabilities", "tools", "listChanged", false, "serverInfo", "name",
                                       "dsh-sandbox", "title", "dsh-sandbox", "version", DSH_SANDBOX_VERSION,
                                       "instructions", connection->instructions));
}

static void answer_ping(mcp_connection *connection, rpc_call *call)
{
        (void) connection;
        rpc_call_reply(call, NULL);
}

static void answer_tools_list(mcp_connection *connection, rpc_call *call)
{
        rpc_call_reply(call, json_pack("{s:o}", "tools", json_deep_copy(connection->tools)));
}

/* params._meta.progressToken: a string or an integer, as the protocol defines it; NULL when absent. */
static json_t *progress_token(json_t *params)
{
        json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");

        return json_is_string(token) || json_is_integer(token) ? token : NULL;
}

static void answer_tools_call(mcp_connection *connection, rpc_call *call)
{
        json_t *params = rpc_call_params(call);
        json_t *arguments = json_object_get(params, "arguments");
        mcp_tool_call tool_call = { .server = &connection->tool_server, .call = call,
                                    .progress_token = progress_token(params) };
        const char *name = NULL;

        if (rpc_param_string(call, "name", true, &name) < 0)
                return;
        if (arguments && !json_is_null(arguments) && !json_is_object(arguments)) {
                rpc_call_fail_params(call, "arguments", "expected an object");
                return;
        }
        tool_call.arguments = json_is_object(arguments) ? arguments : NULL;
        copy_negotiated(connection, &tool_call);
        mcp_tool_run(&tool_call, name);
}

static const struct {
        const char *name;
        void (*answer)(mcp_connection *connection, rpc_call *call);
} methods[] = {
        { "initialize", answer_initialize },
        { "ping", answer_ping },
        { "tools/list", answer_tools_list },
        { "tools/call", answer_tools_call },
};

static void on_request(rpc_call *call, void *data)
{
        const char *method = rpc_call_method(call);
        char *message = NULL;

        for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
                if (strcmp(method, methods[i].name) == 0) {
                        methods[i].answer(data, call);
                        return;
                }
        }
        if (asprintf(&message, "method not found: %s", method) < 0)
                message = NULL;
        rpc_call_fail(call, RPC_METHOD_NOT_FOUND, message ? message : "method not found", NULL);
        free(message);
}

/*
 * notifications/cancelled {requestId}: the call's cancel hook ends its
 * command (mcp-bash.c).  An unknown or finished id is ignored, as the
 * protocol wants; notifications/initialized and the rest need nothing.
 */
static void on_notification(rpc_server *server, const char *method, json_t *params, void *data)
{
        json_t *request_id = json_object_get(params, "requestId");

        (void) data;
        if (strcmp(method, "notifications/cancelled") == 0 && request_id)
                rpc_server_cancel(server, request_id);
}

/* ------------------------------------------------------ running commands -- */

/*
 * Every running command is killed, and none starts any more.  Its call is
 * cancelled too, so that one still waiting for the user's answer to an
 * elicitation stops waiting (the client is gone, or the server is being
 * stopped: no answer is owed).
 */
static void end_running_commands(mcp_connection *connection)
{
        running_commands_kill(&connection->running, connection->rpc);
}

/*
 * End of input: the client is gone and reads nothing more, so every
 * command still running is killed now, before the transport waits for the
 * calls in flight — none may outlive the server (under Landlock the
 * process group is the only handle on it; bwrap's sandbox would die with
 * the server anyway).
 */
static void on_input_end(rpc_server *server, void *data)
{
        (void) server;
        end_running_commands(data);
}

/*
 * A stop (the CLI's SIGTERM, SIGINT, SIGHUP): every running command is
 * killed, and this returns once each has ended; the stop watcher then ends
 * the process by the signal.
 */
static void stop_running_commands(void *data)
{
        mcp_connection *connection = data;

        end_running_commands(connection);
        running_commands_wait(&connection->running, NULL);
}

/* ---------------------------------------------------------------- serve -- */

int mcp_serve(service_context *context, const service_policy_fields *policy, const char *policy_text, int input_fd,
              int output_fd, int stop_fd)
{
        mcp_connection connection = { .tool_server = { .context = context, .policy = policy } };
        const rpc_handlers handlers = { on_request, on_notification, &connection, on_input_end };
        service_stop_watch watch;
        int result;

        connection.tools = mcp_tool_definitions(policy_text);
        if (asprintf(&connection.instructions, "%s%s%s", server_rules, policy_text ? " " : "",
                     policy_text ? policy_text : "") < 0)
                connection.instructions = NULL;
        if (!connection.tools || !connection.instructions) {
                json_decref(connection.tools);
                free(connection.instructions);
                return -ENOMEM;
        }
        pthread_mutex_init(&connection.lock, NULL);
        running_commands_init(&connection.running);
        connection.rpc = rpc_server_new(input_fd, output_fd, &handlers);
        /* Set before the first request is read: the tools only ever read it. */
        connection.tool_server.rpc = connection.rpc;
        connection.tool_server.tools = connection.tools;
        connection.tool_server.running = &connection.running;
        result = connection.rpc ? service_stop_watch_start(&watch, stop_fd, stop_running_commands, &connection)
                                : -ENOMEM;
        if (result == 0) {
                result = rpc_server_run(connection.rpc);
                service_stop_watch_end(&watch);
        }
        if (connection.rpc)
                rpc_server_free(connection.rpc);
        running_commands_destroy(&connection.running);
        pthread_mutex_destroy(&connection.lock);
        json_decref(connection.tools);
        free(connection.instructions);
        return result;
}

/* ------------------------------------------------------------ refusal -- */

/*
 * A server that cannot serve: an MCP client starts its server and speaks
 * first (initialize), so a server that exits at once is seen only as
 * "connection closed", the cause left in a log the user may never open.
 * Answering every request with the cause puts it where the client shows
 * errors.  Nothing else is offered: no tool, no command, no file.
 */
static void refuse_request(rpc_call *call, void *data)
{
        rpc_call_fail(call, RPC_SANDBOX_ERROR, data, NULL);
}

static void stop_refusing(void *data)
{
        (void) data;
}

int mcp_serve_refusal(const dsh_error *cause, int input_fd, int output_fd, int stop_fd)
{
        const char *code = dsh_error_code_name(cause->code);
        rpc_handlers handlers = { refuse_request, NULL, NULL, NULL };
        char *message = NULL;
        service_stop_watch watch;
        rpc_server *server;
        int result;

        if (asprintf(&message, "dsh-sandbox mcp cannot serve: %s%s%s", code ? code : "", code ? ": " : "",
                     cause->message ? cause->message : "its policy cannot be resolved") < 0)
                return -ENOMEM;
        handlers.data = message;
        server = rpc_server_new(input_fd, output_fd, &handlers);
        result = server ? service_stop_watch_start(&watch, stop_fd, stop_refusing, NULL) : -ENOMEM;
        if (result == 0) {
                result = rpc_server_run(server);
                service_stop_watch_end(&watch);
        }
        if (server)
                rpc_server_free(server);
        free(message);
        return result;
}
