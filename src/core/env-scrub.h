/* SPDX-License-Identifier: MIT */
/*
 * The command's environment without its secrets (docs/secrets.md).  libc
 * only: the launchers scrub the environment a harness spawns them with, and
 * the in-process spawn scrubs the one the caller gave, with the same rules.
 *
 * A name matches a deny pattern without regard to case (fnmatch, `*` and
 * `?`): a secret spelled `github_token` is a secret still.  An allowed name
 * matches exactly.  The value is never looked at: a command can print any
 * variable it has, so what decides is only whether the name says "secret".
 */
#ifndef DSH_SANDBOX_ENV_SCRUB_H
#define DSH_SANDBOX_ENV_SCRUB_H

#include <stdbool.h>
#include <stddef.h>

typedef struct dsh_env_rules {
        char *const *deny;      /* patterns; NULL: none */
        char *const *allow;     /* exact names let through; NULL: none */
} dsh_env_rules;

/* True when the variable `name` (up to '=' or the end) is removed under `rules`. */
bool dsh_env_name_denied(const char *name, const dsh_env_rules *rules);

/*
 * Removes in place, from the NULL-terminated `environment` ("NAME=VALUE"
 * strings, not freed: the caller owns them, as with environ), every entry
 * whose name is denied, keeping the order of the rest.  Returns how many were
 * removed.
 */
size_t dsh_env_scrub(char **environment, const dsh_env_rules *rules);

/*
 * Whether `pattern` has the form dsh_environment_pattern_check() accepts:
 * non-empty, only [A-Za-z0-9_*?], and no wildcard unless `wildcards` (an
 * allowed name is exact).  The launchers' copy of that rule (they link
 * core/ alone), so that a pattern one of them takes is one the library
 * would have given it.
 */
bool dsh_env_pattern_well_formed(const char *pattern, bool wildcards);

#endif
