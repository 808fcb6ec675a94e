/* SPDX-License-Identifier: MIT */
/*
 * serve's background jobs: job.start runs a confined bash command on a
 * thread of its own (the bash tool, through a runtime of the context's
 * pool), job.read reads its output while it runs, job.wait returns the bash
 * tool's result once it has ended, job.kill ends it.
 *
 * Bounds.  A job's output (stdout and stderr as they arrive, interleaved) is
 * kept in a ring of SERVE_JOB_OUTPUT_LIMIT bytes, grown on demand: a
 * command that writes forever costs that much and no more.  Offsets count
 * every byte the command wrote, so they never shift: job.read {offset}
 * answers from `offset`, or from the oldest byte still kept when older ones
 * were dropped, and says how many were (`dropped`).  The result job.wait
 * returns is the bash tool's, whose streams are bounded the tool's way.  At
 * most SERVE_JOB_LIMIT jobs are held at once, running or ended and not yet
 * waited for; job.wait's result releases a job.
 *
 * Lifetime.  Each job's thread holds a reference, the table another, and
 * each call looking at a job one more while it does; all under the table's
 * lock.  When the service ends, every job still running is killed (its
 * whole process group, by the bash tool's cancellation) and the service
 * waits for every job thread: no child of the service outlives it.
 *
 * A job never escalates: nobody would be there to approve it.  Its policy
 * is resolved when it is started, so a bad session or root is job.start's
 * error, not a job that fails later.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve-internal.h"

#define SERVE_JOB_LIMIT 64
#define SERVE_JOB_OUTPUT_LIMIT ((size_t) 1024 * 1024)
#define SERVE_JOB_OUTPUT_FIRST ((size_t) 4096)

typedef struct serve_job serve_job;

struct serve_job {
        serve_jobs *jobs;
        serve_job *next;
        unsigned references;
        long long id;
        char *command;
        char *cwd;                              /* NULL: the workspace root */
        long timeout_ms;
        /* The escalation asked for (bash.run's), approved from the job's thread before the command runs. */
        char *sandbox_permissions;
        char *justification;
        char **additional_write;
        char **additional_hosts;
        serve_approval_channel approval;
        dsh_policy policy;
        dsh_runtime *runtime;                   /* the pool's, until the job's thread gives it back */
        dsh_bash_cancellation *cancellation;
        /* The output ring: byte n (counting from the first) is output[n % capacity] while kept. */
        char *output;
        size_t capacity;
        unsigned long long written;
        bool exited;
        /* Once exited: what dsh_bash_run() returned. */
        int run_result;
        dsh_bash_result result;
        dsh_error error;
};

struct serve_jobs {
        service_context *context;
        pthread_mutex_t lock;
        pthread_cond_t changed;         /* a job exited, or a waiting call was cancelled */
        serve_job *list;
        size_t count;
        size_t running;                 /* job threads not yet done */
        long long next_id;
        bool stopping;                  /* serve_jobs_stop() began: a new job is killed as it starts */
};

int serve_jobs_new(service_context *context, serve_jobs **jobs_out, dsh_error *error)
{
        serve_jobs *jobs = calloc(1, sizeof(*jobs));
        pthread_condattr_t attributes;

        if (!jobs)
                return service_error_set(error, ENOMEM, "%s", strerror(ENOMEM));
        jobs->context = context;
        pthread_mutex_init(&jobs->lock, NULL);
        /* job.wait's timeoutMs is a duration: a clock that steps must not stretch or cut it. */
        pthread_condattr_init(&attributes);
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
        pthread_cond_init(&jobs->changed, &attributes);
        pthread_condattr_destroy(&attributes);
        *jobs_out = jobs;
        return 0;
}

/* Under the lock. */
static void job_unref(serve_job *job)
{
        if (--job->references > 0)
                return;
        dsh_bash_result_clear(&job->result);
        dsh_error_clear(&job->error);
        dsh_policy_clear(&job->policy);
        dsh_bash_cancellation_free(job->cancellation);
        free(job->output);
        free(job->command);
        free(job->cwd);
        free(job->sandbox_permissions);
        free(job->justification);
        dsh_strv_free(job->additional_write);
        dsh_strv_free(job->additional_hosts);
        free(job);
}

/* Under the lock: the job `id` names, or NULL. */
static serve_job *job_find(serve_jobs *jobs, long long id)
{
        for (serve_job *job = jobs->list; job; job = job->next)
                if (job->id == id)
                        return job;
        return NULL;
}

/* Under the lock: the table lets go of the job (job.wait has returned its result). */
static void job_forget(serve_jobs *jobs, serve_job *job)
{
        for (serve_job **link = &jobs->list; *link; link = &(*link)->next)
                if (*link == job) {
                        *link = job->next;
                        jobs->count--;
                        job_unref(job);
                        return;
                }
}

/* ------------------------------------------------------------ output -- */

/* Grows the ring (never once it has wrapped: the positions would move) towards `needed` bytes. */
static void output_grow(serve_job *job, unsigned long long needed)
{
        size_t capacity = job->capacity ? job->capacity * 2 : SERVE_JOB_OUTPUT_FIRST;
        char *grown;

        if (job->written > job->capacity || job->capacity >= SERVE_JOB_OUTPUT_LIMIT)
                return;
        while (capacity < needed && capacity < SERVE_JOB_OUTPUT_LIMIT)
                capacity *= 2;
        if (capacity > SERVE_JOB_OUTPUT_LIMIT)
                capacity = SERVE_JOB_OUTPUT_LIMIT;
        grown = realloc(job->output, capacity);
        if (!grown)
                return;  /* the ring stays as it is: older bytes drop sooner */
        job->output = grown;
        job->capacity = capacity;
}

/* Under the lock.  Bytes that find no room (no memory at all) are counted as written and dropped. */
static void output_append(serve_job *job, const char *data, size_t length)
{
        while (length > 0) {
                size_t position, chunk;

                if (job->written + length > job->capacity)
                        output_grow(job, job->written + length);
                if (job->capacity == 0) {
                        job->written += length;
                        return;
                }
                position = (size_t) (job->written % job->capacity);
                chunk = job->capacity - position < length ? job->capacity - position : length;
                memcpy(job->output + position, data, chunk);
                job->written += chunk;
                data += chunk;
                length -= chunk;
        }
}

/* The first byte offset still kept. */
static unsigned long long output_start(const serve_job *job)
{
        return job->written > job->capacity ? job->written - job->capacity : 0;
}

/* Under the lock: copies bytes [from, written) out of the ring into `buffer`. */
static void output_copy(const serve_job *job, unsigned long long from, char *buffer)
{
        for (unsigned long long at = from; at < job->written;) {
                size_t position = (size_t) (at % job->capacity);
                size_t chunk = job->capacity - position;

                if (chunk > job->written - at)
                        chunk = (size_t) (job->written - at);
                memcpy(buffer + (at - from), job->output + position, chunk);
                at += chunk;
        }
}

/*
 * How many of `length` bytes to hand out now: all but a UTF-8 character
 * the command has only begun to write, which the next read returns whole.
 */
static size_t complete_characters(const char *bytes, size_t length)
{
        for (size_t back = 1; back <= 4 && back <= length; back++) {
                unsigned char byte = (unsigned char) bytes[length - back];
                size_t needed;

                if ((byte & 0xc0) == 0x80)
                        continue;  /* a continuation byte: look further back for its lead */
                needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
                return needed > back ? length - back : length;
        }
        return length;
}

static int job_on_output(int stream, const char *data, size_t length, void *user_data)
{
        serve_job *job = user_data;

        (void) stream;
        pthread_mutex_lock(&job->jobs->lock);
        output_append(job, data, length);
        pthread_mutex_unlock(&job->jobs->lock);
        return 0;
}

/* -------------------------------------------------------------- thread -- */

static void *job_thread(void *data)
{
        serve_job *job = data;
        serve_jobs *jobs = job->jobs;
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int ran;

        request.command = job->command;
        request.policy = &job->policy;
        request.timeout_ms = job->timeout_ms;
        request.cwd = job->cwd;
        request.sandbox_permissions = job->sandbox_permissions;
        request.justification = job->justification;
        request.additional_write = job->additional_write;
        request.additional_hosts = job->additional_hosts;
        /* The client is asked as for bash.run; job.start was answered already, so no call waits on it. */
        request.approve = serve_approve_through_client;
        request.approve_data = &job->approval;
        request.cancellation = job->cancellation;
        request.on_output = job_on_output;
        request.output_data = job;
        ran = dsh_bash_run(job->runtime, &request, &result, &error);
        service_runtime_release(jobs->context, job->runtime);

        pthread_mutex_lock(&jobs->lock);
        job->runtime = NULL;
        job->run_result = ran;
        job->result = result;
        job->error = error;
        job->exited = true;
        jobs->running--;
        pthread_cond_broadcast(&jobs->changed);
        job_unref(job);
        /* Nothing of `jobs` is touched after this: serve_jobs_end() may free it once `running` is 0. */
        pthread_mutex_unlock(&jobs->lock);
        return NULL;
}

/* Under the lock: starts the job's thread and enters it in the table, or returns a negative errno. */
static int job_launch(serve_jobs *jobs, serve_job *job)
{
        pthread_attr_t attributes;
        pthread_t thread;
        int failed;

        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        failed = pthread_create(&thread, &attributes, job_thread, job);
        pthread_attr_destroy(&attributes);
        if (failed)
                return -failed;
        job->id = ++jobs->next_id;
        job->next = jobs->list;
        jobs->list = job;
        jobs->count++;
        jobs->running++;
        if (jobs->stopping)
                dsh_bash_cancel(job->cancellation, SIGKILL);
        return 0;
}

/* ----------------------------------------------------------- methods -- */

/* Resolves the job's policy and takes its runtime: what can be refused is refused before it starts. */
static int job_prepare(serve_state *state, const serve_policy *fields, serve_job *job, dsh_error *error)
{
        int result = service_resolve(state->context, &fields->fields, &job->policy, error);

        if (result == 0)
                result = dsh_bash_cancellation_new(&job->cancellation, error);
        if (result == 0)
                result = service_runtime_acquire(state->context, fields->fields.backend, &job->runtime, error);
        return result;
}

/* The job's request checked as its run will check it (dsh_bash_check_request()): nothing is asked or run. */
static int job_check_escalation(const serve_job *job, dsh_error *error)
{
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;

        request.command = job->command;
        request.policy = &job->policy;
        request.cwd = job->cwd;
        request.sandbox_permissions = job->sandbox_permissions;
        request.justification = job->justification;
        request.additional_write = job->additional_write;
        request.additional_hosts = job->additional_hosts;
        return dsh_bash_check_request(&request, error);
}

void serve_job_start(serve_state *state, rpc_call *call)
{
        serve_policy fields = SERVE_POLICY_INIT;
        serve_jobs *jobs = state->jobs;
        dsh_error error = DSH_ERROR_INIT;
        const char *command = NULL, *cwd = NULL, *sandbox_permissions = NULL, *justification = NULL;
        char **additional_write = NULL, **additional_hosts = NULL;
        dsh_mode requested;
        long long timeout_ms = 0, id = 0;
        bool full = false, bad_cwd = false;
        serve_job *job;
        int result;

        if (serve_param_policy(call, &fields) < 0 || rpc_param_string(call, "command", true, &command) < 0 ||
            serve_param_positive(call, "timeoutMs", INT_MAX, &timeout_ms) < 0 ||
            rpc_param_string(call, "cwd", false, &cwd) < 0 ||
            serve_param_mode(call, "sandboxPermissions", false, &requested) < 0 ||
            rpc_param_string(call, "sandboxPermissions", false, &sandbox_permissions) < 0 ||
            rpc_param_string(call, "justification", false, &justification) < 0 ||
            rpc_param_string_array(call, "additionalWrite", false, &additional_write) < 0 ||
            rpc_param_string_array(call, "additionalHosts", false, &additional_hosts) < 0) {
                dsh_strv_free(additional_write);
                dsh_strv_free(additional_hosts);
                serve_policy_clear(&fields);
                return;
        }
        job = calloc(1, sizeof(*job));
        result = job && (job->command = strdup(command)) && (!cwd || (job->cwd = strdup(cwd))) &&
                                 (!sandbox_permissions || (job->sandbox_permissions = strdup(sandbox_permissions))) &&
                                 (!justification || (job->justification = strdup(justification)))
                         ? 0
                         : service_error_set(&error, ENOMEM, "%s", strerror(ENOMEM));
        if (job) {
                job->additional_write = additional_write;
                job->additional_hosts = additional_hosts;
                job->approval = (serve_approval_channel) { rpc_call_server(call), NULL, state->approval_timeout_ms };
        } else {
                dsh_strv_free(additional_write);
                dsh_strv_free(additional_hosts);
        }
        if (result == 0) {
                job->jobs = jobs;
                job->references = 2;  /* the table's and the thread's */
                job->timeout_ms = (long) timeout_ms;
                job->result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
                result = job_prepare(state, &fields, job, &error);
        }
        /* A cwd that is not a directory is job.start's error: the job never starts. */
        if (result == 0 && dsh_bash_check_cwd(&job->policy, job->cwd, &error) < 0) {
                bad_cwd = error.code == DSH_ERROR_INVALID_INPUT;
                result = -EINVAL;
        }
        /* So is a bad escalation: answered now, not when the job is waited for. */
        if (result == 0)
                result = job_check_escalation(job, &error);
        pthread_mutex_lock(&jobs->lock);
        full = result == 0 && jobs->count >= SERVE_JOB_LIMIT;
        if (result == 0 && !full)
                result = job_launch(jobs, job);
        if (result == 0)
                id = job->id;
        pthread_mutex_unlock(&jobs->lock);

        if (result == 0 && !full) {
                rpc_call_reply(call, json_pack("{s:I}", "jobId", (json_int_t) id));
        } else {
                if (job && job->runtime)
                        service_runtime_release(state->context, job->runtime);
                if (bad_cwd)
                        serve_fail_cwd(call, &error);
                else if (full)
                        rpc_call_fail(call, SERVE_ERROR_JOB_LIMIT,
                                      "too many jobs: wait for (or kill and wait for) one that is held", NULL);
                else if (error.code != DSH_ERROR_NONE)
                        serve_fail(call, &error);
                else {
                        service_error_set(&error, -result, "cannot start the job's thread: %s", strerror(-result));
                        serve_fail(call, &error);
                }
                if (job) {
                        job->references = 1;
                        job_unref(job);
                }
        }
        dsh_error_clear(&error);
        serve_policy_clear(&fields);
}

/* jobId, and under the lock the job it names: 0, or -1 (unlocked) after answering -32602. */
static int lock_job(serve_state *state, rpc_call *call, serve_job **job_out)
{
        long long id = 0;

        if (rpc_param_integer(call, "jobId", true, &id) < 0)
                return -1;
        pthread_mutex_lock(&state->jobs->lock);
        *job_out = job_find(state->jobs, id);
        if (*job_out)
                return 0;
        pthread_mutex_unlock(&state->jobs->lock);
        rpc_call_fail_params(call, "jobId", "no such job (never started, or already waited for)");
        return -1;
}

void serve_job_read(serve_state *state, rpc_call *call)
{
        unsigned long long from, end;
        long long offset = 0;
        serve_job *job = NULL;
        char *bytes = NULL;
        size_t length;
        bool exited;
        char what[96];

        if (rpc_param_integer(call, "offset", false, &offset) < 0 || lock_job(state, call, &job) < 0)
                return;
        end = job->written;
        if (offset < 0 || (unsigned long long) offset > end) {
                pthread_mutex_unlock(&state->jobs->lock);
                snprintf(what, sizeof(what), "expected 0 to %llu, the bytes written so far", end);
                rpc_call_fail_params(call, "offset", what);
                return;
        }
        from = output_start(job) > (unsigned long long) offset ? output_start(job) : (unsigned long long) offset;
        length = (size_t) (end - from);
        bytes = malloc(length + 1);
        if (bytes)
                output_copy(job, from, bytes);
        exited = job->exited;
        pthread_mutex_unlock(&state->jobs->lock);
        if (!bytes) {
                rpc_call_fail(call, RPC_INTERNAL_ERROR, strerror(ENOMEM), NULL);
                return;
        }
        if (!exited)
                length = complete_characters(bytes, length);
        rpc_call_reply(call, json_pack("{s:o, s:I, s:I, s:I, s:b}", "output", serve_output_json(bytes, length), "offset",
                                       (json_int_t) from, "nextOffset", (json_int_t) (from + length), "dropped",
                                       (json_int_t) (from - (unsigned long long) offset), "exited", exited));
        free(bytes);
}

/* One job.wait in progress, as its cancel hook sees it. */
typedef struct job_waiter {
        serve_jobs *jobs;
        bool cancelled;         /* under the table's lock */
} job_waiter;

/*
 * A job.wait's cancel hook.  The transport runs it under its own lock, so
 * the lock order is the transport's, then the table's: nothing here calls
 * the transport while it holds the table's lock (hence this flag, rather
 * than rpc_call_cancelled() in the wait loop).
 */
static void wake_waiter(void *data)
{
        job_waiter *waiter = data;

        pthread_mutex_lock(&waiter->jobs->lock);
        waiter->cancelled = true;
        pthread_cond_broadcast(&waiter->jobs->changed);
        pthread_mutex_unlock(&waiter->jobs->lock);
}

/* Under the lock: waits until the job exits, the call is cancelled, or `deadline` (NULL: none) passes. */
static void wait_for_exit(job_waiter *waiter, serve_job *job, const struct timespec *deadline)
{
        while (!job->exited && !waiter->cancelled) {
                if (!deadline)
                        pthread_cond_wait(&waiter->jobs->changed, &waiter->jobs->lock);
                else if (pthread_cond_timedwait(&waiter->jobs->changed, &waiter->jobs->lock, deadline) == ETIMEDOUT)
                        return;
        }
}

/* The job has exited and the caller holds a reference: its result is fixed, read without the lock. */
static void answer_exited(rpc_call *call, const serve_job *job)
{
        dsh_error error = DSH_ERROR_INIT;
        json_t *answer;

        if (job->run_result < 0) {
                rpc_call_fail_sandbox(call, &job->error);
                return;
        }
        answer = service_bash_result_json(&job->result, &error);
        if (answer)
                rpc_call_reply(call, answer);
        else
                serve_fail(call, &error);
}

void serve_job_wait(serve_state *state, rpc_call *call)
{
        serve_jobs *jobs = state->jobs;
        job_waiter waiter = { .jobs = jobs };
        struct timespec deadline;
        long long timeout_ms = 0;
        serve_job *job = NULL;
        bool exited, cancelled;
        int timed;

        timed = serve_param_positive(call, "timeoutMs", INT_MAX, &timeout_ms);
        if (timed < 0)
                return;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (timeout_ms / 1000);
        deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        /* Before the lock: a call cancelled already runs the hook at once, on this thread. */
        rpc_call_on_cancel(call, wake_waiter, &waiter);
        if (lock_job(state, call, &job) < 0) {
                rpc_call_on_cancel(call, NULL, NULL);
                return;
        }
        job->references++;
        wait_for_exit(&waiter, job, timed == 0 ? &deadline : NULL);
        exited = job->exited;
        cancelled = waiter.cancelled;
        if (exited)
                job_forget(jobs, job);
        pthread_mutex_unlock(&jobs->lock);
        rpc_call_on_cancel(call, NULL, NULL);

        if (exited)
                answer_exited(call, job);
        else if (cancelled)
                rpc_call_fail(call, RPC_REQUEST_CANCELLED, "request cancelled (the job runs on)", NULL);
        else
                rpc_call_fail(call, SERVE_ERROR_JOB_RUNNING, "the job is still running at timeoutMs",
                              json_pack("{s:I}", "jobId", (json_int_t) job->id));
        pthread_mutex_lock(&jobs->lock);
        job_unref(job);
        pthread_mutex_unlock(&jobs->lock);
}

/* The bash tool's cancellation: `signal` to the job's process group, SIGKILL after its grace. */
void serve_job_kill(serve_state *state, rpc_call *call)
{
        long long signal_number = SIGTERM;
        serve_job *job = NULL;

        if (serve_param_positive(call, "signal", SIGRTMAX, &signal_number) < 0 || lock_job(state, call, &job) < 0)
                return;
        if (!job->exited)
                dsh_bash_cancel(job->cancellation, (int) signal_number);
        pthread_mutex_unlock(&state->jobs->lock);
        rpc_call_reply(call, NULL);
}

void serve_jobs_stop(serve_jobs *jobs)
{
        pthread_mutex_lock(&jobs->lock);
        jobs->stopping = true;
        for (serve_job *job = jobs->list; job; job = job->next)
                if (!job->exited)
                        dsh_bash_cancel(job->cancellation, SIGKILL);
        while (jobs->running > 0)
                pthread_cond_wait(&jobs->changed, &jobs->lock);
        pthread_mutex_unlock(&jobs->lock);
}

void serve_jobs_end(serve_jobs *jobs)
{
        serve_jobs_stop(jobs);
        pthread_mutex_lock(&jobs->lock);
        while (jobs->list) {
                serve_job *job = jobs->list;

                jobs->list = job->next;
                job_unref(job);
        }
        pthread_mutex_unlock(&jobs->lock);
        pthread_cond_destroy(&jobs->changed);
        pthread_mutex_destroy(&jobs->lock);
        free(jobs);
}
