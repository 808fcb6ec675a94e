/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's escalation (docs/bash-tool.md, "Escalation"): what a call
 * asks for beyond its policy — a wider mode, extra writable roots, extra
 * allowed hosts — checked before anything is asked or run, shown to the
 * approval channel exactly as it will be granted, and granted into the
 * policy copy of that one call only.
 */
#ifndef DSH_SANDBOX_BASH_ESCALATION_H
#define DSH_SANDBOX_BASH_ESCALATION_H

#include <stdbool.h>

#include "dsh-sandbox/bash-tool.h"
#include "base/util.h"

typedef struct dsh_bash_grant {
        bool asked;                     /* the request asks for an escalation (sandbox_permissions, extra roots or hosts) */
        bool needs_approval;            /* it changes the call's policy: the approval channel decides */
        dsh_mode current;               /* the call's mode without the grant */
        dsh_mode requested;             /* the mode once granted (the current one without sandbox_permissions) */
        char **additional_write;        /* canonical absolute directories; NULL: none */
        char **additional_hosts;        /* allow-list patterns, each dsh_network_pattern_check()ed; NULL: none */
} dsh_bash_grant;

#define DSH_BASH_GRANT_INIT { false, false, DSH_MODE_READ_ONLY, DSH_MODE_READ_ONLY, NULL, NULL }

/*
 * Checks the request's escalation against `policy` (the call's, resolved)
 * and fills `grant`, which the caller clears with dsh_bash_grant_clear() in
 * every case.  Returns 0, or -EINVAL with `error` set to one of the
 * INVALID_INPUT texts of dsh_bash_run() (-ENOMEM: SYSTEM).  Nothing is
 * asked and nothing runs on a failure.
 */
DSH_INTERNAL int dsh_bash_grant_check(const dsh_bash_request *request, const dsh_policy *policy,
                                      dsh_bash_grant *grant, dsh_error *error);

/*
 * What the approval channel is shown: the escalation with the grant's
 * fields borrowed from `grant` (valid while it lives).
 */
DSH_INTERNAL dsh_bash_escalation dsh_bash_grant_escalation(const dsh_bash_grant *grant,
                                                           const dsh_bash_request *request,
                                                           const dsh_policy *policy);

/*
 * Grants it, once approved, into `policy` (the call's own copy): the
 * requested mode; the extra roots appended to the additional writable
 * roots; the extra hosts turning a network "off" into an allow-list of
 * exactly those hosts (its allowed local ports kept), or appended to an
 * allow-list.  Returns 0 or -ENOMEM.
 */
DSH_INTERNAL int dsh_bash_grant_apply(const dsh_bash_grant *grant, dsh_policy *policy);

/*
 * What was asked, for the rejection's sentence: `"workspace-write"` for a
 * mode alone (the seeds' text), else e.g. `"workspace-write" with the
 * writable root "/x" and the host "example.com:443"`.  A new string, or NULL.
 */
DSH_INTERNAL char *dsh_bash_grant_describe(const dsh_bash_grant *grant);

DSH_INTERNAL void dsh_bash_grant_clear(dsh_bash_grant *grant);

#endif
