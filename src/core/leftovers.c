/* SPDX-License-Identifier: MIT */
/* The leftovers of a call, adopted and ended: see leftovers.h for the argument. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/leftovers.h"

int dsh_leftovers_adopt(void)
{
        return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* Parses a decimal pid at `*at`, moving past it; 0 when there is none. */
static pid_t next_pid(const char **at, const char *end)
{
        pid_t pid = 0;

        while (*at < end && (**at < '0' || **at > '9'))
                (*at)++;
        while (*at < end && **at >= '0' && **at <= '9') {
                pid = pid * 10 + (pid_t) (**at - '0');
                (*at)++;
        }
        return pid;
}

/*
 * SIGKILL to every pid in /proc/self/task/TID/children: the children of
 * one thread (an orphan is reparented to a thread of the subreaper, the
 * leader while it lives).  Returns how many, or -1 when it cannot be read.
 */
static int kill_children_of_task(const char *task_name)
{
        char path[96], buffer[4096];
        int fd, killed = 0;
        ssize_t length;

        if (strlen(task_name) > 32)
                return -1;
        stpcpy(stpcpy(stpcpy(path, "/proc/self/task/"), task_name), "/children");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        /* A pid cut at the end of one read is read whole by the next round, which lists again. */
        while ((length = read(fd, buffer, sizeof(buffer))) > 0) {
                const char *at = buffer, *end = buffer + length;
                pid_t pid;

                while ((pid = next_pid(&at, end)) > 0)
                        if (kill(pid, SIGKILL) == 0)
                                killed++;
        }
        close(fd);
        return length < 0 ? -1 : killed;
}

/* One round: SIGKILL to every child of every thread.  -1 when the children cannot be listed. */
static int kill_every_child(void)
{
        /* The kernel pads each record to 8 bytes: aligned for struct dirent64 from the buffer's start. */
        _Alignas(struct dirent64) char buffer[1024];
        int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int killed = 0;
        long length;

        if (fd < 0)
                return -1;
        /* getdents64 rather than opendir(): no allocation, safe in a forked child. */
        while ((length = syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0) {
                for (long offset = 0; offset < length;) {
                        struct dirent64 *entry = (void *) (buffer + offset);
                        int count;

                        offset += entry->d_reclen;
                        if (entry->d_name[0] == '.')
                                continue;
                        count = kill_children_of_task(entry->d_name);
                        if (count < 0) {
                                close(fd);
                                return -1;
                        }
                        killed += count;
                }
        }
        close(fd);
        return length < 0 ? -1 : killed;
}

/*
 * The kernel's list of children can miss one that is being reparented at the
 * moment it is read: a round that killed nothing while a child still lives
 * lists again, this many times at most, rather than wait for a child it never
 * signalled.
 */
#define MAX_EMPTY_ROUNDS 1000

int dsh_leftovers_end(void)
{
        int total = 0, empty_rounds = 0;

        for (;;) {
                pid_t reaped = waitpid(-1, NULL, WNOHANG | __WALL);
                int killed;

                /* The common case, nothing left: known without reading /proc. */
                if (reaped < 0 && errno == ECHILD)
                        return total;
                if (reaped > 0)
                        continue;
                killed = kill_every_child();
                if (killed < 0) {
                        /* Unlisted, they cannot be killed: reap what has ended, never wait for the rest. */
                        while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
                                ;
                        return -ENOENT;
                }
                total += killed;
                /* A child lives that no list showed: list again (the look above reaps what ended meanwhile). */
                if (killed == 0) {
                        if (++empty_rounds > MAX_EMPTY_ROUNDS)
                                return -EAGAIN;
                        continue;
                }
                /* __WALL: a child cloned with another exit signal than SIGCHLD is waited for too. */
                do
                        reaped = waitpid(-1, NULL, __WALL);
                while (reaped < 0 && errno == EINTR);
                if (reaped < 0)
                        return total;   /* ECHILD: none left */
        }
}
