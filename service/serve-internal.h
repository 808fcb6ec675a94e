/* SPDX-License-Identifier: MIT */
/*
 * What the files of `dsh-sandbox serve` share: the service's state and the
 * methods the table in serve.c lists from the other files.  serve.c holds
 * the method table and the quick methods, serve-fs.c the file guard's,
 * serve-jobs.c the background jobs; the params they all read and the
 * answers they build are serve-params.h's.  It does not include serve.h,
 * the entry point, which serve.c implements: the two would include each
 * other through serve.c.
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
#include "serve-params.h"
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

/* The methods of serve-fs.c and serve-jobs.c (the table is in serve.c). */
void serve_fs_read(serve_state *state, rpc_call *call);
void serve_fs_write(serve_state *state, rpc_call *call);
void serve_fs_edit(serve_state *state, rpc_call *call);
void serve_fs_mkdir(serve_state *state, rpc_call *call);
void serve_fs_remove(serve_state *state, rpc_call *call);
void serve_fs_move(serve_state *state, rpc_call *call);

/*
 * The approval channel of bash.run and job.start (dsh_bash_approve_fn,
 * serve.c): the client is asked with approval/request, naming exactly what
 * is granted.  `call` is the call that waits (cancelled with it), NULL for a
 * job's thread (its job.start was answered already).
 */
typedef struct serve_approval_channel {
        rpc_server *server;
        rpc_call *call;
        long timeout_ms;
} serve_approval_channel;

int serve_approve_through_client(const dsh_bash_escalation *escalation, void *data, dsh_error *error);

/* policy.why (serve-why.c). */
void serve_policy_why(serve_state *state, rpc_call *call);

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
