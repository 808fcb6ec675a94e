/* SPDX-License-Identifier: MIT */
/*
 * spawn-overhead: what confinement costs per command.
 *
 * Times `bash -c true` started and reaped N times in each of these ways, all
 * in one run so the ratios compare like with like:
 *   bare            fork + exec + wait, no sandbox (the baseline), and posix_spawn
 *   in-process      dsh_provider_spawn, Landlock applied in the forked child
 *   exec-floor      a static program that only execvp()s (the floor any wrapper pays)
 *   landlock-run    the launcher, read-only grants
 *   dsh-sandbox run the CLI, --backend landlock
 * and prints medians and ratios.  A benchmark, never a test: it asserts nothing.
 *
 *   spawn-overhead [ITERATIONS]   (environment: LANDLOCK_RUN_BIN, DSH_SANDBOX_BIN, EXEC_FLOOR_BIN)
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dsh-sandbox/provider.h"

#include "bench-timing.h"

#define ROUNDS 7

static int spawn_bare(char *const *argv)
{
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -1;
        if (pid == 0) {
                execvp(argv[0], argv);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int spawn_posix(char *const *argv)
{
        extern char **environ;
        int status;
        pid_t pid;

        if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
                return -1;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static dsh_provider *provider;
static dsh_policy read_only_policy = DSH_POLICY_INIT;

static int spawn_in_process(char *const *argv)
{
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int status = 0;

        if (dsh_provider_spawn(provider, argv, &read_only_policy, NULL, &child, &error) < 0) {
                fprintf(stderr, "spawn-overhead: %s\n", error.message);
                dsh_error_clear(&error);
                return -1;
        }
        dsh_child_wait(child, &status);
        dsh_child_free(child);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct variant {
        const char *name;
        const char *argv[16];
        int (*spawn)(char *const *argv);
        double median_us;
};

static int measure(struct variant *variant, int iterations, double *samples)
{
        for (int warmup = 0; warmup < 5; warmup++)
                if (variant->spawn((char *const *) variant->argv) < 0)
                        return -1;
        for (int i = 0; i < iterations; i++) {
                double start = now_microseconds();

                if (variant->spawn((char *const *) variant->argv) < 0)
                        return -1;
                samples[i] = now_microseconds() - start;
        }
        variant->median_us = median(samples, iterations);
        return 0;
}

static char *required(const char *name)
{
        char *value = getenv(name);

        if (!value) {
                fprintf(stderr, "spawn-overhead: %s is not set (run bench/run.sh)\n", name);
                exit(2);
        }
        return value;
}

int main(int argc, char **argv)
{
        int iterations = argc > 1 ? atoi(argv[1]) : 400;
        char *landlock_run = required("LANDLOCK_RUN_BIN");
        char *dsh_sandbox = required("DSH_SANDBOX_BIN");
        char *floor = required("EXEC_FLOOR_BIN");
        struct variant variants[] = {
                { "bare fork+exec", { "bash", "-c", "true", NULL }, spawn_bare, 0 },
                { "bare posix_spawn", { "bash", "-c", "true", NULL }, spawn_posix, 0 },
                { "in-process spawn", { "bash", "-c", "true", NULL }, spawn_in_process, 0 },
                { "static exec floor", { floor, "bash", "-c", "true", NULL }, spawn_bare, 0 },
                { "landlock-run", { landlock_run, "--ro", "/", "--rw", "/dev/null", "--", "bash", "-c", "true", NULL },
                  spawn_bare, 0 },
                { "dsh-sandbox run", { dsh_sandbox, "run", "--backend", "landlock", "--", "bash", "-c", "true", NULL },
                  spawn_bare, 0 },
        };
        const size_t count = sizeof(variants) / sizeof(variants[0]);
        double *samples;
        const char *backends[] = { "landlock", NULL };

        if (iterations < 10 * ROUNDS)
                iterations = 10 * ROUNDS;
        samples = calloc((size_t) iterations, sizeof(double));
        provider = dsh_provider_new();
        read_only_policy.workspace_root = strdup("/");
        if (!samples || !provider || dsh_provider_set_backends(provider, backends, NULL) < 0)
                return 1;
        /* Interleave rounds so that drift on a shared machine hits every variant alike; keep each one's best. */
        for (int round = 0; round < ROUNDS; round++)
                for (size_t i = 0; i < count; i++) {
                        double previous = variants[i].median_us;

                        if (measure(&variants[i], iterations / ROUNDS, samples) < 0) {
                                fprintf(stderr, "spawn-overhead: %s failed to run bash -c true\n", variants[i].name);
                                return 1;
                        }
                        if (round > 0 && previous < variants[i].median_us)
                                variants[i].median_us = previous;  /* best median of the rounds */
                }
        printf("spawn-overhead: median wall time of `bash -c true`, %d runs per variant per round (best of %d rounds)\n",
               iterations / ROUNDS, ROUNDS);
        printf("%-20s %10s %10s %12s %12s\n", "variant", "median_us", "x bare", "x spawn", "x floor");
        for (size_t i = 0; i < count; i++)
                printf("%-20s %10.1f %9.3fx %11.3fx %11.3fx\n", variants[i].name, variants[i].median_us,
                       variants[i].median_us / variants[0].median_us, variants[i].median_us / variants[1].median_us,
                       variants[i].median_us / variants[3].median_us);
        printf("bare = fork+exec, spawn = posix_spawn (both unconfined), floor = a static exec-only wrapper\n"
               "targets: in-process <= 1.10x bare; landlock-run and dsh-sandbox run <= 1.10x floor\n");
        free(samples);
        dsh_policy_clear(&read_only_policy);
        dsh_provider_free(provider);
        return 0;
}
