/* SPDX-License-Identifier: MIT */
/*
 * The bwrap (bubblewrap) backend.
 *
 * Profile (docs/backends.md: the upstream one, then what we add):
 *   bwrap --ro-bind / / --dev /dev --unshare-pid --unshare-ipc --proc /proc
 *         [--ro-bind-try /proc/KNOB /proc/KNOB]... --die-with-parent --new-session
 *         --cap-drop ALL --cap-add CAP_SETPCAP
 *         read-only:       --tmpfs /tmp [--ro-bind-try P P]...
 *         workspace-write: --bind-fd FD /tmp (the session's scratch; else --tmpfs /tmp)
 *                          --bind-fd FD WS [--bind-fd FD ROOT]... [pins, read-only binds]
 *                          [--tmpfs SCRATCH-BASE --bind-fd FD CACHE]
 *         --setenv TMPDIR /tmp [--setenv CACHE-VARIABLE DIR]...
 *         [--chdir DIR] [--json-status-fd N] -- dsh-sandbox-exec [--status-fd M] -- ARGV...
 *
 * Every host path is visible read-only; workspace-write rebinds the workspace
 * and each extra root read-write (minus the shield: src/shield/shield.c).  The
 * command's /tmp: under read-only a fresh tmpfs (scratch space that changes
 * nothing on the host; the workspace, the extra roots and the cwd, when
 * beneath /tmp, are bound back read-only over it so the command still sees
 * them); under workspace-write the session's scratch temp area
 * (src/provider/scratch.h), private to the session and kept across its calls, or a
 * tmpfs per call when the provider has no scratch.  The scratch base, every
 * session's, is hidden behind a tmpfs, and only the call's own cache
 * directory is bound back, writable, at its host path (where the cache
 * variables point).  A denied write fails with EROFS, bwrap's dialect
 * "read-only file system".
 *
 * Beyond the upstream profile, each for a stated reason (the details are
 * above the code that does it):
 *   /proc knobs     read-only: uid 0 without capabilities may still write
 *                   root-owned sysctls (proc_read_only below);
 *   --unshare-ipc   the host's System V IPC and message queues out of reach;
 *   --new-session   no controlling terminal (and dsh-sandbox-exec's seccomp
 *                   filter refuses TIOCSTI on any terminal it could take);
 *                   a pty the caller made for the command
 *                   (dsh_spawn_options.controlling_terminal) becomes the
 *                   command's own, in a session of its own inside;
 *   --cap-drop ALL  started by root, bwrap keeps the caller's capabilities
 *                   for the command: with CAP_SYS_ADMIN it could simply
 *                   `mount -o remount,rw /`; --cap-add CAP_SETPCAP only so
 *                   that dsh-sandbox-exec can empty the bounding set (which
 *                   --cap-drop leaves full) and lock the securebits;
 *   --bind-fd       (spawn only) what is bound is what was checked: roots,
 *                   pins and protected paths opened by fd, no symlink followed;
 *   --chdir         (spawn only, when the caller names the command's cwd)
 *                   the cwd entered by path inside the sandbox, so the
 *                   command sits on the sandbox's mount of it; without it
 *                   bwrap falls back to $HOME when the cwd is not there
 *                   (set_chdir_path());
 *   --json-status-fd (spawn only) bwrap reports out of band whether it
 *                   exec'd at all: a failure before exec is a runner failure,
 *                   never the command's own exit status, and a confined
 *                   child cannot forge that channel (bwrap closes it);
 *   dsh-sandbox-exec the last step inside: the caller's stdio re-homed into
 *                   the sandbox's mounts, capabilities emptied, exec failures
 *                   reported out of band (tools/sandbox-exec.c);
 *   held-back watch (the bash tool's spawn only) inotify on the directories of
 *                   what is bound read-only, armed before bwrap starts: a
 *                   refused replacement of .git/config (EBUSY, or a git that
 *                   exits 0 regardless) is reported as a denial
 *                   (src/provider/held-back-watch.c);
 *   fds             dsh_provider_spawn() closes every fd above 2 but the ones
 *                   bwrap needs before exec'ing it (bwrap passes inherited fds
 *                   through; dsh-sandbox-exec closes whatever is left).
 * The private PID namespace with its own /proc (upstream) means /proc/1/root
 * and /proc/PID/cwd name only sandboxed processes: no path back to a host
 * process's writable view; and every process of the sandbox dies with it.
 *
 * The bwrap binary is never taken from a place the confined command (or a
 * checked-out repository) could have written: see dsh_bwrap_find().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider/backend.h"
#include "base/error.h"
#include "provider/held-back-watch.h"
#include "base/path.h"
#include "base/path-fd.h"
#include "shield/shield.h"
#include "core/sandbox-exec-status.h"
#include "provider/spawn.h"

#define BWRAP_TEMP_AREA "/tmp"
#define BWRAP_FATAL_SIGNATURE "bwrap: "
#define BWRAP_DENIAL_SIGNATURE "read-only file system"
#define EXEC_HELPER_NAME "dsh-sandbox-exec"
#define EXEC_HELPER_FATAL_SIGNATURE "dsh-sandbox-exec: "

/* Where a distribution installs bwrap, in order of preference.  Root-owned
 * system directories: an unprivileged command cannot plant a binary there. */
static const char *const trusted_bwrap_paths[] = {
        "/usr/bin/bwrap",
        "/usr/local/bin/bwrap",
        "/bin/bwrap",
        NULL,
};

/* Owned by root and writable by nobody else: what no confined command can replace. */
static bool owned_by_root_only(const struct stat *status)
{
        return status->st_uid == 0 && !(status->st_mode & (S_IWGRP | S_IWOTH));
}

static bool ancestors_owned_by_root_only(const char *canonical)
{
        char directory[PATH_MAX];
        struct stat status;
        char *slash;

        if (strlen(canonical) >= sizeof(directory))
                return false;
        strcpy(directory, canonical);
        while ((slash = strrchr(directory, '/'))) {
                if (slash == directory)
                        return stat("/", &status) == 0 && owned_by_root_only(&status);
                *slash = '\0';
                if (stat(directory, &status) < 0 || !owned_by_root_only(&status))
                        return false;
        }
        return false;
}

/*
 * The runner must be a file that no confined command could have written:
 * the canonical binary and every directory above it are owned by root and
 * writable by root alone (so /tmp, ~/.local/bin or a checkout never
 * qualify).  Otherwise a workspace-write call covering that directory could
 * replace it, and the next call — read-only or not — would run the
 * replacement unconfined.  Returns the canonical path, or NULL.
 */
char *dsh_bwrap_trusted_binary(const char *path)
{
        char *canonical = realpath(path, NULL);
        struct stat status;

        if (!canonical)
                return NULL;
        if (stat(canonical, &status) == 0 && S_ISREG(status.st_mode) && owned_by_root_only(&status) &&
            access(canonical, X_OK) == 0 && ancestors_owned_by_root_only(canonical))
                return canonical;
        free(canonical);
        return NULL;
}

/*
 * PATH is not searched: ownership alone cannot tell a system directory from
 * root's own ~/.local/bin (root owns both), and a bwrap planted there by a
 * confined command would become the runner of every later call.  The fixed
 * locations are refused as writable roots by every backend (shield.c).
 */
char *dsh_bwrap_find(const dsh_provider *provider, char **reason)
{
        *reason = NULL;
        if (provider->bwrap_path) {
                /* Named explicitly by the caller (the harness's own environment): its word is taken. */
                if (access(provider->bwrap_path, X_OK) == 0)
                        return strdup(provider->bwrap_path);
                if (asprintf(reason, "the configured bwrap %s is not executable: %s", provider->bwrap_path,
                             strerror(errno)) < 0)
                        *reason = NULL;
                return NULL;
        }
        for (const char *const *path = trusted_bwrap_paths; *path; path++) {
                char *found = dsh_bwrap_trusted_binary(*path);

                if (found)
                        return found;
        }
        *reason = strdup("bubblewrap is not installed where it can be trusted (no root-owned bwrap in /usr/bin, "
                         "/usr/local/bin or /bin): install the bubblewrap package, or name the binary with "
                         "$DSH_SANDBOX_BWRAP");
        return NULL;
}

/*
 * Kernel knobs in the sandbox's fresh /proc, bound read-only over it.  bwrap
 * itself covers only /proc/irq and /proc/bus of a new /proc, and only when
 * they look writable to it; but uid 0 without any capability may still write
 * root-owned sysctls by their mode alone — kernel.core_pattern set to
 * "|program" makes the kernel run that program as root outside any sandbox
 * at the next crash — and /proc/sysrq-trigger, /proc/irq/<n>/smp_affinity
 * and /proc/acpi/wakeup check no capability either.  The read-only set of
 * container runtimes (OCI's default), plus /proc/acpi; "-try": a kernel
 * without one of them simply has nothing there to write.  Reading stays
 * allowed, as everywhere (reads are outside the modes' vocabulary).
 */
static const char *const proc_read_only[] = {
        "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/acpi", NULL,
};

/*
 * One bind of a workspace-write profile.  By fd when the call spawns bwrap
 * itself (--bind-fd / --ro-bind-fd: bwrap mounts the very directory that was
 * checked, opened beneath its writable root with no symlink followed, so
 * nothing renamed or repointed in between can change what is bound); by
 * name in an argv a harness spawns later (confine), which cannot carry fds.
 */
struct bwrap_bind {
        const char *path;       /* canonical; borrowed from the policy or the shield */
        bool writable;
        int fd;                 /* O_PATH, owned; -1: bound by name */
};

/* Everything one bwrap call needs besides the policy: the runner, the last step inside, the shield, the binds. */
struct bwrap_call {
        char *bwrap;            /* the trusted runner */
        char *exec_helper;      /* dsh-sandbox-exec, run by bwrap inside the sandbox */
        dsh_shield shield;
        struct bwrap_bind *binds;       /* workspace-write: in mount order (see plan_binds()) */
        size_t bind_count;
        int json_status_fd;     /* bwrap's --json-status-fd, or -1 */
        int exec_status_fd;     /* dsh-sandbox-exec's --status-fd, or -1 */
        const dsh_scratch *scratch;     /* the prepared policy's (borrowed); none: a tmpfs on /tmp */
        bool scratch_by_fd;     /* spawn: the scratch is bound from its fds; confine: by name */
        char **variables;       /* NAME, VALUE pairs for --setenv (scratch.h) */
        bool controlling_terminal;      /* dsh_spawn_options.controlling_terminal: dsh-sandbox-exec takes stdin's */
        char *chdir_path;       /* spawn only: --chdir, the path of the caller's cwd fd; NULL: none */
};

#define BWRAP_CALL_INIT { NULL, NULL, DSH_SHIELD_INIT, NULL, 0, -1, -1, NULL, false, NULL, false, NULL }

static void bwrap_call_clear(struct bwrap_call *call)
{
        for (size_t i = 0; i < call->bind_count; i++)
                if (call->binds[i].fd >= 0)
                        close(call->binds[i].fd);
        free(call->binds);
        free(call->bwrap);
        free(call->exec_helper);
        free(call->chdir_path);
        dsh_shield_clear(&call->shield);
        dsh_strv_free(call->variables);
        *call = (struct bwrap_call) BWRAP_CALL_INIT;
}

/*
 * The binds over the read-only root, in the order the mounts must be made:
 * the roots, the git directories a linked worktree needs, then the pins
 * (each directory between a root and a protected path bound onto itself: a
 * mount point cannot be renamed or removed, so no ancestor can be moved
 * away with the protection riding on it), and last the read-only binds over
 * what is protected.
 */
static int plan_binds(struct bwrap_call *call, const dsh_policy *policy)
{
        const dsh_shield *shield = &call->shield;
        size_t capacity = 1 + dsh_strv_length(policy->additional_writable_roots) +
                          dsh_strv_length(shield->extra_writable) + dsh_strv_length(shield->pins) +
                          dsh_strv_length(shield->read_only);
        struct {
                char *const *paths;
                bool writable;
        } groups[] = {
                { policy->additional_writable_roots, true },
                { shield->extra_writable, true },
                { shield->pins, true },
                { shield->read_only, false },
        };

        call->binds = calloc(capacity, sizeof(*call->binds));
        if (!call->binds)
                return -ENOMEM;
        call->binds[call->bind_count++] = (struct bwrap_bind) { policy->workspace_root, true, -1 };
        for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
                for (char *const *path = groups[g].paths; path && *path; path++)
                        call->binds[call->bind_count++] = (struct bwrap_bind) { *path, groups[g].writable, -1 };
        return 0;
}

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* The fd a path beneath one of the call's writable directories is opened from: the innermost that holds it. */
static int holder_fd(const struct bwrap_call *call, size_t before, const dsh_prepared_policy *prepared,
                     const char *path, const char **relative)
{
        int best = -1;
        size_t best_length = 0;

        for (size_t i = 0; i < before; i++) {
                const char *rest = call->binds[i].writable ? dsh_path_relative_to(path, call->binds[i].path) : NULL;
                size_t length = strlen(call->binds[i].path);

                if (rest && call->binds[i].fd >= 0 && (best < 0 || length > best_length)) {
                        best = call->binds[i].fd;
                        best_length = length;
                        *relative = rest;
                }
        }
        (void) prepared;
        return best;
}

/*
 * Opens every bind's source for a spawn.  The roots come from the prepared
 * policy (opened right after their check); a git directory outside them is
 * opened by its canonical path refusing symlinks; every pin and protected
 * path is opened beneath the innermost writable directory that holds it,
 * refusing symlinks and anything outside (RESOLVE_BENEATH): a swap since the
 * shield was planned fails the call instead of moving the protection.
 */
static int open_bind_sources(struct bwrap_call *call, const dsh_prepared_policy *prepared, dsh_error *error)
{
        for (size_t i = 0; i < call->bind_count; i++) {
                struct bwrap_bind *bind = &call->binds[i];
                int root_fd = dsh_prepared_policy_root_fd(prepared, bind->path);
                const char *relative = NULL;
                int holder;

                if (root_fd >= 0) {
                        bind->fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
                } else if (strv_has(call->shield.extra_writable, bind->path)) {
                        bind->fd = dsh_path_open_canonical(bind->path, true);
                } else {
                        /* A pin or a protected path: only ever beneath a writable bind made before it. */
                        holder = holder_fd(call, i, prepared, bind->path, &relative);
                        bind->fd = holder >= 0 ? dsh_path_open_beneath(holder, relative, true) : -EXDEV;
                }
                if (bind->fd < 0) {
                        int failure = root_fd >= 0 ? errno : -bind->fd;

                        bind->fd = -1;
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, failure,
                                             "cannot open \"%s\" to bind it: %s (was it renamed or replaced by a "
                                             "symlink since it was checked?)",
                                             bind->path, strerror(failure));
                }
        }
        return 0;
}

static int append_words(char ***argv, const char *const *words)
{
        for (; *words; words++)
                if (dsh_strv_append(argv, *words) < 0)
                        return -ENOMEM;
        return 0;
}

static int append_bind(char ***argv, const char *option, const char *path)
{
        const char *words[] = { option, path, path, NULL };

        return append_words(argv, words);
}

static int append_number_option(char ***argv, const char *option, int number)
{
        char text[16];
        const char *words[] = { option, text, NULL };

        snprintf(text, sizeof(text), "%d", number);
        return append_words(argv, words);
}

/* `--bind-fd FD DESTINATION` from the call's scratch fd, or `--bind SOURCE DESTINATION` by name (confine). */
static int append_scratch_bind(char ***argv, const struct bwrap_call *call, int fd, const char *source,
                               const char *destination)
{
        char number[16];
        const char *by_fd[] = { "--bind-fd", number, destination, NULL };
        const char *by_name[] = { "--bind", source, destination, NULL };

        snprintf(number, sizeof(number), "%d", fd);
        return append_words(argv, call->scratch_by_fd ? by_fd : by_name);
}

/*
 * The command's /tmp under workspace-write, made first (a workspace beneath
 * /tmp is then bound on top of it, not hidden by it): the session's scratch
 * temp area, so that the calls of one session share their temp files and
 * no other session sees them; a private tmpfs when there is no scratch.
 */
static int append_temp_area(char ***argv, const struct bwrap_call *call)
{
        static const char *const private_temp[] = { "--tmpfs", BWRAP_TEMP_AREA, NULL };

        if (!dsh_scratch_present(call->scratch))
                return append_words(argv, private_temp);
        return append_scratch_bind(argv, call, call->scratch->temp_fd, call->scratch->temp_path, BWRAP_TEMP_AREA);
}

/*
 * Made last, over whatever the shield bound: every session's scratch is
 * hidden behind a tmpfs (another session's temp files and caches are none
 * of this command's business), and this call's cache directory alone is
 * bound back, writable, at its host path — where the cache variables
 * point, the same path Landlock grants.
 */
static int append_scratch_cache(char ***argv, const struct bwrap_call *call)
{
        const dsh_scratch *scratch = call->scratch;
        const char *hide[] = { "--tmpfs", NULL, NULL };

        if (!dsh_scratch_present(scratch))
                return 0;
        hide[1] = scratch->base_path;
        if (append_words(argv, hide) < 0)
                return -ENOMEM;
        return append_scratch_bind(argv, call, scratch->cache_fd, scratch->cache_path, scratch->cache_path);
}

/*
 * The directory the command starts in (the caller's cwd, or the --chdir it
 * asked for), when it lies beneath the host's /tmp, which the session's
 * /tmp covers: bound back read-only, as the host shows it, before the roots
 * (a root beneath it is then bound on top), so a user who works in
 * /tmp/checkout can still run there; it was readable before and stays only
 * that.  Beneath a writable root it needs nothing.  The mount point is made
 * in the session's scratch, which earlier calls of this session could
 * write: where a component of it there is anything but a directory (a
 * symlink planted to aim the bind, or the start, elsewhere), the call is
 * refused (check_start_directory()) rather than run anywhere else.
 * Returns 1 with *path_out (caller frees) to bind, 0 when nothing is to be
 * bound, -ELOOP for a planted entry (*path_out names the directory), -ENOMEM.
 */
static int start_directory_to_bind(const struct bwrap_call *call, const dsh_policy *policy, char **path_out)
{
        dsh_autofree char *cwd = call->chdir_path ? strdup(call->chdir_path) : getcwd(NULL, 0);
        dsh_autoclose int planted = -1;
        struct stat status;

        *path_out = NULL;
        if (!cwd)
                return call->chdir_path ? -ENOMEM : 0;
        if (!dsh_path_is_beneath(cwd, BWRAP_TEMP_AREA) || strcmp(cwd, BWRAP_TEMP_AREA) == 0 ||
            !dsh_scratch_present(call->scratch) || dsh_path_is_beneath(cwd, policy->workspace_root))
                return 0;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(cwd, *root))
                        return 0;
        planted = dsh_openat2(call->scratch->temp_fd, cwd + strlen(BWRAP_TEMP_AREA "/"),
                              O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
        *path_out = dsh_steal_pointer(&cwd);
        if (planted >= 0 && (fstat(planted, &status) < 0 || !S_ISDIR(status.st_mode)))
                return -ELOOP;
        if (planted < 0 && planted != -ENOENT)
                return -ELOOP;
        return 1;
}

static int append_start_directory(char ***argv, const struct bwrap_call *call, const dsh_policy *policy)
{
        dsh_autofree char *path = NULL;
        int found = start_directory_to_bind(call, policy, &path);

        if (found == -ENOMEM)
                return -ENOMEM;
        return found == 1 ? append_bind(argv, "--ro-bind-try", path) : 0;
}

/* Spawn: a start directory the session's scratch has something planted at is a refusal, named. */
static int check_start_directory(const struct bwrap_call *call, const dsh_policy *policy, dsh_error *error)
{
        dsh_autofree char *path = NULL;
        int found = start_directory_to_bind(call, policy, &path);

        if (found == -ELOOP) {
                dsh_autofree char *detail = NULL;

                if (asprintf(&detail, "the working directory %s is beneath /tmp, and in the session's /tmp an "
                                      "earlier call left something other than a directory on its path: refusing "
                                      "to start the command anywhere else", path) < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                return dsh_error_set_unavailable(error, policy->mode, detail);
        }
        return found == -ENOMEM ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory") : 0;
}

/* The writable part of a workspace-write profile: the temp area first (and the start directory beneath it),
 * then every bind in its order, then the scratch's cache. */
static int append_writable_binds(char ***argv, const struct bwrap_call *call, const dsh_policy *policy)
{
        int result = append_temp_area(argv, call);

        if (result == 0)
                result = append_start_directory(argv, call, policy);

        for (size_t i = 0; result == 0 && i < call->bind_count; i++) {
                const struct bwrap_bind *bind = &call->binds[i];
                char number[16];
                const char *words[] = { NULL, number, bind->path, NULL };

                if (bind->fd < 0) {
                        result = append_bind(argv, bind->writable ? "--bind" : "--ro-bind", bind->path);
                        continue;
                }
                words[0] = bind->writable ? "--bind-fd" : "--ro-bind-fd";
                snprintf(number, sizeof(number), "%d", bind->fd);
                result = append_words(argv, words);
        }
        if (result == 0)
                result = append_scratch_cache(argv, call);
        return result;
}

/*
 * Read-only: a fresh tmpfs on /tmp, so mktemp, a compiler's output and
 * Python's tempfile work and nothing reaches the host.  What the command
 * could see before beneath the host's /tmp and needs — the workspace, the
 * extra roots, the cwd it starts in — is bound back over it, read-only, as
 * it was.  By name: a name swapped meanwhile can only show the command
 * something else it could read anyway, never make anything writable.
 */
static int append_read_only_temp_area(char ***argv, const dsh_policy *policy)
{
        static const char *const private_temp[] = { "--tmpfs", BWRAP_TEMP_AREA, NULL };
        dsh_autofree char *cwd = getcwd(NULL, 0);
        int result = append_words(argv, private_temp);

        if (result == 0 && dsh_path_is_beneath(policy->workspace_root, BWRAP_TEMP_AREA))
                result = append_bind(argv, "--ro-bind-try", policy->workspace_root);
        for (char **root = policy->additional_writable_roots; result == 0 && root && *root; root++)
                if (dsh_path_is_beneath(*root, BWRAP_TEMP_AREA))
                        result = append_bind(argv, "--ro-bind-try", *root);
        if (result == 0 && cwd && dsh_path_is_beneath(cwd, BWRAP_TEMP_AREA))
                result = append_bind(argv, "--ro-bind-try", cwd);
        return result;
}

/* --setenv for each of the call's variables (TMPDIR, the caches: scratch.h). */
static int append_variables(char ***argv, const struct bwrap_call *call)
{
        for (char **pair = call->variables; pair && pair[0] && pair[1]; pair += 2) {
                const char *words[] = { "--setenv", pair[0], pair[1], NULL };

                if (append_words(argv, words) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * The whole argv.  Capabilities: run by root, bwrap applies --cap-drop to
 * the effective, permitted and inheritable sets only; the bounding set stays
 * full, so an exec of a file-capable or setuid program could take them back
 * were it not for no_new_privs.  --cap-add CAP_SETPCAP is for
 * dsh-sandbox-exec alone: with it, the last step inside empties the bounding
 * and ambient sets, locks the securebits and drops that capability too,
 * before it execs the command.  (A user namespace would empty the bounding
 * set as well, but would unmap every group but the caller's: a chgrp to one
 * of the user's own groups would fail.)
 */
static int build_argv(char ***argv, const struct bwrap_call *call, const dsh_policy *policy, char *const *command)
{
        static const char *const namespaces[] = {
                "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-ipc", "--proc", "/proc", NULL,
        };
        static const char *const process[] = {
                "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--cap-add", "CAP_SETPCAP", NULL,
        };
        int result = dsh_strv_append(argv, call->bwrap);

        if (result == 0)
                result = append_words(argv, namespaces);
        for (const char *const *path = proc_read_only; result == 0 && *path; path++)
                result = append_bind(argv, "--ro-bind-try", *path);
        if (result == 0)
                result = append_words(argv, process);
        if (result == 0 && policy->mode == DSH_MODE_WORKSPACE_WRITE)
                result = append_writable_binds(argv, call, policy);
        else if (result == 0)
                result = append_read_only_temp_area(argv, policy);
        if (result == 0)
                result = append_variables(argv, call);
        if (result == 0 && call->chdir_path) {
                const char *chdir_words[] = { "--chdir", call->chdir_path, NULL };

                result = append_words(argv, chdir_words);
        }
        if (result == 0 && call->json_status_fd >= 0)
                result = append_number_option(argv, "--json-status-fd", call->json_status_fd);
        if (result == 0)
                result = dsh_strv_append(argv, "--");
        if (result == 0)
                result = dsh_strv_append(argv, call->exec_helper);
        if (result == 0 && call->exec_status_fd >= 0)
                result = append_number_option(argv, "--status-fd", call->exec_status_fd);
        if (result == 0 && call->controlling_terminal)
                result = dsh_strv_append(argv, "--controlling-terminal");
        if (result == 0)
                result = dsh_strv_append(argv, "--");
        for (; result == 0 && *command; command++)
                result = dsh_strv_append(argv, *command);
        return result;
}

/*
 * bwrap's dialect, and dsh-sandbox-exec's: its own failures (stdio it could
 * not hand over safely) are runner failures too; a program it cannot execute
 * is the command's failure (126/127) and is worded without that prefix.
 */
static int set_dialect(dsh_confined_argv *out, const dsh_shield *shield)
{
        static const char *const fatal[] = { BWRAP_FATAL_SIGNATURE, EXEC_HELPER_FATAL_SIGNATURE, NULL };

        out->enforcement = DSH_ENFORCEMENT_FULL;
        for (char **reason = shield->unprotected; reason && *reason; reason++)
                if (dsh_confined_argv_add_partial_reason(out, *reason) < 0)
                        return -ENOMEM;
        if (dsh_strv_append(&out->denial_signatures, BWRAP_DENIAL_SIGNATURE) < 0)
                return -ENOMEM;
        out->backend = strdup("bwrap");
        if (!out->backend)
                return -ENOMEM;
        return dsh_confined_argv_add_rule(out, NULL, 0, fatal, NULL);
}

/*
 * The sandbox's own files must exist to be bound read-only over, so a
 * missing one is created now, as an empty private directory — otherwise the
 * command could create it, and its contents, itself.  (Protected subpaths
 * are never created: the shield lists only existing ones to bind, and
 * reports the missing ones.)
 */
static int create_missing_protected(const dsh_shield *shield, dsh_error *error)
{
        for (char **path = shield->read_only; path && *path; path++) {
                int result;

                if (access(*path, F_OK) == 0)
                        continue;
                result = dsh_path_make_directories(*path, 0700);
                if (result < 0)
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, -result,
                                             "cannot create \"%s\" to protect it from the command: %s", *path,
                                             strerror(-result));
        }
        return 0;
}

/* Resolves the runner and the last step of one call, plans its shield, its scratch and its variables. */
static int prepare_call(dsh_provider *provider, const dsh_prepared_policy *prepared, struct bwrap_call *call,
                        dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        char *reason = NULL;
        int result;

        call->scratch = &prepared->scratch;
        call->variables = dsh_scratch_variables(&prepared->scratch, policy->mode);
        if (!call->variables)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");

        call->bwrap = dsh_bwrap_find(provider, &reason);
        if (!call->bwrap) {
                result = dsh_error_set_unavailable(error, policy->mode, reason ? reason : "bwrap cannot be found");
                free(reason);
                return result;
        }
        call->exec_helper = dsh_provider_launcher_path(provider, EXEC_HELPER_NAME);
        if (!call->exec_helper || access(call->exec_helper, X_OK) < 0)
                return dsh_error_set_unavailable(error, policy->mode,
                                                 "the dsh-sandbox-exec helper is not installed");
        result = dsh_shield_plan(provider, policy, NULL, true, &call->shield, error);
        if (result < 0)
                return result;
        if (call->shield.unprotected && provider->require_protected_subpaths)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                     call->shield.unprotected[0]);
        result = create_missing_protected(&call->shield, error);
        if (result == 0 && policy->mode == DSH_MODE_WORKSPACE_WRITE && plan_binds(call, policy) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return result;
}

static int bwrap_confine(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                         dsh_confined_argv *out, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        struct bwrap_call call = BWRAP_CALL_INIT;
        int result = prepare_call(provider, prepared, &call, error);

        /* Only a spawn of its own can check, once the command is gone, what must not have been created. */
        for (char **path = call.shield.must_stay_absent; result == 0 && path && *path; path++) {
                dsh_autofree char *reason = NULL;

                if (asprintf(&reason, "%s could be created by the command to redirect git's hooks and config; "
                                      "dsh-sandbox moves it aside afterwards only when it runs the command itself",
                             *path) < 0 || dsh_strv_append(&call.shield.unprotected, reason) < 0)
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (result == 0 && call.shield.must_stay_absent && provider->require_protected_subpaths)
                result = dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                       "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                       call.shield.unprotected[dsh_strv_length(call.shield.unprotected) - 1]);
        if (result == 0 && (build_argv(&out->argv, &call, policy, argv) < 0 || set_dialect(out, &call.shield) < 0)) {
                dsh_confined_argv_clear(out);
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        bwrap_call_clear(&call);
        return result;
}

/* ------------------------------------------------------------- diagnosis -- */

static bool sysctl_equals(const char *path, const char *value)
{
        char buffer[32] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t length;

        if (fd < 0)
                return false;
        length = read(fd, buffer, sizeof(buffer) - 1);
        close(fd);
        if (length <= 0)
                return false;
        buffer[length] = '\0';
        buffer[strcspn(buffer, "\n")] = '\0';
        return strcmp(buffer, value) == 0;
}

/* Names the host knob that blocks user namespaces, when one visibly does. */
static const char *userns_blocker(void)
{
        if (sysctl_equals("/proc/sys/kernel/unprivileged_userns_clone", "0"))
                return "the sysctl kernel.unprivileged_userns_clone is 0";
        if (sysctl_equals("/proc/sys/user/max_user_namespaces", "0"))
                return "the sysctl user.max_user_namespaces is 0";
        if (sysctl_equals("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"))
                return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns "
                       "is 1; give bwrap an AppArmor profile that allows userns)";
        return NULL;
}

static char *first_runner_line(const char *text)
{
        const char *line = text ? strstr(text, BWRAP_FATAL_SIGNATURE) : NULL;

        if (!line && text && text[0])
                line = text;
        if (!line)
                return NULL;
        return strndup(line, strcspn(line, "\n"));
}

static bool contains_text(const char *haystack, const char *needle)
{
        return haystack && strcasestr(haystack, needle) != NULL;
}

/* bwrap's words for a shortage of fds, memory, processes or namespaces: a bad moment that may pass. */
static bool names_resource_shortage(const char *line)
{
        static const int shortages[] = { EMFILE, ENFILE, ENOMEM, EAGAIN, ENOSPC };

        for (size_t i = 0; i < sizeof(shortages) / sizeof(shortages[0]); i++)
                if (contains_text(line, strerror(shortages[i])))
                        return true;
        return false;
}

static bool names_namespace_failure(const char *line)
{
        return contains_text(line, "namespace") || contains_text(line, "uid map") || contains_text(line, "uid_map") ||
               contains_text(line, "setgroups");
}

/*
 * Turns a failed confined `true` into words a user can act on.  `line` is
 * bwrap's own stderr line (may be NULL).  `*transient` says whether the
 * failure may not recur: only the failures recognised below as facts about
 * the host (namespaces blocked, /proc masked, bwrap too old) are not; a
 * timeout, a resource shortage or anything unrecognised is.  A namespace
 * limit of 0 set by a host knob is a fact, even though the kernel says
 * "No space left on device" for it.  Returns a new string.
 */
static char *explain_failure(const char *line, int exit_code, bool timed_out, long timeout_ms, bool *transient)
{
        const char *blocker = userns_blocker();
        bool namespaces = names_namespace_failure(line);
        char *reason = NULL;
        int length;

        *transient = true;
        if (timed_out) {
                length = asprintf(&reason, "a bwrap probe did not finish within %ld ms (probeTimeoutMs)", timeout_ms);
        } else if (names_resource_shortage(line) && !(namespaces && blocker)) {
                length = asprintf(&reason, "bwrap ran short of a resource while it set up the sandbox; this may pass "
                                           "(bwrap said: %s)",
                                  line);
        } else if (namespaces) {
                *transient = false;
                length = asprintf(&reason,
                                  "bwrap cannot create its namespaces: user namespaces are blocked on this host "
                                  "(%s) (bwrap said: %s)",
                                  blocker ? blocker
                                          : "by the user.max_user_namespaces or kernel.unprivileged_userns_clone "
                                            "sysctl, an AppArmor userns restriction, or a container's seccomp "
                                            "profile",
                                  line);
        } else if (contains_text(line, "proc")) {
                *transient = false;
                length = asprintf(&reason,
                                  "bwrap cannot mount a private /proc, as inside a container that masks /proc "
                                  "(bwrap said: %s)",
                                  line);
        } else if (contains_text(line, "unknown option")) {
                *transient = false;
                length = asprintf(&reason, "this bwrap is too old (0.3.2 or newer is needed for --json-status-fd) "
                                           "(bwrap said: %s)",
                                  line);
        } else if (line) {
                length = asprintf(&reason, "a confined `true` failed under bwrap with status %d (bwrap said: %s)",
                                  exit_code, line);
        } else {
                length = asprintf(&reason, "a confined `true` failed under bwrap with status %d and no message",
                                  exit_code);
        }
        return length < 0 ? NULL : reason;
}

/* "bubblewrap 0.8.0" -> "0.8.0"; NULL when it cannot be learned before `deadline_ms`. */
static char *bwrap_version(const char *bwrap, long long deadline_ms)
{
        char *const argv[] = { (char *) bwrap, (char *) "--version", NULL };
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure;
        dsh_autofree char *text = NULL;
        int output[2], wait_status = 0;
        const char *version;
        pid_t pid;

        if (pipe2(output, O_CLOEXEC) < 0)
                return NULL;
        options.stdout_fd = output[1];
        options.stderr_fd = output[1];
        options.new_process_group = true;  /* the deadline takes whatever it started, too */
        pid = dsh_spawn_exec_plan(&plan, &options, &failure);
        close(output[1]);
        if (pid < 0) {
                close(output[0]);
                return NULL;
        }
        if (dsh_collect_bounded(pid, pid, output[0], deadline_ms, &text, &wait_status) < 0 || !text)
                return NULL;
        version = strrchr(text, ' ');
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !version)
                return NULL;
        return strndup(version + 1, strcspn(version + 1, "\n"));
}

/*
 * Functional: a read-only confined `true` through the same argv spawn()
 * uses (so a bwrap too old for --json-status-fd is found here, not later).
 * The version query and the run share one deadline (the caller's, when it
 * already started one for the whole probe).
 */
/* What the command's /tmp is, per mode (docs/backends.md, "Temp areas and caches"). */
static void add_temp_area_notes(const dsh_provider *provider, dsh_backend_report *report)
{
        (void) dsh_strv_append(&report->notes, "read-only: /tmp is a private tmpfs, empty at each call; TMPDIR=/tmp");
        (void) dsh_strv_append(&report->notes,
                               provider->scratch_dir
                                       ? "workspace-write: /tmp is the session's scratch, kept across its calls and "
                                         "private to it; package-manager caches go to the session's scratch; "
                                         "TMPDIR=/tmp"
                                       : "workspace-write: /tmp is a private tmpfs, empty at each call; TMPDIR=/tmp");
}

static void bwrap_probe(dsh_provider *provider, dsh_backend_report *report)
{
        char *const argv[] = { (char *) "true", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        dsh_autofree char *line = NULL;
        bool started = dsh_provider_begin_probe(provider);
        int exit_code = 0;

        dsh_autofree char *exec_helper = dsh_provider_launcher_path(provider, EXEC_HELPER_NAME);

        report->runner_path = dsh_bwrap_find(provider, &report->reason);
        if (!report->runner_path)
                goto out;  /* not installed, or not where it can be trusted: a fact until someone installs it */
        if (!exec_helper || access(exec_helper, X_OK) < 0) {
                if (asprintf(&report->reason, "the dsh-sandbox-exec helper %s is not executable: %s",
                             exec_helper ? exec_helper : "(no launcher directory)", strerror(errno)) < 0)
                        report->reason = NULL;
                goto out;
        }
        report->version = bwrap_version(report->runner_path, provider->probe_deadline_ms);
        policy.workspace_root = (char *) "/";
        if (dsh_provider_run_bounded(provider, &dsh_backend_bwrap, argv, &policy, &exit_code, &stderr_text,
                                     &error) < 0 &&
            error.code != DSH_ERROR_SANDBOX_UNAVAILABLE) {
                /* Our side could not run it (no pipe, no fd, no memory): says nothing about bwrap. */
                report->transient = true;
                report->reason = strdup(error.message ? error.message : "bwrap cannot be started");
                goto out;
        }
        if (exit_code == 0) {
                report->usable = true;
                report->enforcement = DSH_ENFORCEMENT_FULL;
                add_temp_area_notes(provider, report);
                goto out;
        }
        line = first_runner_line(stderr_text);
        report->reason = explain_failure(line, exit_code, exit_code < 0, provider->probe_timeout_ms,
                                         &report->transient);
out:
        dsh_error_clear(&error);
        dsh_provider_end_probe(provider, started);
}

/* ----------------------------------------------------------------- spawn -- */

/* The number after "child-pid": in a status record, or 0. */
static pid_t parse_child_pid(const char *record)
{
        const char *field = strstr(record, "\"child-pid\"");
        char *end;
        long value;

        if (!field)
                return 0;
        field += strlen("\"child-pid\"");
        field += strspn(field, " \t\n");
        if (*field != ':')
                return 0;
        field++;
        field += strspn(field, " \t\n");
        errno = 0;
        value = strtol(field, &end, 10);
        if (errno || end == field || value <= 1 || value > INT_MAX)
                return 0;
        return (pid_t) value;
}

/*
 * Reads the first record bwrap writes on --json-status-fd: { "child-pid": N,
 * ... } once the sandbox's first process exists.  With a deadline
 * (dsh_monotonic_ms() time; 0: none) it waits no longer than that.  Returns
 * 1 when it came, with *child_pid = N (0 when not a plausible pid), 0 on EOF
 * without it (bwrap failed before creating the sandbox), -ETIMEDOUT when the
 * deadline passed first; sets *exec_seen when an "exit-code" record (written
 * only after an exec) was read along with it.
 */
static int read_first_record(int fd, long long deadline_ms, pid_t *child_pid, bool *exec_seen)
{
        char buffer[1024];
        size_t used = 0;
        ssize_t length;

        *exec_seen = false;
        *child_pid = 0;
        for (;;) {
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                int ready = poll(&poll_fd, 1, dsh_poll_timeout_ms(deadline_ms));

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready == 0)
                        return -ETIMEDOUT;
                if (ready < 0)
                        break;
                length = read(fd, buffer + used, sizeof(buffer) - 1 - used);
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        break;
                used += (size_t) length;
                buffer[used] = '\0';
                if (strchr(buffer, '\n') || used == sizeof(buffer) - 1)
                        break;
        }
        buffer[used] = '\0';
        *exec_seen = strstr(buffer, "\"exit-code\"") != NULL;
        if (!strstr(buffer, "\"child-pid\""))
                return 0;
        *child_pid = parse_child_pid(buffer);
        return 1;
}

/*
 * The process group signals for the command go to: bwrap's --new-session
 * makes the sandbox's init (pid 1 inside, `reported` outside) a session and
 * group leader, and the command runs in its group.  Taken only when
 * `reported` is a child of `runner`: whatever a runner writes (a fake that
 * says "child-pid": 1) must never aim signals at the caller's own group or
 * at every process (kill(-1, ...)).  Returns 0 when it cannot be confirmed.
 */
static pid_t sandbox_process_group(pid_t runner, pid_t reported)
{
        char path[64], stat_line[512];
        const char *fields;
        long parent = 0;
        ssize_t length;
        int fd;

        if (reported <= 1 || reported == runner)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) reported);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        length = read(fd, stat_line, sizeof(stat_line) - 1);
        close(fd);
        if (length <= 0)
                return 0;
        stat_line[length] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold anything, so the fields start after the last ')'. */
        fields = strrchr(stat_line, ')');
        if (!fields || sscanf(fields + 1, " %*c %ld", &parent) != 1)
                return 0;
        return parent == (long) runner ? reported : 0;
}


/* Two status pipes above stdio: bwrap's --json-status-fd and dsh-sandbox-exec's --status-fd. */
static int open_status_pipes(int json_pipe[2], int exec_pipe[2], dsh_error *error)
{
        int result = dsh_pipe_above_stdio(json_pipe);

        if (result == 0) {
                result = dsh_pipe_above_stdio(exec_pipe);
                if (result < 0) {
                        close(json_pipe[0]);
                        close(json_pipe[1]);
                }
        }
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the runner status pipes: %s",
                                     strerror(-result));
        return 0;
}

/*
 * bwrap is gone before the sandbox existed: the command never ran.  Reaps
 * it; -ECHILD tells the provider to learn bwrap's own reason from a probe
 * (its stderr was the caller's).
 */
static int report_early_failure(pid_t pid, dsh_mode mode, dsh_error *error)
{
        char detail[96];
        int wait_status = 0;

        while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
                ;
        snprintf(detail, sizeof(detail), "bwrap exited with status %d before it created the sandbox",
                 WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
        dsh_error_set_unavailable(error, mode, detail);
        return -ECHILD;
}

/* Everything a finished runner left in `fd` (non-blocking), NUL-terminated in `buffer`; closes the fd. */
static void drain_status_fd(int *fd, char *buffer, size_t size)
{
        size_t used = 0;
        ssize_t length;

        buffer[0] = '\0';
        if (*fd < 0)
                return;
        fcntl(*fd, F_SETFL, O_NONBLOCK);
        while (used < size - 1 &&
               ((length = read(*fd, buffer + used, size - 1 - used)) > 0 || (length < 0 && errno == EINTR)))
                if (length > 0)
                        used += (size_t) length;
        buffer[used] = '\0';
        close(*fd);
        *fd = -1;
}

/*
 * What the runner's last step inside the sandbox (dsh-sandbox-exec) said on
 * its own channel: that the program could not be executed (the command's
 * failure, 126/127), or that it could not prepare the command (the runner's).
 */
static void settle_exec_status(dsh_child *child)
{
        char record[700], text[600];
        int errno_value;

        drain_status_fd(&child->exec_status_fd, record, sizeof(record));
        switch (dsh_sandbox_exec_status_parse(record, &errno_value, text, sizeof(text))) {
        case DSH_SANDBOX_EXEC_STATUS_EXEC:
                child->exec_errno = errno_value > 0 ? errno_value : EIO;
                break;
        case DSH_SANDBOX_EXEC_STATUS_HELPER:
                child->runner_failed = true;
                free(child->runner_failure_detail);
                child->runner_failure_detail = strdup(text);
                break;
        case DSH_SANDBOX_EXEC_STATUS_NONE:
                break;
        }
}

/*
 * After waitpid(): bwrap writes its "exit-code" record only once it exec'd,
 * and dsh-sandbox-exec its record only when the exec failed.
 */
static void bwrap_settle(dsh_child *child, int wait_status)
{
        /* No process of the sandbox is left (they die with its init): nothing can race this check. */
        dsh_shield_audit(child->audit_absent, &child->warnings);
        char buffer[4096];

        if (child->runner_status_fd < 0)
                return;
        /*
         * bwrap writes its "exit-code" record before it exits, so after
         * waitpid() the record is in the pipe if it was ever written.  The
         * read does not block: a daemon the command left behind cannot hold
         * the status fd (bwrap closes it before exec), but nothing here
         * should wait on anyone else's goodwill either.
         */
        drain_status_fd(&child->runner_status_fd, buffer, sizeof(buffer));
        if (strstr(buffer, "\"exit-code\""))
                child->command_started = true;
        /* The last step's refusal (stdio it could not hand over) is no sign of a broken runner: the verdict stays. */
        settle_exec_status(child);
        if (child->runner_failed)
                return;
        /*
         * Only a runner that exited with a failure status and never reported
         * an exec is called failed.  A runner killed by a signal may have been
         * running the command when it died: that is the command's outcome.
         */
        if (child->command_started || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) == 0)
                return;
        child->runner_failed = true;
        free(child->runner_failure_detail);
        if (asprintf(&child->runner_failure_detail, "%s exited with status %d before it executed the command",
                     child->facts.backend ? child->facts.backend : "the runner", WEXITSTATUS(wait_status)) < 0)
                child->runner_failure_detail = NULL;
}


/* bwrap wherever the lookup could find it (or the configured one), and the last step it runs inside. */
static char **bwrap_runner_candidates(const dsh_provider *provider)
{
        dsh_autofree char *exec_helper = dsh_provider_launcher_path(provider, EXEC_HELPER_NAME);
        char **candidates = dsh_strv_copy((char *const *) trusted_bwrap_paths);

        if (candidates && provider->bwrap_path && dsh_strv_append(&candidates, provider->bwrap_path) < 0)
                goto out_of_memory;
        if (candidates && exec_helper && dsh_strv_append(&candidates, exec_helper) < 0)
                goto out_of_memory;
        return candidates;
out_of_memory:
        dsh_strv_free(candidates);
        return NULL;
}

static char *bwrap_runner_path(const dsh_provider *provider)
{
        char *reason = NULL;
        char *path = dsh_bwrap_find(provider, &reason);

        free(reason);
        return path;
}

/*
 * The held-back watch, when the caller asked for one (the bash tool): armed
 * on what this call binds read-only inside its writable roots, now, before
 * bwrap is spawned, so that no creation of the command's comes before it
 * (held-back-watch.c).  Under read-only every write is refused in bwrap's
 * dialect already; nothing is held back there.  A watch that cannot be
 * armed costs the call nothing but the report: *arm_errno says why.
 */
static dsh_held_back_watch *arm_held_back_watch(const dsh_child *child, const dsh_policy *policy,
                                                const dsh_shield *shield, int *arm_errno)
{
        dsh_held_back_watch *watch = NULL;

        *arm_errno = 0;
        if (!child->watch_held_back || policy->mode != DSH_MODE_WORKSPACE_WRITE || !shield->read_only)
                return NULL;
        *arm_errno = -dsh_held_back_watch_start(shield->read_only, &watch);
        return watch;
}

/* What a watch that could not be armed leaves unsaid, for the caller to show. */
static void warn_watch_unarmed(dsh_child *child, int arm_errno)
{
        dsh_autofree char *sentence = NULL;

        if (!arm_errno)
                return;
        if (asprintf(&sentence, "the files the sandbox holds back could not be watched (%s): a refused change to "
                                "them may not be reported as a denial", strerror(arm_errno)) < 0)
                return;
        (void) dsh_strv_append(&child->warnings, sentence);
}

/*
 * After bwrap reported its sandbox: the child, with the process group
 * signals for the command go to (see sandbox_process_group()).
 */
static void settle_child(dsh_child *child, pid_t pid, pid_t reported_pid, dsh_confined_argv *facts, dsh_mode mode,
                         bool exec_seen, int json_status_fd, int exec_status_fd)
{
        child->pid = pid;
        child->process_group = sandbox_process_group(pid, reported_pid);
        if (child->process_group == 0)
                child->process_group = pid;  /* unconfirmed: the runner's own group, which it leads */
        child->facts = *facts;
        *facts = (dsh_confined_argv) DSH_CONFINED_ARGV_INIT;
        child->mode = mode;
        child->command_started = exec_seen;
        child->runner_status_fd = json_status_fd;
        child->exec_status_fd = exec_status_fd;
}

/*
 * The caller's cwd fd as the path bwrap enters inside the sandbox (--chdir).
 * The command must start on the sandbox's mount of that directory: bwrap
 * re-resolves the path after its mounts, while a host cwd inherited by fd
 * would sit on the host's mount, where a relative write is not read-only.
 * --chdir, not bwrap's own "keep the cwd", because bwrap silently falls
 * back to $HOME when the old cwd is not in the sandbox (a cwd under the
 * private /tmp): with --chdir that is "bwrap: Can't chdir", a runner
 * failure, and the command does not run elsewhere.  The path is the
 * kernel's for the fd (no symlink); a rename racing the start can only
 * make bwrap enter another directory of the sandbox's own view, one the
 * command could `cd` to itself, never a host mount.
 */
static int set_chdir_path(struct bwrap_call *call, int cwd_fd, dsh_error *error)
{
        char link[64], target[PATH_MAX];
        ssize_t length;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", cwd_fd);
        length = readlink(link, target, sizeof(target) - 1);
        if (length < 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                     "cannot name the command's working directory: %s", strerror(errno));
        target[length] = '\0';
        if (target[0] != '/' || (size_t) length >= sizeof(target) - 1)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, ENOENT,
                                     "the command's working directory has no path (%s)", target);
        call->chdir_path = strdup(target);
        if (!call->chdir_path)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return 0;
}

static int bwrap_spawn(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                       const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        struct bwrap_call call = BWRAP_CALL_INIT;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(NULL);
        dsh_spawn_options runner_options = *options;
        dsh_spawn_failure failure;
        int json_pipe[2] = { -1, -1 }, exec_pipe[2] = { -1, -1 }, result, record = 0;
        int *keep = NULL;
        char **audit_absent = NULL;
        dsh_held_back_watch *watch = NULL;
        int watch_errno = 0;
        bool exec_seen = false;
        pid_t pid = -1, reported_pid = 0;

        result = prepare_call(provider, prepared, &call, error);
        call.scratch_by_fd = true;
        call.controlling_terminal = options->controlling_terminal;
        if (result == 0)
                result = open_bind_sources(&call, prepared, error);
        if (result == 0 && options->cwd_fd >= 0)
                result = set_chdir_path(&call, options->cwd_fd, error);
        if (result == 0 && policy->mode == DSH_MODE_WORKSPACE_WRITE)
                result = check_start_directory(&call, policy, error);
        /* The runner itself (root, unconfined) stays in the caller's cwd: only the command enters this one. */
        runner_options.cwd_fd = -1;
        if (result == 0)
                result = open_status_pipes(json_pipe, exec_pipe, error);
        if (result == 0)
                keep = calloc(call.bind_count + 4, sizeof(int));
        if (result == 0 && !keep)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result < 0) {
                close(json_pipe[0]);
                close(json_pipe[1]);
                close(exec_pipe[0]);
                close(exec_pipe[1]);
                bwrap_call_clear(&call);
                return result;
        }
        call.json_status_fd = json_pipe[1];
        call.exec_status_fd = exec_pipe[1];
        if (build_argv(&facts.argv, &call, policy, argv) < 0 || set_dialect(&facts, &call.shield) < 0) {
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        } else {
                /* bwrap inherits the status channels and the fds it binds from; it closes the latter itself. */
                keep[plan.keep_fd_count++] = json_pipe[1];
                keep[plan.keep_fd_count++] = exec_pipe[1];
                for (size_t i = 0; i < call.bind_count; i++)
                        keep[plan.keep_fd_count++] = call.binds[i].fd;
                if (policy->mode == DSH_MODE_WORKSPACE_WRITE && dsh_scratch_present(call.scratch)) {
                        keep[plan.keep_fd_count++] = call.scratch->temp_fd;
                        keep[plan.keep_fd_count++] = call.scratch->cache_fd;
                }
                plan.keep_fds = keep;
                plan.argv = facts.argv;
                /*
                 * bwrap runs in a process group of its own, whatever the caller
                 * asked: its sandbox is a session of its own (--new-session) that
                 * no terminal signal reaches, while bwrap itself would die of the
                 * terminal's Ctrl-C and take the sandbox with it
                 * (--die-with-parent) before the command could handle the
                 * signal.  The caller passes signals on to child->process_group.
                 * A terminal made for the command is taken inside, by
                 * dsh-sandbox-exec (--controlling-terminal), never by bwrap.
                 */
                runner_options.new_process_group = true;
                runner_options.controlling_terminal = false;
                watch = arm_held_back_watch(child, policy, &call.shield, &watch_errno);
                pid = dsh_spawn_exec_plan(&plan, &runner_options, &failure);
                if (pid < 0)
                        result = pid == -ECHILD ? dsh_spawn_failure_to_error(&failure, policy->mode, facts.argv[0],
                                                                              error)
                                                : dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid,
                                                                "cannot start bwrap: %s", strerror((int) -pid));
        }
        free(keep);
        close(json_pipe[1]);
        close(exec_pipe[1]);
        audit_absent = dsh_steal_pointer(&call.shield.must_stay_absent);
        bwrap_call_clear(&call);
        /* Inside a probe, its deadline holds here too: a runner that stalls before its record is killed. */
        if (result == 0)
                record = read_first_record(json_pipe[0], provider->probe_deadline_ms, &reported_pid, &exec_seen);
        if (result == 0 && record < 0) {
                /*
                 * No record: the sandbox's init is not known by pid, only as
                 * a member of bwrap's group until it makes its own.  bwrap
                 * writes the record right after the clone, so an init that
                 * already left the group while no record came within the
                 * deadline is not to be expected; it is not chased.
                 */
                dsh_kill_and_reap(pid, pid, NULL);
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ETIMEDOUT,
                                       "bwrap did not report its sandbox within %ld ms (probeTimeoutMs)",
                                       provider->probe_timeout_ms);
        } else if (result == 0 && record == 0) {
                result = report_early_failure(pid, policy->mode, error);
        }
        if (result < 0) {
                close(json_pipe[0]);
                close(exec_pipe[0]);
                dsh_confined_argv_clear(&facts);
                dsh_strv_free(audit_absent);
                dsh_held_back_watch_free(watch);
                return result;
        }
        settle_child(child, pid, reported_pid, &facts, policy->mode, exec_seen, json_pipe[0], exec_pipe[0]);
        child->audit_absent = audit_absent;
        child->held_back_watch = watch;
        warn_watch_unarmed(child, watch_errno);
        return 0;
}

const dsh_backend_ops dsh_backend_bwrap = {
        .name = "bwrap",
        .probe = bwrap_probe,
        .confine = bwrap_confine,
        .spawn = bwrap_spawn,
        .exec = NULL,
        .probe_is_functional = true,
        .temp_area_is_scratch = true,
        .runner_path = bwrap_runner_path,
        .runner_candidates = bwrap_runner_candidates,
        .settle = bwrap_settle,
};
