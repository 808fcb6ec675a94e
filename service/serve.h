/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox serve`: the sandbox as a JSON-RPC 2.0 service, one message
 * per line (docs/service.md).  A harness in any language keeps one process
 * and calls the policy service, the sessions, the bash tool, the file guard
 * and background jobs through it, every confined call through the runtime
 * its context holds (service/service-context.h).
 */
#ifndef DSH_SERVICE_SERVE_H
#define DSH_SERVICE_SERVE_H

#include "service-context.h"

typedef struct serve_options {
        int input_fd;                   /* requests; not owned */
        int output_fd;                  /* answers; not owned */
        /*
         * -1: none; not owned.  For a program that must end now (a signal):
         * once a byte N can be read from it, every command the service runs
         * (bash.run calls and jobs) is killed (SIGKILL to its process group)
         * and waited for, and the process then ends as if killed by signal
         * N (dsh_end_like_child), without waiting for the input to end.  A
         * signal handler that writes its number there is all it takes.
         */
        int stop_fd;
        long approval_timeout_ms;       /* how long approval/request is awaited; 0: SERVE_APPROVAL_TIMEOUT_MS */
} serve_options;

#define SERVE_OPTIONS_INIT { 0, 1, -1, 0 }

/* How long bash.run waits by default for the client's answer to approval/request. */
#define SERVE_APPROVAL_TIMEOUT_MS DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS

/*
 * Serves requests until end of input, then waits for the requests in
 * flight, kills every job still running (its whole process group) and
 * waits for its thread, so that no child of the service outlives this call.
 * Returns 0, or a negative errno with `error` set when the service could
 * not start or its input could not be read.
 */
int serve_run(service_context *context, const serve_options *options, dsh_error *error);

#endif
