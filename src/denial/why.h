/* SPDX-License-Identifier: MIT */
/*
 * dsh_why()'s decision without its grant, for dsh_denial_find_grant()
 * (grant.c), which asks it again over a policy with the candidate added:
 * the grant is what this answer allows, never a guess.  why.c.
 */
#ifndef DSH_SANDBOX_DENIAL_WHY_H
#define DSH_SANDBOX_DENIAL_WHY_H

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/file-guard.h"
#include "base/util.h"

/*
 * As dsh_why(), but the denial's grant is left none.  Returns 0 allowed,
 * 1 denied (`denial_out` filled), or a negative errno with `error` set.
 */
DSH_INTERNAL int dsh_why_decide(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial_op op,
                                const char *target, dsh_denial *denial_out, dsh_error *error);

/*
 * The same, a path or a unix socket judged by `guard`, made for `policy`
 * by dsh_file_guard_new() (NULL: one is made for this question alone).
 */
DSH_INTERNAL int dsh_why_decide_by(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard,
                                   dsh_denial_op op, const char *target, dsh_denial *denial_out,
                                   dsh_error *error);

/*
 * Splits a connect target "host:port", "IPV4:PORT" or "[IPV6]:PORT" into
 * `host` (`size` bytes; brackets dropped) and `*port` (1..65535; 0 allowed
 * when `port_optional` and none is given).  Returns 0, or -EINVAL with
 * `*reason` a static sentence.
 */
DSH_INTERNAL int dsh_why_split_host_port(const char *target, bool port_optional, char *host, size_t size,
                                         int *port, const char **reason);

/*
 * The network rule refusing a TCP connect to `host` on `port` under
 * `policy` (port 0: a DNS query for the name, allowed when some pattern
 * names it), or NULL in `*rule_out` when it is allowed.  Returns 0 or a
 * negative errno with `error` set (the policy's own refusal).
 */
DSH_INTERNAL int dsh_why_network_rule(const dsh_policy *policy, const char *host, int port, const char **rule_out,
                                      dsh_error *error);

/* "host:port" ("[a::b]:port" for an IPv6 address; "host" for port 0): a new string, or NULL. */
DSH_INTERNAL char *dsh_why_host_port_text(const char *host, int port);

#endif
