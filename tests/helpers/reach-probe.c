/* SPDX-License-Identifier: MIT */
/*
 * Test helper: tries to reach out of the sandbox and prints what happened,
 * one word on stdout (exit 0 unless used wrongly):
 *
 *   reach-probe signal PID SIGNAL       "sent", or the errno name (EPERM: scoped)
 *   reach-probe connect-abstract NAME   "connected", or the errno name, for the
 *                                       abstract unix socket "\0NAME"
 *   reach-probe own-abstract            binds an abstract socket and connects to
 *                                       it from the same process: "connected"
 *   reach-probe securebits              the process's securebits, in decimal
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int print_outcome(int result, const char *success)
{
        puts(result == 0 ? success : strerrorname_np(errno) ? strerrorname_np(errno) : "unknown");
        return 0;
}

/* An abstract address: sun_path starts with a NUL byte, no file is involved. */
static socklen_t abstract_address(const char *name, struct sockaddr_un *address)
{
        size_t length = strlen(name);

        memset(address, 0, sizeof(*address));
        address->sun_family = AF_UNIX;
        if (length + 1 > sizeof(address->sun_path))
                length = sizeof(address->sun_path) - 1;
        memcpy(address->sun_path + 1, name, length);
        return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + length);
}

static int connect_abstract(const char *name)
{
        struct sockaddr_un address;
        socklen_t length = abstract_address(name, &address);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return print_outcome(-1, "");
        return print_outcome(connect(fd, (struct sockaddr *) &address, length), "connected");
}

static int own_abstract(void)
{
        char name[64];
        struct sockaddr_un address;
        socklen_t length;
        int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(name, sizeof(name), "dsh-sandbox-reach-probe-%d", (int) getpid());
        length = abstract_address(name, &address);
        if (listener < 0 || bind(listener, (struct sockaddr *) &address, length) < 0 || listen(listener, 1) < 0)
                return print_outcome(-1, "");
        return connect_abstract(name);
}

int main(int argc, char **argv)
{
        if (argc == 4 && strcmp(argv[1], "signal") == 0)
                return print_outcome(kill((pid_t) atoi(argv[2]), atoi(argv[3])), "sent");
        if (argc == 3 && strcmp(argv[1], "connect-abstract") == 0)
                return connect_abstract(argv[2]);
        if (argc == 2 && strcmp(argv[1], "own-abstract") == 0)
                return own_abstract();
        if (argc == 2 && strcmp(argv[1], "securebits") == 0) {
                int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

                if (bits < 0)
                        return print_outcome(-1, "");
                printf("%d\n", bits);
                return 0;
        }
        fprintf(stderr, "usage: reach-probe signal PID SIGNAL | connect-abstract NAME | own-abstract | securebits\n");
        return 2;
}
