/* SPDX-License-Identifier: MIT */
/* The per-call execution policy: ownership and the checks every backend relies on. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/path.h"
#include "policy/network-policy.h"

void dsh_policy_clear(dsh_policy *policy)
{
        if (!policy)
                return;
        free(policy->workspace_root);
        dsh_strv_free(policy->additional_writable_roots);
        free(policy->session_id);
        dsh_strv_free(policy->allowed_unix_sockets);
        dsh_network_policy_clear(&policy->network);
        dsh_strv_free(policy->masked_paths);
        dsh_strv_free(policy->allowed_environment);
        *policy = (dsh_policy) DSH_POLICY_INIT;
}

static int copy_optional_string(char **out, const char *in)
{
        *out = NULL;
        if (!in)
                return 0;
        *out = strdup(in);
        return *out ? 0 : -ENOMEM;
}

int dsh_policy_copy(dsh_policy *out, const dsh_policy *in)
{
        *out = (dsh_policy) DSH_POLICY_INIT;
        out->mode = in->mode;
        if (copy_optional_string(&out->workspace_root, in->workspace_root) < 0 ||
            copy_optional_string(&out->session_id, in->session_id) < 0)
                goto out_of_memory;
        if (in->additional_writable_roots) {
                out->additional_writable_roots = dsh_strv_copy(in->additional_writable_roots);
                if (!out->additional_writable_roots)
                        goto out_of_memory;
        }
        if (in->allowed_unix_sockets) {
                out->allowed_unix_sockets = dsh_strv_copy(in->allowed_unix_sockets);
                if (!out->allowed_unix_sockets)
                        goto out_of_memory;
        }
        if (dsh_network_policy_copy(&out->network, &in->network) < 0)
                goto out_of_memory;
        if ((in->masked_paths && !(out->masked_paths = dsh_strv_copy(in->masked_paths))) ||
            (in->allowed_environment && !(out->allowed_environment = dsh_strv_copy(in->allowed_environment))))
                goto out_of_memory;
        return 0;
out_of_memory:
        dsh_policy_clear(out);
        return -ENOMEM;
}

/*
 * The workspace root becomes a Landlock rule or a bind mount.  It is
 * canonicalized with filesystem semantics so that `dir/link/..` names the
 * directory a process that chdir()s there really lands in, not a lexical
 * parent that could be somewhere else entirely.
 */
static int prepare_workspace_root(dsh_policy *policy, dsh_error *error)
{
        const char *root = policy->workspace_root;
        char canonical[PATH_MAX];
        struct stat status;

        if (!root || root[0] != '/')
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, EINVAL,
                                     "workspace root must be an absolute path: \"%s\"", root ? root : "");
        if (!realpath(root, canonical))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, errno,
                                     "workspace root \"%s\" cannot be resolved: %s", root, strerror(errno));
        if (stat(canonical, &status) < 0 || !S_ISDIR(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, ENOTDIR,
                                     "workspace root \"%s\" is not a directory", root);
        if (strcmp(canonical, root) != 0) {
                char *copy = strdup(canonical);
                if (!copy)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                free(policy->workspace_root);
                policy->workspace_root = copy;
        }
        return 0;
}

/*
 * An extra writable root is a grant the caller asked for by name.  A symlink
 * is refused rather than followed — the last component or any directory on
 * the way: a link's target may change between this check and the grant (a
 * command of an earlier call may own the link), and a grant must say exactly
 * what it opens.
 */
static int check_additional_root(const char *root, char canonical[PATH_MAX], dsh_error *error)
{
        dsh_autofree char *spelled = NULL;
        struct stat status;

        if (root[0] != '/')
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EINVAL,
                                     "additional writable root must be an absolute path: \"%s\"", root);
        if (lstat(root, &status) < 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                     "additional writable root \"%s\" does not exist: %s", root, strerror(errno));
        if (S_ISLNK(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, ELOOP,
                                     "additional writable root \"%s\" is a symlink", root);
        if (!S_ISDIR(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, ENOTDIR,
                                     "additional writable root \"%s\" is not a directory", root);
        if (!realpath(root, canonical))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                     "additional writable root \"%s\" cannot be resolved: %s", root, strerror(errno));
        spelled = dsh_path_normalize_lexically(root);
        if (!spelled)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (strcmp(spelled, canonical) != 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, ELOOP,
                                     "additional writable root \"%s\" goes through a symlink (its real path is "
                                     "\"%s\"): name the real directory",
                                     root, canonical);
        return 0;
}

static bool strv_contains(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

static int prepare_additional_roots(dsh_policy *policy, dsh_error *error)
{
        char **prepared = NULL;
        char canonical[PATH_MAX];
        int result;

        for (char **root = policy->additional_writable_roots; root && *root; root++) {
                result = check_additional_root(*root, canonical, error);
                if (result < 0)
                        goto fail;
                if (strv_contains(prepared, canonical))
                        continue;
                result = dsh_strv_append(&prepared, canonical);
                if (result < 0) {
                        dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                        goto fail;
                }
        }
        dsh_strv_free(policy->additional_writable_roots);
        policy->additional_writable_roots = prepared;
        return 0;
fail:
        dsh_strv_free(prepared);
        return result;
}

/*
 * An allow-listed unix socket must be one now: a name that is missing or is
 * no socket is the caller's mistake, said here rather than found later as a
 * refused connect.  The supervisor opens it again and compares by inode.
 */
static int check_allowed_unix_sockets(const dsh_policy *policy, dsh_error *error)
{
        for (char **path = policy->allowed_unix_sockets; path && *path; path++) {
                struct stat status;

                if ((*path)[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EINVAL,
                                             "allowed unix socket must be an absolute path: \"%s\"", *path);
                if (stat(*path, &status) < 0)
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                             "allowed unix socket \"%s\" does not exist: %s", *path, strerror(errno));
                if (!S_ISSOCK(status.st_mode))
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, ENOTSOCK,
                                             "allowed unix socket \"%s\" is not a socket", *path);
        }
        return 0;
}

static int check_allowed_name(const char *name, const char **reason)
{
        return dsh_environment_pattern_check(name, false, reason);
}

/*
 * The call's own secrets entries: each passes `check` (masks: an entry
 * masks.h can expand; allowed names: one name each, never a wildcard that
 * would let a family of secrets through), duplicates dropped.
 */
static int prepare_entries(char ***entries, int (*check)(const char *entry, const char **reason), const char *what,
                           dsh_error *error)
{
        char **prepared = NULL;

        for (char **entry = *entries; entry && *entry; entry++) {
                const char *reason = NULL;

                if (check(*entry, &reason) < 0) {
                        dsh_strv_free(prepared);
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s \"%s\": %s", what, *entry,
                                             reason);
                }
                if (strv_contains(prepared, *entry))
                        continue;
                if (dsh_strv_append(&prepared, *entry) < 0) {
                        dsh_strv_free(prepared);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        dsh_strv_free(*entries);
        *entries = prepared;
        return 0;
}

int dsh_policy_prepare(dsh_policy *policy, dsh_error *error)
{
        int result;

        if ((unsigned) policy->mode >= DSH_MODE_COUNT)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EINVAL, "sandbox/mode carries unknown mode %d",
                                     (int) policy->mode);
        result = prepare_workspace_root(policy, error);
        if (result < 0)
                return result;
        result = prepare_additional_roots(policy, error);
        if (result < 0)
                return result;
        result = check_allowed_unix_sockets(policy, error);
        if (result == 0)
                result = prepare_entries(&policy->masked_paths, dsh_mask_entry_check, "masked path", error);
        if (result == 0)
                result = prepare_entries(&policy->allowed_environment, check_allowed_name,
                                         "allowed environment variable", error);
        if (result < 0)
                return result;
        return dsh_network_policy_prepare(&policy->network, policy->mode, error);
}
