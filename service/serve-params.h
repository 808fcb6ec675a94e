/* SPDX-License-Identifier: MIT */
/*
 * The params library of `dsh-sandbox serve`: the readers of the params its
 * methods have in common (the policy fields, a mode, a backend, a bounded
 * number) and the answers built from the library's own errors and JSON
 * encoders.  Each reader refuses a bad member with -32602 naming it, so a
 * method never goes on with a value its param did not say.  Apart from the
 * method table (serve.c) and the methods (serve.c, serve-fs.c,
 * serve-jobs.c), which all include it and which it includes none of.
 */
#ifndef DSH_SERVICE_SERVE_PARAMS_H
#define DSH_SERVICE_SERVE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "dsh-sandbox/sandbox.h"

#include "jsonrpc.h"
#include "service-context.h"
#include "service-results.h"

/* The policy fields of one call, as read from its params (the strings borrowed from them). */
typedef struct serve_policy {
        service_policy_fields fields;
        char **allow_write;    /* owned: the `allowWrite` copy fields.allow_write points to */
        char **allow_unix_sockets;  /* owned: the `allowUnixSockets` copy fields.allow_unix_sockets points to */
        dsh_network_policy network; /* owned: the `network` fields.network points to when given */
        char **masked_paths;        /* owned: `maskedPaths`, each entry checked */
        char **allowed_environment; /* owned: `allowEnvironment`, each a name */
} serve_policy;

#define SERVE_POLICY_INIT { SERVICE_POLICY_FIELDS_INIT, NULL, NULL, DSH_NETWORK_POLICY_INIT, NULL, NULL }

void serve_policy_clear(serve_policy *policy);

/*
 * Reads `sessionId`, `mode`, `root`, `allowWrite`, `allowUnixSockets`,
 * `network` (the config's shape: "on", "off" or {allowHosts,
 * allowLocalPorts, dnsUpstream}; given, it replaces the config's whole),
 * `maskedPaths` (masks added to the deployment's), `allowEnvironment`
 * (names let through) and `backend`, each optional.  Returns 0, or -1
 * after answering -32602 naming the bad one (`policy` cleared then).
 */
int serve_param_policy(rpc_call *call, serve_policy *policy);

/* A mode name: 0 with *mode_out, 1 when absent (optional), -1 after answering -32602 naming `name`. */
int serve_param_mode(rpc_call *call, const char *name, bool required, dsh_mode *mode_out);

/* `backend`: "auto", or a backend this build knows.  0, 1 (absent), or -1 after answering -32602. */
int serve_param_backend(rpc_call *call, const char **backend_out);

/* A whole number from 1 to `maximum`: 0, 1 (absent), or -1 after answering -32602 naming `name`. */
int serve_param_positive(rpc_call *call, const char *name, long long maximum, long long *value_out);

/* Answers a library error (RPC_SANDBOX_ERROR with data {code, message}) and clears it. */
void serve_fail(rpc_call *call, dsh_error *error);

/* Answers a cwd the bash tool refused (dsh_bash_check_cwd) as -32602 on "cwd": `invalid params: cwd: "<path>" ...`. */
void serve_fail_cwd(rpc_call *call, const dsh_error *error);

/*
 * Answers with what a dsh_json_encode_*() call returned: `text` as the
 * result when `encoded` is 0, else `error`.  Frees `text`, clears `error`.
 */
void serve_reply_encoded(rpc_call *call, int encoded, char *text, dsh_error *error);

/*
 * A JSON string of the `length` bytes at `bytes`, each byte that is not
 * UTF-8 written as the four characters \xNN, as the bash tool's result
 * writes a command's output.  NULL only when out of memory.
 */
json_t *serve_output_json(const char *bytes, size_t length);

#endif
