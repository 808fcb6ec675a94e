/* SPDX-License-Identifier: MIT */
/*
 * dsh_child_denials() (dsh-sandbox/denial.h): a finished child's records —
 * the supervisor's refused writes and metadata changes, its unix sockets,
 * the network's refused connections, queries and requests, the paths the
 * cleanup moved aside after the command — as typed
 * denials, each with the grant dsh_denial_find_grant() finds under the
 * policy the child was spawned with.  Only what the enforcing layers
 * wrote is read here; nothing the command printed.  Bounded by
 * DSH_DENIALS_MAX (dsh_denials_take()); what the layers dropped is counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/denial.h"

#include "base/denial-value.h"
#include "base/error.h"
#include "denial/grant.h"
#include "provider/provider-protections.h"

static bool is_one_of(const char *text, const char *const *names)
{
        for (; *names; names++)
                if (strcmp(text, *names) == 0)
                        return true;
        return false;
}

/*
 * The class of a supervisor record: its call decides a unix socket's
 * connect (whatever the rule: a socket among the sandbox's own files or a
 * masked path keeps that rule) and a metadata change; a socket rule is a
 * connect too.
 */
static dsh_denial_op write_record_op(const dsh_write_refusal *refusal)
{
        static const char *const metadata_calls[] = {
                "chmod", "chown", "utimes", "setxattr", "removexattr", "setattr", NULL,
        };
        static const char *const socket_rules[] = { "unix-socket", "abstract-socket", NULL };

        if ((refusal->rule && is_one_of(refusal->rule, socket_rules)) ||
            (refusal->op && strcmp(refusal->op, "connect") == 0))
                return DSH_DENIAL_CONNECT;
        if (refusal->op && is_one_of(refusal->op, metadata_calls))
                return DSH_DENIAL_METADATA;
        return DSH_DENIAL_WRITE;
}

static int copy_text(char **out, const char *text)
{
        *out = NULL;
        if (!text)
                return 0;
        *out = strdup(text);
        return *out ? 0 : -ENOMEM;
}

/*
 * An earlier record of this call that is the same refusal (op, call, path,
 * host, port, rule, source): its grant is this one's too, so a retry loop
 * over two hosts asks twice, not once a try (each question about a path
 * is answered by a file guard for a policy copy, kept for the call's next
 * denials: denial/grant.h).
 * Two paths in one directory are asked each on its own: a name there may be
 * protected or masked under the candidate root (`.mcp.json`, a configured
 * mask) while its neighbour is not.
 */
static const dsh_grant *grant_already_found(const dsh_denials *out, const dsh_denial *denial)
{
        for (size_t i = out->count; i-- > 0;)
                if (dsh_denial_same_refusal(&out->items[i], denial))
                        return &out->items[i].grant;
        return NULL;
}

/*
 * Finds the grant and moves `denial` into `out` (emptied either way).  A
 * record past the bound is only counted, and asked nothing.
 */
static int add(dsh_runtime *runtime, const dsh_policy *policy, dsh_grant_guards *guards, dsh_denial *denial,
               dsh_denials *out, dsh_error *error)
{
        const dsh_grant *known = out->count < DSH_DENIALS_MAX ? grant_already_found(out, denial) : NULL;
        int result = 0;

        if (known && dsh_grant_copy(&denial->grant, known) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        else if (!known && out->count < DSH_DENIALS_MAX)
                result = dsh_denial_find_grant_reusing(runtime, policy, guards, denial, error);

        if (result == 0 && dsh_denials_take(out, denial, DSH_DENIALS_MAX) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        dsh_denial_clear(denial);
        return result;
}

static int add_write_refusals(dsh_runtime *runtime, const dsh_policy *policy, dsh_grant_guards *guards,
                              const dsh_child *child, dsh_denials *out, dsh_error *error)
{
        const dsh_write_refusal *refusals = NULL;
        unsigned long dropped = 0;
        size_t count = dsh_child_refusals(child, &refusals, &dropped);
        int result = 0;

        out->dropped += dropped;
        for (size_t i = 0; result == 0 && i < count; i++) {
                dsh_denial denial = DSH_DENIAL_INIT;

                denial.op = write_record_op(&refusals[i]);
                denial.source = DSH_DENIAL_SOURCE_SUPERVISOR;
                if (copy_text(&denial.call, refusals[i].op) < 0 || copy_text(&denial.path, refusals[i].path) < 0 ||
                    copy_text(&denial.rule, refusals[i].rule ? refusals[i].rule : "outside-roots") < 0) {
                        dsh_denial_clear(&denial);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
                result = add(runtime, policy, guards, &denial, out, error);
        }
        return result;
}

static dsh_denial_op network_record_op(const dsh_refused_connection *refusal)
{
        if (refusal->op && strcmp(refusal->op, "dns") == 0)
                return DSH_DENIAL_DNS;
        if (refusal->op && strcmp(refusal->op, "http") == 0)
                return DSH_DENIAL_HTTP;
        return DSH_DENIAL_CONNECT;
}

/*
 * Who refused, as the layer wrote it ("supervisor" or "proxy"); a record
 * without one (from a peer older than the field) by its op: a connect is
 * the supervisor's, a query the DNS stub's, a request the proxy's.
 */
static dsh_denial_source network_record_source(const dsh_refused_connection *refusal, dsh_denial_op op)
{
        dsh_denial_source source;

        if (refusal->source && dsh_denial_source_parse(refusal->source, &source) == 0)
                return source;
        return op == DSH_DENIAL_CONNECT ? DSH_DENIAL_SOURCE_SUPERVISOR : DSH_DENIAL_SOURCE_PROXY;
}

static const char *network_record_call(dsh_denial_op op)
{
        return op == DSH_DENIAL_DNS ? "query" : op == DSH_DENIAL_HTTP ? "request" : "connect";
}

static int add_network_refusals(dsh_runtime *runtime, const dsh_policy *policy, dsh_grant_guards *guards,
                                const dsh_child *child, dsh_denials *out, dsh_error *error)
{
        const dsh_refused_connection *refusals = NULL;
        unsigned long dropped = 0;
        size_t count = dsh_child_network_refusals(child, &refusals, &dropped);
        int result = 0;

        out->dropped += dropped;
        for (size_t i = 0; result == 0 && i < count; i++) {
                dsh_denial denial = DSH_DENIAL_INIT;

                denial.op = network_record_op(&refusals[i]);
                denial.source = network_record_source(&refusals[i], denial.op);
                denial.port = refusals[i].port;
                if (copy_text(&denial.call, network_record_call(denial.op)) < 0 ||
                    copy_text(&denial.host, refusals[i].host && refusals[i].host[0] ? refusals[i].host : NULL) < 0 ||
                    copy_text(&denial.rule, refusals[i].rule ? refusals[i].rule : "network-off") < 0) {
                        dsh_denial_clear(&denial);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
                result = add(runtime, policy, guards, &denial, out, error);
        }
        return result;
}

/*
 * The paths the cleanup moved aside after the command (a protected subpath
 * the sandbox keeps absent, created by the command): a write refused after
 * the fact, rule as the supervisor names a held-back path
 * (dsh_provider_held_back_rule(): the sandbox's own file, else a protected
 * subpath), source "cleanup".
 */
static int add_moved_aside_paths(dsh_runtime *runtime, const dsh_policy *policy, dsh_grant_guards *guards,
                                 const dsh_child *child, dsh_denials *out, dsh_error *error)
{
        const dsh_provider *provider = dsh_runtime_provider(runtime);
        const char *const *paths = NULL;
        size_t count = dsh_child_moved_aside_paths(child, &paths);
        int result = 0;

        for (size_t i = 0; result == 0 && i < count; i++) {
                dsh_denial denial = DSH_DENIAL_INIT;
                const char *rule = dsh_provider_held_back_rule(provider, paths[i]) == DSH_REFUSAL_OWN_FILE
                                           ? "own-file"
                                           : "protected-subpath";

                denial.op = DSH_DENIAL_WRITE;
                denial.source = DSH_DENIAL_SOURCE_CLEANUP;
                if (copy_text(&denial.path, paths[i]) < 0 || copy_text(&denial.rule, rule) < 0) {
                        dsh_denial_clear(&denial);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
                result = add(runtime, policy, guards, &denial, out, error);
        }
        return result;
}

int dsh_child_denials(dsh_runtime *runtime, const dsh_policy *policy, const dsh_child *child, dsh_denials *out,
                      dsh_error *error)
{
        dsh_grant_guards *guards;
        int result;

        if (!runtime || !policy || !child || !out)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "a child's denials need the runtime, the policy, the child and a list");
        /* One guard per candidate policy for all of the call's grants (denial/grant.h). */
        guards = dsh_grant_guards_new();
        if (!guards)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = add_write_refusals(runtime, policy, guards, child, out, error);
        if (result == 0)
                result = add_network_refusals(runtime, policy, guards, child, out, error);
        if (result == 0)
                result = add_moved_aside_paths(runtime, policy, guards, child, out, error);
        dsh_grant_guards_free(guards);
        return result;
}
