/* SPDX-License-Identifier: MIT */
/*
 * serve-client: the two ways a harness makes N calls, for serve.bench.sh to
 * time against each other with bench/interleave.
 *
 *   serve-client --repeat N -- COMMAND...
 *       runs COMMAND N times, one after the other (one CLI process per
 *       call), stdout and stderr on /dev/null;
 *   serve-client --serve N REQUEST -- COMMAND...
 *       starts COMMAND once (`dsh-sandbox serve`) and sends it REQUEST N
 *       times, one at a time as a harness waiting for each answer would:
 *       {"jsonrpc":"2.0","id":I,"method":...} with REQUEST's members,
 *       then reads the answer line before sending the next.
 *
 * Exits 0 when every call succeeded (exit 0; an answer holding "result"),
 * else 1: a broken candidate must not produce a ratio.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int spawn_with(char **command, posix_spawn_file_actions_t *actions, pid_t *pid)
{
        int failed = posix_spawnp(pid, command[0], actions, NULL, command, environ);

        posix_spawn_file_actions_destroy(actions);
        if (failed)
                fprintf(stderr, "serve-client: cannot run %s: %s\n", command[0], strerror(failed));
        return failed ? -1 : 0;
}

static int wait_success(pid_t pid)
{
        int status = 0;

        while (waitpid(pid, &status, 0) < 0)
                ;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int repeat(long count, char **command)
{
        for (long i = 0; i < count; i++) {
                posix_spawn_file_actions_t actions;
                pid_t pid;

                posix_spawn_file_actions_init(&actions);
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
                if (spawn_with(command, &actions, &pid) < 0 || wait_success(pid) < 0)
                        return 1;
        }
        return 0;
}

/* The request line for id `id`: REQUEST's members after jsonrpc and id ("{...}" without its brace). */
static char *request_line(const char *request, long id)
{
        char *line = NULL;
        const char *members = strchr(request, '{');

        if (!members || asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,%s\n", id, members + 1) < 0)
                return NULL;
        return line;
}

static int serve(long count, const char *request, char **command)
{
        posix_spawn_file_actions_t actions;
        int to_server[2], from_server[2], result = 0;
        char *answer = NULL;
        size_t capacity = 0;
        FILE *answers;
        pid_t pid;

        if (pipe2(to_server, O_CLOEXEC) < 0 || pipe2(from_server, O_CLOEXEC) < 0)
                return 1;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, to_server[0], 0);
        posix_spawn_file_actions_adddup2(&actions, from_server[1], 1);
        if (spawn_with(command, &actions, &pid) < 0)
                return 1;
        close(to_server[0]);
        close(from_server[1]);
        answers = fdopen(from_server[0], "r");
        for (long id = 1; result == 0 && id <= count; id++) {
                char *line = request_line(request, id);
                size_t length = line ? strlen(line) : 0;

                if (!line || write(to_server[1], line, length) != (ssize_t) length ||
                    getline(&answer, &capacity, answers) < 0 || !strstr(answer, "\"result\""))
                        result = 1;
                free(line);
        }
        if (result)
                fprintf(stderr, "serve-client: a call failed: %s", answer ? answer : "(no answer)\n");
        free(answer);
        close(to_server[1]);
        fclose(answers);
        return wait_success(pid) < 0 ? 1 : result;
}

int main(int argc, char **argv)
{
        int separator = 0;

        for (int i = 1; i < argc && !separator; i++)
                if (strcmp(argv[i], "--") == 0)
                        separator = i;
        signal(SIGPIPE, SIG_IGN);
        if (separator == 3 && strcmp(argv[1], "--repeat") == 0 && separator + 1 < argc)
                return repeat(atol(argv[2]), argv + separator + 1);
        if (separator == 4 && strcmp(argv[1], "--serve") == 0 && separator + 1 < argc)
                return serve(atol(argv[2]), argv[3], argv + separator + 1);
        fprintf(stderr, "usage: serve-client --repeat N -- COMMAND... | --serve N REQUEST -- COMMAND...\n");
        return 2;
}
