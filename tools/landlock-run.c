/* SPDX-License-Identifier: MIT */
/*
 * landlock-run: the minimal Landlock launcher.
 *
 *   landlock-run [--ro PATH]... [--rw PATH]... [--protect PATH]... [--setenv NAME VALUE]... [--new-session]
 *                [--deny-env PATTERN]... [--allow-env NAME]... -- ARGV...
 *   landlock-run --probe
 *
 * A drop-in for the upstream launcher contract (docs/cli.md): the same flags,
 * exit 125 for every launcher failure, the same one-line diagnostics, so a
 * harness built for the upstream launcher uses this one unchanged.  After
 * exec the command's own status passes through untouched (even its own 125).
 * `--help` and `--version`, each alone, print on stdout and exit 0.
 *
 * Beyond the contract, always on because it cannot break it: inherited fds
 * above 2 are closed, a seccomp filter refuses terminal injection
 * (TIOCSTI/TIOCLINUX), every capability is dropped (root included), and from
 * Landlock ABI 6 the domain is scoped: the command can neither signal nor
 * connect to the abstract unix sockets of processes outside it.  `--new-session` additionally setsid()s; it is a flag
 * because an in-place exec that leaves the terminal's session no longer gets
 * the user's Ctrl-C.
 *
 * Metadata (chmod, chown, utimes, extended attributes, inode flags), which
 * Landlock does not govern, and unix sockets, which it does not govern by
 * path: the command always runs as the launcher's child under the
 * supervisor (src/core/metadata-supervisor.h), which performs every
 * connect() (a unix socket only beneath a writable directory:
 * src/core/socket-call.h) and refuses AF_UNIX datagram sockets.  With no
 * writable directory among the grants the filter refuses every metadata
 * call (EPERM).  With one, each metadata call is performed when its target
 * lies beneath a writable directory, refused (EACCES) otherwise, and a pty's
 * slave is opened for a command that made the pty (TIOCGPTPEER; the host's
 * /dev/pts is never granted).  Where the
 * launcher may mount, the command also gets a /dev/shm and a /dev/pts of its
 * own, granted, in a mount namespace of its own (src/core/private-dev.h):
 * POSIX semaphores work, its ptys open by name, and the host's shared
 * memory and terminals are out of sight.  The launcher then stands in for the command — it
 * dies with it and exits with its status or dies of its signal, signals
 * sent to the launcher reach the command, and the command is killed if the
 * launcher is — so the contract holds either way.  It is also the command's
 * child subreaper (src/core/leftovers.h): what the command left running
 * (`setsid`, a double fork) is killed once the command has ended, before
 * the launcher ends, so nothing of a writing call outlives it.
 *
 * Write intent (an open that may write, create or truncate; mkdir, mknod,
 * unlink, rmdir, rename, link, symlink, truncate): Landlock can only grant,
 * so beneath a --rw directory it cannot keep anything unwritable.  Every
 * such call goes to the supervisor (src/core/write-supervisor.h), which
 * refuses one that touches a `--protect PATH` (whether PATH exists or not)
 * and performs every other itself on a thread restricted by the command's
 * own ruleset, so that Landlock stays the boundary everywhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "config.h"
#include "core/env-scrub.h"
#include "core/landlock.h"
#include "core/leftovers.h"
#include "core/metadata-filter.h"
#include "core/metadata-supervisor.h"
#include "core/private-dev.h"
#include "core/read-mask.h"
#include "core/process-hardening.h"
#include "core/socket-call.h"
#include "core/stand-in.h"
#include "landlock-run-arguments.h"

static const char help_text[] =
        "Usage: landlock-run [--ro PATH]... [--rw PATH]... [--protect PATH]... [--setenv NAME VALUE]...\n"
        "                    [--new-session] [--network on|off] [--allow-local-port PORT]...\n"
        "                    [--deny-env PATTERN]... [--allow-env NAME]... -- ARGV...\n"
        "       landlock-run --probe | --help | --version\n"
        "Runs ARGV (found on PATH, environment unchanged but for each --setenv) confined by Landlock: read and execute\n"
        "beneath each --ro PATH; beneath each --rw PATH, every access the kernel's Landlock ABI\n"
        "governs but creating devices; nothing else.  Inherited descriptors above 2 are closed,\n"
        "every capability is dropped and terminal injection is refused.  ARGV runs as the launcher's\n"
        "child, which ends as ARGV ends, under a supervisor that performs its connect() calls (a unix\n"
        "socket only beneath a --rw directory; no unix datagram socket) and, beneath a --rw directory,\n"
        "its chmod, chown, utimes and extended attributes, which are refused elsewhere (with a --rw\n"
        "directory, a /dev/shm and a /dev/pts of its own where the launcher may mount).\n"
        "--protect PATH (absolute, canonical) stays unwritable inside the --rw directories: nothing\n"
        "is written, made, renamed, linked or removed there, whether it exists or not; the supervisor\n"
        "performs every other write the command asks for, within the same grants.\n"
        "--mask PATH (absolute, canonical) is left out of --ro /: neither PATH nor, in a --mask-closed DIR\n"
        "or any directory on the way to a mask, a name made after the start is readable (EACCES).\n"
        "--deny-env PATTERN removes from ARGV's environment every variable whose name it matches (* and ?,\n"
        "any case) but those an --allow-env NAME names exactly; each --setenv is set after.\n"
        "--new-session also calls setsid().\n"
        "--network off: nothing outside is reached, TCP or UDP, the host's loopback included: a socket is\n"
        "bound on loopback only, and a loopback server the command started itself is reached; only unix,\n"
        "TCP, UDP and netlink route sockets are made.  --allow-local-port PORT (implies off) lets it reach\n"
        "that host loopback port too.  --network on (the default) changes nothing.\n"
        "--probe prints whether this kernel enforces Landlock fully or partially.\n"
        "Exit status: ARGV's own once it runs (even 125); 125 for every launcher failure (usage,\n"
        "no Landlock, a grant that cannot be opened, exec failure), and ARGV did not run.\n";

/* Both answers go to stdout, and a failure to write them is a failure. */
static int print_and_exit_status(const char *text)
{
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : LAUNCHER_FAILURE;
}

static int probe(void)
{
        int abi = dsh_landlock_abi();

        if (abi < 0 || !dsh_landlock_abi_usable(abi))
                return fail("landlock is not enforced by this kernel (ABI unsupported or disabled)");
        if (dsh_landlock_enforcement(abi) == DSH_ENFORCEMENT_FULL)
                puts("landlock: fully enforced");
        else
                puts("landlock: partially enforced (older ABI)");
        return fflush(stdout) == 0 ? 0 : LAUNCHER_FAILURE;
}

#define MASKED_READ_ACCESS (DSH_LANDLOCK_ACCESS_FS_EXECUTE | DSH_LANDLOCK_ACCESS_FS_READ_FILE | \
                            DSH_LANDLOCK_ACCESS_FS_READ_DIR)

static bool masks_given(const struct launch_request *request)
{
        return (request->masked && request->masked[0]) || (request->mask_closed && request->mask_closed[0]);
}

/*
 * A grant at or above a mask would cover it, whatever the read grant of
 * "/" leaves out (Landlock only adds): such a command line is refused, not
 * run with the mask quietly unheld.  Judged on the grant's canonical path;
 * `--ro /` itself is the grant the masks shape (grant_masked_root()).
 */
static int check_grant_spares_masks(const struct launch_grant *grant, char *const *paths)
{
        char *canonical = realpath(grant->path, NULL);
        size_t length;
        int result = 0;

        if (!canonical)
                return 0;  /* the grant fails next, naming the path */
        length = strcmp(canonical, "/") == 0 ? 0 : strlen(canonical);
        for (char *const *path = paths; result == 0 && path && *path; path++)
                if (strncmp(*path, canonical, length) == 0 && ((*path)[length] == '/' || (*path)[length] == '\0'))
                        result = fail("usage error: the grant %s %s would make the mask %s readable",
                                      grant->writable ? "--rw" : "--ro", grant->path, *path);
        free(canonical);
        return result;
}

static bool grant_is_masked_root(const struct launch_request *request, const struct launch_grant *grant)
{
        return masks_given(request) && !grant->writable && strcmp(grant->path, "/") == 0;
}

/* `--ro /` under masks: read and execute everywhere but the masks (core/read-mask.h). */
static int grant_masked_root(const struct launch_request *request, dsh_landlock_ruleset *ruleset)
{
        dsh_read_mask mask = { request->masked, request->mask_closed, 0 };
        const char *failed_path = "/";
        int result = dsh_read_mask_grant(ruleset, MASKED_READ_ACCESS, &mask, &failed_path);

        if (result == -E2BIG)
                return fail("landlock ruleset error: the masks beneath %s are not held: it has more than %d "
                            "entries to enumerate", failed_path, DSH_READ_MASK_DEFAULT_RULE_LIMIT);
        if (result < 0)
                return fail("cannot open rule path: %s: %s", failed_path, strerror(-result));
        return 0;
}

/* Each grant under the masks: `--ro /` shaped by them, any other refused if it would cover one. */
static int grant_with_masks(const struct launch_request *request, const struct launch_grant *grant,
                            dsh_landlock_ruleset *ruleset, bool *granted)
{
        *granted = false;
        if (!masks_given(request))
                return 0;
        if (grant_is_masked_root(request, grant)) {
                *granted = true;
                return grant_masked_root(request, ruleset);
        }
        if (check_grant_spares_masks(grant, request->masked) != 0 ||
            check_grant_spares_masks(grant, request->mask_closed) != 0)
                return LAUNCHER_FAILURE;
        return 0;
}

/*
 * Builds the ruleset, the private /dev/shm and /dev/pts granted when there
 * are (`devices` non-NULL); returns its fd, or -1 after printing the
 * contract's line.
 */
static int build_ruleset(const struct launch_request *request, const dsh_private_devices *devices)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        int result = dsh_landlock_ruleset_open(&ruleset);

        if (result == -ENOSYS || result == -EOPNOTSUPP) {
                fail("landlock is not enforced by this kernel (ABI unsupported or disabled)");
                return -1;
        }
        if (result < 0) {
                fail("landlock ruleset error: %s", strerror(-result));
                return -1;
        }
        for (size_t i = 0; i < request->grant_count; i++) {
                const char *failed_step = "";
                bool granted;

                if (grant_with_masks(request, &request->grants[i], &ruleset, &granted) != 0) {
                        dsh_landlock_ruleset_close(&ruleset);
                        return -1;
                }
                if (granted)
                        continue;
                result = dsh_landlock_ruleset_grant(&ruleset, request->grants[i].path, request->grants[i].writable,
                                                    false, &failed_step);
                if (result < 0) {
                        if (strcmp(failed_step, "open") == 0)
                                fail("cannot open rule path: %s: %s", request->grants[i].path, strerror(-result));
                        else
                                fail("landlock ruleset error: %s", strerror(-result));
                        dsh_landlock_ruleset_close(&ruleset);
                        return -1;
                }
        }
        result = devices ? dsh_landlock_ruleset_grant_fd(&ruleset, devices->shm, true) : 0;
        if (result == 0 && devices)
                result = dsh_landlock_ruleset_grant_fd(&ruleset, devices->pts, true);
        if (result < 0) {
                fail("landlock ruleset error: %s", strerror(-result));
                dsh_landlock_ruleset_close(&ruleset);
                return -1;
        }
        if (dsh_landlock_enforcement(ruleset.abi) == DSH_ENFORCEMENT_PARTIAL)
                fputs("landlock-run: partial enforcement (older Landlock ABI)\n", stderr);
        return ruleset.fd;
}

/*
 * Returns only on failure (the contract's line printed).  The order is the
 * library's (src/provider/spawn.c, dsh_exec_plan_apply), with the fds closed before
 * (launch()) so nothing inherited survives into the domain:
 *  - no_new_privs: no exec grants privileges from here, and the filter and
 *    the Landlock restriction become legal without CAP_SYS_ADMIN;
 *  - every capability dropped (bounding set and locked securebits while
 *    CAP_SETPCAP is still held, then capset() to zero), before the filter
 *    (a listener offered under a network policy is taken by a supervisor
 *    with none, which may take only from a process with no more) and the
 *    Landlock restriction, which need none: root keeps nothing, and
 *    nothing after runs with a privilege;
 *  - one seccomp filter: terminal injection refused, and every metadata call
 *    refused or sent to the supervisor (whose listener leaves over
 *    `metadata_socket` at once: the command never holds it);
 *  - the Landlock restriction (with the scopes the ABI has);
 *  - exec.
 * Any failure on the way ends in 125 with the command never run.
 */
static dsh_network_filter network_filter(const struct launch_request *request)
{
        return request->network == LAUNCH_NETWORK_OFF ? DSH_NETWORK_FILTER_OFF : DSH_NETWORK_FILTER_ON;
}

static int confine_and_exec(const struct launch_request *request, int ruleset_fd, dsh_metadata_policy metadata,
                            int metadata_socket)
{
        int result;

        if (request->new_session)
                (void) setsid();  /* EPERM for a group leader: the terminal filter still holds */
        result = dsh_set_no_new_privs();
        if (result < 0)
                return fail("landlock ruleset error: cannot set no_new_privs: %s", strerror(-result));
        /* Before the filter: an offered listener is taken by a supervisor with no capability (metadata-filter.h). */
        result = dsh_drop_capabilities();
        if (result < 0)
                return fail("landlock ruleset error: cannot drop capabilities: %s", strerror(-result));
        result = dsh_install_metadata_filter(metadata, network_filter(request), metadata_socket, true);
        if (result < 0)
                return fail("landlock ruleset error: cannot install the seccomp filter: %s", strerror(-result));
        result = dsh_forbid_core_dumps();
        if (result < 0)
                return fail("landlock ruleset error: cannot forbid core dumps: %s", strerror(-result));
        result = dsh_landlock_enforce(ruleset_fd);
        if (result < 0)
                return fail("landlock ruleset error: %s", strerror(-result));
        close(ruleset_fd);
        if (metadata_socket >= 0)
                close(metadata_socket);
        execvp(request->command[0], request->command);
        return fail("exec failed: %s", strerror(errno));
}

/*
 * The writable directories among the grants, given to `supervisor` (opened
 * as the ruleset opened them, named by their canonical path).  A writable
 * file (the /dev/null sink) takes writes, never a metadata change.  Returns
 * the number of roots, or a negative errno.
 */
static int supervise_writable_directories(const struct launch_request *request, dsh_metadata_supervisor *supervisor)
{
        int roots = 0;

        for (size_t i = 0; i < request->grant_count; i++) {
                char link[64], path[PATH_MAX];
                ssize_t length;
                int fd, result;

                if (!request->grants[i].writable)
                        continue;
                fd = open(request->grants[i].path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 && (errno == ENOTDIR || errno == ENOENT))
                        continue;  /* a file; a missing path fails the ruleset, built next */
                if (fd < 0)
                        return -errno;
                snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
                length = readlink(link, path, sizeof(path) - 1);
                result = length > 0 ? 0 : -errno;
                if (result == 0) {
                        path[length] = '\0';
                        result = dsh_metadata_supervisor_add_root(supervisor, fd, path, false);
                }
                close(fd);
                if (result < 0)
                        return result;
                roots++;
        }
        return roots;
}

/*
 * Whether `path` (canonical in form: landlock_run_path_is_canonical_form())
 * reaches no symlink: every component that exists now, the last one
 * included, is no symlink; the first missing one ends the walk (a protected
 * subpath kept absent, such as a missing .mcp.json).  The supervisor
 * compares the names it resolves with this one, so a path through a
 * symlink would never match and hold nothing back: such a path is refused
 * (a component swapped for a symlink since the caller resolved it shows
 * here).  Returns 0, -ELOOP for a symlink, or lstat()'s errno.
 */
static int check_reaches_no_symlink(const char *path)
{
        char prefix[PATH_MAX];
        const char *end = path;

        while (*end) {
                struct stat status;

                end = strchrnul(end + 1, '/');
                if ((size_t) (end - path) >= sizeof(prefix))
                        return -ENAMETOOLONG;
                memcpy(prefix, path, (size_t) (end - path));
                prefix[end - path] = '\0';
                if (lstat(prefix, &status) < 0)
                        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
                if (S_ISLNK(status.st_mode))
                        return -ELOOP;
        }
        return 0;
}

/*
 * Each `--protect PATH`, held back by `supervisor` as a protected subpath:
 * the write supervisor refuses every write-intent call that touches it.  A
 * path outside every --rw directory is held back too, which changes
 * nothing there: Landlock refuses every write outside them already.
 * Returns 0, or LAUNCHER_FAILURE after printing the line.
 */
static int hold_back_protected_paths(const struct launch_request *request, dsh_metadata_supervisor *supervisor)
{
        for (size_t i = 0; i < request->protected_count; i++) {
                const char *path = request->protected_paths[i];
                int result = check_reaches_no_symlink(path);

                if (result == -ELOOP)
                        return fail("usage error: --protect: not a canonical absolute path (it reaches a symlink): %s",
                                    path);
                if (result < 0)
                        return fail("usage error: --protect: cannot examine %s: %s", path, strerror(-result));
                result = dsh_metadata_supervisor_hold_back(supervisor, path, DSH_REFUSAL_PROTECTED_SUBPATH);
                if (result < 0)
                        return fail("landlock ruleset error: cannot supervise writes: %s", strerror(-result));
        }
        return 0;
}

/* ------------------------------------------------------- standing in -- */

static volatile sig_atomic_t command_pid;
static volatile sig_atomic_t command_apart;   /* --new-session: the command left the terminal's session */

/*
 * Signals for the command, while the launcher stands in for it.  One sent
 * to the launcher by another process (si_code <= 0) goes on to the command,
 * as it would have reached it exec'd in the launcher's place.  One the
 * terminal sent already reached the command, which shares the launcher's
 * process group — unless --new-session took it out of the terminal's
 * session: then it goes on too (as a SIGSTOP for Ctrl-Z: a session of its
 * own is an orphaned group, where the kernel discards a default SIGTSTP).
 * A stop is the launcher's too.
 */
static void pass_on(int signal_number, siginfo_t *info, void *context)
{
        int saved_errno = errno;
        bool from_terminal = info->si_code > 0;

        (void) context;
        if (command_pid > 0 && (!from_terminal || command_apart))
                kill((pid_t) command_pid, signal_number == SIGTSTP && command_apart ? SIGSTOP : signal_number);
        if (signal_number == SIGTSTP)
                kill(getpid(), SIGSTOP);
        errno = saved_errno;
}

static void stand_in_for(pid_t pid, bool apart)
{
        static const int passed_on[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT };
        struct sigaction action = { 0 };

        command_pid = pid;
        command_apart = apart;
        action.sa_sigaction = pass_on;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof(passed_on) / sizeof(passed_on[0]); i++) {
                struct sigaction previous;

                /* A signal ignored when the launcher started (nohup) stays ignored, for the command too. */
                if (sigaction(passed_on[i], NULL, &previous) == 0 && previous.sa_handler != SIG_IGN)
                        sigaction(passed_on[i], &action, NULL);
        }
}

/* What the command's child needs: read from the launcher's memory, which it shares or copies. */
struct command_start {
        const struct launch_request *request;
        int ruleset_fd;
        dsh_private_devices *devices;
        dsh_metadata_policy metadata;
        int metadata_socket;
        int socket_kept;              /* the launcher's end of the socket pair, closed in the child */
        pid_t parent;
        const sigset_t *launcher_mask;
};

/*
 * The command's child, from its start to its exec (or its exit with 125).
 * It may share the launcher's memory (spawn_command()): so it resets every
 * caught signal to its default before it unblocks any (a handler would run
 * on the launcher's memory; the launcher installs none before this point,
 * but a sanitizer may), leaves what is ignored ignored (nohup), and writes
 * nothing of the launcher's but stderr, unbuffered, and errno, which the
 * launcher does not read after a clone that succeeded.
 */
static int command_child(void *data)
{
        const struct command_start *start = data;
        int result;

        dsh_reset_caught_signals();
        sigprocmask(SIG_SETMASK, start->launcher_mask, NULL);
        close(start->socket_kept);
        /* The command dies with the launcher: a SIGKILL to it still ends the command. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != start->parent)
                _exit(fail("landlock ruleset error: the launcher is gone"));
        /* Before confine_and_exec() drops the capabilities a mount namespace needs (core/private-dev.h). */
        result = start->devices ? dsh_private_devices_enter(start->devices) : 0;  /* 1: the host's, read-only */
        if (result < 0)
                _exit(fail("landlock ruleset error: cannot mount a private /dev/shm and /dev/pts: %s",
                           strerror(-result)));
        _exit(confine_and_exec(start->request, start->ruleset_fd, start->metadata, start->metadata_socket));
}

/*
 * Starts command_child().  With the network on it shares the launcher's
 * memory until it execs (clone(CLONE_VM | CLONE_VFORK), as the library's
 * spawn.c does): no copy of the launcher's page tables and no copy-on-write
 * faults on either side: about 3 % of a `landlock-run --ro / --rw DIR -- bash -c
 * true` on the development VM.  The launcher is single-threaded until it
 * serves, and suspended until the child execs or exits: nothing else runs on
 * the shared memory meanwhile.  The confinement is the same code, in the
 * same order; the command gains nothing from the sharing, which ends at its
 * exec, before it runs a single instruction of its own.  The listener leaves
 * by SCM_RIGHTS and the child does not wait for it to be taken (a notified
 * call waits until the supervisor receives it; one never taken fails, ENOSYS).
 * Under --network off the child waits for the supervisor's answer that it
 * holds the listener (metadata-filter.c: offer_listener()), which a
 * suspended launcher could never give: a copy (fork) then, as before.
 * The child's stack has a PROT_NONE guard page below it.
 *
 * An AddressSanitizer build forks always: ASan cannot follow a child
 * running on a stack of its own and says so on stderr, which is the
 * contract's channel here (the launcher's lines are compared byte for byte).
 */
#if defined(__SANITIZE_ADDRESS__)
#define COMMAND_MAY_SHARE_MEMORY false
#else
#define COMMAND_MAY_SHARE_MEMORY true
#endif

static pid_t spawn_command(struct command_start *start, bool shares_memory)
{
        size_t page = (size_t) sysconf(_SC_PAGESIZE), argc = 0, stack_size;
        char *mapping;
        pid_t pid;
        int saved_errno;

        if (!shares_memory || !COMMAND_MAY_SHARE_MEMORY) {
                pid = fork();
                if (pid == 0)
                        command_child(start);
                return pid;
        }
        while (start->request->command[argc])
                argc++;
        /* Room for the child's frames and for the copy of argv execvp() makes for a script without "#!". */
        stack_size = (256 * 1024 + (argc + 2) * sizeof(char *) + page - 1) / page * page;
        mapping = mmap(NULL, page + stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                       -1, 0);
        if (mapping == MAP_FAILED)
                return -1;
        if (mprotect(mapping, page, PROT_NONE) < 0) {
                saved_errno = errno;
                munmap(mapping, page + stack_size);
                errno = saved_errno;
                return -1;
        }
        pid = clone(command_child, mapping + page + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, start);
        saved_errno = errno;
        munmap(mapping, page + stack_size);
        errno = saved_errno;
        return pid;
}

/*
 * The command as a child under the supervisor: the child confines itself
 * and execs (printing the contract's line and exiting 125 on failure), the
 * launcher serves its connect calls (and, with `metadata`
 * DSH_METADATA_SUPERVISE, its metadata calls) until it exits and then ends
 * as it ended.
 */
static int launch_supervised(const struct launch_request *request, int ruleset_fd, dsh_metadata_supervisor *supervisor,
                             dsh_private_devices *devices, dsh_metadata_policy metadata)
{
        const char *problem = NULL;
        int sockets[2], listener, pidfd, wait_status = 0, result, spawn_errno;
        struct command_start start = { request, ruleset_fd, devices, metadata, -1, -1, getpid(), NULL };
        sigset_t every, launcher_mask;
        pid_t pid;

        /* Read-only metadata is refused (EPERM) without being performed; a connect it cannot read, EACCES. */
        if (metadata == DSH_METADATA_SUPERVISE && dsh_metadata_supervisor_check_host(&problem) < 0)
                return fail("landlock ruleset error: cannot supervise metadata: %s", problem);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0 ||
            dsh_prepare_fd_receiver(sockets[0]) < 0)
                return fail("landlock ruleset error: cannot supervise metadata: %s", strerror(errno));
        /* What the command leaves behind is reparented here, and ended with it (core/leftovers.h). */
        result = dsh_leftovers_adopt();
        if (result < 0)
                return fail("landlock ruleset error: cannot become the command's subreaper: %s", strerror(-result));
        fflush(NULL);
        start.metadata_socket = sockets[1];
        start.socket_kept = sockets[0];
        start.launcher_mask = &launcher_mask;
        /* Every signal waits until the child has exec'd: none is taken on memory it shares. */
        sigfillset(&every);
        sigprocmask(SIG_BLOCK, &every, &launcher_mask);
        pid = spawn_command(&start, network_filter(request) == DSH_NETWORK_FILTER_ON);
        spawn_errno = errno;
        /*
         * The handlers that pass signals on are installed before the mask is
         * lifted, never after.  Once unblocked, a SIGINT (SIGTERM, ...) with
         * its default action would kill the launcher itself: the command
         * (which may have exec'd and set its own traps already: a vfork'd
         * child has by now, and a forked one may have) would then die of the
         * launcher's PR_SET_PDEATHSIG SIGKILL without its handlers running,
         * and what it started would be orphaned, past the subreaper that was
         * to end it — still holding the caller's stdout, so a caller reading
         * to its end waits forever.  A signal that came while blocked is
         * taken by the handler too, and reaches the command.  The sigaction
         * table is the launcher's own (no CLONE_SIGHAND), and the child
         * resets what it inherited before it unblocks anything.
         */
        if (pid > 0)
                stand_in_for(pid, request->new_session);
        sigprocmask(SIG_SETMASK, &launcher_mask, NULL);
        if (pid < 0)
                return fail("landlock ruleset error: cannot start the command: %s", strerror(spawn_errno));
        close(sockets[1]);
        close(ruleset_fd);
        if (devices)
                dsh_private_devices_close(devices);  /* the child's copies are mounted by the time it execs */
        /* Nothing here needs a capability any more; without one the supervisor can do nothing the command could not. */
        result = dsh_drop_capabilities();
        listener = dsh_receive_fd(sockets[0]);
        /* An offered listener stays open in the child until this byte says it is held here. */
        if (listener >= 0 && result == 0)
                (void) send(sockets[0], "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(sockets[0]);
        pidfd = (int) syscall(__NR_pidfd_open, pid, 0);
        if (listener >= 0 && result == 0 && pidfd >= 0)
                dsh_metadata_supervisor_serve(supervisor, listener, pidfd);
        else if (listener >= 0)
                close(listener);  /* every metadata call fails (ENOSYS): never ungoverned */
        if (pidfd >= 0)
                close(pidfd);
        while (waitpid(pid, &wait_status, 0) < 0)
                if (errno != EINTR)
                        return fail("cannot wait for the command: %s", strerror(errno));
        command_pid = 0;
        /* The command has ended: so does everything it started, before the launcher reports its end. */
        if (dsh_leftovers_end() < 0)
                fputs("landlock-run: warning: processes the command left behind could not all be ended\n", stderr);
        dsh_metadata_supervisor_free(supervisor);
        return dsh_stand_in_end_like(wait_status);
}

/*
 * `--network off`: the supervisor decides every inet connect, bind and send
 * (core/inet-call.h).  Its refusals are kept here only for the call's
 * length (the launcher reports none: the library's records are its own).
 */
static dsh_network_refusals network_refusals;

static int supervise_network(const struct launch_request *request, dsh_metadata_supervisor *supervisor)
{
        const char *reason = NULL;
        dsh_network_settings settings = { .filter = network_filter(request),
                                          .local_ports = request->local_ports,
                                          .local_port_count = request->local_port_count,
                                          .refusals = &network_refusals };
        int result = dsh_network_refusals_init(&network_refusals);

        /*
         * The supervisor takes the command's sockets and, under off, its very
         * listener with pidfd_getfd(): a host that refuses it (a container's
         * seccomp profile) cannot hold off, and says so before anything runs.
         */
        if (result == 0 && request->network != LAUNCH_NETWORK_ON && dsh_socket_call_check_host(&reason) < 0)
                return fail("landlock ruleset error: cannot hold --network off: pidfd_getfd() is refused on this "
                            "host, and the supervisor takes the command's sockets with it");
        return result < 0 ? result : dsh_metadata_supervisor_set_network(supervisor, &settings);
}

static int launch(const struct launch_request *request)
{
        dsh_metadata_supervisor *supervisor;
        dsh_private_devices devices = DSH_PRIVATE_DEVICES_INIT;
        bool private_devices;
        dsh_metadata_policy metadata;
        const char *unread;
        int ruleset_fd, roots, write_result, network_result;

        if (dsh_close_inherited_fds(-1, -1) < 0)
                return fail("landlock ruleset error: cannot close inherited descriptors: %s", strerror(errno));
        supervisor = dsh_metadata_supervisor_new();
        roots = supervisor ? supervise_writable_directories(request, supervisor) : -ENOMEM;
        if (roots < 0) {
                dsh_metadata_supervisor_free(supervisor);
                return fail("landlock ruleset error: cannot supervise metadata: %s", strerror(-roots));
        }
        if (hold_back_protected_paths(request, supervisor) != 0) {
                dsh_metadata_supervisor_free(supervisor);
                return LAUNCHER_FAILURE;
        }
        network_result = supervise_network(request, supervisor);
        if (network_result != 0) {
                dsh_metadata_supervisor_free(supervisor);
                return network_result > 0 ? network_result
                                          : fail("landlock ruleset error: cannot supervise the network: %s",
                                                 strerror(-network_result));
        }
        /* A writable directory: the command writes, and gets a /dev of its own where the launcher may mount. */
        private_devices = roots > 0 && dsh_private_devices_create(&devices) == 0;
        ruleset_fd = build_ruleset(request, private_devices ? &devices : NULL);
        /*
         * Every write-intent call is the supervisor's, decided and performed
         * under this very ruleset (duplicated inside: the fd is closed once
         * the child has it), in both modes: with no --rw directory Landlock
         * refuses each one there as it would have in the command — where
         * the supervisor can read the command: with no --rw directory on a
         * host that forbids it, the kernel decides them (no record is kept).
         */
        metadata = roots > 0 ? DSH_METADATA_SUPERVISE
                   : dsh_metadata_supervisor_check_host(&unread) == 0 ? DSH_METADATA_DENY
                                                                       : DSH_METADATA_DENY_KERNEL_WRITES;
        /* With no --rw directory none is performed: the supervisor refuses each (EPERM), as the filter did. */
        if (metadata == DSH_METADATA_SUPERVISE)
                dsh_metadata_supervisor_perform_metadata(supervisor);
        write_result = ruleset_fd >= 0 && metadata != DSH_METADATA_DENY_KERNEL_WRITES
                               ? dsh_metadata_supervisor_perform_writes(supervisor, ruleset_fd)
                               : 0;
        if (write_result < 0) {
                fail("landlock ruleset error: cannot supervise writes: %s", strerror(-write_result));
                close(ruleset_fd);
                ruleset_fd = -1;
        }
        if (ruleset_fd < 0) {
                dsh_private_devices_close(&devices);
                dsh_metadata_supervisor_free(supervisor);
                return LAUNCHER_FAILURE;
        }
        return launch_supervised(request, ruleset_fd, supervisor, private_devices ? &devices : NULL, metadata);
}

/*
 * The environment the command gets: every variable a --deny-env pattern
 * matches (and no --allow-env names) removed first, then each --setenv, in
 * order (a later one of the same name wins), so that no pattern removes
 * what the caller set for the call.  The supervisor, this process, keeps
 * its own environment as it was exec'd (/proc/PID/environ shows that, not
 * environ): the command is in a Landlock domain it is outside of, and
 * Landlock refuses the ptrace-read access that /proc/PID/environ needs.
 */
static int set_variables(const struct launch_request *request)
{
        dsh_env_rules rules = { request->deny_env, request->allow_env };

        dsh_env_scrub(environ, &rules);
        for (size_t i = 0; i < request->variable_count; i++)
                if (setenv(request->variables[i].name, request->variables[i].value, 1) < 0)
                        return fail("exec failed: %s", strerror(errno));
        return 0;
}

int main(int argc, char **argv)
{
        struct launch_request request = { 0 };
        int result = landlock_run_parse_arguments(argc, argv, &request);

        if (result == 0 && request.help)
                result = print_and_exit_status(help_text);
        else if (result == 0 && request.version)
                result = print_and_exit_status("landlock-run (dsh-sandbox) " DSH_SANDBOX_VERSION "\n");
        else if (result == 0 && request.probe)
                result = probe();
        else if (result == 0 && (result = set_variables(&request)) == 0)
                result = launch(&request);
        free(request.grants);
        free(request.variables);
        free(request.protected_paths);
        free(request.local_ports);
        free(request.masked);
        free(request.mask_closed);
        free(request.deny_env);
        free(request.allow_env);
        return result;
}
