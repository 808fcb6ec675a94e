/* SPDX-License-Identifier: MIT */
/*
 * One confined call's environment rules (docs/secrets.md, "The
 * environment"): the deny patterns of the protections (NULL: the defaults,
 * dsh_default_environment_deny()), the names they and the call's policy let
 * through, and SSH_AUTH_SOCK when the socket it names is one the policy
 * allows.  Computed once per call, for either backend: the environment the
 * in-process spawn hands the command (Landlock) or bwrap (bwrap), the
 * launchers' `--deny-env`/`--allow-env` (confine's argv, and spawn's second
 * pass inside), and the facts' `environment_removed`.
 *
 * The security argument: where else a secret variable could reach the
 * command, and what answers it.
 *   - the command's own environment: scrubbed before it is handed over,
 *     then the call's own variables (TMPDIR, the caches, the proxies) are
 *     set over it, so no pattern can remove them; inside, the launcher
 *     scrubs again by the same rules (confine: whatever the harness spawns
 *     it with) and lets the call's variables through by name;
 *   - bwrap's pid 1 (the command's parent inside) and bwrap itself:
 *     /proc/PID/environ shows a process's environment as it was exec'd,
 *     whatever it unsets later, so under spawn bwrap is exec'd with the
 *     scrubbed environment and neither holds a secret to show — even on a
 *     kernel without Landlock, where pid 1 is readable from inside (the
 *     call is partial: DSH_BWRAP_NO_DOMAIN_REASON says so).  Under confine
 *     the harness exec's bwrap with its own environment, and bwrap's pid 1
 *     keeps it: there dsh-sandbox-exec's Landlock domain of the command's
 *     own is the wall (Landlock denies the ptrace-read access that
 *     /proc/PID/environ and /proc/PID/mem need to a process outside the
 *     domain; pid 1 has no capability left, so nothing else stands in the
 *     way), and without one the partial reason names /proc/1/environ;
 *   - under Landlock, the stand-in, the supervisor (dsh-sandbox itself, or
 *     landlock-run) and every other host process hold what they were exec'd
 *     with, and the command sees their pids: each is outside the command's
 *     domain, which is the wall (a target that keeps capabilities the
 *     command lacks, dsh-sandbox run by root, is also refused by commoncap's
 *     ptrace check);
 *   - the call's helpers: the network service is a thread of this process
 *     (nothing of its own to read); dsh-sandbox-exec's stdin feeder is
 *     non-dumpable and outside the domain;
 *   - remote: the command runs on the remote host, under the remote
 *     helper's provider, which scrubs by its own rules (its config or the
 *     defaults) plus the call's allowed names from the request; ssh sends
 *     the local environment only as SendEnv/AcceptEnv say (none by default),
 *     and what it sends reaches the remote helper, whose spawn scrubs it.
 *     The local ssh master (ControlPersist) keeps the local environment it
 *     was exec'd with; to a later local call it is a host process like the
 *     others above, and its control directory is hidden (protections.h).
 */
#ifndef DSH_SANDBOX_CALL_ENVIRONMENT_H
#define DSH_SANDBOX_CALL_ENVIRONMENT_H

#include "core/env-scrub.h"
#include "dsh-sandbox/sandbox.h"
#include "base/util.h"
#include "shield/protections.h"

typedef struct dsh_call_environment {
        char **deny;            /* owned: the patterns */
        char **allow;           /* owned: the names let through */
        dsh_env_rules rules;    /* points at the two above */
} dsh_call_environment;

#define DSH_CALL_ENVIRONMENT_INIT { NULL, NULL, { NULL, NULL } }

/*
 * The rules of a call under `policy` (confined) and `protections`.
 * SSH_AUTH_SOCK is let through when $SSH_AUTH_SOCK, canonical, is one of
 * the policy's allowed unix sockets (canonical), or when a name list allows
 * it outright.  Returns 0 or -ENOMEM (`environment` cleared).
 */
DSH_INTERNAL int dsh_call_environment_init(dsh_call_environment *environment, const dsh_protections *protections,
                                           const dsh_policy *policy);

DSH_INTERNAL void dsh_call_environment_clear(dsh_call_environment *environment);

/*
 * The rules of the call (`protections`, `policy`, as
 * dsh_call_environment_init()) applied, each function computing them anew;
 * each returns -ENOMEM (NULL) when out of memory.
 *
 * dsh_call_environment_build(): this process's environment scrubbed, then
 * `pairs` (NAME, VALUE, ...; NULL: none) set over it, as the environment a
 * spawn hands on: a new vector of new strings.
 *
 * dsh_call_environment_set_facts(): the names this process's environment
 * holds that the rules remove, each once, in order, into
 * `facts->environment_removed` (replacing it; none leaves NULL).  Returns 0.
 *
 * dsh_call_environment_build_with_facts(): both of the above from one
 * pass over the environment (each variable judged once), as a call that
 * spawns the command itself needs them.
 *
 * dsh_call_environment_append_arguments(): a launcher's `--deny-env
 * PATTERN` and `--allow-env NAME` words for the rules, and an `--allow-env
 * NAME` for each name of `pairs` (the call's own variables, set before the
 * launcher runs, which it must never remove).  Returns 0.
 */
DSH_INTERNAL char **dsh_call_environment_build(const dsh_protections *protections, const dsh_policy *policy,
                                               char *const *pairs);
DSH_INTERNAL int dsh_call_environment_set_facts(const dsh_protections *protections, const dsh_policy *policy,
                                                dsh_confined_argv *facts);
DSH_INTERNAL char **dsh_call_environment_build_with_facts(const dsh_protections *protections,
                                                          const dsh_policy *policy, char *const *pairs,
                                                          dsh_confined_argv *facts);
DSH_INTERNAL int dsh_call_environment_append_arguments(const dsh_protections *protections, const dsh_policy *policy,
                                                       char *const *pairs, char ***argv);

#endif
