/* SPDX-License-Identifier: MIT */
/*
 * The file guard's refusal as a typed denial (dsh_file_guard_take_denial(),
 * dsh-sandbox/denial.h): the rule the guard's decision named (file-decision.c),
 * the canonical path it refused, and the grant dsh_why() finds under the
 * guard's own policy — the record a harness's file tool shows its model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/denial.h"

#include "base/error.h"
#include "fs/file-decision.h"
#include "fs/file-guard-state.h"

int dsh_file_guard_take_denial(dsh_runtime *runtime, dsh_file_guard *guard, dsh_denial *denial_out,
                               dsh_error *error)
{
        dsh_guard_refusal refusal;
        int result;

        *denial_out = (dsh_denial) DSH_DENIAL_INIT;
        if (!runtime || !guard)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "a file guard's denial needs the runtime and the guard");
        if (!dsh_file_guard_take_refusal(guard, &refusal))
                return 0;
        denial_out->op = refusal.read ? DSH_DENIAL_READ : DSH_DENIAL_WRITE;
        denial_out->source = DSH_DENIAL_SOURCE_FILE_GUARD;
        denial_out->path = refusal.path;
        denial_out->rule = strdup(dsh_guard_rule_name(refusal.rule));
        if (!denial_out->path || !denial_out->rule) {
                dsh_denial_clear(denial_out);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        result = dsh_denial_find_grant(runtime, dsh_file_guard_policy(guard), denial_out, error);
        if (result < 0) {
                dsh_denial_clear(denial_out);
                return result;
        }
        return 1;
}
