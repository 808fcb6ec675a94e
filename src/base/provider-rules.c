/* SPDX-License-Identifier: MIT */
/* The provider settings' rules the config loader shares: see provider-rules.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/provider-rules.h"

int dsh_runner_command_check(char *const *command, char *const *signatures, const char **key_out,
                             dsh_error *error)
{
        const char *key = "runnerCommand";
        int result = 0;

        if (signatures && !command) {
                key = "runnerFailureSignatures";
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                       "sandbox-local: runnerFailureSignatures requires runnerCommand");
        } else if (command && dsh_strv_length(signatures) == 0) {
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                       "sandbox-local: runnerCommand requires at least one runnerFailureSignatures "
                                       "entry");
        }
        for (char *const *signature = command ? signatures : NULL; result == 0 && signature && *signature; signature++)
                if ((*signature)[0] == '\0' || strpbrk(*signature, "\r\n")) {
                        key = "runnerFailureSignatures";
                        result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                               "sandbox-local: runnerFailureSignatures entries must be non-empty "
                                               "single-line strings");
                }
        if (result == 0 && command && !command[0])
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                       "sandbox-local: runnerCommand must name a program");
        for (char *const *word = command; result == 0 && word && *word; word++)
                if ((*word)[0] == '\0')
                        result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                               "sandbox-local: runnerCommand entries must be non-empty strings");
        if (result < 0 && key_out)
                *key_out = key;
        return result;
}

int dsh_probe_timeout_check(double timeout_ms, long *checked_out, dsh_error *error)
{
        if (!isfinite(timeout_ms) || timeout_ms <= 0 || timeout_ms > (double) INT_MAX)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "sandbox-local: probeTimeoutMs must be a positive finite number");
        *checked_out = (long) ceil(timeout_ms);
        return 0;
}
