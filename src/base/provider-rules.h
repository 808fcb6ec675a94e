/* SPDX-License-Identifier: MIT */
/*
 * The rules of the provider's settings that the deployment configuration
 * also enforces, each with its upstream text: one copy beneath both the
 * provider (its setters) and the config loader (src/policy/config.c), which
 * stand side by side and do not include each other.  The backend chain's
 * rule is public: dsh_provider_check_backends() (dsh-sandbox/provider.h).
 */
#ifndef DSH_SANDBOX_PROVIDER_RULES_H
#define DSH_SANDBOX_PROVIDER_RULES_H

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/*
 * The operator override's rules with the upstream texts, the one copy the
 * provider (dsh_provider_set_runner_command) and the config loader share:
 * signatures need a command, a command needs a signature, signatures are
 * non-empty single lines, a command names a program and has no empty word.
 * Both NULL is no override and passes.  Returns 0, or -EINVAL with `error`
 * set and `*key_out` (may be NULL) the config key at fault, "runnerCommand"
 * or "runnerFailureSignatures".  provider-rules.c.
 */
DSH_INTERNAL int dsh_runner_command_check(char *const *command, char *const *signatures, const char **key_out,
                                          dsh_error *error);

/*
 * The probe bound's rule with its upstream text, shared by the provider and
 * the config loader: positive, finite and at most INT_MAX milliseconds.
 * Returns 0 with `*checked_out` the bound rounded up to a whole millisecond,
 * or -EINVAL with "sandbox-local: probeTimeoutMs must be a positive finite
 * number".  provider-rules.c.
 */
DSH_INTERNAL int dsh_probe_timeout_check(double timeout_ms, long *checked_out, dsh_error *error);

#endif
