/* SPDX-License-Identifier: MIT */
/*
 * The floor of any metadata supervisor built on seccomp user notification:
 * runs its arguments under the very filter workspace-write installs
 * (metadata-filter.h), and answers every notification at once with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE — no check, no copy, no call performed.
 * What a command pays under it over an unconfined run is what the kernel's
 * round trip alone costs (two context switches and two ioctls per call);
 * no supervisor can cost less.  Never a sandbox: CONTINUE lets every call
 * through unchecked.
 *
 * With --count it also prints, on stderr once the command is gone, how many
 * notifications it answered: the metadata calls (ioctls on their command
 * included), connect, and the rest (what the filter sends besides: write
 * intent, once the filter sends it).  A benchmark divides a cost by these,
 * and a read-heavy command shows here that it sends none.
 * Usage: notify-floor [--count] COMMAND [ARG...]
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/metadata-filter.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static int run_command(int socket_fd, char **argv)
{
        int result;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
                return 125;
        result = dsh_install_metadata_filter(DSH_METADATA_SUPERVISE, DSH_NETWORK_FILTER_ON, socket_fd, false);
        if (result < 0) {
                fprintf(stderr, "notify-floor: cannot install the filter: %s\n", strerror(-result));
                return 125;
        }
        close(socket_fd);
        execvp(argv[0], argv);
        return errno == ENOENT ? 127 : 126;
}

/* The notifications answered, by kind (--count). */
typedef struct notification_counts {
        unsigned long metadata;
        unsigned long connect;
        unsigned long other;
} notification_counts;

static bool is_metadata_call(int nr)
{
        const int *call;

        if (nr == __NR_ioctl)
                return true;
        for (call = dsh_metadata_syscalls(); *call != -1; call++)
                if (*call == nr)
                        return true;
        return false;
}

static void count_notification(notification_counts *counts, int nr)
{
        if (is_metadata_call(nr))
                counts->metadata++;
        else if (nr == __NR_connect)
                counts->connect++;
        else
                counts->other++;
}

/* Answers every notification with CONTINUE until the last filtered task is gone, counting them. */
static void answer_until_hangup(int listener, notification_counts *counts)
{
        struct seccomp_notif request;
        struct seccomp_notif_resp response;
        struct pollfd ready = { .fd = listener, .events = POLLIN };
        uint64_t flag = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

        /* As the supervisor does (6.6): wake on the command's CPU, not through the scheduler. */
        (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flag);
        for (;;) {
                if (poll(&ready, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                if (ready.revents & (POLLHUP | POLLERR | POLLNVAL))
                        return;
                memset(&request, 0, sizeof(request));
                if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &request) != 0)
                        continue;  /* the caller was interrupted, or is gone */
                count_notification(counts, request.data.nr);
                memset(&response, 0, sizeof(response));
                response.id = request.id;
                response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
        }
}

int main(int argc, char **argv)
{
        notification_counts counts = { 0 };
        bool print_counts = argc > 1 && strcmp(argv[1], "--count") == 0;
        char **command = argv + (print_counts ? 2 : 1);
        int sockets[2];
        int listener;
        int status = 0;
        pid_t pid;

        if (!command[0]) {
                fprintf(stderr, "usage: notify-floor [--count] COMMAND [ARG...]\n");
                return 2;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
                return 125;
        pid = fork();
        if (pid < 0)
                return 125;
        if (pid == 0) {
                close(sockets[0]);
                _exit(run_command(sockets[1], command));
        }
        close(sockets[1]);
        listener = dsh_receive_fd(sockets[0]);
        close(sockets[0]);
        if (listener >= 0) {
                answer_until_hangup(listener, &counts);
                close(listener);
        }
        if (print_counts)
                fprintf(stderr, "notify-floor: %lu notifications: %lu metadata, %lu connect, %lu other (write intent)\n",
                        counts.metadata + counts.connect + counts.other, counts.metadata, counts.connect,
                        counts.other);
        if (waitpid(pid, &status, 0) != pid)
                return 125;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
