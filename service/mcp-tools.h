/* SPDX-License-Identifier: MIT */
/*
 * Inside `dsh-sandbox mcp`: what the protocol (mcp.c) shares with the tools
 * (mcp-tools.c: the table and the file tools; mcp-bash.c: the bash tool).
 *
 * Security: the server itself runs unconfined — it is the harness's
 * program, not the model's.  Everything the model asks for goes through the
 * sandbox: a command through the bash tool and the runtime's provider, a
 * file change through a file guard made for the call's resolved policy.
 * No tool touches a file or spawns a process any other way, and no tool
 * takes a policy from the model: the policy is the server's, from its
 * command line or its session, and the only way wider is one call the user
 * approves (elicitation).
 */
#ifndef DSH_SERVICE_MCP_TOOLS_H
#define DSH_SERVICE_MCP_TOOLS_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "dsh-sandbox/bash-tool.h"

#include "jsonrpc.h"
#include "running-commands.h"
#include "service-context.h"

/* One client's connection: the server's state for the life of the stdio stream. */
typedef struct mcp_connection {
        service_context *context;
        const service_policy_fields *policy;   /* the server's, for every call */
        rpc_server *rpc;
        json_t *tools;                  /* the tool definitions tools/list answers with */
        char *instructions;             /* initialize's: the rules, then the policy in force */
        pthread_mutex_t lock;           /* over what initialize sets: requests run on threads of their own */
        const char *protocol_version;   /* negotiated (a static string); NULL before initialize */
        bool client_elicits;            /* the client declared form elicitation */
        running_commands running;       /* the bash tool's commands: the end of input or a stop kills them */
} mcp_connection;

/* One tools/call, while it runs. */
typedef struct mcp_tool_call {
        mcp_connection *connection;
        rpc_call *call;
        json_t *arguments;              /* borrowed: an object, already checked against the tool's inputSchema */
        json_t *progress_token;         /* borrowed: params._meta.progressToken, or NULL */
} mcp_tool_call;

/*
 * The tool definitions (name, title, description, inputSchema, annotations,
 * outputSchema), as tools/list lists them, the bash tool's description
 * ending in `policy_text` (the policy in force; may be NULL).  Returns a new
 * array, or NULL when out of memory.
 */
json_t *mcp_tool_definitions(const char *policy_text);

/*
 * Runs tools/call `name` with `arguments` (may be NULL: none) and ends the
 * call: a tool result, or a protocol error for an unknown tool or
 * arguments its inputSchema refuses.
 */
void mcp_tool_run(mcp_tool_call *tool_call, const char *name);

/* The bash tool (mcp-bash.c). */
void mcp_tool_bash(mcp_tool_call *tool_call);

/* Whether the negotiated revision wants invalid tool arguments reported as a tool error (2025-11-25 on). */
bool mcp_connection_reports_invalid_arguments_as_tool_errors(mcp_connection *connection);

/* Whether the client declared form elicitation in initialize. */
bool mcp_connection_client_elicits(mcp_connection *connection);

/*
 * Ends the call with a tool result: one text content, `is_error`, and
 * `structured` (stolen; NULL for none) as structuredContent.
 */
void mcp_tool_reply(mcp_tool_call *tool_call, const char *text, bool is_error, json_t *structured);

/* Ends the call with a tool result for a library error: isError, "<CODE>: <message>", then `advice` (may be NULL). */
void mcp_tool_reply_error(mcp_tool_call *tool_call, const dsh_error *error, const char *advice);

/* Argument readers: each returns the argument (borrowed), or the fallback when it is absent or null. */
const char *mcp_argument_string(const mcp_tool_call *tool_call, const char *name);
bool mcp_argument_bool(const mcp_tool_call *tool_call, const char *name, bool fallback);
long long mcp_argument_integer(const mcp_tool_call *tool_call, const char *name, long long fallback);

#endif
