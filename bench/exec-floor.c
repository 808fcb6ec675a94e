/* SPDX-License-Identifier: MIT */
/*
 * The floor any wrapper pays: a static program that only execvp()s its
 * arguments.  With --wait first it spawns them instead and waits, exiting
 * with their status: the floor of a wrapper that stays as its runner's
 * parent (to learn the runner's failures out of band, to pass signals on),
 * as `dsh-sandbox run` does under bwrap.  Each --open-fd N before them opens
 * /dev/null at fd N first, so that an argv naming status fds (bwrap's
 * --json-status-fd, dsh-sandbox-exec's --status-fd) runs as it would under
 * the parent that built it (reach.bench.sh).
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
        pid_t pid;
        int status = 0, first = 1;

        while (first + 1 < argc && strcmp(argv[first], "--open-fd") == 0) {
                int fd = open("/dev/null", O_RDWR), target = atoi(argv[first + 1]);

                if (fd < 0 || dup2(fd, target) < 0)
                        return 126;
                if (fd != target)
                        close(fd);
                first += 2;
        }
        if (argc <= first)
                return 2;
        if (strcmp(argv[first], "--wait") != 0) {
                execvp(argv[first], argv + first);
                return 127;
        }
        if (argc < first + 2 || posix_spawnp(&pid, argv[first + 1], NULL, NULL, argv + first + 1, environ) != 0)
                return 127;
        while (waitpid(pid, &status, 0) < 0)
                ;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
