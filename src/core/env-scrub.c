/* SPDX-License-Identifier: MIT */
/*
 * The command's environment without its secrets (core/env-scrub.h).
 *
 * The match is this file's own, not fnmatch(3): a pattern holds only `*`
 * and `?` (dsh_environment_pattern_check()), and the comparison folds ASCII
 * case byte by byte.  fnmatch's FNM_CASEFOLD folds by the locale, and a
 * library's caller may have set one where folding 'I' is not 'i' (tr_TR), or
 * where a name that is not valid in its multi-byte encoding fails to match
 * at all — a secret kept because of the caller's locale.  Here the verdict
 * depends on the bytes alone, in the library and in both launchers alike.
 */
#include <stddef.h>
#include <string.h>

#include "core/env-scrub.h"

static unsigned char fold(unsigned char byte)
{
        return byte >= 'A' && byte <= 'Z' ? (unsigned char) (byte - 'A' + 'a') : byte;
}

/*
 * Whether the name `name` (`length` bytes) matches `pattern` (`*`: any run,
 * `?`: one byte, anything else itself, ASCII case folded).  The classic
 * single backtrack: on a mismatch the last `*` takes one more byte, so the
 * work is bounded by the product of the lengths, with no recursion.
 */
static bool name_matches(const char *pattern, const char *name, size_t length)
{
        const unsigned char *p = (const unsigned char *) pattern;
        const unsigned char *star = NULL;
        size_t at = 0, star_at = 0;

        while (at < length) {
                if (*p == '*') {
                        star = ++p;
                        star_at = at;
                } else if (*p && (*p == '?' || fold(*p) == fold((unsigned char) name[at]))) {
                        p++;
                        at++;
                } else if (star) {
                        p = star;
                        at = ++star_at;
                } else {
                        return false;
                }
        }
        while (*p == '*')
                p++;
        return *p == '\0';
}

static bool name_allowed(const char *name, size_t length, char *const *allow)
{
        for (; allow && *allow; allow++)
                if (strlen(*allow) == length && memcmp(*allow, name, length) == 0)
                        return true;
        return false;
}

bool dsh_env_name_denied(const char *name, const dsh_env_rules *rules)
{
        const char *equals = strchr(name, '=');
        size_t length = equals ? (size_t) (equals - name) : strlen(name);

        if (!rules || name_allowed(name, length, rules->allow))
                return false;
        for (char *const *pattern = rules->deny; pattern && *pattern; pattern++)
                if (name_matches(*pattern, name, length))
                        return true;
        return false;
}

/*
 * Compacts in place: a removed entry's slot is taken by the next kept one,
 * and the array ends where the kept ones end.  Every entry of a name is
 * judged on its own, so a name given twice (execve() allows it, and getenv
 * would find the first) is removed twice.
 */
size_t dsh_env_scrub(char **environment, const dsh_env_rules *rules)
{
        size_t kept = 0, removed = 0;

        if (!environment)
                return 0;
        for (size_t i = 0; environment[i]; i++) {
                if (dsh_env_name_denied(environment[i], rules))
                        removed++;
                else
                        environment[kept++] = environment[i];
        }
        environment[kept] = NULL;
        return removed;
}

bool dsh_env_pattern_well_formed(const char *pattern, bool wildcards)
{
        if (!pattern || !pattern[0])
                return false;
        for (const char *c = pattern; *c; c++) {
                bool plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                             *c == '_';

                if (!plain && !(wildcards && (*c == '*' || *c == '?')))
                        return false;
        }
        return true;
}
