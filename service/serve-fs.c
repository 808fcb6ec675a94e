/* SPDX-License-Identifier: MIT */
/*
 * serve's fs.* methods: the file guard (dsh-sandbox/file-guard.h) under the
 * call's policy, one guard per call, made by the context with the primary
 * runtime's protections.  The guard decides: a change outside the policy
 * is its FS_SANDBOX_DENIED, answered as -32000 with that code and text and
 * the guard's record as data.denial (kept in the call's session, surface
 * "fs"); nothing here touches the file system itself.  Each answer is the
 * operation's result as the library encodes it (a read's carries the
 * content).
 */
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/json.h"

#include "serve-internal.h"

/* One guarded operation, with the params it read. */
typedef struct fs_call {
        const char *path;
        const char *second;             /* move: the destination; edit: the old text */
        const char *text;               /* write: the content; edit: the new text */
        size_t text_length;
        bool flag;                      /* createOnly, replaceAll, recursive, noReplace */
        long long offset, length;       /* read: the range asked, -1 where not given */
} fs_call;

typedef int (*fs_operation_fn)(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result,
                               dsh_error *error);

/*
 * A refusal (FS_SANDBOX_DENIED): -32000 as before, its data carrying the
 * guard's record as `denial` (kept in the call's session too) and, when the
 * record could not be read or kept, why as `warning`.
 */
static void fail_denied(serve_state *state, rpc_call *call, const service_policy_fields *fields,
                        dsh_file_guard *guard, dsh_error *error)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error encode_error = DSH_ERROR_INIT;
        char *warning = NULL;
        json_t *members = json_object();

        if (members && service_file_guard_denial(state->context, fields, guard, &denial, &warning))
                json_object_set_new(members, "denial", service_denial_json(&denial, &encode_error));
        if (members && warning)
                json_object_set_new(members, "warning", json_string(warning));
        rpc_call_fail_sandbox_with(call, error, members);
        dsh_error_clear(error);
        dsh_error_clear(&encode_error);
        dsh_denial_clear(&denial);
        free(warning);
}

/* Makes the call's guard, runs `operation` and answers with its result. */
static void run_guarded(serve_state *state, rpc_call *call, const fs_call *operation, fs_operation_fn run)
{
        serve_policy fields = SERVE_POLICY_INIT;
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        json_t *answer = NULL;
        int done;

        if (serve_param_policy(call, &fields) < 0)
                return;
        done = service_file_guard(state->context, &fields.fields, &guard, &error);
        if (done == 0)
                done = run(guard, operation, &result, &error);
        if (done == 0)
                answer = service_file_result_json(&result, &error);
        if (answer)
                rpc_call_reply(call, answer);
        else if (guard && error.code == DSH_ERROR_FS_SANDBOX_DENIED)
                fail_denied(state, call, &fields.fields, guard, &error);
        else
                serve_fail(call, &error);
        dsh_file_result_clear(&result);
        dsh_file_guard_free(guard);
        serve_policy_clear(&fields);
}

/* `name` as a boolean flag, false when absent: 0, or -1 after answering -32602. */
static int read_flag(rpc_call *call, const char *name, bool *flag)
{
        *flag = false;
        return rpc_param_bool(call, name, false, flag) < 0 ? -1 : 0;
}

static int guard_read(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        if (operation->offset < 0 && operation->length < 0)
                return dsh_file_guard_read(guard, operation->path, result, error);
        return dsh_file_guard_read_range(guard, operation->path,
                                         operation->offset < 0 ? 0 : (unsigned long long) operation->offset,
                                         operation->length < 0 ? 0 : (size_t) operation->length, result, error);
}

/* A read's optional range: offset >= 0 and length >= 1 (the guard bounds it by the read limit). */
static int read_range(rpc_call *call, fs_call *operation)
{
        int offset_given, length_given;

        operation->offset = operation->length = -1;
        offset_given = rpc_param_integer(call, "offset", false, &operation->offset);
        if (offset_given < 0)
                return -1;
        if (offset_given == 0 && operation->offset < 0) {
                rpc_call_fail_params(call, "offset", "expected a whole number of bytes, 0 or more");
                return -1;
        }
        length_given = rpc_param_integer(call, "length", false, &operation->length);
        if (length_given < 0)
                return -1;
        if (length_given == 0 && (operation->length < 1 || operation->length > 1LL << 30)) {
                rpc_call_fail_params(call, "length", "expected a whole number of bytes from 1 to 1073741824");
                return -1;
        }
        return 0;
}

static int guard_write(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_write(guard, operation->path, operation->text, operation->text_length,
                                    operation->flag ? DSH_FILE_WRITE_CREATE_ONLY : 0, result, error);
}

static int guard_edit(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_edit(guard, operation->path, operation->second, operation->text,
                                   operation->flag ? DSH_FILE_EDIT_ALL : 0, result, error);
}

static int guard_mkdir(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_mkdir(guard, operation->path, operation->flag ? DSH_FILE_MKDIR_PARENTS : 0, result,
                                    error);
}

static int guard_remove(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_remove(guard, operation->path, operation->flag ? DSH_FILE_REMOVE_RECURSIVE : 0, result,
                                     error);
}

static int guard_move(dsh_file_guard *guard, const fs_call *operation, dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_move(guard, operation->path, operation->second,
                                   operation->flag ? DSH_FILE_MOVE_NO_REPLACE : 0, result, error);
}

void serve_fs_read(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "path", true, &operation.path) == 0 && read_range(call, &operation) == 0)
                run_guarded(state, call, &operation, guard_read);
}

void serve_fs_write(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "path", true, &operation.path) == 0 &&
            rpc_param_text(call, "content", true, &operation.text, &operation.text_length) == 0 &&
            read_flag(call, "createOnly", &operation.flag) == 0)
                run_guarded(state, call, &operation, guard_write);
}

/* The old text must be non-empty (rpc_param_string says so); the new one may be empty: a deletion. */
void serve_fs_edit(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "path", true, &operation.path) == 0 &&
            rpc_param_string(call, "oldString", true, &operation.second) == 0 &&
            rpc_param_text(call, "newString", true, &operation.text, &operation.text_length) == 0 &&
            read_flag(call, "replaceAll", &operation.flag) == 0) {
                /* The guard's edit takes C strings: a NUL would cut the new text short, silently. */
                if (strlen(operation.text) != operation.text_length)
                        rpc_call_fail_params(call, "newString", "an edit cannot write a NUL byte (use fs.write)");
                else
                        run_guarded(state, call, &operation, guard_edit);
        }
}

void serve_fs_mkdir(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "path", true, &operation.path) == 0 &&
            read_flag(call, "recursive", &operation.flag) == 0)
                run_guarded(state, call, &operation, guard_mkdir);
}

void serve_fs_remove(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "path", true, &operation.path) == 0 &&
            read_flag(call, "recursive", &operation.flag) == 0)
                run_guarded(state, call, &operation, guard_remove);
}

void serve_fs_move(serve_state *state, rpc_call *call)
{
        fs_call operation = { 0 };

        if (rpc_param_string(call, "source", true, &operation.path) == 0 &&
            rpc_param_string(call, "destination", true, &operation.second) == 0 &&
            read_flag(call, "noReplace", &operation.flag) == 0)
                run_guarded(state, call, &operation, guard_move);
}
