/* SPDX-License-Identifier: MIT */
/*
 * serve's policy.why (docs/service.md): would the call's policy allow an
 * operation — dsh_why() over the policy the params resolve to, judged with
 * a runtime of the params' backend (whose /tmp the guard's decision maps,
 * as the call's command would see it).  Nothing is tried.  The answer is
 * {"allowed":true} or {"allowed":false,"denial":{...}} (the record as
 * dsh_json_encode_denial() writes it, with its grant).
 */
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/json.h"

#include "serve-internal.h"

/* `op`: write, read, metadata or connect; 0, or -1 after answering -32602. */
static int read_op(rpc_call *call, dsh_denial_op *op)
{
        const char *name = NULL;

        if (rpc_param_string(call, "op", true, &name) < 0)
                return -1;
        if (dsh_denial_op_parse(name, op) < 0 || *op == DSH_DENIAL_DNS || *op == DSH_DENIAL_HTTP)
                return rpc_call_fail_params(call, "op", "expected \"write\", \"read\", \"metadata\" or \"connect\""), -1;
        return 0;
}

static json_t *why_answer(int verdict, const dsh_denial *denial, dsh_error *error)
{
        char *text = NULL;
        json_t *record;
        int encoded;

        if (verdict == 0)
                return json_pack("{s:b}", "allowed", 1);
        encoded = dsh_json_encode_denial(denial, &text, error);
        record = service_encoded_json(encoded, text, error);
        return record ? json_pack("{s:b,s:o}", "allowed", 0, "denial", record) : NULL;
}

void serve_policy_why(serve_state *state, rpc_call *call)
{
        serve_policy fields = SERVE_POLICY_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        const char *target = NULL;
        dsh_denial_op op = DSH_DENIAL_WRITE;
        json_t *answer = NULL;
        int result;

        if (read_op(call, &op) < 0 || rpc_param_string(call, "target", true, &target) < 0 ||
            serve_param_policy(call, &fields) < 0)
                return;
        result = service_resolve(state->context, &fields.fields, &policy, &error);
        if (result == 0)
                result = service_runtime_acquire(state->context, fields.fields.backend, &runtime, &error);
        if (result == 0)
                result = dsh_why(runtime, &policy, op, target, &denial, &error);
        if (result >= 0)
                answer = why_answer(result, &denial, &error);
        if (answer)
                rpc_call_reply(call, answer);
        else
                serve_fail(call, &error);
        if (runtime)
                service_runtime_release(state->context, runtime);
        dsh_denial_clear(&denial);
        dsh_policy_clear(&policy);
        serve_policy_clear(&fields);
}
