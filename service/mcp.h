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
 * Serves MCP on `input_fd` and `output_fd` until end of input, every tool
 * call under `policy` (a session is resolved again on each call, so a mode
 * set on it meanwhile is seen by the next call).  At end of input, or when
 * `stop_fd` (-1: none) turns readable, every command still running is
 * killed and no other starts; the calls in flight then answer, and it
 * returns.  `context` and `policy` outlive the call.  Returns 0, or a
 * negative errno when the server could not start or its input could not be
 * read.
 */
int mcp_serve(service_context *context, const service_policy_fields *policy, int input_fd, int output_fd,
              int stop_fd);

#endif
