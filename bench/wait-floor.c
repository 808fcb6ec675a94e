/* SPDX-License-Identifier: MIT */
/*
 * The floor any tool that stays to capture and attribute pays, against
 * exec-floor: a static program that spawns its arguments, waits for them and
 * exits with their status.
 */
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
        pid_t pid;
        int status = 0;

        if (argc < 2)
                return 2;
        if (posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0)
                return 127;
        if (waitpid(pid, &status, 0) != pid)
                return 125;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
