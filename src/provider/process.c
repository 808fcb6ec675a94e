/* SPDX-License-Identifier: MIT */
/* The process module: see process.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/call-network.h"
#include "core/metadata-supervisor.h"
#include "core/refusals.h"
#include "core/stand-in.h"
#include "base/error.h"
#include "provider/process.h"
#include "provider/spawn.h"
#include "provider/stand-in-spawn.h"
#include "provider/verdict-cache.h"

#define COLLECT_LIMIT (64 * 1024)

dsh_child *dsh_child_new(void)
{
        dsh_child *child = calloc(1, sizeof(*child));

        if (!child)
                return NULL;
        child->pid = -1;
        child->facts = (dsh_confined_argv) DSH_CONFINED_ARGV_INIT;
        child->runner_status_fd = -1;
        child->exec_status_fd = -1;
        return child;
}

_Static_assert(DSH_WRITE_REFUSALS_MAX == DSH_REFUSALS_MAX, "the public bound is the supervisor's");

void dsh_write_refusals_free(dsh_write_refusal *refusals, size_t count)
{
        for (size_t i = 0; i < count; i++) {
                free(refusals[i].op);
                free(refusals[i].path);
                free(refusals[i].rule);
        }
        free(refusals);
}

/*
 * The supervisor's records, in the public shape, on the child (`records` is
 * emptied).  The op and rule names are copied, so that the child owns every
 * string it hands out; what cannot be kept for want of memory is counted
 * dropped, never lost without a trace.
 */
static void keep_refusals(dsh_child *child, dsh_refusals *records)
{
        dsh_write_refusal *kept = records->count ? calloc(records->count, sizeof(*kept)) : NULL;
        size_t count = 0;

        child->refusals_dropped += records->dropped;
        for (size_t i = 0; i < records->count; i++) {
                const dsh_refusal *record = &records->items[i];
                dsh_write_refusal refusal = { NULL, NULL, NULL };

                if (kept) {
                        refusal.op = strdup(record->op);
                        refusal.path = strdup(record->path);
                        refusal.rule = strdup(dsh_refusal_rule_name(record->rule));
                }
                if (refusal.op && refusal.path && refusal.rule) {
                        kept[count++] = refusal;
                        continue;
                }
                free(refusal.op);
                free(refusal.path);
                free(refusal.rule);
                child->refusals_dropped++;
        }
        dsh_refusals_clear(records);
        if (count == 0) {
                free(kept);
                kept = NULL;
        }
        child->refusals = kept;
        child->refusal_count = count;
}

/*
 * Stops the child's metadata supervisor, if any (either backend's), keeps
 * what it refused and counted, and says what it had to refuse for want of
 * access.
 */
static void stop_metadata_supervisor(dsh_child *child)
{
        dsh_supervisor_report report;
        unsigned long unreadable;
        char *sentence = NULL;

        if (!child->metadata_supervisor)
                return;
        dsh_metadata_supervisor_stop_reporting(child->metadata_supervisor, &report);
        child->metadata_supervisor = NULL;
        child->write_calls = report.write_calls;
        keep_refusals(child, &report.refusals);
        unreadable = report.unreadable_calls;
        if (report.served_nothing)
                (void) dsh_strv_append(&child->warnings, "the metadata supervisor could not drop its capabilities "
                                                         "and served nothing: every chmod, chown, utimes and xattr "
                                                         "call of the command failed (ENOSYS)");
        if (unreadable == 0)
                return;
        if (asprintf(&sentence, "the metadata supervisor refused %lu metadata call%s of the command (EACCES, "
                                "connect calls included): it could not read the call's arguments or descriptors (a "
                                "command that made itself non-dumpable, or a host that forbids reading another "
                                "process or taking its sockets with pidfd_getfd)",
                     unreadable, unreadable == 1 ? "" : "s") >= 0)
                (void) dsh_strv_append(&child->warnings, sentence);
        free(sentence);
}

void dsh_child_free(dsh_child *child)
{
        if (!child)
                return;
        stop_metadata_supervisor(child);
        dsh_stand_in_forget(child->pid);
        dsh_confined_argv_clear(&child->facts);
        if (child->runner_status_fd >= 0)
                close(child->runner_status_fd);
        if (child->exec_status_fd >= 0)
                close(child->exec_status_fd);
        free(child->runner_failure_detail);
        free(child->stale_verdict_path);
        dsh_strv_free(child->audit_absent);
        dsh_strv_free(child->moved_aside_paths);
        dsh_strv_free(child->warnings);
        dsh_write_refusals_free(child->refusals, child->refusal_count);
        /* After the supervisor: its workers ask the service's gate and write the records until it stops. */
        dsh_call_network_free(child->network);
        dsh_refused_connections_free(child->refused_connections, child->refused_connection_count);
        free(child);
}

int dsh_child_moved_aside(const dsh_child *child)
{
        return child->moved_aside;
}

size_t dsh_child_moved_aside_paths(const dsh_child *child, const char *const **paths)
{
        if (paths)
                *paths = (const char *const *) child->moved_aside_paths;
        return dsh_strv_length(child->moved_aside_paths);
}

pid_t dsh_child_pid(const dsh_child *child)
{
        return child->pid;
}

pid_t dsh_child_process_group(const dsh_child *child)
{
        return child->process_group;
}

/* Writes `number` (>= 0) in decimal at `at`; returns the end.  Async-signal-safe, unlike snprintf. */
static char *put_decimal(char *at, long number)
{
        char digits[24];
        int count = 0;

        do {
                digits[count++] = (char) ('0' + number % 10);
                number /= 10;
        } while (number > 0);
        while (count > 0)
                *at++ = digits[--count];
        return at;
}

/*
 * Whether the process `pid` has a child: /proc/PID/task/PID/children is not
 * empty.  True when that cannot be read.  Async-signal-safe (open, read,
 * close).
 */
static bool sandbox_init_has_child(pid_t pid)
{
        static const char proc[] = "/proc/", task[] = "/task/", children[] = "/children";
        char path[96], *at = path, first;
        ssize_t length;
        int fd;

        memcpy(at, proc, sizeof(proc) - 1);
        at = put_decimal(at + sizeof(proc) - 1, (long) pid);
        memcpy(at, task, sizeof(task) - 1);
        at = put_decimal(at + sizeof(task) - 1, (long) pid);
        memcpy(at, children, sizeof(children));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return true;
        length = read(fd, &first, 1);
        close(fd);
        return length != 0;
}

/*
 * The one rule for signalling a command, used by the bash tool, the
 * probes' deadline (dsh_kill_and_reap) and `run`'s signal handler.
 *
 * Under bwrap the group is the sandbox's: its init (bwrap's inner process,
 * pid 1 inside, `group` outside, the runner's child) makes it with setsid()
 * and only then asks to die with its parent (PR_SET_PDEATHSIG).  Until then
 * kill(-group) fails (ESRCH), and a signal that reached the runner alone
 * killed the outer bwrap while the init went on: it set its death signal
 * after its parent was gone, never received it, and exec'd the command,
 * unsupervised, for ever.  So when the group cannot be reached, the
 * sandbox is ended by its init's pid, which exists from the clone on:
 * SIGKILL sent to a pid namespace's init from outside it always lands, and
 * the init's death ends every process of the namespace.  Another signal
 * would not do: the kernel drops a signal from outside the namespace that
 * its init has no handler for.  Ending the sandbox then is a cancellation
 * before the start: setsid() comes before the command's exec, so no command
 * ran yet.  The runner then gets the signal itself and dies of it (bwrap
 * handles none of those passed on), so that the run ends as the signal
 * said.  SIGKILL goes to the init by pid whether or not the group was
 * reached: nothing in between can keep it alive.
 *
 * Pids.  The runner's pid is ours until we reap it (the caller's promise).
 * The init's pid is its own until it is reaped: by the runner, which does
 * so when the init exits and then exits itself, or, had the runner died
 * first, by whatever adopted it — after it has exited either way.  A
 * runner that has not exited has therefore either a live init, or one it
 * has reaped an instant before its own exit.  The init is signalled by pid
 * only while the runner has not exited (the look is waitid(WNOWAIT), which
 * reaps nothing): what is left is that instant, in which the pid could name
 * another process only if the kernel's pid counter wrapped around to it —
 * the exposure kill(-group) already had.  Not guaranteed: a runner that is
 * not the caller's child is taken as exited (its init is never signalled
 * by pid; the group and the runner still are).
 *
 * The same holds a moment longer: after setsid() the group holds the init
 * alone until it forks the process that execs the command, and the init,
 * without a handler, drops the signal while kill(-group) succeeds.  So the
 * group is signalled only once the init has a child (its children in
 * /proc; the fork comes after setsid(), so that child is in the group);
 * before, the sandbox is ended as above.  An init whose children cannot be
 * read (a kernel without /proc/PID/task/TID/children) is taken to have one.
 * Should the fork come just after the look, the SIGKILL still ends that
 * child with the namespace, its command at most just exec'd.
 */
void dsh_signal_command(pid_t runner, pid_t group, int signal_number)
{
        bool sandbox = group > 0 && group != runner && runner > 0;
        bool reached = false;

        /* A Landlock call's stand-in (stand-in-spawn.h): never a SIGKILL, which would orphan its leftovers. */
        if (dsh_stand_in_is_known(runner)) {
                dsh_stand_in_signal(runner, group, signal_number);
                return;
        }

        if (group > 0 && (!sandbox || signal_number == SIGKILL || sandbox_init_has_child(group)))
                reached = kill(-group, signal_number) == 0;
        if (reached && signal_number != SIGKILL)
                return;
        if (sandbox && !dsh_process_has_exited(runner))
                kill(group, SIGKILL);
        if (runner > 0)
                kill(runner, signal_number);
}

const dsh_confined_argv *dsh_child_facts(const dsh_child *child)
{
        return &child->facts;
}

dsh_mode dsh_child_mode(const dsh_child *child)
{
        return child->mode;
}

bool dsh_child_command_started(const dsh_child *child)
{
        return child->command_started;
}

bool dsh_child_runner_failed(const dsh_child *child)
{
        return child->runner_failed;
}

const char *const *dsh_child_warnings(const dsh_child *child)
{
        static const char *const none[] = { NULL };

        return child->warnings ? (const char *const *) child->warnings : none;
}

size_t dsh_child_refusals(const dsh_child *child, const dsh_write_refusal **refusals, unsigned long *dropped)
{
        if (refusals)
                *refusals = child->refusals;
        if (dropped)
                *dropped = child->refusals_dropped;
        return child->refusal_count;
}

size_t dsh_child_network_refusals(const dsh_child *child, const dsh_refused_connection **refusals,
                                  unsigned long *dropped)
{
        if (refusals)
                *refusals = child->refused_connections;
        if (dropped)
                *dropped = child->refused_connections_dropped;
        return child->refused_connection_count;
}

size_t dsh_child_take_network_refusals(dsh_child *child, dsh_refused_connection **refusals, unsigned long *dropped)
{
        size_t count = child->refused_connection_count;

        *refusals = dsh_steal_pointer(&child->refused_connections);
        child->refused_connection_count = 0;
        if (dropped)
                *dropped = child->refused_connections_dropped;
        return count;
}

size_t dsh_child_take_refusals(dsh_child *child, dsh_write_refusal **refusals, unsigned long *dropped)
{
        size_t count = child->refusal_count;

        *refusals = dsh_steal_pointer(&child->refusals);
        child->refusal_count = 0;
        if (dropped)
                *dropped = child->refusals_dropped;
        return count;
}

unsigned long dsh_child_write_calls(const dsh_child *child)
{
        return child->write_calls;
}

int dsh_spawn_unconfined(char *const *argv, const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_spawn_failure failure;
        pid_t pid;

        facts.argv = dsh_strv_copy(argv);
        facts.backend = strdup("none");
        if (!facts.argv || !facts.backend) {
                dsh_confined_argv_clear(&facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        pid = dsh_spawn_exec_plan(&plan, options, &failure);
        if (pid < 0) {
                dsh_confined_argv_clear(&facts);
                if (pid == -ECHILD)
                        return dsh_spawn_failure_to_error(&failure, DSH_MODE_DANGER_FULL_ACCESS, argv[0], error);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid, "cannot start the command: %s",
                                     strerror((int) -pid));
        }
        child->pid = pid;
        child->mode = DSH_MODE_DANGER_FULL_ACCESS;
        child->facts = facts;
        child->command_started = true;   /* the spawn returned once the command was exec'd */
        return 0;
}

void dsh_child_settle(dsh_child *child, int wait_status)
{
        dsh_stand_in_forget(child->pid);   /* reaped: its pid may name another process from now on */
        stop_metadata_supervisor(child);
        /* The supervisor is gone: the service can stop, and nothing writes the records any more. */
        if (child->network) {
                child->refused_connection_count = dsh_call_network_finish(child->network,
                                                                          &child->refused_connections,
                                                                          &child->refused_connections_dropped);
                dsh_call_network_free(child->network);
                child->network = NULL;
        }
        if (child->backend && child->backend->settle)
                child->backend->settle(child, wait_status);
        /* A runner that failed before exec, chosen from the persisted verdict: the entry is stale. */
        if (child->runner_failed && child->stale_verdict_path && !child->command_started && !child->exec_errno)
                dsh_verdict_cache_drop(child->stale_verdict_path);
}

int dsh_child_wait(dsh_child *child, int *wait_status)
{
        pid_t pid;

        do
                pid = waitpid(child->pid, wait_status, 0);
        while (pid < 0 && errno == EINTR);
        if (pid < 0)
                return -errno;
        dsh_child_settle(child, *wait_status);
        return 0;
}

/* The program the caller asked for: the argv after the last "--" of the confined argv. */
static const char *child_program(const dsh_child *child)
{
        char **argv = child->facts.argv;
        const char *program = argv && argv[0] ? argv[0] : "the command";

        for (size_t i = 0; argv && argv[i]; i++)
                if (strcmp(argv[i], "--") == 0 && argv[i + 1])
                        program = argv[i + 1];
        return program;
}

int dsh_child_runner_error(const dsh_child *child, dsh_error *error)
{
        if (!child->runner_failed && child->exec_errno)
                return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, child->exec_errno, "%s: %s", child_program(child),
                                     strerror(child->exec_errno));
        if (!child->runner_failed)
                return 0;
        return dsh_error_set_unavailable(error, child->mode,
                                         child->runner_failure_detail ? child->runner_failure_detail
                                                                      : "the runner failed before exec");
}

long long dsh_monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int dsh_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
        return (int) syscall(SYS_pidfd_open, pid, 0);
#else
        (void) pid;
        errno = ENOSYS;
        return -1;
#endif
}

bool dsh_process_has_exited(pid_t pid)
{
        siginfo_t info = { 0 };

        while (waitid(P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
                if (errno != EINTR)
                        return errno == ECHILD;   /* reaped already, or never ours: nothing left to wait for */
        return info.si_pid == pid;
}

void dsh_kill_and_reap(pid_t pid, pid_t group, int *wait_status)
{
        int status = 0;

        /* The group first: a helper the child left behind (a runner script's own children) goes with it. */
        dsh_signal_command(pid, group, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (wait_status)
                *wait_status = status;
}

int dsh_poll_timeout_ms(long long deadline_ms)
{
        long long remaining;

        if (!deadline_ms)
                return -1;
        remaining = deadline_ms - dsh_monotonic_ms();
        if (remaining <= 0)
                return 0;
        return remaining > INT_MAX ? INT_MAX : (int) remaining;
}

int dsh_collect_bounded(pid_t pid, pid_t group, int fd, long long deadline_ms, char **text, int *wait_status)
{
        char *collected = calloc(1, COLLECT_LIMIT + 1);
        size_t used = 0;
        int result = 0;

        *text = NULL;
        *wait_status = 0;
        if (!collected) {
                close(fd);
                result = -ENOMEM;
                goto reap;
        }
        for (;;) {
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                char chunk[4096];
                ssize_t length;
                int ready = poll(&poll_fd, 1, dsh_poll_timeout_ms(deadline_ms));

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready <= 0) {
                        result = ready == 0 ? -ETIMEDOUT : -errno;
                        break;
                }
                length = read(fd, chunk, sizeof(chunk));
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        break;
                if (used < COLLECT_LIMIT) {
                        size_t keep = (size_t) length < COLLECT_LIMIT - used ? (size_t) length : COLLECT_LIMIT - used;

                        memcpy(collected + used, chunk, keep);
                        used += keep;
                }
        }
        close(fd);
        *text = collected;
reap:
        if (pid <= 0)
                return result;
        while (result == 0) {
                pid_t reaped = waitpid(pid, wait_status, WNOHANG);
                struct timespec pause = { 0, 200 * 1000 };

                if (reaped == pid)
                        return 0;
                if (reaped < 0 && errno != EINTR)
                        return -errno;
                if (dsh_monotonic_ms() >= deadline_ms)
                        result = -ETIMEDOUT;
                else
                        nanosleep(&pause, NULL);
        }
        /* Over time (or out of memory): the probe's processes must not outlive it. */
        dsh_kill_and_reap(pid, group, wait_status);
        return result;
}

int dsh_end_like_child(int wait_status)
{
        return dsh_stand_in_end_like(wait_status);
}
