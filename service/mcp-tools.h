/* SPDX-License-Identifier: MIT */
/*
 * Inside `dsh-sandbox mcp`: what the protocol (mcp.c) hands the tools
 * (mcp-tools.c: the table and the file tools; mcp-bash.c: the bash tool) on
 * each call.  The tools reach the server only through the call they
 * receive; mcp.c's connection state is its own.
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

#include <stdbool.h>

#include <jansson.h>

#include "dsh-sandbox/bash-tool.h"

#include "jsonrpc.h"
#include "running-commands.h"
#include "service-context.h"

/*
 * What the tools use of the server, the same for every call: mcp.c sets it
 * up before the first request and does not change it while requests run
 * (the list of running commands has a lock of its own).
 */
typedef struct mcp_tool_server {
        service_context *context;
        const service_policy_fields *policy;   /* the server's, for every call */
        rpc_server *rpc;                /* to ask the client (elicitation) and to tell it (progress) */
        const json_t *tools;            /* the tool definitions, whose inputSchema each call's arguments meet */
        running_commands *running;      /* the bash tool's commands: the end of input or a stop kills them */
} mcp_tool_server;

/*
 * One tools/call, while it runs: everything a tool reaches, so that no tool
 * calls back into the protocol's side (mcp.c) for the connection's state.
 */
typedef struct mcp_tool_call {
        const mcp_tool_server *server;
        /* What initialize negotiated, as it stood when the call came in. */
        bool client_elicits;            /* the client declared form elicitation */
        bool invalid_arguments_as_tool_errors;  /* the revision wants them as a tool error (2025-11-25 on) */
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

/*
 * Ends the call with a tool result: one text content, `is_error`, and
 * `structured` (stolen; NULL for none) as structuredContent.
 */
void mcp_tool_reply(mcp_tool_call *tool_call, const char *text, bool is_error, json_t *structured);

/* The same, with `note` (NULL: none) as a second text content: the bash tool's denials, for the model. */
void mcp_tool_reply_note(mcp_tool_call *tool_call, const char *text, const char *note, bool is_error,
                         json_t *structured);

/* Ends the call with a tool result for a library error: isError, "<CODE>: <message>", then `advice` (may be NULL). */
void mcp_tool_reply_error(mcp_tool_call *tool_call, const dsh_error *error, const char *advice);

/* Argument readers: each returns the argument (borrowed), or the fallback when it is absent or null. */
const char *mcp_argument_string(const mcp_tool_call *tool_call, const char *name);
/* The strings of an array argument (a new NULL-terminated vector; NULL when absent or empty; *failed on ENOMEM). */
char **mcp_argument_strings(const mcp_tool_call *tool_call, const char *name, bool *failed);
bool mcp_argument_bool(const mcp_tool_call *tool_call, const char *name, bool fallback);
long long mcp_argument_integer(const mcp_tool_call *tool_call, const char *name, long long fallback);

#endif
