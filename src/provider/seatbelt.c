/* SPDX-License-Identifier: MIT */
/*
 * The Seatbelt profile generator (see dsh-sandbox/seatbelt.h).
 *
 * The profile denies every file write and then allows only the sink and the
 * writable roots; the allow rules come after the deny, and in SBPL the last
 * matching rule wins, so the order is the security argument.  A root is a
 * `subpath` filter: the directory itself and everything beneath it, matched
 * on the path the kernel resolved, which is why the roots must be canonical
 * (on macOS /tmp is /private/tmp: a non-canonical root would match nothing
 * and fail closed, never open).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/seatbelt.h"
#include "base/error.h"
#include "base/path.h"

#define SEATBELT_RUNNER "/usr/bin/sandbox-exec"
#define SEATBELT_READ_ONLY \
        "(version 1) (allow default) (deny file-write*) (allow file-write* (literal \"/dev/null\"))"

/* Appends `text` as an SBPL string literal: wrapped in '"', with '\' and '"' escaped. */
static void put_sbpl_string(FILE *stream, const char *text)
{
        fputc('"', stream);
        for (; *text; text++) {
                if (*text == '\\' || *text == '"')
                        fputc('\\', stream);
                fputc(*text, stream);
        }
        fputc('"', stream);
}

static bool seen_before(char *const *roots, size_t count, const char *root)
{
        for (size_t i = 0; i < count; i++)
                if (strcmp(roots[i], root) == 0)
                        return true;
        return false;
}

static void free_roots(char **roots, size_t count)
{
        for (size_t i = 0; i < count; i++)
                free(roots[i]);
        free(roots);
}

/* Adds the normalized `root` unless an equal one is there; returns 0 or -ENOMEM. */
static int add_root(char **roots, size_t *count, const char *root)
{
        /*
         * The filesystem canonicalization (realpath) comes first, in
         * dsh_policy_prepare on the host that runs the profile; this pass only
         * makes equal spellings equal, so that de-duplication compares like
         * with like.
         */
        char *normalized = dsh_path_normalize_lexically(root);

        if (!normalized)
                return -ENOMEM;
        if (seen_before(roots, *count, normalized)) {
                free(normalized);
                return 0;
        }
        roots[(*count)++] = normalized;
        return 0;
}

int dsh_seatbelt_profile(const dsh_policy *policy, char **profile_out, dsh_error *error)
{
        char **roots = NULL;
        size_t count = 0, capacity;
        char *profile = NULL;
        size_t size = 0;
        FILE *stream;

        *profile_out = NULL;
        if (!dsh_mode_is_confined(policy->mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "mode \"%s\" is not a confined mode", dsh_mode_name(policy->mode));
        capacity = 1 + dsh_strv_length(policy->additional_writable_roots);
        roots = calloc(capacity, sizeof(char *));
        if (!roots)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (policy->mode == DSH_MODE_WORKSPACE_WRITE) {
                if (!policy->workspace_root || policy->workspace_root[0] != '/') {
                        free(roots);
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, EINVAL,
                                             "workspace root must be an absolute path: \"%s\"",
                                             policy->workspace_root ? policy->workspace_root : "");
                }
                if (add_root(roots, &count, policy->workspace_root) < 0) {
                        free_roots(roots, count);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
                for (char **root = policy->additional_writable_roots; root && *root; root++) {
                        if ((*root)[0] != '/') {
                                free_roots(roots, count);
                                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EINVAL,
                                                     "additional writable root must be an absolute path: \"%s\"",
                                                     *root);
                        }
                        if (add_root(roots, &count, *root) < 0) {
                                free_roots(roots, count);
                                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                        }
                }
        }
        stream = open_memstream(&profile, &size);
        if (!stream) {
                free_roots(roots, count);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        fputs(SEATBELT_READ_ONLY, stream);
        if (count > 0) {
                fputs(" (allow file-write*", stream);
                for (size_t i = 0; i < count; i++) {
                        fputs(" (subpath ", stream);
                        put_sbpl_string(stream, roots[i]);
                        fputc(')', stream);
                }
                fputc(')', stream);
        }
        free_roots(roots, count);
        if (fclose(stream) != 0 || !profile) {
                free(profile);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        *profile_out = profile;
        return 0;
}

int dsh_seatbelt_confine(char *const *argv, const dsh_policy *policy, dsh_confined_argv *out, dsh_error *error)
{
        static const char *const fatal[] = { "sandbox-exec: ", NULL };
        dsh_autofree char *profile = NULL;
        int result;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        result = dsh_seatbelt_profile(policy, &profile, error);
        if (result < 0)
                return result;
        if (dsh_strv_append(&out->argv, SEATBELT_RUNNER) < 0 || dsh_strv_append(&out->argv, "-p") < 0 ||
            dsh_strv_append(&out->argv, profile) < 0 || dsh_strv_append(&out->argv, "--") < 0)
                goto out_of_memory;
        for (; *argv; argv++)
                if (dsh_strv_append(&out->argv, *argv) < 0)
                        goto out_of_memory;
        out->enforcement = DSH_ENFORCEMENT_FULL;
        if (dsh_strv_append(&out->denial_signatures, "operation not permitted") < 0)
                goto out_of_memory;
        out->backend = strdup("seatbelt");
        if (!out->backend || dsh_confined_argv_add_rule(out, NULL, 0, fatal, NULL) < 0)
                goto out_of_memory;
        return 0;
out_of_memory:
        dsh_confined_argv_clear(out);
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}
