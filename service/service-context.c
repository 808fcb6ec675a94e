/* SPDX-License-Identifier: MIT */
/*
 * The runtime shared by the requests of `serve` and `mcp`
 * (service/service-context.h).
 *
 * Every runtime the context makes comes from the caller's options, so each
 * one protects the same files the primary does (the config in use, the
 * session store, the verdict cache, the running program): a bash command
 * run through a pooled runtime is confined exactly as one run through the
 * primary.  Only the backend differs, as the call names it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service-context.h"

/* A runtime of the pool: for one backend, lent to one long call at a time. */
typedef struct pooled_runtime {
        char *backend;          /* "auto", "bwrap", "landlock" */
        dsh_runtime *runtime;
        bool lent;
} pooled_runtime;

typedef struct open_session {
        char *id;
        dsh_session *session;
} open_session;

struct service_context {
        dsh_runtime_options options;    /* the caller's, with its strings copied */
        char *config_path;
        char *launcher_directory;
        char *state_directory;
        char *cache_directory;
        char **protected_executables;
        pthread_mutex_t lock;           /* the primary runtime and the sessions */
        dsh_runtime *primary;
        pthread_mutex_t pool_lock;
        pooled_runtime *pool;
        size_t pool_count;
        open_session *sessions;
        size_t session_count;
};

static int out_of_memory(dsh_error *error)
{
        dsh_error_clear(error);
        error->code = DSH_ERROR_SYSTEM;
        error->errno_value = ENOMEM;
        error->message = strdup("out of memory");
        return -ENOMEM;
}

static int invalid_input(dsh_error *error, const char *message)
{
        dsh_error_clear(error);
        error->code = DSH_ERROR_INVALID_INPUT;
        error->message = strdup(message);
        return -EINVAL;
}

/*
 * Copies one optional path of the options, made absolute against the cwd
 * of this moment as dsh_runtime_new() makes it: every runtime of the
 * context, the ones made later included, reads the same files.  False with
 * errno set when out of memory or the cwd is gone.
 */
static bool copy_option(const char *value, char **copy_out)
{
        char *cwd;

        *copy_out = NULL;
        if (!value)
                return true;
        if (value[0] == '/')
                return (*copy_out = strdup(value)) != NULL;
        cwd = getcwd(NULL, 0);
        if (cwd && asprintf(copy_out, "%s/%s", cwd, value) < 0)
                *copy_out = NULL;
        free(cwd);
        return *copy_out != NULL;
}

static int copy_options(service_context *context, const dsh_runtime_options *options, dsh_error *error)
{
        context->options = *options;
        context->options.backend = NULL;
        context->options.config = NULL;         /* the caller's values: see make_runtime() */
        if (!copy_option(options->config_path, &context->config_path) ||
            !copy_option(options->launcher_directory, &context->launcher_directory) ||
            !copy_option(options->state_directory, &context->state_directory) ||
            !copy_option(options->cache_directory, &context->cache_directory)) {
                int errno_value = errno ? errno : ENOMEM;

                dsh_error_clear(error);
                error->code = DSH_ERROR_SYSTEM;
                error->errno_value = errno_value;
                if (asprintf(&error->message, "cannot make the runtime's paths absolute: %s", strerror(errno_value)) < 0)
                        error->message = NULL;
                return -errno_value;
        }
        if (options->protected_executables) {
                context->protected_executables = dsh_strv_copy(options->protected_executables);
                if (!context->protected_executables)
                        return out_of_memory(error);
        }
        context->options.config_path = context->config_path;
        context->options.launcher_directory = context->launcher_directory;
        context->options.state_directory = context->state_directory;
        context->options.cache_directory = context->cache_directory;
        context->options.protected_executables = context->protected_executables;
        return 0;
}

/*
 * A runtime for `backend` ("auto" or a backend's name).  Configuration
 * values given in code are the caller's only until the primary is made;
 * later runtimes take the primary's copy, which lives as long as the
 * context and is never changed once loaded.
 */
static int make_runtime(service_context *context, const char *backend, dsh_runtime **runtime_out, dsh_error *error)
{
        dsh_runtime_options options = context->options;

        if (options.config_source == DSH_RUNTIME_CONFIG_VALUES && context->primary)
                options.config = dsh_runtime_config(context->primary);
        options.backend = strcmp(backend, "auto") == 0 ? NULL : backend;
        return dsh_runtime_new(&options, runtime_out, error);
}

int service_context_new(const dsh_runtime_options *options, service_context **context_out, dsh_error *error)
{
        dsh_runtime_options defaults = DSH_RUNTIME_OPTIONS_INIT;
        service_context *context = calloc(1, sizeof(*context));
        int result;

        if (!context)
                return out_of_memory(error);
        pthread_mutex_init(&context->lock, NULL);
        pthread_mutex_init(&context->pool_lock, NULL);
        result = copy_options(context, options ? options : &defaults, error);
        if (result == 0) {
                context->options.config = options ? options->config : NULL;
                result = make_runtime(context, "auto", &context->primary, error);
                context->options.config = NULL;
        }
        if (result < 0) {
                service_context_free(context);
                return result;
        }
        *context_out = context;
        return 0;
}

void service_context_free(service_context *context)
{
        if (!context)
                return;
        for (size_t i = 0; i < context->session_count; i++) {
                dsh_session_free(context->sessions[i].session);
                free(context->sessions[i].id);
        }
        free(context->sessions);
        for (size_t i = 0; i < context->pool_count; i++) {
                dsh_runtime_free(context->pool[i].runtime);
                free(context->pool[i].backend);
        }
        free(context->pool);
        dsh_runtime_free(context->primary);
        dsh_strv_free(context->protected_executables);
        free(context->config_path);
        free(context->launcher_directory);
        free(context->state_directory);
        free(context->cache_directory);
        pthread_mutex_destroy(&context->pool_lock);
        pthread_mutex_destroy(&context->lock);
        free(context);
}

void service_lock(service_context *context)
{
        pthread_mutex_lock(&context->lock);
}

void service_unlock(service_context *context)
{
        pthread_mutex_unlock(&context->lock);
}

dsh_runtime *service_primary_runtime(service_context *context)
{
        return context->primary;
}

/* ---------------------------------------------------------- sessions -- */

/* Keeps `session` open under `id` (both taken over). */
static int keep_session(service_context *context, const char *id, dsh_session *session, dsh_error *error)
{
        open_session *grown = realloc(context->sessions, (context->session_count + 1) * sizeof(*grown));
        char *copy = strdup(id);

        if (grown)
                context->sessions = grown;
        if (!grown || !copy) {
                free(copy);
                dsh_session_free(session);
                return out_of_memory(error);
        }
        context->sessions[context->session_count++] = (open_session) { copy, session };
        return 0;
}

int service_session(service_context *context, const char *id, dsh_session **session_out, dsh_error *error)
{
        dsh_session *session;
        int result;

        for (size_t i = 0; i < context->session_count; i++) {
                if (strcmp(context->sessions[i].id, id) == 0) {
                        *session_out = context->sessions[i].session;
                        return 0;
                }
        }
        result = dsh_runtime_open_session(context->primary, id, &session, error);
        if (result == 0)
                result = keep_session(context, id, session, error);
        if (result == 0)
                *session_out = session;
        return result;
}

int service_session_create(service_context *context, const char *cwd, const char *parent_id, const char **id_out,
                           dsh_error *error)
{
        dsh_session_store *store;
        dsh_session *parent = NULL, *session;
        int result = dsh_runtime_session_store(context->primary, &store, error);

        if (result == 0 && parent_id)
                result = service_session(context, parent_id, &parent, error);
        if (result == 0)
                result = dsh_session_create(store, cwd, parent, &session, error);
        if (result == 0)
                result = keep_session(context, dsh_session_id(session), session, error);
        if (result == 0)
                *id_out = context->sessions[context->session_count - 1].id;
        return result;
}

/* -------------------------------------------------------- resolution -- */

static int check_backend(const char *backend, dsh_error *error)
{
        const char *names[] = { backend, NULL };

        if (!backend || strcmp(backend, "auto") == 0)
                return 0;
        return dsh_provider_check_backends(names, error);
}

static int resolve_locked(service_context *context, const service_policy_fields *fields, dsh_policy *policy_out,
                          dsh_error *error)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        int result = check_backend(fields->backend, error);

        if (result == 0 && fields->session_id)
                result = service_session(context, fields->session_id, &request.session, error);
        if (result < 0)
                return result;
        request.has_mode = fields->has_mode;
        request.mode = fields->mode;
        request.workspace_root = fields->root;
        request.additional_writable_roots = fields->allow_write;
        request.allowed_unix_sockets = fields->allow_unix_sockets;
        request.network = fields->network;
        request.masked_paths = fields->masked_paths;
        request.allowed_environment = fields->allowed_environment;
        return dsh_runtime_resolve(context->primary, &request, policy_out, error);
}

int service_resolve(service_context *context, const service_policy_fields *fields, dsh_policy *policy_out,
                    dsh_error *error)
{
        int result;

        service_lock(context);
        result = resolve_locked(context, fields, policy_out, error);
        service_unlock(context);
        return result;
}

/* -------------------------------------------------------------- pool -- */

int service_runtime_acquire(service_context *context, const char *backend, dsh_runtime **runtime_out,
                            dsh_error *error)
{
        pooled_runtime *grown;
        dsh_runtime *runtime;
        int result = check_backend(backend, error);

        if (result < 0)
                return result;
        backend = backend ? backend : "auto";
        pthread_mutex_lock(&context->pool_lock);
        for (size_t i = 0; i < context->pool_count; i++) {
                if (!context->pool[i].lent && strcmp(context->pool[i].backend, backend) == 0) {
                        context->pool[i].lent = true;
                        *runtime_out = context->pool[i].runtime;
                        pthread_mutex_unlock(&context->pool_lock);
                        return 0;
                }
        }
        pthread_mutex_unlock(&context->pool_lock);

        /* Made outside the pool's lock: loading the config and the store must not hold up the other calls. */
        result = make_runtime(context, backend, &runtime, error);
        if (result < 0)
                return result;
        pthread_mutex_lock(&context->pool_lock);
        grown = realloc(context->pool, (context->pool_count + 1) * sizeof(*grown));
        if (grown) {
                context->pool = grown;
                context->pool[context->pool_count] = (pooled_runtime) { strdup(backend), runtime, true };
                if (context->pool[context->pool_count].backend)
                        context->pool_count++;
                else
                        grown = NULL;
        }
        pthread_mutex_unlock(&context->pool_lock);
        if (!grown) {
                dsh_runtime_free(runtime);
                return out_of_memory(error);
        }
        *runtime_out = runtime;
        return 0;
}

void service_runtime_release(service_context *context, dsh_runtime *runtime)
{
        pthread_mutex_lock(&context->pool_lock);
        for (size_t i = 0; i < context->pool_count; i++) {
                if (context->pool[i].runtime == runtime)
                        context->pool[i].lent = false;
        }
        pthread_mutex_unlock(&context->pool_lock);
}

/* ----------------------------------------------------- the long calls -- */

int service_bash_run(service_context *context, const service_policy_fields *fields, dsh_bash_request *request,
                     dsh_bash_result *result_out, dsh_error *error)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime;
        int result;

        if (!request)
                return invalid_input(error, "a bash call needs a request");
        result = service_resolve(context, fields, &policy, error);
        if (result == 0)
                result = service_runtime_acquire(context, fields->backend, &runtime, error);
        if (result == 0) {
                request->policy = &policy;
                result = dsh_bash_run(runtime, request, result_out, error);
                request->policy = NULL;
                service_runtime_release(context, runtime);
        }
        dsh_policy_clear(&policy);
        return result;
}

int service_file_guard(service_context *context, const service_policy_fields *fields, dsh_file_guard **guard_out,
                       dsh_error *error)
{
        dsh_policy policy = DSH_POLICY_INIT;
        int result;

        service_lock(context);
        result = resolve_locked(context, fields, &policy, error);
        if (result == 0)
                result = dsh_file_guard_new(context->primary, &policy, guard_out, error);
        service_unlock(context);
        dsh_policy_clear(&policy);
        return result;
}

/* "<what>: <the error's message>", or NULL when out of memory. */
static char *warning_text(const char *what, const dsh_error *error)
{
        char *text = NULL;

        if (asprintf(&text, "%s: %s", what, error->message ? error->message : "unknown error") < 0)
                return NULL;
        return text;
}

bool service_file_guard_denial(service_context *context, const service_policy_fields *fields, dsh_file_guard *guard,
                               dsh_denial *denial_out, char **warning_out)
{
        /* dsh_runtime_record_denials() reads the policy's session id alone: the call's, as resolved. */
        dsh_policy session_only = DSH_POLICY_INIT;
        dsh_denials kept = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int taken;

        *warning_out = NULL;
        session_only.session_id = (char *) fields->session_id;
        service_lock(context);
        taken = dsh_file_guard_take_denial(context->primary, guard, denial_out, &error);
        if (taken < 0)
                *warning_out = warning_text("the refusal's record cannot be read", &error);
        dsh_error_clear(&error);
        kept.items = denial_out;
        kept.count = 1;
        if (taken > 0 && dsh_runtime_record_denials(context->primary, &session_only, "fs", &kept, &error) < 0)
                *warning_out = warning_text("the session could not keep this denial", &error);
        service_unlock(context);
        dsh_error_clear(&error);
        return taken > 0;
}
