/* SPDX-License-Identifier: MIT */
/*
 * What the files of `dsh-sandbox serve` share: the service's state, the
 * readers of the params every method has in common (the policy fields, a
 * mode, a backend, free text), and the answers built from the library's own
 * JSON encoders.  serve.c holds the method table and the quick methods,
 * serve-fs.c the file guard's, serve-jobs.c the background jobs.
 */
#ifndef DSH_SERVICE_SERVE_INTERNAL_H
#define DSH_SERVICE_SERVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <pthread.h>

#include "dsh-sandbox/bash-tool.h"

#include "jsonrpc.h"
#include "running-commands.h"
#include "serve.h"
#include "service-results.h"
#include "service-context.h"

/* serve's own errors, in the range JSON-RPC leaves to the server (docs/service.md). */
enum {
        SERVE_ERROR_JOB_RUNNING = -32001,   /* job.wait: still running at its timeoutMs */
        SERVE_ERROR_JOB_LIMIT = -32002,     /* job.start: SERVE_JOB_LIMIT jobs are held already */
};

/* How long a stop (serve_run's stop_fd) waits for the bash.run calls to see their commands killed. */
#define SERVE_STOP_WAIT_MS 10000

typedef struct serve_jobs serve_jobs;
typedef struct serve_registration serve_registration;

typedef struct serve_state {
        service_context *context;
        long approval_timeout_ms;       /* approval/request's bound: no answer by then is a rejection */
        serve_jobs *jobs;
        /* The writable roots registered through the service, by registrationId; under the context's lock. */
        serve_registration *registrations;
        long long next_registration_id;
        /* The bash.run calls whose command may be running, for a stop (serve_run's stop_fd). */
        running_commands running;
} serve_state;

/* The policy fields of one call, as read from its params (the strings borrowed from them). */
typedef struct serve_policy {
        service_policy_fields fields;
        char **allow_write;    /* owned: the `allowWrite` copy fields.allow_write points to */
} serve_policy;

#define SERVE_POLICY_INIT { SERVICE_POLICY_FIELDS_INIT, NULL }

void serve_policy_clear(serve_policy *policy);

/*
 * Reads `sessionId`, `mode`, `root`, `allowWrite` and `backend`, each
 * optional.  Returns 0, or -1 after answering -32602 naming the bad one.
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

/* The methods of serve-fs.c and serve-jobs.c (the table is in serve.c). */
void serve_fs_read(serve_state *state, rpc_call *call);
void serve_fs_write(serve_state *state, rpc_call *call);
void serve_fs_edit(serve_state *state, rpc_call *call);
void serve_fs_mkdir(serve_state *state, rpc_call *call);
void serve_fs_remove(serve_state *state, rpc_call *call);
void serve_fs_move(serve_state *state, rpc_call *call);

void serve_job_start(serve_state *state, rpc_call *call);
void serve_job_read(serve_state *state, rpc_call *call);
void serve_job_wait(serve_state *state, rpc_call *call);
void serve_job_kill(serve_state *state, rpc_call *call);

/* The job table: made when the service starts; ended (every job killed, every thread gone) when it stops. */
int serve_jobs_new(service_context *context, serve_jobs **jobs_out, dsh_error *error);
void serve_jobs_end(serve_jobs *jobs);

/*
 * Kills every job still running (SIGKILL to its process group) and waits
 * until each one's thread is done; a job.start from now on is killed as it
 * starts.  The table stays usable (read, wait) until serve_jobs_end().
 */
void serve_jobs_stop(serve_jobs *jobs);

#endif
