/* SPDX-License-Identifier: MIT */
/*
 * The shield: what a confined call must not be able to change even inside
 * the roots it may write, because something outside the sandbox trusts it
 * later.  Three kinds, each with its own rule:
 *
 *  - the sandbox's runners and launchers (bwrap, landlock-run,
 *    dsh-sandbox-exec, dsh-sandbox itself) and what the dynamic loader reads
 *    to start them: a writable root that contains one is refused by every
 *    backend, because the next call — any mode — would execute it;
 *  - the sandbox's own files (config, session store, verdict cache): held
 *    back by the backends that can (bwrap binds them read-only and pins every
 *    directory between the writable root and the file, so neither the file
 *    nor an ancestor can be renamed away and replaced), refused by those that
 *    cannot (Landlock only grants); a route to them through a symlink this
 *    call could repoint is refused by every backend;
 *  - protected subpaths inside every writable root (".git/hooks",
 *    ".git/config" by default, mapped to the real git directory and common
 *    directory of a linked worktree or submodule; the agents' launch config,
 *    ".mcp.json", ".claude", ...) and, "~/NAME", in a home a writable root
 *    holds (".bashrc", ".local/bin", ...): what runs later, unconfined, when
 *    the user types `git commit`, starts the agent or opens a shell.  Held
 *    back like the sandbox's own files where the backend can; where it
 *    cannot (Landlock: when one exists), or where a git one cannot be held
 *    back without creating it on the host, the call runs with enforcement
 *    "partial" and says why — or is refused when the deployment requires
 *    them.  A missing one that is not git's is kept absent instead
 *    (kept_absent below).
 *
 * Every path here is canonical; containment is decided on canonical paths.
 */
#ifndef DSH_SANDBOX_SHIELD_H
#define DSH_SANDBOX_SHIELD_H

#include <stdbool.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"
#include "shield/protections.h"

typedef struct dsh_shield {
        char **pins;             /* directories to bind onto themselves, parents first */
        char **read_only;        /* files and directories to bind read-only over themselves */
        char **extra_writable;   /* git directories outside every root that git needs writable */
        char **unprotected;      /* why a protected subpath could not be held back (sentences) */
        /*
         * Files that must still be absent once the command is gone: a
         * `commondir` created in a repository's git directory would send
         * git to another directory's hooks and config, and nothing can be
         * bound over a name that does not exist.  Checked after the command
         * exits, when no process of the sandbox is left (bwrap), and moved
         * aside if it appeared.
         */
        char **must_stay_absent;
        /*
         * Protected subpaths that are not git's (the agent's launch config,
         * a home's startup files) and do not exist: nothing can be bound
         * over a missing name without creating it on the host, so bwrap
         * audits them as it audits `must_stay_absent` once the command is
         * gone, and the file guard refuses to create them.  A missing one
         * is no gap to report: every directory lacks most of them.
         */
        char **kept_absent;
        bool has_subpaths;       /* some protected subpath exists (or should) beneath a writable root */
} dsh_shield;

#define DSH_SHIELD_INIT { NULL, NULL, NULL, NULL, NULL, NULL, false }

/* The prefix of a protected subpath that names a place in the user's home rather than in every root. */
#define DSH_SHIELD_HOME_PREFIX "~/"

/*
 * The user's homes, canonical and deduplicated (a new vector; NULL when
 * none resolves): $HOME when it is absolute, and the passwd entry's of the
 * effective uid (dsh_passwd_home()).  Both, because either is where a shell
 * or git run by the user later may look (a login shell reads the passwd
 * entry's; everything else $HOME); one that does not exist has nothing in
 * it to protect.
 */
DSH_INTERNAL char **dsh_shield_user_homes(void);

/*
 * After the command is gone: every path of `must_stay_absent` (canonical
 * when planned) that exists now is renamed aside, never over an existing
 * entry (NAME.dsh-sandbox-quarantine-PID-RANDOM), and described in a new
 * sentence appended to `*warnings`; so is a symlink that appeared on the
 * way to it (the path is walked from "/" by fds, no symlink followed).
 * Each path moved (its original, absolute name) is appended to
 * `*moved_paths` when that is not NULL.  Returns the number moved.
 */
DSH_INTERNAL int dsh_shield_audit(char *const *must_stay_absent, char ***warnings, char ***moved_paths);

DSH_INTERNAL void dsh_shield_clear(dsh_shield *shield);

/*
 * Plans the shield for one call of `policy` (prepared, workspace-write or
 * read-only) under `protections`, with `runners` every program a later call
 * could start to confine a command (found or not; the provider lists them:
 * dsh_provider_plan_shield()), under a backend whose writable temp area on
 * the host is `host_temp_area` (NULL when the backend gives a private one).
 * Fails with SANDBOX_PREPARATION_FAILED when a writable root contains a
 * runner, a file the loader reads to start one, or a protected executable,
 * lies inside one of the sandbox's own files, or reaches one of them through
 * a symlink it could repoint.  With `with_subpaths`, the protected subpaths
 * beneath every writable root are planned too (git directories found and
 * mapped: git-layout.h); otherwise only `has_subpaths` is decided.  Reads
 * nothing but its arguments, the file system and the user's homes
 * (dsh_shield_user_homes()).
 */
DSH_INTERNAL int dsh_shield_plan(const dsh_policy *policy, const dsh_protections *protections, char *const *runners,
                                 const char *host_temp_area, bool with_subpaths, dsh_shield *shield,
                                 dsh_error *error);

#endif
