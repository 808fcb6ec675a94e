/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's messages (docs/remote.md): the JSON payloads of the
 * hello, request and final-record frames, encoded and decoded strictly on
 * both ends (unknown members refused, every type checked).
 */
#ifndef DSH_SANDBOX_REMOTE_PROTOCOL_H
#define DSH_SANDBOX_REMOTE_PROTOCOL_H

#include <jansson.h>

#include "dsh-sandbox/remote.h"
#include "base/util.h"

typedef enum dsh_remote_operation {
        DSH_REMOTE_OPERATION_RUN = 0,
        DSH_REMOTE_OPERATION_CONFINE,
        DSH_REMOTE_OPERATION_PROBE,
        DSH_REMOTE_OPERATION_BASH,      /* argv: the one command line */
} dsh_remote_operation;

/* A request as the helper received it; every member owned. */
typedef struct dsh_remote_call {
        dsh_remote_operation operation;
        char **argv;                            /* run, confine: non-empty; probe: NULL */
        bool has_mode;
        dsh_mode mode;
        char *workspace_root;
        char **additional_writable_roots;
        char *backend;
        long timeout_ms;                        /* bash: 0 none */
        long output_limit;                      /* bash: 0 the default */
        bool live_output;                       /* bash: stream the output as frames too */
        bool has_network;                       /* the request named the call's network policy */
        dsh_network_policy network;             /* then: it, as sent (checked by the helper's prepare) */
        char **masked_paths;                    /* the call's own masks, as sent (checked by prepare); NULL: none */
        char **allowed_environment;             /* the names it lets through, likewise */
} dsh_remote_call;

#define DSH_REMOTE_CALL_INIT \
        { DSH_REMOTE_OPERATION_RUN, NULL, false, DSH_MODE_READ_ONLY, NULL, NULL, NULL, 0, 0, false, false, \
          DSH_NETWORK_POLICY_INIT, NULL, NULL }

DSH_INTERNAL void dsh_remote_call_clear(dsh_remote_call *call);

/*
 * The request frame's payload (caller frees *text_out).  `argv` NULL for
 * probe; `bash` the bash call's options, NULL for the other operations.
 * 0 or a negative errno.
 */
DSH_INTERNAL int dsh_remote_request_encode(dsh_remote_operation operation, const dsh_remote_request *request,
                                           char *const *argv, const dsh_remote_bash_options *bash,
                                           char **text_out, dsh_error *error);

/* Reads a request: the protocol version first ("speaks protocol N"), then the operation and its members. */
DSH_INTERNAL int dsh_remote_call_decode(const unsigned char *payload, size_t length, dsh_remote_call *call_out,
                                        dsh_error *error);

/* The hello frame's payload: {"protocol":N,"version":"..."}.  Caller frees. */
DSH_INTERNAL int dsh_remote_hello_encode(char **text_out, dsh_error *error);

/* 0 when the hello names this protocol version; -EPROTO with the remote's version and protocol otherwise. */
DSH_INTERNAL int dsh_remote_hello_check(const unsigned char *payload, size_t length, dsh_error *error);

/* How the call ended, as the final record says it. */
typedef enum dsh_remote_outcome {
        DSH_REMOTE_OUTCOME_EXITED = 0,   /* value: the exit status */
        DSH_REMOTE_OUTCOME_SIGNALED,     /* value: the signal number */
        DSH_REMOTE_OUTCOME_REFUSED,      /* refusal: the error; value: its errno for EXEC_FAILED, else 0 */
        DSH_REMOTE_OUTCOME_ANSWERED,     /* answer: the facts or the probe report */
} dsh_remote_outcome;

typedef struct dsh_remote_final {
        dsh_remote_outcome outcome;
        int value;
        dsh_error refusal;
        json_t *answer;                  /* owned reference */
} dsh_remote_final;

#define DSH_REMOTE_FINAL_INIT { DSH_REMOTE_OUTCOME_EXITED, 0, DSH_ERROR_INIT, NULL }

DSH_INTERNAL void dsh_remote_final_clear(dsh_remote_final *final);

/* The final record's payload for `final` (caller frees).  0 or a negative errno. */
DSH_INTERNAL int dsh_remote_final_encode(const dsh_remote_final *final, char **text_out, dsh_error *error);

/* Reads a final record strictly: an exit status 0..255, a signal 1..64, a known error code. */
DSH_INTERNAL int dsh_remote_final_decode(const unsigned char *payload, size_t length, dsh_remote_final *final_out,
                                         dsh_error *error);

#endif
