/* SPDX-License-Identifier: MIT */
/*
 * dsh_denial_find_grant() (dsh-sandbox/denial.h; docs/denials.md, "Rules
 * and their grants"): the narrowest one-call grant that would allow a
 * refused operation, found by asking dsh_why()'s decision again over a
 * copy of the policy with the candidate added — an extra writable root
 * (the nearest existing directory), an allowed host, the wider mode — and
 * kept only when that answer is "allowed".  A candidate the answer still
 * refuses is never offered: the model is told the next wider thing that
 * does allow it (danger-full-access), or none.
 *
 * Never offered, whatever the policy (a model must not be told "escalate
 * to read the key"): the sandbox's own files, a masked path, an abstract
 * socket, a metadata address, a TLS name that is not the one asked, a
 * protocol the proxy does not carry, a request it could not read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dsh-sandbox/denial.h"

#include "base/error.h"
#include "base/path.h"
#include "denial/grant.h"
#include "denial/why.h"
#include "provider/provider-protections.h"

static bool rule_is(const dsh_denial *denial, const char *rule)
{
        return denial->rule && strcmp(denial->rule, rule) == 0;
}

/* The rules no per-call grant may lift. */
static bool never_granted(const dsh_denial *denial)
{
        static const char *const rules[] = {
                "own-file", "masked-path", "abstract-socket", "metadata-address",
                "sni-mismatch", "protocol-not-allowed", "bad-request",
        };

        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                if (rule_is(denial, rules[i]))
                        return true;
        return false;
}

static void set_grant(dsh_denial *denial, dsh_grant_kind kind, bool widens, dsh_mode mode, char *target)
{
        free(denial->grant.target);
        denial->grant = (dsh_grant) { kind, widens, mode, target };
}

static int out_of_memory(dsh_error *error)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* -------------------------------------------------- the call's guards -- */
/*
 * A candidate policy is the call's policy and at most one change: its mode
 * (read-only widened), one extra writable root, one allowed socket.  The
 * key is that change, so the set serves one call policy at a time.
 *
 * Why reuse gives a hostile command nothing: a grant is only what the
 * model is told it may ask for; the call it asks for is confined afresh
 * (its own policy, its own plan, its own guard), so a stale fact here can
 * at worst change a suggestion, never what a command may do.  And the
 * facts are no staler than before: a guard made for the first denial holds
 * what one made for the next would have read a millisecond later (the
 * roots' canonical names, the masks planned); a process of the command
 * still running could race either the same way, and either race moves
 * only a suggestion.
 */
#define GRANT_GUARDS_MAX 8

struct grant_guard {
        dsh_mode mode;
        char *root;                     /* the extra writable root, or NULL */
        char *socket;                   /* the extra allowed socket, or NULL */
        dsh_file_guard *guard;          /* NULL: an empty slot */
};

struct dsh_grant_guards {
        const dsh_policy *policy;       /* the call policy the candidates change */
        struct grant_guard slots[GRANT_GUARDS_MAX];
        size_t next;                    /* the slot the next guard takes (the oldest when all are full) */
        char **own_files;               /* the provider's protected paths, canonical (is_own_file()), or NULL */
};

dsh_grant_guards *dsh_grant_guards_new(void)
{
        return calloc(1, sizeof(dsh_grant_guards));
}

static void empty_slot(struct grant_guard *slot)
{
        dsh_file_guard_free(slot->guard);
        free(slot->root);
        free(slot->socket);
        *slot = (struct grant_guard) { 0 };
}

static void empty_guards(dsh_grant_guards *guards)
{
        for (size_t i = 0; i < GRANT_GUARDS_MAX; i++)
                empty_slot(&guards->slots[i]);
        dsh_strv_free(guards->own_files);
        guards->own_files = NULL;
}

void dsh_grant_guards_free(dsh_grant_guards *guards)
{
        if (!guards)
                return;
        empty_guards(guards);
        free(guards);
}

static bool same_text(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* The change that makes a candidate of the call policy. */
struct candidate {
        const dsh_policy *policy;       /* the call policy so changed */
        const char *root;
        const char *socket;
};

struct asking {
        dsh_runtime *runtime;
        const dsh_policy *call_policy;
        dsh_grant_guards *guards;       /* NULL: each question makes its own guard */
        char **own_files;               /* without guards: this grant's canonical protected paths, or NULL */
};

static struct grant_guard *find_slot(dsh_grant_guards *guards, const struct candidate *candidate)
{
        for (size_t i = 0; i < GRANT_GUARDS_MAX; i++) {
                struct grant_guard *slot = &guards->slots[i];

                if (slot->guard && slot->mode == candidate->policy->mode && same_text(slot->root, candidate->root) &&
                    same_text(slot->socket, candidate->socket))
                        return slot;
        }
        return NULL;
}

/*
 * The guard for `candidate`, kept in the set: 0 with `*guard_out` (NULL
 * when there is no set, or when the candidate cannot be made — the
 * question then makes its own and is refused as before), or -ENOMEM.
 */
static int candidate_guard(struct asking *asking, const struct candidate *candidate, dsh_file_guard **guard_out,
                           dsh_error *error)
{
        dsh_grant_guards *guards = asking->guards;
        dsh_error refusal = DSH_ERROR_INIT;
        struct grant_guard *slot;
        dsh_file_guard *guard = NULL;

        *guard_out = NULL;
        if (!guards)
                return 0;
        slot = find_slot(guards, candidate);
        if (slot) {
                *guard_out = slot->guard;
                return 0;
        }
        if (dsh_file_guard_new(asking->runtime, candidate->policy, &guard, &refusal) < 0) {
                bool memory = refusal.code == DSH_ERROR_SYSTEM && refusal.errno_value == ENOMEM;

                dsh_error_clear(&refusal);
                return memory ? out_of_memory(error) : 0;
        }
        slot = &guards->slots[guards->next];
        guards->next = (guards->next + 1) % GRANT_GUARDS_MAX;
        empty_slot(slot);
        *slot = (struct grant_guard) { candidate->policy->mode, NULL, NULL, guard };
        if ((candidate->root && !(slot->root = strdup(candidate->root))) ||
            (candidate->socket && !(slot->socket = strdup(candidate->socket)))) {
                empty_slot(slot);
                return out_of_memory(error);
        }
        *guard_out = guard;
        return 0;
}

/* ------------------------------------------------------------- asking -- */

/*
 * Asks the decision over `candidate`: 0 allowed, 1 still denied
 * (`*still_rule`, static or NULL, the rule it names), or -ENOMEM.  A
 * candidate the policy refuses to be made (a root holding a runner, one
 * inside the sandbox's own files, a host pattern no allow-list takes)
 * counts as still denied: it allows nothing.
 */
static int ask(struct asking *asking, const struct candidate *candidate, dsh_denial_op op, const char *target,
               const char **still_rule, dsh_error *error)
{
        dsh_denial answer = DSH_DENIAL_INIT;
        dsh_error refusal = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        int result = candidate_guard(asking, candidate, &guard, error);
        bool out_of_memory_seen;

        if (result < 0)
                return result;
        result = dsh_why_decide_by(asking->runtime, candidate->policy, guard, op, target, &answer, &refusal);
        out_of_memory_seen = result < 0 && refusal.errno_value == ENOMEM && refusal.code == DSH_ERROR_SYSTEM;

        *still_rule = "outside-roots";  /* a candidate that cannot be made allows nothing */
        if (result == 1) {
                if (rule_is(&answer, "own-file"))
                        *still_rule = "own-file";
                else if (rule_is(&answer, "masked-path"))
                        *still_rule = "masked-path";
                else if (rule_is(&answer, "protected-subpath"))
                        *still_rule = "protected-subpath";
        }
        dsh_denial_clear(&answer);
        dsh_error_clear(&refusal);
        if (out_of_memory_seen)
                return out_of_memory(error);
        return result == 0 ? 0 : 1;
}

/* The mode only: danger-full-access, unless what still refuses is the sandbox's own file or a mask. */
static void grant_widest(dsh_denial *denial, const char *still_rule)
{
        if (still_rule && (strcmp(still_rule, "own-file") == 0 || strcmp(still_rule, "masked-path") == 0))
                set_grant(denial, DSH_GRANT_NONE, false, DSH_MODE_READ_ONLY, NULL);
        else
                set_grant(denial, DSH_GRANT_MODE, true, DSH_MODE_DANGER_FULL_ACCESS, NULL);
}

/* The nearest existing directory at or above `path` (canonical), a new string; "/" at worst, NULL: out of memory. */
static char *nearest_directory(const char *path, bool include_self)
{
        dsh_autofree char *normal = dsh_path_normalize_lexically(path);
        struct stat status;
        char *slash;

        if (!normal)
                return NULL;
        if (!include_self) {
                slash = strrchr(normal, '/');
                if (!slash)
                        return strdup("/");
                *(slash == normal ? slash + 1 : slash) = '\0';
        }
        for (;;) {
                if (stat(normal, &status) == 0 && S_ISDIR(status.st_mode)) {
                        char *canonical = dsh_path_canonical(normal);

                        return canonical ? canonical : strdup(normal);
                }
                slash = strrchr(normal, '/');
                if (!slash || slash == normal)
                        return strdup("/");
                *slash = '\0';
        }
}

/*
 * The provider's protected paths, canonical (one that cannot be resolved
 * kept as given: the list dsh_provider_held_back_rule() reads), resolved
 * once for a call's grants rather than once a question (twice a refused
 * path, some thirty readlink calls each).  They are the sandbox's own
 * files, outside every root and hidden from the command: nothing it can
 * rename or repoint, so the names read for its first denial hold for the
 * next.  NULL: out of memory.
 */
static char **own_files(struct asking *asking)
{
        char ***list = asking->guards ? &asking->guards->own_files : &asking->own_files;
        const dsh_protections *protections;

        if (*list)
                return *list;
        protections = dsh_provider_protections(dsh_runtime_provider(asking->runtime));
        *list = calloc(1, sizeof(char *));
        for (char *const *given = protections->paths; *list && given && *given; given++) {
                char *canonical = dsh_path_canonical(*given);

                if ((!canonical && !(canonical = strdup(*given))) || dsh_strv_append(list, canonical) < 0) {
                        dsh_strv_free(*list);
                        *list = NULL;
                }
                free(canonical);
        }
        return *list;
}

/*
 * Whether `path` is at or beneath one of the sandbox's own files.  Outside
 * every root such a path is refused as outside-roots, and a root there is
 * refused by the provider before any answer: no grant reaches it, and none
 * is offered.  Out of memory counts as one (no grant either).
 */
static bool is_own_file(struct asking *asking, const char *path)
{
        char **list = own_files(asking);

        if (!list)
                return true;
        for (char **canonical = list; *canonical; canonical++)
                if (dsh_path_is_beneath(path, *canonical))
                        return true;
        return false;
}

/*
 * One candidate root for `denial` under `base` (the call's policy, or it
 * widened to workspace-write): 0 allowed with it (the grant is set), 1 not
 * (`*still_rule`), or -ENOMEM.
 */
static int try_root(struct asking *asking, dsh_policy *base, dsh_denial *denial, const char *root, bool widens,
                    const char **still_rule, dsh_error *error)
{
        const struct candidate candidate = { base, root, NULL };
        char *granted = NULL;
        int result;

        *still_rule = "outside-roots";
        if (strcmp(root, "/") == 0)
                return 1;  /* "/" as a root is everything: only the mode says that */
        /* Reached by another name (a symlink on the way): the candidate is canonical, the sandbox's own is refused. */
        if (is_own_file(asking, root)) {
                *still_rule = "own-file";
                return 1;
        }
        if (dsh_strv_append(&base->additional_writable_roots, root) < 0)
                return out_of_memory(error);
        result = ask(asking, &candidate, denial->op, denial->path, still_rule, error);
        free(base->additional_writable_roots[dsh_strv_length(base->additional_writable_roots) - 1]);
        base->additional_writable_roots[dsh_strv_length(base->additional_writable_roots) - 1] = NULL;
        if (result != 0)
                return result;
        granted = strdup(root);
        if (!granted)
                return out_of_memory(error);
        set_grant(denial, DSH_GRANT_WRITABLE_ROOT, widens, base->mode, granted);
        return 0;
}

/*
 * outside-roots: under read-only, workspace-write alone when it allows it
 * (the workspace, the temp area); else an extra writable root, the nearest
 * existing directory (the path itself when it is an existing directory —
 * the candidate is asked, so a change of the directory's own entry falls
 * to its parent), under the call's mode or workspace-write; else the mode.
 */
static int grant_root(struct asking *asking, dsh_denial *denial, dsh_error *error)
{
        const dsh_policy *policy = asking->call_policy;
        dsh_policy base = DSH_POLICY_INIT;
        const struct candidate widened = { &base, NULL, NULL };
        const char *still_rule = NULL;
        bool widens = false;
        int result = 0;

        if (!denial->path || policy->mode == DSH_MODE_DANGER_FULL_ACCESS || is_own_file(asking, denial->path))
                return 0;
        if (dsh_policy_copy(&base, policy) < 0)
                return out_of_memory(error);
        if (base.mode == DSH_MODE_READ_ONLY) {
                base.mode = DSH_MODE_WORKSPACE_WRITE;
                widens = true;
                result = ask(asking, &widened, denial->op, denial->path, &still_rule, error);
                if (result == 0)
                        set_grant(denial, DSH_GRANT_MODE, true, DSH_MODE_WORKSPACE_WRITE, NULL);
        } else {
                result = 1;
                still_rule = "outside-roots";
        }
        if (result == 1 && strcmp(still_rule, "outside-roots") != 0) {
                grant_widest(denial, still_rule);
                result = 0;
        }
        for (int self = 1; result == 1 && self >= 0; self--) {
                dsh_autofree char *root = nearest_directory(denial->path, self);
                dsh_autofree char *tried = self ? NULL : nearest_directory(denial->path, true);

                if (!root || (!self && !tried)) {
                        result = out_of_memory(error);
                        break;
                }
                if (!self && strcmp(root, tried) == 0)
                        break;  /* the path is no directory: its nearest one was asked already */
                result = try_root(asking, &base, denial, root, widens, &still_rule, error);
        }
        if (result == 1)
                grant_widest(denial, still_rule);
        dsh_policy_clear(&base);
        return result < 0 ? result : 0;
}

/* unix-socket: the socket allowed (--allow-unix-socket), when that alone lets the connect through. */
static int grant_socket(struct asking *asking, dsh_denial *denial, dsh_error *error)
{
        const dsh_policy *policy = asking->call_policy;
        dsh_policy base = DSH_POLICY_INIT;
        const struct candidate as_called = { policy, NULL, NULL };
        const struct candidate allowing = { &base, NULL, denial->path };
        const char *still_rule = NULL;
        char *target = NULL;
        int result;

        if (!denial->path || is_own_file(asking, denial->path))
                return 0;
        /* A masked socket, or one of the sandbox's own (the supervisor may name it unix-socket outside the roots): none. */
        result = ask(asking, &as_called, DSH_DENIAL_CONNECT, denial->path, &still_rule, error);
        if (result < 0)
                return result;
        if (result == 1 && still_rule && (strcmp(still_rule, "own-file") == 0 || strcmp(still_rule, "masked-path") == 0))
                return 0;
        if (dsh_policy_copy(&base, policy) < 0 || dsh_strv_append(&base.allowed_unix_sockets, denial->path) < 0) {
                dsh_policy_clear(&base);
                return out_of_memory(error);
        }
        result = ask(asking, &allowing, DSH_DENIAL_CONNECT, denial->path, &still_rule, error);
        dsh_policy_clear(&base);
        if (result != 0)
                return result < 0 ? result : 0;
        target = strdup(denial->path);
        if (!target)
                return out_of_memory(error);
        set_grant(denial, DSH_GRANT_UNIX_SOCKET, false, policy->mode, target);
        return 0;
}

/* Whether the network policy `base` allows the denial's destination (dns: the name at all). */
static int network_allows(const dsh_policy *base, const dsh_denial *denial, bool *allowed, dsh_error *error)
{
        const char *rule = NULL;
        dsh_error refusal = DSH_ERROR_INIT;
        int port = denial->op == DSH_DENIAL_DNS ? 0 : denial->port;
        int result = dsh_why_network_rule(base, denial->host, port, &rule, &refusal);
        bool memory = result < 0 && refusal.code == DSH_ERROR_SYSTEM && refusal.errno_value == ENOMEM;

        dsh_error_clear(&refusal);
        *allowed = result == 0 && !rule;
        return memory ? out_of_memory(error) : 0;
}

/* local-port: the port allowed (--allow-local-port), when that alone lets the connect through. */
static int grant_local_port(const dsh_policy *policy, dsh_denial *denial, dsh_error *error)
{
        dsh_policy base = DSH_POLICY_INIT;
        unsigned short *ports;
        char *target = NULL;
        bool allowed = false;
        int result;

        if (denial->port < 1 || denial->port > 65535 || !denial->host)
                return 0;
        if (dsh_policy_copy(&base, policy) < 0)
                return out_of_memory(error);
        ports = realloc(base.network.allow_local_ports, (base.network.allow_local_port_count + 1) * sizeof(*ports));
        if (!ports) {
                dsh_policy_clear(&base);
                return out_of_memory(error);
        }
        ports[base.network.allow_local_port_count++] = (unsigned short) denial->port;
        base.network.allow_local_ports = ports;
        result = network_allows(&base, denial, &allowed, error);
        dsh_policy_clear(&base);
        if (result < 0 || !allowed)
                return result;
        if (asprintf(&target, "%d", denial->port) < 0)
                return out_of_memory(error);
        set_grant(denial, DSH_GRANT_LOCAL_PORT, false, policy->mode, target);
        return 0;
}

/*
 * network-off, host-not-allowed, address-not-resolved: the host allowed for
 * the call ("host:port", "host" for a DNS query).  Under off, a host
 * allowed means the allow-list holding that host alone (the call's
 * allowed local ports kept): that is the policy asked.
 */
static int grant_host(const dsh_policy *policy, dsh_denial *denial, dsh_error *error)
{
        dsh_policy base = DSH_POLICY_INIT;
        char *target;
        bool allowed = false;
        int result;

        if (!denial->host || !denial->host[0] || policy->network.mode == DSH_NETWORK_ON)
                return 0;
        target = dsh_why_host_port_text(denial->host, denial->op == DSH_DENIAL_DNS ? 0 : denial->port);
        if (!target || dsh_policy_copy(&base, policy) < 0 || dsh_strv_append(&base.network.allow_hosts, target) < 0) {
                free(target);
                dsh_policy_clear(&base);
                return out_of_memory(error);
        }
        base.network.mode = DSH_NETWORK_ALLOW_LIST;
        result = network_allows(&base, denial, &allowed, error);
        dsh_policy_clear(&base);
        if (result < 0 || !allowed) {
                free(target);
                return result;
        }
        set_grant(denial, DSH_GRANT_ALLOWED_HOST, false, policy->mode, target);
        return 0;
}

/* Whether `host` is a loopback address literal (an address-not-resolved there is a local port asked for). */
static bool names_loopback(const char *host)
{
        return host && (strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 || strcmp(host, "localhost") == 0);
}

static int find_grant(struct asking *asking, dsh_denial *denial, dsh_error *error)
{
        dsh_runtime *runtime = asking->runtime;
        const dsh_policy *policy = asking->call_policy;

        if (!denial)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "a grant needs a denial");
        set_grant(denial, DSH_GRANT_NONE, false, policy ? policy->mode : DSH_MODE_READ_ONLY, NULL);
        if (!runtime || !policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "a grant needs a runtime and a policy");
        if (!denial->rule || never_granted(denial) || policy->mode == DSH_MODE_DANGER_FULL_ACCESS)
                return 0;
        if (rule_is(denial, "protected-subpath")) {
                set_grant(denial, DSH_GRANT_MODE, true, DSH_MODE_DANGER_FULL_ACCESS, NULL);
                return 0;
        }
        if (rule_is(denial, "outside-roots"))
                return grant_root(asking, denial, error);
        if (rule_is(denial, "unix-socket"))
                return grant_socket(asking, denial, error);
        if (rule_is(denial, "local-port") ||
            (rule_is(denial, "address-not-resolved") && names_loopback(denial->host)))
                return grant_local_port(policy, denial, error);
        if (rule_is(denial, "network-off") || rule_is(denial, "host-not-allowed") ||
            rule_is(denial, "address-not-resolved"))
                return grant_host(policy, denial, error);
        return 0;  /* a rule this version does not know: nothing is offered */
}

int dsh_denial_find_grant(dsh_runtime *runtime, const dsh_policy *policy, dsh_denial *denial, dsh_error *error)
{
        return dsh_denial_find_grant_reusing(runtime, policy, NULL, denial, error);
}

int dsh_denial_find_grant_reusing(dsh_runtime *runtime, const dsh_policy *policy, dsh_grant_guards *guards,
                                  dsh_denial *denial, dsh_error *error)
{
        struct asking asking = { runtime, policy, guards, NULL };
        int result;

        if (guards && guards->policy != policy) {
                empty_guards(guards);
                guards->policy = policy;
        }
        result = find_grant(&asking, denial, error);
        dsh_strv_free(asking.own_files);
        return result;
}
