/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox serve`: the method table over the JSON-RPC transport, and
 * the quick methods (sessions, policy, confine, probe) and bash.run; the
 * params the methods share are read by serve-params.c.  docs/service.md is
 * the protocol as a client sees it.
 *
 * Who is trusted.  The client is the harness: the service runs unconfined
 * on its behalf, as the `dsh-sandbox` command line does, and its params
 * (a root, an extra writable root, an explicit mode, a registered root) are
 * the harness's choices, exactly as the CLI's options are.  What is not
 * trusted is what runs confined (a bash command, a job): it is hostile and
 * may be root.  So every confined call goes through the context's runtimes
 * (service/service-context.h), which carry every protection the runtime
 * promises (the sandbox's own files, the protected subpaths, the runners);
 * nothing here spawns, writes or resolves on its own, and nothing grants
 * more than the call's params say:
 *   - a denial is a denial: the file guard's FS_SANDBOX_DENIED is the
 *     answer, and a command's denial is its result, never retried wider;
 *   - an escalation runs wider only when the client answers approval/request
 *     with {"approved": true}; anything else, an error, no answer within the
 *     bound or the end of input is a rejection (the bash tool's text), and a
 *     call cancelled meanwhile ends cancelled: nothing runs either way; a job
 *     cannot escalate at all, since no one is there to approve it;
 *   - a param this method does not know is refused (-32602) rather than
 *     ignored: a misspelt `sesionId` must not turn a session's call (whose
 *     mode may be narrower than the default) into an agentless one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsh-sandbox/json.h"
#include "dsh-sandbox/provider.h"

#include "serve-internal.h"
#include "serve-params.h"
#include "serve.h"
#include "stop-watch.h"

/* ---------------------------------------------------------- sessions -- */

struct serve_registration {
        long long id;
        char *session_id;
        uint64_t registration;
        serve_registration *next;
};

/* One operation on an open session, under the context's lock; `data` is the method's. */
typedef int (*session_operation_fn)(serve_state *state, dsh_session *session, void *data, dsh_error *error);

/*
 * Reads `sessionId` and runs `operation` on that session (opened once and
 * kept by the context) under the context's lock.  Returns its result (0, or
 * a negative errno with `error` set), or 1 after answering -32602 for the
 * param (the call has ended then).
 */
static int on_session(serve_state *state, rpc_call *call, session_operation_fn operation, void *data,
                      dsh_error *error)
{
        dsh_session *session = NULL;
        const char *id = NULL;
        int result;

        if (rpc_param_string(call, "sessionId", true, &id) < 0)
                return 1;
        service_lock(state->context);
        result = service_session(state->context, id, &session, error);
        if (result == 0)
                result = operation(state, session, data, error);
        service_unlock(state->context);
        return result;
}

/* Answers `answer` (stolen) when `result` is 0, else the error; a call on_session ended (1) is left alone. */
static void answer_session(rpc_call *call, int result, json_t *answer, dsh_error *error)
{
        if (result == 0)
                rpc_call_reply(call, answer);
        else
                json_decref(answer);
        if (result < 0)
                serve_fail(call, error);
}

static void session_create(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        const char *cwd = NULL, *parent = NULL, *id = NULL;
        json_t *answer = NULL;
        int result;

        if (rpc_param_string(call, "cwd", true, &cwd) < 0 || rpc_param_string(call, "parentId", false, &parent) < 0)
                return;
        service_lock(state->context);
        result = service_session_create(state->context, cwd, parent, &id, &error);
        /* The id is the context's, valid under its lock: it is copied into the answer here. */
        if (result == 0)
                answer = json_pack("{s:s}", "sessionId", id);
        service_unlock(state->context);
        answer_session(call, result, answer, &error);
}

static int set_mode(serve_state *state, dsh_session *session, void *data, dsh_error *error)
{
        (void) state;
        return dsh_session_set_mode(session, *(const dsh_mode *) data, NULL, error);
}

static void session_set_mode(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_mode mode;

        if (serve_param_mode(call, "mode", true, &mode) == 0)
                answer_session(call, on_session(state, call, set_mode, &mode, &error), NULL, &error);
}

static int encode_session(serve_state *state, dsh_session *session, void *data, dsh_error *error)
{
        dsh_runtime *runtime = service_primary_runtime(state->context);
        dsh_mode default_mode = dsh_policy_service_default_mode(dsh_runtime_policy_service(runtime));
        /* Another process may have appended (the CLI's `session mode`): the log is read again. */
        int result = dsh_session_refresh(session, error);

        return result < 0 ? result : dsh_json_encode_session(session, default_mode, data, error);
}

static void session_get(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result = on_session(state, call, encode_session, &text, &error);

        if (result <= 0)
                serve_reply_encoded(call, result, text, &error);
}

/* The session's kept denials (dsh_runtime_session_denials(): the store on disk, whoever recorded them). */
static int encode_session_denials(serve_state *state, dsh_session *session, void *data, dsh_error *error)
{
        dsh_session_denials denials = DSH_SESSION_DENIALS_INIT;
        const char *id = dsh_session_id(session);
        int result = dsh_runtime_session_denials(service_primary_runtime(state->context), id, &denials, error);

        if (result == 0)
                result = dsh_json_encode_session_denials(id, &denials, data, error);
        dsh_session_denials_clear(&denials);
        return result;
}

static void session_denials(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result = on_session(state, call, encode_session_denials, &text, &error);

        if (result <= 0)
                serve_reply_encoded(call, result, text, &error);
}

/*
 * A registration lasts as long as the session handle the context keeps
 * open, so for the life of the service (or until unregistered): runtime-only,
 * never in the log, as the policy service defines it.  The root is the
 * harness's to grant; every resolution still goes through the runtime, whose
 * backends refuse a root that holds the sandbox's own files or a runner.
 */
/* session.registerWritableRoot's operation: `entry` joins the list, and its id is copied out, under the lock. */
typedef struct registering {
        const char *path;
        serve_registration *entry;
        long long id;
} registering;

static int register_root(serve_state *state, dsh_session *session, void *data, dsh_error *error)
{
        registering *request = data;
        serve_registration *entry = request->entry;
        int result = dsh_session_register_writable_root(session, request->path, &entry->registration, error);

        if (result == 0 && !(entry->session_id = strdup(dsh_session_id(session)))) {
                dsh_session_dispose_writable_root(session, entry->registration);
                return service_error_set(error, ENOMEM, "%s", strerror(ENOMEM));
        }
        if (result == 0) {
                entry->id = request->id = ++state->next_registration_id;
                entry->next = state->registrations;
                state->registrations = entry;
        }
        return result;
}

static void session_register_writable_root(serve_state *state, rpc_call *call)
{
        registering request = { 0 };
        dsh_error error = DSH_ERROR_INIT;
        int result;

        if (rpc_param_string(call, "path", true, &request.path) < 0)
                return;
        request.entry = calloc(1, sizeof(*request.entry));
        if (!request.entry) {
                service_error_set(&error, ENOMEM, "%s", strerror(ENOMEM));
                serve_fail(call, &error);
                return;
        }
        result = on_session(state, call, register_root, &request, &error);
        answer_session(call, result, result == 0 ? json_pack("{s:I}", "registrationId", (json_int_t) request.id) : NULL,
                       &error);
        if (result != 0)
                free(request.entry);
}

/* Under the context's lock: the entry `id` names, unlinked from the list, or NULL. */
static serve_registration *take_registration(serve_state *state, long long id)
{
        for (serve_registration **link = &state->registrations; *link; link = &(*link)->next)
                if ((*link)->id == id) {
                        serve_registration *entry = *link;

                        *link = entry->next;
                        return entry;
                }
        return NULL;
}

static void session_unregister_writable_root(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;
        serve_registration *entry;
        long long id = 0;
        int result;

        if (rpc_param_integer(call, "registrationId", true, &id) < 0)
                return;
        service_lock(state->context);
        entry = take_registration(state, id);
        result = entry ? service_session(state->context, entry->session_id, &session, &error) : -ENOENT;
        if (result == 0)
                dsh_session_dispose_writable_root(session, entry->registration);
        service_unlock(state->context);
        if (!entry)
                rpc_call_fail_params(call, "registrationId", "no such registration (never made, or already removed)");
        else if (result < 0)
                serve_fail(call, &error);
        else
                rpc_call_reply(call, NULL);
        if (entry)
                free(entry->session_id);
        free(entry);
}

/* ------------------------------------------------------------ policy -- */

static void policy_resolve(serve_state *state, rpc_call *call)
{
        serve_policy fields = SERVE_POLICY_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result;

        if (serve_param_policy(call, &fields) < 0)
                return;
        result = service_resolve(state->context, &fields.fields, &policy, &error);
        if (result == 0)
                result = dsh_json_encode_policy(&policy, &text, &error);
        serve_reply_encoded(call, result, text, &error);
        dsh_policy_clear(&policy);
        serve_policy_clear(&fields);
}

static int context_text(serve_state *state, dsh_session *session, void *data, dsh_error *error)
{
        dsh_policy_service *service = dsh_runtime_policy_service(service_primary_runtime(state->context));

        return dsh_policy_service_context(service, session, data, error);
}

static void policy_context(serve_state *state, rpc_call *call)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int result = on_session(state, call, context_text, &text, &error);

        answer_session(call, result, result == 0 ? json_pack("{s:o}", "text", text ? json_string(text) : json_null())
                                                 : NULL,
                       &error);
        free(text);
}

/* ----------------------------------------------------------- sandbox -- */

/* The facts a confined call of `argv` would get, from a runtime of the call's backend. */
static int confine_facts(serve_state *state, const char *backend, char **argv, const dsh_policy *policy, char **text,
                         dsh_error *error)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_runtime *runtime = NULL;
        int result = service_runtime_acquire(state->context, backend, &runtime, error);

        if (result == 0)
                result = dsh_provider_confine(dsh_runtime_provider(runtime), argv, policy, &facts, error);
        if (runtime)
                service_runtime_release(state->context, runtime);
        if (result == 0)
                result = dsh_json_encode_confined_argv(&facts, text, error);
        dsh_confined_argv_clear(&facts);
        return result;
}

static void sandbox_confine(serve_state *state, rpc_call *call)
{
        serve_policy fields = SERVE_POLICY_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char **argv = NULL, *text = NULL;
        int result;

        if (serve_param_policy(call, &fields) < 0 || rpc_param_string_array(call, "argv", true, &argv) < 0) {
                serve_policy_clear(&fields);
                return;
        }
        result = service_resolve(state->context, &fields.fields, &policy, &error);
        if (result == 0 && !argv[0])
                rpc_call_fail_params(call, "argv", "expected at least one word");
        else if (result == 0 && !dsh_mode_is_confined(policy.mode))
                rpc_call_fail_params(call, "mode", "danger-full-access needs no confinement: spawn the argv as it is");
        else if (result == 0 && (result = confine_facts(state, fields.fields.backend, argv, &policy, &text, &error)) == 0)
                serve_reply_encoded(call, result, text, &error);
        else
                serve_fail(call, &error);
        dsh_strv_free(argv);
        dsh_policy_clear(&policy);
        serve_policy_clear(&fields);
}

/* A probe runs confined `true`s for up to the probe timeout: on a runtime of its own, never under the lock. */
static void sandbox_probe(serve_state *state, rpc_call *call)
{
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        const char *backend = NULL;
        char *text = NULL;
        int result;

        if (serve_param_backend(call, &backend) < 0)
                return;
        result = service_runtime_acquire(state->context, backend, &runtime, &error);
        if (result == 0)
                result = dsh_provider_probe(dsh_runtime_provider(runtime), &report, &error);
        if (runtime)
                service_runtime_release(state->context, runtime);
        if (result == 0)
                result = dsh_json_encode_probe_report(&report, &text, &error);
        serve_reply_encoded(call, result, text, &error);
        dsh_probe_report_clear(&report);
}

/* -------------------------------------------------------------- bash -- */

/* A NULL-terminated list as a JSON array of strings ([] for NULL), or NULL when one is not UTF-8 or memory ran out. */
static json_t *string_array(char *const *list)
{
        json_t *array = json_array();

        for (; array && list && *list; list++)
                if (json_array_append_new(array, json_string(*list)) < 0) {
                        json_decref(array);
                        return NULL;
                }
        return array;
}

/*
 * approval/request's params: {command, mode, justification}, exactly what is
 * granted besides the mode ({additionalWrite, additionalHosts}: the
 * canonical roots and the host patterns, [] when none) and, for the prompt,
 * where and from what.
 */
static json_t *approval_params(const dsh_bash_escalation *escalation)
{
        json_t *params = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o?, s:o?}", "command", escalation->command, "mode",
                                   dsh_mode_name(escalation->requested_mode), "justification",
                                   escalation->justification, "currentMode",
                                   dsh_mode_name(escalation->current_mode), "workspaceRoot",
                                   escalation->workspace_root, "additionalWrite",
                                   string_array(escalation->additional_write), "additionalHosts",
                                   string_array(escalation->additional_hosts));

        /* A list that could not be carried must not vanish from what the user approves: nothing is asked. */
        if (params && (!json_is_array(json_object_get(params, "additionalWrite")) ||
                       !json_is_array(json_object_get(params, "additionalHosts")))) {
                json_decref(params);
                return NULL;
        }
        if (params && escalation->session_id &&
            json_object_set_new(params, "sessionId", json_string(escalation->session_id)) < 0) {
                json_decref(params);
                return NULL;
        }
        return params;
}

/*
 * The approval channel of bash.run: the client is asked.  Only a result
 * whose "approved" is the JSON value true approves; anything else — false,
 * a missing member, an error answer, no answer within the bound, the end of
 * input, the call cancelled meanwhile — is not approval.  A failure to ask
 * is returned as an error, which the bash tool counts as not approved and
 * reports as a warning of the result.
 */
int serve_approve_through_client(const dsh_bash_escalation *escalation, void *data, dsh_error *error)
{
        const serve_approval_channel *channel = data;
        json_t *params = approval_params(escalation), *answer = NULL, *refusal = NULL;
        int result;

        if (!params)
                return service_error_set(error, EINVAL, "approval/request could not carry the escalation as JSON");
        result = rpc_server_request(channel->server, channel->call, "approval/request", params,
                                    channel->timeout_ms, &answer, &refusal);
        if (result == 0)
                result = json_is_true(json_object_get(answer, "approved")) ? 1 : 0;
        else if (result == -EPROTO)
                service_error_set(error, EPROTO, "the client answered approval/request with an error: %s",
                               json_string_value(json_object_get(refusal, "message")) ?: "(no message)");
        else if (result == -ETIMEDOUT)
                service_error_set(error, ETIMEDOUT, "the client did not answer approval/request within %ld ms",
                                channel->timeout_ms);
        else
                service_error_set(error, -result, "approval/request could not be asked: %s", strerror(-result));
        json_decref(answer);
        json_decref(refusal);
        return result;
}

/*
 * Kills the command of every bash.run (SIGKILL to its group) and waits
 * until each call has seen its command gone — at most SERVE_STOP_WAIT_MS: a
 * call still waiting for its approval has no command, and its wait for the
 * client is not the bash tool's to cut short.
 */
static void running_stop(serve_state *state)
{
        struct timespec deadline;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += SERVE_STOP_WAIT_MS / 1000;
        running_commands_kill(&state->running, NULL);
        running_commands_wait(&state->running, &deadline);
}

/*
 * A `cwd` that is not a directory is a bad parameter: answered -32602 on
 * "cwd" before anything is asked or run.  True once answered.  (Every
 * other refusal of the policy is the run's own, answered as it always is.)
 */
static bool bad_cwd(serve_state *state, rpc_call *call, const serve_policy *fields, const char *cwd)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        bool refused = false;

        if (!cwd)
                return false;
        if (service_resolve(state->context, &fields->fields, &policy, &error) == 0 &&
            dsh_bash_check_cwd(&policy, cwd, &error) < 0 && error.code == DSH_ERROR_INVALID_INPUT) {
                serve_fail_cwd(call, &error);
                refused = true;
        }
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        return refused;
}

static void bash_run(serve_state *state, rpc_call *call)
{
        serve_policy fields = SERVE_POLICY_INIT;
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_bash_cancellation *cancellation = NULL;
        dsh_error error = DSH_ERROR_INIT;
        serve_approval_channel channel = { rpc_call_server(call), call, state->approval_timeout_ms };
        char **additional_write = NULL, **additional_hosts = NULL;
        long long timeout_ms = 0;
        dsh_mode requested;
        json_t *answer = NULL;
        int ran;

        if (serve_param_policy(call, &fields) < 0 || rpc_param_string(call, "command", true, &request.command) < 0 ||
            serve_param_positive(call, "timeoutMs", INT_MAX, &timeout_ms) < 0 ||
            serve_param_mode(call, "sandboxPermissions", false, &requested) < 0 ||
            rpc_param_string(call, "sandboxPermissions", false, &request.sandbox_permissions) < 0 ||
            rpc_param_string(call, "justification", false, &request.justification) < 0 ||
            rpc_param_string_array(call, "additionalWrite", false, &additional_write) < 0 ||
            rpc_param_string_array(call, "additionalHosts", false, &additional_hosts) < 0 ||
            rpc_param_string(call, "cwd", false, &request.cwd) < 0 || bad_cwd(state, call, &fields, request.cwd)) {
                dsh_strv_free(additional_write);
                dsh_strv_free(additional_hosts);
                serve_policy_clear(&fields);
                return;
        }
        request.additional_write = additional_write;
        request.additional_hosts = additional_hosts;
        request.timeout_ms = (long) timeout_ms;
        request.approve = serve_approve_through_client;
        request.approve_data = &channel;
        ran = dsh_bash_cancellation_new(&cancellation, &error);
        if (ran == 0) {
                running_command running = { .cancellation = cancellation, .call = call };

                request.cancellation = cancellation;
                running_commands_enter(&state->running, &running);
                ran = service_bash_run(state->context, &fields.fields, &request, &result, &error);
                running_commands_leave(&state->running, &running);
        }
        if (ran == 0)
                answer = service_bash_result_json(&result, &error);
        if (answer)
                rpc_call_reply(call, answer);
        else
                serve_fail(call, &error);
        dsh_bash_result_clear(&result);
        dsh_bash_cancellation_free(cancellation);
        dsh_strv_free(additional_write);
        dsh_strv_free(additional_hosts);
        serve_policy_clear(&fields);
}

/* ------------------------------------------------------------- table -- */

typedef void (*serve_method_fn)(serve_state *state, rpc_call *call);

typedef struct serve_method {
        const char *name;
        serve_method_fn handle;
        bool confines;                  /* takes the policy fields besides its own */
        const char *const *params;      /* its own params, NULL-terminated */
} serve_method;

#define PARAMS(...) ((const char *const[]) { __VA_ARGS__, NULL })
#define NO_PARAMS ((const char *const[]) { NULL })

static const char *const policy_params[] = { "sessionId", "mode", "root", "allowWrite", "backend",
                                             "allowUnixSockets", "network", "maskedPaths", "allowEnvironment",
                                             NULL };

static const serve_method serve_methods[] = {
        { "session.create", session_create, false, PARAMS("cwd", "parentId") },
        { "session.setMode", session_set_mode, false, PARAMS("sessionId", "mode") },
        { "session.get", session_get, false, PARAMS("sessionId") },
        { "session.denials", session_denials, false, PARAMS("sessionId") },
        { "session.registerWritableRoot", session_register_writable_root, false, PARAMS("sessionId", "path") },
        { "session.unregisterWritableRoot", session_unregister_writable_root, false, PARAMS("registrationId") },
        { "policy.resolve", policy_resolve, true, NO_PARAMS },
        { "policy.context", policy_context, false, PARAMS("sessionId") },
        { "policy.why", serve_policy_why, true, PARAMS("op", "target") },
        { "sandbox.confine", sandbox_confine, true, PARAMS("argv") },
        { "sandbox.probe", sandbox_probe, false, PARAMS("backend") },
        { "bash.run", bash_run, true, PARAMS("command", "timeoutMs", "sandboxPermissions", "justification", "cwd",
                                                    "additionalWrite", "additionalHosts") },
        { "fs.read", serve_fs_read, true, PARAMS("path", "offset", "length") },
        { "fs.write", serve_fs_write, true, PARAMS("path", "content", "createOnly") },
        { "fs.edit", serve_fs_edit, true, PARAMS("path", "oldString", "newString", "replaceAll") },
        { "fs.mkdir", serve_fs_mkdir, true, PARAMS("path", "recursive") },
        { "fs.remove", serve_fs_remove, true, PARAMS("path", "recursive") },
        { "fs.move", serve_fs_move, true, PARAMS("source", "destination", "noReplace") },
        { "job.start", serve_job_start, true, PARAMS("command", "timeoutMs", "cwd", "sandboxPermissions",
                                                      "justification", "additionalWrite", "additionalHosts") },
        { "job.read", serve_job_read, false, PARAMS("jobId", "offset") },
        { "job.wait", serve_job_wait, false, PARAMS("jobId", "timeoutMs") },
        { "job.kill", serve_job_kill, false, PARAMS("jobId", "signal") },
};

#define SERVE_METHOD_COUNT (sizeof(serve_methods) / sizeof(serve_methods[0]))

static const serve_method *find_method(const char *name)
{
        for (size_t i = 0; i < SERVE_METHOD_COUNT; i++)
                if (strcmp(serve_methods[i].name, name) == 0)
                        return &serve_methods[i];
        return NULL;
}

static bool listed(const char *const *names, const char *name)
{
        for (; *names; names++)
                if (strcmp(*names, name) == 0)
                        return true;
        return false;
}

/* Params are an object (or absent) of the members the method knows: 0, or -1 after answering -32602. */
static int check_params(rpc_call *call, const serve_method *method)
{
        json_t *params = rpc_call_params(call), *value;
        const char *key;
        char what[128];

        if (!params || json_is_null(params))
                return 0;
        if (!json_is_object(params))
                return rpc_call_fail_params(call, "params", "expected an object of named members"), -1;
        json_object_foreach(params, key, value) {
                if (listed(method->params, key) || (method->confines && listed(policy_params, key)))
                        continue;
                snprintf(what, sizeof(what), "unknown parameter of %s", method->name);
                return rpc_call_fail_params(call, key, what), -1;
        }
        return 0;
}

static void on_request(rpc_call *call, void *data)
{
        const char *name = rpc_call_method(call);
        const serve_method *method = find_method(name);
        char message[160];

        if (!method) {
                snprintf(message, sizeof(message), "method not found: %.120s", name);
                rpc_call_fail(call, RPC_METHOD_NOT_FOUND, message, NULL);
                return;
        }
        if (rpc_call_cancelled(call)) {
                rpc_call_fail(call, RPC_REQUEST_CANCELLED, "request cancelled", NULL);
                return;
        }
        if (check_params(call, method) == 0)
                method->handle(data, call);
}

/* `$/cancelRequest` {id}: the request's own handler answers (its result says cancelled). */
static void on_notification(rpc_server *server, const char *method, json_t *params, void *data)
{
        json_t *id = params ? json_object_get(params, "id") : NULL;

        (void) data;
        if (strcmp(method, "$/cancelRequest") == 0 && id)
                rpc_server_cancel(server, id);
}

static void forget_registrations(serve_state *state)
{
        while (state->registrations) {
                serve_registration *entry = state->registrations;

                state->registrations = entry->next;
                free(entry->session_id);
                free(entry);
        }
}

/* ------------------------------------------------------------- stop -- */

/*
 * End of input: the client can no longer wait for, read or kill a job, so
 * every job still running is killed now, before the server waits for the
 * requests in flight — a job.wait among them answers with its job's end
 * instead of holding the server up for as long as the job would run.
 */
static void on_input_end(rpc_server *server, void *data)
{
        serve_state *state = data;

        (void) server;
        serve_jobs_stop(state->jobs);
}

/*
 * A stop (a signal, through service/stop-watch.h): no command may outlive
 * the process, so every bash.run's command and every job is killed and
 * waited for before the watcher ends the process by the signal.
 */
static void stop_everything(void *data)
{
        serve_state *state = data;

        running_stop(state);
        serve_jobs_stop(state->jobs);
}

int serve_run(service_context *context, const serve_options *options, dsh_error *error)
{
        serve_state state = { .context = context, .approval_timeout_ms = options->approval_timeout_ms };
        rpc_handlers handlers = { .on_request = on_request, .on_notification = on_notification, .data = &state,
                                  .on_input_end = on_input_end };
        rpc_server *server = NULL;
        service_stop_watch watch = { .stop_fd = -1, .quit = { -1, -1 } };
        int result;

        running_commands_init(&state.running);
        result = serve_jobs_new(context, &state.jobs, error);
        if (state.approval_timeout_ms <= 0)
                state.approval_timeout_ms = SERVE_APPROVAL_TIMEOUT_MS;
        if (result == 0 && (result = service_stop_watch_start(&watch, options->stop_fd, stop_everything, &state)) < 0)
                service_error_set(error, -result, "cannot watch for a stop: %s", strerror(-result));
        if (result == 0 && !(server = rpc_server_new(options->input_fd, options->output_fd, &handlers)))
                result = service_error_set(error, ENOMEM, "%s", strerror(ENOMEM));
        if (result == 0 && (result = rpc_server_run(server)) < 0)
                service_error_set(error, -result, "cannot read the requests: %s", strerror(-result));
        /* Every request has answered; what still runs is a job no one waits for: it ends with the service. */
        service_stop_watch_end(&watch);
        if (state.jobs)
                serve_jobs_end(state.jobs);
        rpc_server_free(server);
        forget_registrations(&state);
        running_commands_destroy(&state.running);
        return result;
}
