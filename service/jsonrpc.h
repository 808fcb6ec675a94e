/* SPDX-License-Identifier: MIT */
/*
 * JSON-RPC 2.0 over a pair of file descriptors, one message per line: the
 * transport under `dsh-sandbox serve` and `dsh-sandbox mcp` (MCP's stdio
 * transport is the same framing).
 *
 * Every request runs on a thread of its own, so a slow one (a bash command)
 * does not hold up a quick one (a policy resolution); its response carries
 * its id whenever it ends.  A line that is not a message gets its protocol
 * error (-32700 with id null, -32600) and the server reads on: a bad line
 * never ends it.  End of input ends rpc_server_run() once every request in
 * flight has answered.
 *
 * Either side may ask: a handler can send the client a request of its own
 * (an approval, an MCP elicitation) and wait for the answer, and notify it
 * (progress).  Ids of the server's own requests are integers it numbers
 * itself; they never meet the client's ids, which are the client's.
 *
 * The transport knows no method: the protocol on top (service/serve.c,
 * service/mcp.c) gets every request and every notification, answers unknown
 * methods with RPC_METHOD_NOT_FOUND, and maps its own cancellation
 * notification ("$/cancelRequest", "notifications/cancelled") onto
 * rpc_server_cancel().
 */
#ifndef DSH_SERVICE_JSONRPC_H
#define DSH_SERVICE_JSONRPC_H

#include <stdbool.h>

#include <jansson.h>

#include "dsh-sandbox/sandbox.h"

/* The protocol's own error codes, and the one this project uses for a sandbox error. */
enum {
        RPC_PARSE_ERROR = -32700,
        RPC_INVALID_REQUEST = -32600,
        RPC_METHOD_NOT_FOUND = -32601,
        RPC_INVALID_PARAMS = -32602,
        RPC_INTERNAL_ERROR = -32603,
        RPC_SANDBOX_ERROR = -32000,     /* data: {code, message}: the library's error code name and text */
        RPC_REQUEST_CANCELLED = -32800, /* LSP's RequestCancelled, for a request cancelled before it could answer */
};

/* The longest line read; a longer one is answered with RPC_INVALID_REQUEST and skipped. */
#define RPC_LINE_LIMIT (64u * 1024 * 1024)

typedef struct rpc_server rpc_server;

/* One request of the client's, in flight: handed to the handler, ended by rpc_call_reply() or rpc_call_fail(). */
typedef struct rpc_call rpc_call;

/*
 * Called on a thread of its own for each request.  It must end the call
 * exactly once, with rpc_call_reply() or rpc_call_fail() (or, cancelled,
 * rpc_call_drop()), before it returns; `call` is not valid after that.
 */
typedef void (*rpc_request_fn)(rpc_call *call, void *data);

/* Called on the reading thread for each notification (a message without an id); it must not block. */
typedef void (*rpc_notification_fn)(rpc_server *server, const char *method, json_t *params, void *data);

typedef struct rpc_handlers {
        rpc_request_fn on_request;
        rpc_notification_fn on_notification;   /* NULL: notifications are dropped */
        void *data;
        /*
         * Called on the reading thread once the input has ended, before
         * rpc_server_run() waits for the requests in flight (NULL: none):
         * where a protocol ends what only the client could have ended
         * (serve's background jobs, which a job.wait in flight waits for).
         * It may block; the server's own requests have already failed.
         */
        void (*on_input_end)(rpc_server *server, void *data);
} rpc_handlers;

/* A server reading `input_fd` and writing `output_fd` (not owned).  Returns NULL when out of memory. */
rpc_server *rpc_server_new(int input_fd, int output_fd, const rpc_handlers *handlers);

/*
 * Reads messages until end of input, then waits for every request in
 * flight to answer; the server's own pending requests are failed (-EPIPE)
 * so that no handler waits for an answer that cannot come.  Returns 0, or
 * a negative errno when the input could not be read.
 */
int rpc_server_run(rpc_server *server);

/* Frees a server whose rpc_server_run() has returned. */
void rpc_server_free(rpc_server *server);

/*
 * Cancels the client's request `id` (as the client spelt it) when it is
 * still in flight: rpc_call_cancelled() turns true and its cancel hook runs
 * (once).  Unknown and finished ids are ignored, as the protocol wants.
 */
void rpc_server_cancel(rpc_server *server, const json_t *id);

/* Sends a notification to the client.  Steals `params` (may be NULL).  Returns 0 or a negative errno. */
int rpc_server_notify(rpc_server *server, const char *method, json_t *params);

/*
 * Sends the client a request and waits for its answer, at most `timeout_ms`
 * (0: no bound).  Steals `params` (may be NULL).  Returns 0 with
 * *result_out (a new reference) for a result; -EPROTO with *error_out (a
 * new reference: the error object) for an error answer; -ETIMEDOUT;
 * -EPIPE when the input ended first; -ECANCELED when `call` (may be NULL) was
 * cancelled while waiting.
 */
int rpc_server_request(rpc_server *server, rpc_call *call, const char *method, json_t *params, long timeout_ms,
                       json_t **result_out, json_t **error_out);

/* The call's method, params (borrowed; NULL when absent), id (borrowed) and server. */
const char *rpc_call_method(const rpc_call *call);
json_t *rpc_call_params(const rpc_call *call);
const json_t *rpc_call_id(const rpc_call *call);
rpc_server *rpc_call_server(const rpc_call *call);

/* Whether the client cancelled this call. */
bool rpc_call_cancelled(const rpc_call *call);

/*
 * Runs `hook(data)` when the call is cancelled — at once, on this thread,
 * when it already is.  It runs on the reading thread otherwise, so it must
 * not block (dsh_bash_cancel() is made for it).  NULL removes the hook; the
 * handler removes it before it frees what `data` points to.
 *
 * The hook runs under the server's lock (that is what makes removing it
 * safe), so it must not call into the transport, and a handler must not
 * call into the transport (rpc_call_cancelled() included) while it holds a
 * lock of its own that the hook takes.
 */
void rpc_call_on_cancel(rpc_call *call, void (*hook)(void *data), void *data);

/* Answers with `result` (stolen; NULL means {}).  Returns 0 or a negative errno (the output failed). */
int rpc_call_reply(rpc_call *call, json_t *result);

/* Answers with an error: `code`, a one-line `message`, and `data` (stolen; may be NULL). */
int rpc_call_fail(rpc_call *call, int code, const char *message, json_t *data);

/*
 * Ends the call without writing anything: for a protocol whose
 * cancellation wants no answer to the cancelled request (MCP: "SHOULD NOT
 * send a response for the cancelled request").  Only for a call that was
 * cancelled; any other call must be answered.
 */
void rpc_call_drop(rpc_call *call);

/*
 * Answers with a library error: RPC_SANDBOX_ERROR with the error's own text
 * as the message and data {code, message} (code: dsh_error_code_name(), or
 * null for the generic codes; data also carries "errno" when it is set).
 */
int rpc_call_fail_sandbox(rpc_call *call, const dsh_error *error);
/* The same, with the members of the object `members` (stolen; NULL: none) added to data: a refusal's "denial". */
int rpc_call_fail_sandbox_with(rpc_call *call, const dsh_error *error, json_t *members);

/*
 * Answers RPC_INVALID_PARAMS with the message "invalid params: NAME: <what>"
 * ("invalid params: <what>" when `parameter` is NULL) and data
 * {"parameter": NAME} — the helpers for reading params below name the bad
 * one this way ("invalid params: root: expected a string").
 */
int rpc_call_fail_params(rpc_call *call, const char *parameter, const char *what);

/*
 * Reading params: each returns 0 with the value (borrowed for strings),
 * 1 when an optional member is absent or null (the value untouched), or -1
 * after answering the call with rpc_call_fail_params() (a required member
 * missing, a wrong type, an empty string, a string with a NUL byte).
 * After -1 the handler returns at once: the call has ended.
 */
int rpc_param_string(rpc_call *call, const char *name, bool required, const char **value_out);
int rpc_param_bool(rpc_call *call, const char *name, bool required, bool *value_out);
int rpc_param_integer(rpc_call *call, const char *name, bool required, long long *value_out);
/* An array of strings, as a NULL-terminated copy the caller frees with dsh_strv_free(). */
int rpc_param_string_array(rpc_call *call, const char *name, bool required, char ***value_out);
/*
 * Free text that may be empty and may hold NUL bytes (a file's content, an
 * edit's replacement), unlike rpc_param_string()'s: the text (borrowed)
 * and its length.
 */
int rpc_param_text(rpc_call *call, const char *name, bool required, const char **text_out, size_t *length_out);

#endif
