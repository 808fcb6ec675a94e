/* SPDX-License-Identifier: MIT */
/* The session log's lock within a bound: see session-lock.h for the argument. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/session-lock.h"

static long long lock_timeout_ms(void)
{
        const char *text = getenv("DSH_SANDBOX_SESSION_LOCK_TIMEOUT_MS");
        char *end = NULL;
        long long value;

        if (!text || !*text)
                return DSH_SESSION_LOCK_DEFAULT_TIMEOUT_MS;
        errno = 0;
        value = strtoll(text, &end, 10);
        if (errno || *end || value <= 0)
                return DSH_SESSION_LOCK_DEFAULT_TIMEOUT_MS;
        return value;
}

static long long monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* In the forked waiter: every fd closed but `keep` and `other`, so it holds no pipe of the caller's. */
static void close_all_but(int keep, int other)
{
        int low = keep < other ? keep : other, high = keep < other ? other : keep;

#ifdef SYS_close_range
        if (low > 0)
                syscall(SYS_close_range, 0U, (unsigned) low - 1, 0U);
        if (high > low + 1)
                syscall(SYS_close_range, (unsigned) low + 1, (unsigned) high - 1, 0U);
        syscall(SYS_close_range, (unsigned) high + 1, ~0U, 0U);
#else
        (void) low;
        (void) high;
#endif
}

/* Waits for the waiter's end (its pipe's end of file) until `deadline_ms`; false at the deadline. */
static bool waiter_ended_in_time(int gone_fd, long long deadline_ms)
{
        for (;;) {
                struct pollfd watch = { gone_fd, POLLIN, 0 };
                long long left = deadline_ms - monotonic_ms();
                int ready;

                if (left <= 0)
                        return false;
                ready = poll(&watch, 1, left > 60000 ? 60000 : (int) left);
                if (ready > 0)
                        return true;
                if (ready < 0 && errno != EINTR)
                        return true;   /* cannot watch: the last attempt below decides at once */
        }
}

/* Blocks in flock() in a forked waiter, at most until the deadline; then one last attempt decides. */
static int wait_for_lock(int fd, long long timeout_ms)
{
        long long deadline_ms = monotonic_ms() + timeout_ms;
        int gone[2];
        pid_t waiter;

        if (pipe2(gone, O_CLOEXEC) < 0)
                return -errno;
        waiter = fork();
        if (waiter == 0) {
                close(gone[0]);
                close_all_but(fd, gone[1]);
                _exit(flock(fd, LOCK_EX) == 0 ? 0 : 1);
        }
        close(gone[1]);
        if (waiter < 0) {
                int fork_errno = errno;

                close(gone[0]);
                return -fork_errno;
        }
        if (!waiter_ended_in_time(gone[0], deadline_ms))
                kill(waiter, SIGKILL);   /* its pid is ours until reaped just below */
        while (waitpid(waiter, NULL, 0) < 0 && errno == EINTR)
                ;
        close(gone[0]);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                return 0;
        return errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
}

/* The first holder of a flock on `fd`'s inode in /proc/locks, or 0 when the kernel does not say. */
static pid_t lock_holder(int fd)
{
        struct stat status;
        char line[256];
        pid_t holder = 0;
        FILE *locks;

        if (fstat(fd, &status) < 0 || !(locks = fopen("/proc/locks", "re")))
                return 0;
        while (!holder && fgets(line, sizeof(line), locks)) {
                char kind[16], blocked[4];
                unsigned int major_number, minor_number;
                unsigned long long inode;
                int pid;

                /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's line reads "1: -> FLOCK ...". */
                if (sscanf(line, "%*d: %3s", blocked) == 1 && strcmp(blocked, "->") == 0)
                        continue;
                if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &pid, &major_number, &minor_number,
                           &inode) != 5)
                        continue;
                if (strcmp(kind, "FLOCK") == 0 && major_number == major(status.st_dev) &&
                    minor_number == minor(status.st_dev) && inode == (unsigned long long) status.st_ino && pid > 0)
                        holder = pid;
        }
        fclose(locks);
        return holder;
}

/* "process 1234 (sleep)", "process 1234" or "an unknown process". */
static void describe_holder(pid_t holder, char *text, size_t size)
{
        char path[64], name[64] = "";
        FILE *comm;

        if (holder <= 0) {
                snprintf(text, size, "an unknown process");
                return;
        }
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) holder);
        comm = fopen(path, "re");
        if (comm && fgets(name, sizeof(name), comm))
                name[strcspn(name, "\n")] = '\0';
        if (comm)
                fclose(comm);
        if (name[0])
                snprintf(text, size, "process %d (%s)", (int) holder, name);
        else
                snprintf(text, size, "process %d", (int) holder);
}

int dsh_session_lock_take(int fd, const char *path, dsh_error *error)
{
        long long timeout_ms = lock_timeout_ms();
        char holder[128];
        int result;

        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot lock session log %s: %s", path,
                                             strerror(errno));
                result = wait_for_lock(fd, timeout_ms);
                if (result == 0)
                        return 0;
                if (result != -ETIMEDOUT)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot lock session log %s: %s", path,
                                             strerror(-result));
                describe_holder(lock_holder(fd), holder, sizeof(holder));
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ETIMEDOUT,
                                     "session log %s is locked by %s: not released within %lld ms; nothing was written",
                                     path, holder, timeout_ms);
        }
        return 0;
}
