/* SPDX-License-Identifier: MIT */
/*
 * The bwrap (bubblewrap) backend.
 *
 * Profile (docs/backends.md: the upstream one, then what we add):
 *   bwrap --ro-bind / / --dev /dev --unshare-pid --unshare-ipc --proc /proc [--unshare-net]
 *         [--ro-bind-try /proc/KNOB /proc/KNOB]... --die-with-parent --new-session
 *         --cap-drop ALL --cap-add CAP_SETPCAP
 *         read-only:       --tmpfs /tmp [--ro-bind-try P P]...
 *         workspace-write: --bind-fd FD /tmp (the session's scratch; else --tmpfs /tmp)
 *                          --bind-fd FD WS [--bind-fd FD ROOT]... [pins, read-only binds]
 *                          [--tmpfs SCRATCH-BASE --bind-fd FD CACHE]
 *         [--tmpfs HIDDEN --remount-ro HIDDEN]... [masks: see bwrap-masks.c]
 *         --setenv TMPDIR /tmp [--setenv CACHE-VARIABLE DIR]...
 *         [--chdir DIR] [--json-status-fd N] -- dsh-sandbox-exec [--status-fd M] [--listener-fd L]
 *         [--mask PATH]... [--mask-closed DIR]... [--network off|allow-list] -- ARGV...
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
 *   --unshare-net   (network "off" with no allowed local port) a second wall
 *                   beside the filter and the supervisor: the command's only
 *                   interface is a loopback of its own, so a bug in either
 *                   still reaches nothing, the host's loopback included;
 *                   otherwise the host's namespace, where the allow-list's
 *                   proxy and each allowed local port listen (call-network.h);
 *   --network       dsh-sandbox-exec's filter holds the policy's network:
 *                   families limited, every inet connect, bind, listen and
 *                   send to an address sent to the supervisor (core/);
 *   hidden dirs     an empty read-only tmpfs over the remote's ssh control
 *                   directories: a read-only socket still connects, and the
 *                   master does what its client asks (bwrap-masks.c);
 *   masks           the credentials on disk (shield/masks.h) shown empty and
 *                   read-only, pinned, the names made later left to
 *                   dsh-sandbox-exec's read layer (bwrap-masks.c);
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
 *                   reported out of band (tools/sandbox-exec.c), and the
 *                   metadata filter installed: --dev binds the host's
 *                   /dev/null, /dev/zero, /dev/urandom, /dev/tty..., whose
 *                   metadata no mount protects (a chmod 000 inside would be
 *                   the host's);
 *   --listener-fd   (spawn, both modes) where dsh-sandbox-exec sends the
 *                   filter's listener: the supervisor in this process
 *                   performs every connect and the metadata calls beneath
 *                   the roots (bwrap-supervisor.h), with --temp-root the
 *                   call's private /tmp among them; confine's argv has none,
 *                   refuses every metadata call and every connect, and is
 *                   partial under workspace-write;
 *   fds             dsh_provider_spawn() closes every fd above 2 but the ones
 *                   bwrap needs before exec'ing it (bwrap passes inherited fds
 *                   through; dsh-sandbox-exec closes whatever is left).
 * The private PID namespace with its own /proc (upstream) means /proc/1/root
 * and /proc/PID/cwd name only sandboxed processes: no path back to a host
 * process's writable view; and every process of the sandbox dies with it.
 *
 * The bwrap binary is never taken from a place the confined command (or a
 * checked-out repository) could have written: see src/provider/bwrap-trust.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/call-environment.h"
#include "provider/call-network.h"
#include "provider/provider-protections.h"
#include "provider/bwrap-masks.h"
#include "provider/bwrap-probe.h"
#include "provider/bwrap-status.h"
#include "core/landlock.h"
#include "provider/bwrap-supervisor.h"
#include "provider/bwrap-trust.h"
#include "base/error.h"
#include "base/path.h"
#include "base/path-fd.h"
#include "shield/shield.h"
#include "core/sandbox-exec-status.h"
#include "provider/spawn.h"

#define BWRAP_TEMP_AREA "/tmp"
#define BWRAP_DENIAL_SIGNATURE "read-only file system"
#define EXEC_HELPER_FATAL_SIGNATURE "dsh-sandbox-exec: "
#define METADATA_DENIAL_SIGNATURE "operation not permitted"
#define SUPERVISOR_DENIAL_SIGNATURE "permission denied"
/*
 * An argv a harness spawns itself has no process outside the sandbox to
 * supervise it: dsh-sandbox-exec, given no --listener-fd, refuses every
 * metadata change (fail closed), so under workspace-write the roots' own
 * chmod, chown, utimes and xattrs fail too.  Reported, never silent.
 */
#define UNSUPERVISED_ARGV_REASON \
        "chmod, chown, utimes and extended attributes are refused everywhere (EPERM), the writable roots " \
        "included: an argv the caller spawns itself has no metadata supervisor outside the sandbox to perform " \
        "them (dsh-sandbox run and the library's spawn have one)"

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
        "/proc/sys", "/proc/sysrq-trigger", "/proc/fs", "/proc/acpi", NULL,
};

/*
 * /proc/irq and /proc/bus, which bwrap covers itself (setup_newroot()'s
 * cover_proc_dirs, in every release: a read-only bind of each onto itself
 * right after --proc) when access(2) says it may write them.  A second bind
 * of ours over that one changes nothing the command can do, and costs a
 * bind, a read of the namespace's whole mountinfo and a remount each (about
 * 0.13 ms each, issue 24).  So ours is made only when bwrap's might not be:
 * bwrap runs with this process's credentials (whatever bwrap-trust.c finds,
 * setuid or not, it gets no fewer), and a caller holding CAP_DAC_OVERRIDE
 * over these root-owned procfs directories (root, in the initial user
 * namespace) passes that access check, so bwrap binds them.  Without it —
 * uid 0 whose capabilities were taken, say — the directories (0555) look
 * read-only to bwrap, which then skips them, while their files (0644, owned
 * by root) would still be writable by uid 0 by their mode alone: then ours
 * are made.  Nothing the command does reaches this: the check is of this
 * process, before bwrap starts.  The escape matrix writes
 * /proc/irq/default_smp_affinity on both paths (EROFS).
 */
static const char *const proc_covered_by_bwrap[] = { "/proc/irq", "/proc/bus", NULL };

/* Whether this process holds CAP_DAC_OVERRIDE in its effective set, over inodes owned by the initial namespace's root. */
static bool holds_dac_override_over_root(void)
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
        char map[64] = "";
        FILE *uid_map;
        unsigned long inside = 1, outside = 1, count = 0;

        if (syscall(SYS_capget, &header, data) != 0 || !(data[0].effective & (1U << CAP_DAC_OVERRIDE)))
                return false;
        /* Root-owned means the initial namespace's root: this namespace must map it (the initial one maps all). */
        uid_map = fopen("/proc/self/uid_map", "re");
        if (!uid_map)
                return false;
        while (fgets(map, sizeof(map), uid_map))
                if (sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3 && outside == 0 && count > 0)
                        break;
        fclose(uid_map);
        return outside == 0 && count > 0;
}

/*
 * One bind of a workspace-write profile (struct dsh_bwrap_bind,
 * bwrap-supervisor.h).  By fd when the call spawns bwrap itself (--bind-fd
 * / --ro-bind-fd: bwrap mounts the very directory that was checked, opened
 * beneath its writable root with no symlink followed, so nothing renamed or
 * repointed in between can change what is bound); by name in an argv a
 * harness spawns later (confine), which cannot carry fds.
 */
/* Everything one bwrap call needs besides the policy: the runner, the last step inside, the shield, the binds. */
struct bwrap_call {
        char *bwrap;            /* the trusted runner */
        char *exec_helper;      /* dsh-sandbox-exec, run by bwrap inside the sandbox */
        dsh_shield shield;
        struct dsh_bwrap_bind *binds;       /* workspace-write: in mount order (see plan_binds()) */
        size_t bind_count;
        int json_status_fd;     /* bwrap's --json-status-fd, or -1 */
        int exec_status_fd;     /* dsh-sandbox-exec's --status-fd, or -1 */
        int listener_fd;        /* dsh-sandbox-exec's --listener-fd (spawn, both modes), or -1 */
        const dsh_scratch *scratch;     /* the prepared policy's (borrowed); none: a tmpfs on /tmp */
        bool scratch_by_fd;     /* spawn: the scratch is bound from its fds; confine: by name */
        char **variables;       /* NAME, VALUE pairs for --setenv (scratch.h) */
        bool controlling_terminal;      /* dsh_spawn_options.controlling_terminal: dsh-sandbox-exec takes stdin's */
        char *chdir_path;       /* spawn only: --chdir, the path of the caller's cwd fd; NULL: none */
        char *const *hidden;    /* the protections' hidden directories (borrowed): see bwrap-masks.h */
        dsh_network_filter network;     /* dsh-sandbox-exec's --network (ON: none) */
        bool unshare_net;       /* --unshare-net: off with no allowed local port (call-network.h) */
        bool bwrap_covers_proc; /* spawn by a caller holding CAP_DAC_OVERRIDE: see proc_covered_by_bwrap */
        dsh_bwrap_masks masks;  /* the call's masks: mounted last, pinned, the rest to dsh-sandbox-exec */
        const dsh_protections *protections;     /* the provider's (borrowed): the environment's rules */
};

#define BWRAP_CALL_INIT                                                                                        \
        { NULL, NULL, DSH_SHIELD_INIT, NULL, 0, -1, -1, -1, NULL, false, NULL, false, NULL, NULL, 0, false, \
          false, DSH_BWRAP_MASKS_INIT, NULL }

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
        dsh_bwrap_masks_clear(&call->masks);
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
        call->binds[call->bind_count++] = (struct dsh_bwrap_bind) { policy->workspace_root, true, -1 };
        for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
                for (char *const *path = groups[g].paths; path && *path; path++)
                        call->binds[call->bind_count++] = (struct dsh_bwrap_bind) { *path, groups[g].writable, -1 };
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
                struct dsh_bwrap_bind *bind = &call->binds[i];
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
                const struct dsh_bwrap_bind *bind = &call->binds[i];
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
        /* A second wall beside the filter and the supervisor: no interface but a loopback of the command's own. */
        if (result == 0 && call->unshare_net)
                result = dsh_strv_append(argv, "--unshare-net");
        for (const char *const *path = proc_read_only; result == 0 && *path; path++)
                result = append_bind(argv, "--ro-bind-try", *path);
        for (const char *const *path = proc_covered_by_bwrap; result == 0 && !call->bwrap_covers_proc && *path; path++)
                result = append_bind(argv, "--ro-bind-try", *path);
        if (result == 0)
                result = append_words(argv, process);
        if (result == 0 && policy->mode == DSH_MODE_WORKSPACE_WRITE)
                result = append_writable_binds(argv, call, policy);
        else if (result == 0)
                result = append_read_only_temp_area(argv, policy);
        if (result == 0)
                result = dsh_bwrap_append_last_mounts(argv, call->hidden, &call->masks, call->chdir_path);
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
        if (result == 0 && call->listener_fd >= 0)
                result = append_number_option(argv, "--listener-fd", call->listener_fd);
        /* A /tmp that is a tmpfs of the call's own (read-only, or no scratch): its fd follows the listener. */
        if (result == 0 && call->listener_fd >= 0 &&
            (policy->mode != DSH_MODE_WORKSPACE_WRITE || !dsh_scratch_present(call->scratch)))
                result = dsh_strv_append(argv, "--temp-root");
        if (result == 0 && call->controlling_terminal)
                result = dsh_strv_append(argv, "--controlling-terminal");
        if (result == 0)
                result = dsh_bwrap_masks_append_exec_options(argv, &call->masks, call->chdir_path);
        if (result == 0 && call->network != DSH_NETWORK_FILTER_ON) {
                const char *network_words[] = { "--network", dsh_network_mode_name(policy->network.mode), NULL };

                result = append_words(argv, network_words);
        }
        /* Scrubbed again inside, the call's variables (bwrap's --setenv) let through (call-environment.h). */
        if (result == 0)
                result = dsh_call_environment_append_arguments(call->protections, policy, call->variables, argv);
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
static int set_dialect(dsh_confined_argv *out, const dsh_shield *shield, const struct bwrap_call *call)
{
        static const char *const fatal[] = { DSH_BWRAP_FATAL_SIGNATURE, EXEC_HELPER_FATAL_SIGNATURE, NULL };

        out->enforcement = DSH_ENFORCEMENT_FULL;
        for (char **reason = shield->unprotected; reason && *reason; reason++)
                if (dsh_confined_argv_add_partial_reason(out, *reason) < 0)
                        return -ENOMEM;
        if (dsh_landlock_abi() < 2 && dsh_confined_argv_add_partial_reason(out, DSH_BWRAP_NO_DOMAIN_REASON) < 0)
                return -ENOMEM;
        /* The metadata filter's EPERM (metadata refused, a set-id bit), and the supervisor's EACCES. */
        if (dsh_strv_append(&out->denial_signatures, BWRAP_DENIAL_SIGNATURE) < 0 ||
            dsh_strv_append(&out->denial_signatures, METADATA_DENIAL_SIGNATURE) < 0 ||
            (call->listener_fd >= 0 && dsh_strv_append(&out->denial_signatures, SUPERVISOR_DENIAL_SIGNATURE) < 0) ||
            dsh_bwrap_masks_report(out, &call->masks) < 0)
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

/*
 * A spawn of its own sees the command gone (no process of the sandbox
 * outlives bwrap's pid 1), so the protected subpaths kept absent are
 * audited then with `commondir`: one the command created is moved aside.
 */
static int audit_kept_absent(dsh_shield *shield, dsh_error *error)
{
        for (char **path = shield->kept_absent; path && *path; path++)
                if (dsh_strv_append(&shield->must_stay_absent, *path) < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
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
        call->network = dsh_call_network_filter_of(&policy->network);
        call->unshare_net = dsh_call_network_private_loopback(&policy->network);
        call->variables = dsh_scratch_variables(&prepared->scratch, policy->mode);
        if (!call->variables)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");

        call->bwrap = dsh_bwrap_find(provider, &reason);
        if (!call->bwrap) {
                result = dsh_error_set_unavailable(error, policy->mode, reason ? reason : "bwrap cannot be found");
                free(reason);
                return result;
        }
        call->exec_helper = dsh_protections_launcher_path(&provider->protections, DSH_BWRAP_EXEC_HELPER_NAME);
        if (!call->exec_helper || access(call->exec_helper, X_OK) < 0)
                return dsh_error_set_unavailable(error, policy->mode,
                                                 "the dsh-sandbox-exec helper is not installed");
        result = dsh_provider_plan_shield(provider, policy, NULL, true, &call->shield, error);
        if (result < 0)
                return result;
        if (call->shield.unprotected && provider->protections.require_subpaths)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                     call->shield.unprotected[0]);
        result = create_missing_protected(&call->shield, error);
        /* The masks' pins join the shield's, all made before any read-only bind beneath them. */
        if (result == 0)
                result = dsh_bwrap_masks_plan(&call->masks, &provider->protections, prepared,
                                              call->shield.extra_writable, &call->shield.pins, error);
        call->hidden = provider->protections.hidden;
        call->protections = &provider->protections;
        dsh_protections_make_hidden(&provider->protections);
        if (result == 0 && policy->mode == DSH_MODE_WORKSPACE_WRITE && plan_binds(call, policy) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return result;
}

static int bwrap_confine(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                         dsh_confined_argv *out, dsh_error *error)
{
        const dsh_policy *policy = &prepared->policy;
        struct bwrap_call call = BWRAP_CALL_INIT;
        /* No supervisor outside the sandbox: off holds (the filter, --unshare-net), an allowed port cannot. */
        int result = dsh_call_network_check_confine(&policy->network, policy->mode, false, error);

        if (result == 0)
                result = prepare_call(provider, prepared, &call, error);
        /* Only a spawn of its own can check, once the command is gone, what must not have been created. */
        for (char **path = call.shield.must_stay_absent; result == 0 && path && *path; path++) {
                dsh_autofree char *reason = NULL;

                if (asprintf(&reason, "%s could be created by the command to redirect git's hooks and config; "
                                      "dsh-sandbox moves it aside afterwards only when it runs the command itself",
                             *path) < 0 || dsh_strv_append(&call.shield.unprotected, reason) < 0)
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (result == 0 && call.shield.must_stay_absent && provider->protections.require_subpaths)
                result = dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                       "a protected subpath cannot be held back and requireProtectedSubpaths is set: %s",
                                       call.shield.unprotected[dsh_strv_length(call.shield.unprotected) - 1]);
        if (result == 0 && (build_argv(&out->argv, &call, policy, argv) < 0 ||
                            set_dialect(out, &call.shield, &call) < 0 ||
                            dsh_call_environment_set_facts(&provider->protections, policy, out) < 0 ||
                            (policy->mode == DSH_MODE_WORKSPACE_WRITE &&
                             dsh_confined_argv_add_partial_reason(out, UNSUPERVISED_ARGV_REASON) < 0))) {
                dsh_confined_argv_clear(out);
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        bwrap_call_clear(&call);
        return result;
}

/* ----------------------------------------------------------------- spawn -- */

static char *bwrap_runner_path(const dsh_provider *provider)
{
        char *reason = NULL;
        char *path = dsh_bwrap_find(provider, &reason);

        free(reason);
        return path;
}

/*
 * After bwrap reported its sandbox: the child, with the process group
 * signals for the command go to (see dsh_bwrap_sandbox_process_group()).
 */
static void settle_child(dsh_child *child, pid_t pid, pid_t reported_pid, dsh_confined_argv *facts, dsh_mode mode,
                         bool exec_seen, int json_status_fd, int exec_status_fd)
{
        child->pid = pid;
        child->process_group = dsh_bwrap_sandbox_process_group(pid, reported_pid);
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
        dsh_metadata_supervisor *supervisor = NULL;
        bool exec_seen = false;
        pid_t pid = -1, reported_pid = 0;

        result = prepare_call(provider, prepared, &call, error);
        if (result == 0 && dsh_call_network_add_variables(child->network, &call.variables) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result == 0)
                result = audit_kept_absent(&call.shield, error);
        call.scratch_by_fd = true;
        /* Spawn only: confine's argv may be run by a caller with other credentials, so it keeps both binds. */
        call.bwrap_covers_proc = holds_dac_override_over_root();
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
                result = dsh_bwrap_open_status_pipes(json_pipe, exec_pipe, error);
        if (result == 0)
                keep = calloc(call.bind_count + 5, sizeof(int));
        if (result == 0 && !keep)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        /*
         * The supervisor runs under both modes (bwrap-supervisor.h): it
         * performs every connect, and the metadata calls beneath the roots
         * (under read-only the call's private /tmp alone).
         */
        if (result == 0)
                result = dsh_bwrap_supervisor_start(provider, prepared, call.binds, call.bind_count,
                                                    call.shield.must_stay_absent, child->network, call.unshare_net,
                                                    &supervisor, &call.listener_fd, error);
        if (result < 0) {
                free(keep);
                close(json_pipe[0]);
                close(json_pipe[1]);
                close(exec_pipe[0]);
                close(exec_pipe[1]);
                bwrap_call_clear(&call);
                return result;
        }
        call.json_status_fd = json_pipe[1];
        call.exec_status_fd = exec_pipe[1];
        /* bwrap, and so its pid 1, is exec'd with no secret to show in /proc/PID/environ (call-environment.h). */
        plan.environment = dsh_call_environment_build(&provider->protections, policy, NULL);
        if (build_argv(&facts.argv, &call, policy, argv) < 0 || set_dialect(&facts, &call.shield, &call) < 0 ||
            !plan.environment || dsh_call_environment_set_facts(&provider->protections, policy, &facts) < 0) {
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        } else {
                /* bwrap inherits the status channels and the fds it binds from; it closes the latter itself. */
                keep[plan.keep_fd_count++] = json_pipe[1];
                keep[plan.keep_fd_count++] = exec_pipe[1];
                keep[plan.keep_fd_count++] = call.listener_fd;
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
                pid = dsh_spawn_exec_plan(&plan, &runner_options, &failure);
                if (pid < 0)
                        result = pid == -ECHILD ? dsh_spawn_failure_to_error(&failure, policy->mode, facts.argv[0],
                                                                              error)
                                                : dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid,
                                                                "cannot start bwrap: %s", strerror((int) -pid));
        }
        free(keep);
        dsh_strv_free((char **) plan.environment);
        close(json_pipe[1]);
        close(exec_pipe[1]);
        /* bwrap's copy is dsh-sandbox-exec's now: the supervisor gets the listener, or end of file. */
        if (call.listener_fd >= 0)
                close(call.listener_fd);
        call.listener_fd = -1;
        audit_absent = dsh_steal_pointer(&call.shield.must_stay_absent);
        bwrap_call_clear(&call);
        /* Inside a probe, its deadline holds here too: a runner that stalls before its record is killed. */
        if (result == 0)
                record = dsh_bwrap_read_first_record(json_pipe[0], provider->probe_deadline_ms, &reported_pid,
                                                     &exec_seen);
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
                result = dsh_bwrap_report_early_failure(pid, policy->mode, error);
        }
        if (result < 0) {
                close(json_pipe[0]);
                close(exec_pipe[0]);
                dsh_confined_argv_clear(&facts);
                dsh_strv_free(audit_absent);
                dsh_metadata_supervisor_stop(supervisor, NULL);
                return result;
        }
        settle_child(child, pid, reported_pid, &facts, policy->mode, exec_seen, json_pipe[0], exec_pipe[0]);
        child->audit_absent = audit_absent;
        child->metadata_supervisor = supervisor;
        return 0;
}

const dsh_backend_ops dsh_backend_bwrap = {
        .name = "bwrap",
        .holds_network = true,
        .probe = dsh_bwrap_probe,
        .confine = bwrap_confine,
        .spawn = bwrap_spawn,
        .probe_is_functional = true,
        .temp_area_is_scratch = true,
        .runner_path = bwrap_runner_path,
        .runner_candidates = dsh_bwrap_runner_candidates,
        .settle = dsh_bwrap_settle,
};
