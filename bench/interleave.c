/* SPDX-License-Identifier: MIT */
/*
 * interleave: times a baseline command A and a candidate B, run in turn
 * (A B A B ...), so that drift of the machine between runs cancels out of
 * each pair, and prints the median of each and the median of the pair
 * ratios B/A.  A benchmark only prints; it never fails a test.
 *
 *   interleave [--runs N] [--warmup N] [--name-a NAME] [--name-b NAME] [--summary] -- A... --vs-- B...
 *
 * --summary adds one last line for a script to read, `summary A_MS B_MS RATIO`
 * (the two medians in milliseconds and the median of the pair ratios), so
 * that a bench collecting several pairs into one table (floor.bench.sh) need
 * not parse the lines written for people.
 *
 * Each run: posix_spawnp() with stdout and stderr on /dev/null, waitpid(),
 * wall-clock time from CLOCK_MONOTONIC.  A run that does not exit 0 ends the
 * benchmark with status 1 (a broken baseline must not produce a ratio).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-timing.h"

extern char **environ;

static double now_seconds(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) now.tv_sec + (double) now.tv_nsec / 1e9;
}

/* Runs `argv` once; returns its wall time in seconds, or a negative value when it failed. */
static double run_once(char **argv)
{
        posix_spawn_file_actions_t actions;
        double start;
        pid_t pid;
        int status = 0;

        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
        start = now_seconds();
        if (posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ) != 0) {
                posix_spawn_file_actions_destroy(&actions);
                return -1;
        }
        while (waitpid(pid, &status, 0) < 0)
                ;
        posix_spawn_file_actions_destroy(&actions);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        return now_seconds() - start;
}

int main(int argc, char **argv)
{
        const char *name_a = "baseline", *name_b = "candidate";
        int runs = 200, warmup = 10, i = 1;
        bool summary = false;
        char **command_a = NULL, **command_b = NULL;
        double *times_a, *times_b, *ratios;

        for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
                if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
                        warmup = atoi(argv[++i]);
                else if (strcmp(argv[i], "--name-a") == 0 && i + 1 < argc)
                        name_a = argv[++i];
                else if (strcmp(argv[i], "--name-b") == 0 && i + 1 < argc)
                        name_b = argv[++i];
                else if (strcmp(argv[i], "--summary") == 0)
                        summary = true;
        }
        if (i >= argc || runs < 1) {
                fprintf(stderr, "usage: interleave [--runs N] [--warmup N] [--name-a A] [--name-b B] [--summary] -- A... --vs-- B...\n");
                return 2;
        }
        command_a = &argv[i + 1];
        for (i = i + 1; i < argc; i++)
                if (strcmp(argv[i], "--vs--") == 0) {
                        argv[i] = NULL;
                        command_b = &argv[i + 1];
                        break;
                }
        if (!command_b || !command_a[0] || !command_b[0]) {
                fprintf(stderr, "interleave: expected A... --vs-- B...\n");
                return 2;
        }
        times_a = calloc((size_t) runs, sizeof(double));
        times_b = calloc((size_t) runs, sizeof(double));
        ratios = calloc((size_t) runs, sizeof(double));
        if (!times_a || !times_b || !ratios)
                return 1;
        for (i = 0; i < warmup; i++)
                if (run_once(command_a) < 0 || run_once(command_b) < 0) {
                        fprintf(stderr, "interleave: a warm-up run failed (%s or %s)\n", name_a, name_b);
                        return 1;
                }
        for (i = 0; i < runs; i++) {
                /* Alternate which goes first, so neither always follows the other's cache effects. */
                bool a_first = i % 2 == 0;

                times_a[i] = a_first ? run_once(command_a) : -1;
                times_b[i] = run_once(command_b);
                if (!a_first)
                        times_a[i] = run_once(command_a);
                if (times_a[i] < 0 || times_b[i] < 0) {
                        fprintf(stderr, "interleave: run %d failed (%s or %s)\n", i, name_a, name_b);
                        return 1;
                }
                ratios[i] = times_b[i] / times_a[i];
        }
        printf("%-28s median %7.3f ms\n", name_a, median(times_a, runs) * 1000);
        printf("%-28s median %7.3f ms\n", name_b, median(times_b, runs) * 1000);
        printf("%-28s %7.3fx  (median of %d pair ratios, run in turn)\n", "ratio", median(ratios, runs), runs);
        if (summary)
                printf("summary %.3f %.3f %.3f\n", median(times_a, runs) * 1000, median(times_b, runs) * 1000,
                       median(ratios, runs));
        return 0;
}
