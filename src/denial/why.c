/* SPDX-License-Identifier: MIT */
/*
 * dsh_why() (dsh-sandbox/denial.h): would the policy allow it, and if not,
 * which rule refuses it and what grant would allow it.
 *
 * Never a second implementation:
 *   - a write, a metadata change or a read is judged by the file guard's
 *     own decision code (src/fs/file-decision.c) over a guard made for the
 *     policy — the prepared plan the backends are made of: the roots
 *     opened and identified, the shield bwrap would bind, the masks the
 *     backends hold — with the target resolved by the guard's walk
 *     (dsh_file_guard_judge(): the same walk, nothing made);
 *   - a connect to host:port is judged by the network policy's rules in
 *     the order the supervisor and the gate apply them (core/inet-call.c,
 *     network/network-service.c): off refuses all but an allowed local
 *     port on loopback; the allow-list matches the host patterns the DNS
 *     stub and the proxy match (base/host-pattern.h), refuses a metadata
 *     or link-local address the list does not name, and an address
 *     literal it does not name (the stub gave it out to no allowed name);
 *   - a connect to a unix socket path as the supervisor decides it
 *     (core/socket-call.c): an allowed socket, or one inside a writable
 *     root and not held back — the guard's decision again.
 * What it cannot see it does not claim: a loopback server the command
 * starts itself is reached under every network policy, and a name the
 * stub resolves to a metadata address is refused when it is resolved.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/file-guard.h"

#include "base/error.h"
#include "base/host-pattern.h"
#include "base/path.h"
#include "denial/why.h"
#include "fs/file-decision.h"

/* ---------------------------------------------------------------- targets -- */

static int parse_port(const char *text, bool optional, int *port)
{
        char *end = NULL;
        long value;

        *port = 0;
        if (!text)
                return optional ? 0 : -EINVAL;
        if (!*text || *text < '0' || *text > '9')
                return -EINVAL;
        errno = 0;
        value = strtol(text, &end, 10);
        if (errno || *end || value < 1 || value > 65535)
                return -EINVAL;
        *port = (int) value;
        return 0;
}

int dsh_why_split_host_port(const char *target, bool port_optional, char *host, size_t size, int *port,
                            const char **reason)
{
        const char *host_start = target, *host_end, *port_text = NULL;
        size_t length;

        *reason = "a connect target is HOST:PORT, IPV4:PORT, [IPV6]:PORT or an absolute unix socket path";
        if (!target || !*target)
                return -EINVAL;
        if (target[0] == '[') {
                host_start = target + 1;
                host_end = strchr(host_start, ']');
                if (!host_end || (host_end[1] && host_end[1] != ':'))
                        return -EINVAL;
                port_text = host_end[1] == ':' ? host_end + 2 : NULL;
        } else {
                host_end = strchr(target, ':');
                if (host_end && strchr(host_end + 1, ':')) {
                        *reason = "an IPv6 address is written in brackets: [ADDRESS]:PORT";
                        return -EINVAL;
                }
                port_text = host_end ? host_end + 1 : NULL;
                if (!host_end)
                        host_end = target + strlen(target);
        }
        length = (size_t) (host_end - host_start);
        if (length == 0 || length >= size)
                return -EINVAL;
        if (parse_port(port_text, port_optional, port) < 0) {
                *reason = "the port must be a number from 1 to 65535";
                return -EINVAL;
        }
        memcpy(host, host_start, length);
        host[length] = '\0';
        return 0;
}

char *dsh_why_host_port_text(const char *host, int port)
{
        char *text = NULL;
        bool bracketed = strchr(host, ':') != NULL;

        if (port <= 0)
                return strdup(host);
        if (asprintf(&text, bracketed ? "[%s]:%d" : "%s:%d", host, port) < 0)
                return NULL;
        return text;
}

/* ------------------------------------------------------------------ paths -- */

static dsh_guard_question question_of(dsh_denial_op op)
{
        return op == DSH_DENIAL_READ ? DSH_GUARD_ASK_READ
               : op == DSH_DENIAL_METADATA ? DSH_GUARD_ASK_METADATA
                                           : DSH_GUARD_ASK_WRITE;
}

/*
 * The guard's judgement of `path` under `policy` — by `guard` when one was
 * made for that policy (a call's grants reuse theirs, grant.c), else by one
 * made for this question alone: 0 allowed, 1 with `*rule` and `*canonical`
 * (new), or an error.
 */
static int judge_path(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard,
                      dsh_guard_question question, const char *path, dsh_guard_rule *rule, char **canonical,
                      dsh_error *error)
{
        dsh_file_guard *own = NULL;
        int result = 0;

        *rule = DSH_GUARD_ALLOWED;
        *canonical = NULL;
        if (!guard) {
                result = dsh_file_guard_new(runtime, policy, &own, error);
                if (result < 0)
                        return result;
                guard = own;
        }
        result = dsh_file_guard_judge(guard, question, path, rule, canonical, error);
        dsh_file_guard_free(own);
        if (result < 0)
                return result;
        return *rule == DSH_GUARD_ALLOWED ? 0 : 1;
}

static int fill(dsh_denial *denial, dsh_denial_op op, const char *rule, dsh_error *error)
{
        denial->op = op;
        denial->source = DSH_DENIAL_SOURCE_POLICY;
        denial->rule = strdup(rule);
        if (!denial->rule) {
                dsh_denial_clear(denial);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        return 1;
}

static int why_path(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard, dsh_denial_op op,
                    const char *path, dsh_denial *denial, dsh_error *error)
{
        dsh_guard_rule rule;
        char *canonical = NULL;
        int result = judge_path(runtime, policy, guard, question_of(op), path, &rule, &canonical, error);

        if (result <= 0)
                return result;
        denial->path = canonical;
        return fill(denial, op, dsh_guard_rule_name(rule), error);
}

/* ------------------------------------------------------------ unix sockets -- */

/* Whether `path` is one of the policy's allowed sockets: the same inode, as the supervisor holds them. */
static bool allowed_socket(const dsh_policy *policy, const char *path)
{
        struct stat target, allowed;

        if (stat(path, &target) < 0 || !S_ISSOCK(target.st_mode))
                return false;
        for (char *const *socket = policy->allowed_unix_sockets; socket && *socket; socket++)
                if (stat(*socket, &allowed) == 0 && allowed.st_dev == target.st_dev && allowed.st_ino == target.st_ino)
                        return true;
        return false;
}

/*
 * A pathname socket, as the supervisor decides it (core/socket-call.c): an
 * allowed socket, or one the guard would let the command change — inside
 * a writable root and not held back.  Anything else: "unix-socket", or the
 * rule that names what it is — one of the sandbox's own files, a masked
 * path — so that its grant is none, never an allow-listing.
 */
static int why_unix_socket(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard,
                           const char *path, dsh_denial *denial, dsh_error *error)
{
        dsh_guard_rule rule;
        char *canonical = NULL;
        int result;

        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS || allowed_socket(policy, path))
                return 0;
        result = judge_path(runtime, policy, guard, DSH_GUARD_ASK_METADATA, path, &rule, &canonical, error);
        if (result <= 0)
                return result;
        denial->path = canonical;
        return fill(denial, DSH_DENIAL_CONNECT,
                    rule == DSH_GUARD_OWN_FILE || rule == DSH_GUARD_MASKED_PATH ? dsh_guard_rule_name(rule)
                                                                                : "unix-socket",
                    error);
}

/* ---------------------------------------------------------------- network -- */

struct address {
        int family;                     /* AF_INET, AF_INET6, or 0 for a name */
        unsigned char bytes[16];
};

static void parse_address(const char *host, struct address *address)
{
        address->family = 0;
        if (inet_pton(AF_INET, host, address->bytes) == 1)
                address->family = AF_INET;
        else if (inet_pton(AF_INET6, host, address->bytes) == 1)
                address->family = AF_INET6;
        else if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0)
                address->family = inet_pton(AF_INET, "127.0.0.1", address->bytes) == 1 ? AF_INET : 0;
}

static bool is_unspecified(const struct address *address)
{
        static const unsigned char zero[16];

        if (address->family == AF_INET)
                return address->bytes[0] == 0;
        return address->family == AF_INET6 && memcmp(address->bytes, zero, 16) == 0;
}

/* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 — and the wildcard, which the supervisor sends to loopback. */
static bool is_loopback(const struct address *address)
{
        static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        static const unsigned char one[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

        if (is_unspecified(address))
                return true;
        if (address->family == AF_INET)
                return address->bytes[0] == 127;
        if (address->family != AF_INET6)
                return false;
        return memcmp(address->bytes, one, 16) == 0 ||
               (memcmp(address->bytes, mapped, 12) == 0 && address->bytes[12] == 127);
}

static bool allowed_local_port(const dsh_network_policy *network, int port)
{
        for (size_t i = 0; i < network->allow_local_port_count; i++)
                if (network->allow_local_ports[i] == port)
                        return true;
        return false;
}

/* The allow-list's patterns, parsed as the stub, the proxy and the gate parse them; NULL with none. */
static dsh_host_pattern *parse_patterns(const dsh_network_policy *network, size_t *count, int *result)
{
        size_t total = dsh_strv_length(network->allow_hosts);
        dsh_host_pattern *patterns = calloc(total ? total : 1, sizeof(*patterns));

        *count = 0;
        *result = patterns ? 0 : -ENOMEM;
        for (size_t i = 0; patterns && i < total; i++)
                if (dsh_host_pattern_parse(network->allow_hosts[i], &patterns[*count], NULL) == 0)
                        (*count)++;
        return patterns;
}

/*
 * The rule refusing a TCP connect (or, with `port` 0, a DNS query) to
 * `host` under the prepared `policy`, or NULL when it is allowed.  The
 * order is the enforcing layers': the supervisor's own decisions first
 * (off, loopback), then the gate's (the stub's port, a metadata address,
 * a named address), then the names the stub and the proxy allow.
 */
static int network_rule(const dsh_policy *policy, const char *host, int port, const char **rule_out)
{
        const dsh_network_policy *network = &policy->network;
        dsh_autofree dsh_host_pattern *patterns = NULL;
        struct address address;
        size_t count = 0;
        int result;

        *rule_out = NULL;
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS || network->mode == DSH_NETWORK_ON)
                return 0;
        parse_address(host, &address);
        if (address.family && is_loopback(&address) && allowed_local_port(network, port))
                return 0;
        if (network->mode == DSH_NETWORK_OFF) {
                *rule_out = address.family && is_loopback(&address) ? "local-port" : "network-off";
                return 0;
        }
        if (port == 53)
                return 0;  /* the gate sends every port-53 destination to the call's DNS stub */
        patterns = parse_patterns(network, &count, &result);
        if (!patterns)
                return result;
        if (!address.family) {
                if (!dsh_host_patterns_allow(patterns, count, host, (unsigned short) port))
                        *rule_out = "host-not-allowed";
                return 0;
        }
        if (dsh_host_patterns_allow_address(patterns, count, address.family, address.bytes, (unsigned short) port))
                return 0;
        *rule_out = dsh_address_is_metadata(address.family, address.bytes) && !is_unspecified(&address)
                            ? "metadata-address"
                            : "address-not-resolved";
        return 0;
}

/*
 * The allow-list as the call's network service gets it: named sets
 * expanded, each entry checked (dsh_policy_prepare(); the mode read-only
 * for it, so that only the network is checked here: the files are the
 * guard's).
 */
int dsh_why_network_rule(const dsh_policy *policy, const char *host, int port, const char **rule_out,
                         dsh_error *error)
{
        dsh_policy prepared = DSH_POLICY_INIT;
        int result;

        *rule_out = NULL;
        if (dsh_policy_copy(&prepared, policy) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        prepared.mode = prepared.mode == DSH_MODE_DANGER_FULL_ACCESS ? prepared.mode : DSH_MODE_READ_ONLY;
        result = dsh_policy_prepare(&prepared, error);
        if (result == 0)
                result = network_rule(&prepared, host, port, rule_out);
        dsh_policy_clear(&prepared);
        return result == -ENOMEM ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory") : result;
}

static int why_inet(const dsh_policy *policy, const char *target, dsh_denial *denial, dsh_error *error)
{
        char host[256];
        const char *reason = NULL, *rule = NULL;
        int port = 0;
        int result = dsh_why_split_host_port(target, false, host, sizeof(host), &port, &reason);

        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "cannot judge connect \"%s\": %s",
                                     target, reason);
        result = dsh_why_network_rule(policy, host, port, &rule, error);
        if (result < 0 || !rule)
                return result;
        denial->host = strdup(host);
        denial->port = port;
        if (!denial->host)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return fill(denial, DSH_DENIAL_CONNECT, rule, error);
}

/* ------------------------------------------------------------------- why -- */

int dsh_why_decide(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial_op op, const char *target,
                   dsh_denial *denial_out, dsh_error *error)
{
        return dsh_why_decide_by(runtime, policy, NULL, op, target, denial_out, error);
}

int dsh_why_decide_by(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard, dsh_denial_op op,
                      const char *target, dsh_denial *denial_out, dsh_error *error)
{
        int result;

        *denial_out = (dsh_denial) DSH_DENIAL_INIT;
        if (!runtime || !policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "why needs a runtime and a policy");
        if (!target || !*target)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "why needs a target: the target is empty");
        switch (op) {
        case DSH_DENIAL_WRITE:
        case DSH_DENIAL_METADATA:
        case DSH_DENIAL_READ:
                result = why_path(runtime, policy, guard, op, target, denial_out, error);
                break;
        case DSH_DENIAL_CONNECT:
                result = target[0] == '/' ? why_unix_socket(runtime, policy, guard, target, denial_out, error)
                                          : why_inet(policy, target, denial_out, error);
                break;
        case DSH_DENIAL_DNS:
        case DSH_DENIAL_HTTP:
        default:
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "why answers write, read, metadata and connect, not \"%s\"",
                                     dsh_denial_op_name(op));
        }
        if (result < 0)
                dsh_denial_clear(denial_out);
        return result;
}

int dsh_why(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial_op op, const char *target,
            dsh_denial *denial_out, dsh_error *error)
{
        int result = dsh_why_decide(runtime, policy, op, target, denial_out, error);

        if (result != 1)
                return result;
        result = dsh_denial_find_grant(runtime, policy, denial_out, error);
        if (result < 0) {
                dsh_denial_clear(denial_out);
                return result;
        }
        return 1;
}
