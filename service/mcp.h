/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox mcp`: a Model Context Protocol server over stdio (docs/mcp.md),
 * on the JSON-RPC line transport (jsonrpc.h) and the shared runtime
 * (service-context.h).  It offers an agent the bash tool and the guarded
 * file tools under one policy, fixed for the server's life.
 */
#ifndef DSH_SERVICE_MCP_H
#define DSH_SERVICE_MCP_H

#include "service-context.h"

/*
 * The policy in force as the model is told it (mcp-policy.c): the mode, the
 * workspace root, the extra writable roots, the backend the runtime selects
 * and what /tmp is under it.  Returns 0 with *text_out (caller frees), or a
 * negative errno with `error` set: the policy does not resolve, or no
 * backend can confine it (SANDBOX_UNAVAILABLE) — what the server cannot
 * serve.
 */
int mcp_describe_policy(service_context *context, const service_policy_fields *fields, char **text_out,
                        dsh_error *error);

/*
 * Serves MCP on `input_fd` and `output_fd` until end of input, every tool
 * call under `policy` (a session is resolved again on each call, so a mode
 * set on it meanwhile is seen by the next call); `policy_text`
 * (mcp_describe_policy) ends the instructions and the bash tool's
 * description.  At end of input, or when
 * `stop_fd` (-1: none) turns readable, every command still running is
 * killed and no other starts; the calls in flight then answer, and it
 * returns.  `context` and `policy` outlive the call.  Returns 0, or a
 * negative errno when the server could not start or its input could not be
 * read.
 */
int mcp_serve(service_context *context, const service_policy_fields *policy, const char *policy_text, int input_fd,
              int output_fd, int stop_fd);

/*
 * A server that cannot serve its policy, heard by its client: until end of
 * input (or `stop_fd` turning readable), every request — initialize first —
 * is answered with the JSON-RPC error -32000 whose message names `cause`
 * ("dsh-sandbox mcp cannot serve: CODE: text"), and nothing else is done.
 * A client that exited at once would show only "connection closed".
 * Returns 0, or a negative errno when the input could not be read.
 */
int mcp_serve_refusal(const dsh_error *cause, int input_fd, int output_fd, int stop_fd);

#endif
