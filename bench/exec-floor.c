/* SPDX-License-Identifier: MIT */
/*
 * The floor any wrapper pays: a static program that only execvp()s its
 * arguments.  With --wait first it spawns them instead and waits, exiting
 * with their status: the floor of a wrapper that stays as its runner's
 * parent (to learn the runner's failures out of band, to pass signals on),
 * as `dsh-sandbox run` does under bwrap.
 */
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
        pid_t pid;
        int status = 0;

        if (argc < 2)
                return 2;
        if (strcmp(argv[1], "--wait") != 0) {
                execvp(argv[1], argv + 1);
                return 127;
        }
        if (argc < 3 || posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0)
                return 127;
        while (waitpid(pid, &status, 0) < 0)
                ;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
