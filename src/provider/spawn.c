/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/landlock.h"
#include "core/private-dev.h"
#include "core/process-hardening.h"
#include "base/error.h"
#include "provider/spawn.h"

static int child_redirect(int fd, int target)
{
        if (fd < 0 || fd == target)
                return 0;
        return dup2(fd, target) < 0 ? -errno : 0;
}

/*
 * The order is the security argument:
 *  0. a new process group first, when asked: from here on the terminal's
 *     signals for the caller's group no longer reach this process;
 *  1. stdio and session are arranged while nothing is restricted yet; so is
 *     the private /dev/shm and /dev/pts, when the plan has them
 *     (core/private-dev.h): a mount namespace of the child's own needs
 *     CAP_SYS_ADMIN, dropped in 4, and the command can change no mount
 *     after 5 (Landlock refuses mount, umount, move_mount and pivot_root to
 *     a process in a domain).  Where no namespace can be made the host's
 *     /dev stays read-only; a half-made one is a refusal;
 *  2. no_new_privs: from here no exec grants privileges (setuid bits and file
 *     capabilities are ignored), and both the seccomp filter and
 *     landlock_restrict_self() become legal without CAP_SYS_ADMIN (each
 *     refuses a process that has neither);
 *  3. the terminal filter, then the metadata filter (chmod, chown, utimes,
 *     xattrs and inode flags, which Landlock does not govern): refused
 *     outright, or sent to the metadata supervisor — whose listener is
 *     created here, in the child, and handed at once over the plan's unix
 *     socket (SCM_RIGHTS) to the supervisor thread in the parent, then
 *     closed: the command never holds its own listener, and the listener
 *     is in the supervisor's hands before the command runs (under a network
 *     policy it is offered instead and taken by the supervisor, which has
 *     no capability: so step 4 runs before the metadata filter);
 *  4. every capability dropped: the bounding set and the locked securebits
 *     first, because they need CAP_SETPCAP, then capset() to zero.  Root
 *     keeps nothing it could use to reboot, load a module, set the clock or
 *     reconfigure the network, and with NOROOT locked an exec gains nothing
 *     back.  This comes before the Landlock restriction, which needs no
 *     capability: the restriction is entered exactly as an unprivileged
 *     process enters it, on no_new_privs alone, and no later step runs with
 *     a privilege;
 *  5. the Landlock domain (with its scopes): after this point every path the
 *     process opens is checked against the policy, and it can neither signal
 *     nor reach the abstract sockets of processes outside the domain.  Every
 *     failure up to here returns with the command never run;
 *  6. every inherited fd above 2 is closed (a file fd opened before the
 *     domain keeps its rights), keeping only the documented keep_fds;
 *  7. exec.
 * Only raw system calls: safe in a forked child of a multi-threaded process.
 */
void dsh_exec_plan_apply(const dsh_exec_plan *plan, const dsh_spawn_options *options, dsh_spawn_failure *failure)
{
        bool confining = plan->terminal_filter || plan->drop_capabilities || plan->landlock_ruleset_fd >= 0 ||
                         plan->metadata != DSH_METADATA_UNGOVERNED;
        int result = 0;

        *failure = (dsh_spawn_failure) { DSH_SPAWN_STAGE_SETUP, 0 };
        /* setsid() makes a group too, and fails (EPERM) for a process that already leads one. */
        if (options->new_process_group && !options->new_session && setpgid(0, 0) < 0) {
                failure->errno_value = errno;
                return;
        }
        if (child_redirect(options->stdin_fd, 0) < 0 || child_redirect(options->stdout_fd, 1) < 0 ||
            child_redirect(options->stderr_fd, 2) < 0 ||
            ((options->new_session || options->controlling_terminal) && setsid() < 0) ||
            (options->controlling_terminal && ioctl(0, TIOCSCTTY, 0) < 0)) {
                failure->errno_value = errno;
                return;
        }
        /* Before confinement, by fd: the directory the caller checked, whatever its path names now. */
        if (options->cwd_fd >= 0 && fchdir(options->cwd_fd) < 0) {
                failure->errno_value = errno;
                return;
        }
        failure->stage = DSH_SPAWN_STAGE_CONFINE;
        if (plan->private_devices && (result = dsh_private_devices_enter(plan->private_devices)) < 0) {
                failure->stage = DSH_SPAWN_STAGE_PRIVATE_DEVICES;
                failure->errno_value = -result;
                return;
        }
        result = 0;  /* 1: no namespace to be had, the host's /dev stays read-only */
        if (confining)
                result = dsh_set_no_new_privs();
        /* One filter for both where both apply (metadata-filter.h says why). */
        if (result == 0 && plan->terminal_filter && plan->metadata == DSH_METADATA_UNGOVERNED)
                result = dsh_install_terminal_injection_filter();
        /* Before the filter: an offered listener is taken by a supervisor with no capability (metadata-filter.h). */
        if (result == 0 && plan->drop_capabilities)
                result = dsh_drop_capabilities();
        /* The network policy is the metadata filter's to hold: a plan with a policy and no filter runs nothing. */
        if (result == 0 && plan->network != DSH_NETWORK_FILTER_ON && plan->metadata == DSH_METADATA_UNGOVERNED) {
                failure->stage = DSH_SPAWN_STAGE_METADATA;
                failure->errno_value = EINVAL;
                return;
        }
        if (result == 0 && plan->metadata != DSH_METADATA_UNGOVERNED) {
                result = dsh_install_metadata_filter(plan->metadata, plan->network, plan->metadata_socket,
                                                     plan->terminal_filter);
                if (result < 0) {
                        failure->stage = DSH_SPAWN_STAGE_METADATA;
                        failure->errno_value = -result;
                        return;
                }
        }
        if (result == 0 && plan->landlock_ruleset_fd >= 0)
                result = dsh_forbid_core_dumps();
        if (result == 0 && plan->landlock_ruleset_fd >= 0)
                result = dsh_landlock_enforce(plan->landlock_ruleset_fd);
        if (result < 0) {
                failure->errno_value = -result;
                return;
        }
        failure->stage = DSH_SPAWN_STAGE_SETUP;
        result = dsh_close_inherited_fds_except(plan->keep_fds, plan->keep_fd_count);
        if (result < 0) {
                failure->errno_value = -result;
                return;
        }
        for (size_t i = 0; i < plan->keep_fd_count; i++) {
                if (plan->keep_fds[i] >= 0 && fcntl(plan->keep_fds[i], F_SETFD, 0) < 0) {
                        failure->errno_value = errno;
                        return;
                }
        }
        /* Signal dispositions set to "ignore" survive exec; the command starts with defaults. */
        signal(SIGPIPE, SIG_DFL);
        if (plan->environment)
                execvpe(plan->argv[0], plan->argv, plan->environment);
        else
                execvp(plan->argv[0], plan->argv);
        failure->stage = DSH_SPAWN_STAGE_EXEC;
        failure->errno_value = errno;
}

struct child_arguments {
        const dsh_exec_plan *plan;
        const dsh_spawn_options *options;
        const sigset_t *parent_mask;
        pid_t parent;                /* the spawning process, for die_with_parent */
        dsh_spawn_failure failure;   /* written by the child, read by the parent once it resumes */
};

/*
 * die_with_parent: SIGKILL when the spawning thread ends.  A parent killed
 * before the request took effect would never send it: then the child's
 * parent is no longer the one that spawned it, and it gives up.
 */
static int die_with_parent(pid_t parent)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -errno;
        return getppid() == parent ? 0 : -ESRCH;
}

/*
 * Runs in the child, on its own stack but in the parent's memory (the parent
 * is suspended until the child execs or exits).  Handlers the parent
 * installed would run here on shared memory, so every caught signal is reset
 * to its default before the parent's mask is restored; then the plan is
 * applied.  A failure is left in the shared arguments for the parent.
 */
static int child_main(void *data)
{
        struct child_arguments *arguments = data;
        dsh_spawn_failure failure;

        dsh_reset_caught_signals();
        sigprocmask(SIG_SETMASK, arguments->parent_mask, NULL);
        /* Only a failure may reach the shared memory: after a successful exec it must still say "none". */
        if (arguments->options->die_with_parent && (failure.errno_value = -die_with_parent(arguments->parent)) != 0)
                failure.stage = DSH_SPAWN_STAGE_SETUP;
        else
                dsh_exec_plan_apply(arguments->plan, arguments->options, &failure);
        arguments->failure = failure;
        _exit(125);
}

/*
 * The child's stack: room for the plan's frames plus what execvp() puts on
 * the stack for a script without "#!" (a copy of argv), and a PROT_NONE guard
 * page below it, so an overflow faults instead of writing the parent's memory.
 */
#define CHILD_STACK_BASE_SIZE (256 * 1024)

static size_t child_stack_size(char *const *argv)
{
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t size = CHILD_STACK_BASE_SIZE + (dsh_strv_length(argv) + 2) * sizeof(char *);

        return (size + page - 1) / page * page;
}

/*
 * clone(CLONE_VM | CLONE_VFORK), as posix_spawn() does: no copy of the
 * parent's page tables, which on this project's machines saves about 0.4 ms
 * per command over fork() (bench/run.sh).  The child only makes system calls
 * (and execvp, which allocates nothing) before it execs.
 */
pid_t dsh_spawn_exec_plan(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                          dsh_spawn_failure *failure)
{
        return dsh_spawn_exec_plan_masked(plan, options, NULL, failure);
}

pid_t dsh_spawn_exec_plan_masked(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                 const sigset_t *child_mask, dsh_spawn_failure *failure)
{
        struct child_arguments arguments = { plan, options, NULL, getpid(), { DSH_SPAWN_STAGE_NONE, 0 } };
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t stack_size = child_stack_size(plan->argv);
        sigset_t all_signals, parent_mask;
        char *mapping;
        pid_t pid;
        int clone_errno;

        *failure = arguments.failure;
        mapping = mmap(NULL, page + stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                       -1, 0);
        if (mapping == MAP_FAILED)
                return -errno;
        if (mprotect(mapping, page, PROT_NONE) < 0) {
                clone_errno = errno;
                munmap(mapping, page + stack_size);
                return -clone_errno;
        }
        sigfillset(&all_signals);
        pthread_sigmask(SIG_BLOCK, &all_signals, &parent_mask);
        arguments.parent_mask = child_mask ? child_mask : &parent_mask;
        pid = clone(child_main, mapping + page + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &arguments);
        clone_errno = errno;
        pthread_sigmask(SIG_SETMASK, &parent_mask, NULL);
        munmap(mapping, page + stack_size);
        if (pid < 0)
                return -clone_errno;
        if (arguments.failure.stage != DSH_SPAWN_STAGE_NONE) {
                *failure = arguments.failure;
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                return -ECHILD;
        }
        return pid;
}

int dsh_pipe_above_stdio(int fds[2])
{
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        for (int i = 0; i < 2; i++) {
                int moved;

                if (fds[i] > 2)
                        continue;
                moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
                if (moved < 0) {
                        int saved_errno = errno;

                        close(fds[0]);
                        close(fds[1]);
                        return -saved_errno;
                }
                close(fds[i]);  /* the caller's stdio slot is closed again, as it was */
                fds[i] = moved;
        }
        return 0;
}

int dsh_spawn_failure_to_error(const dsh_spawn_failure *failure, dsh_mode mode, const char *argv0, dsh_error *error)
{
        char detail[512];

        switch (failure->stage) {
        case DSH_SPAWN_STAGE_EXEC:
                return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, failure->errno_value, "%s: %s", argv0,
                                     strerror(failure->errno_value));
        case DSH_SPAWN_STAGE_CONFINE:
                snprintf(detail, sizeof(detail), "cannot apply the sandbox in the child: %s",
                         strerror(failure->errno_value));
                break;
        case DSH_SPAWN_STAGE_METADATA:
                if (failure->errno_value == EBUSY)
                        snprintf(detail, sizeof(detail), "%s", DSH_METADATA_NESTED_LISTENER_REASON);
                else
                        snprintf(detail, sizeof(detail), "cannot install the metadata filter in the child: %s",
                                 strerror(failure->errno_value));
                break;
        case DSH_SPAWN_STAGE_PRIVATE_DEVICES:
                snprintf(detail, sizeof(detail), "cannot mount the command's private /dev/shm and /dev/pts in the "
                                                 "child: %s",
                         strerror(failure->errno_value));
                break;
        case DSH_SPAWN_STAGE_SETUP:
        case DSH_SPAWN_STAGE_NONE:
                snprintf(detail, sizeof(detail), "cannot prepare the child process: %s",
                         strerror(failure->errno_value));
                break;
        }
        if (!dsh_mode_is_confined(mode))
                return dsh_error_set(error, DSH_ERROR_SYSTEM, failure->errno_value, "%s", detail);
        dsh_error_set_unavailable(error, mode, detail);
        /* Never 0: a caller must not read "success" from a failure without an errno. */
        return failure->errno_value > 0 ? -failure->errno_value : -EIO;
}
