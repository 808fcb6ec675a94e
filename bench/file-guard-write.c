/* SPDX-License-Identifier: MIT */
/*
 * file-guard-write: what the file guard costs per write.
 *
 * Times an atomic write of 4 KiB to a file in a workspace under /var/tmp —
 * O_TMPFILE in the file's directory, write, fsync, link under a temporary
 * name, rename over the file — done three ways, in turn (baseline, then each
 * candidate, round after round, so that drift of the machine cancels out of
 * each pair):
 *   unguarded        the steps above by path, no policy at all (the baseline)
 *   guarded          dsh_file_guard_write() through one guard made beforehand
 *   guarded per call dsh_file_guard_new() + write + free, as a tool call does
 *                    (the policy prepared, the roots opened, the shield planned)
 * and prints the median of each and the median of the pair ratios.  A
 * benchmark, never a test: it asserts nothing.
 *
 *   file-guard-write [ITERATIONS]     (environment: LANDLOCK_RUN_BIN, to find this build's launchers)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/runtime.h"

#include "bench-timing.h"

#define CONTENT_SIZE 4096

static char content[CONTENT_SIZE];

/* The baseline: the guard's own steps for one atomic replacement, by path, with no decision at all. */
static int write_unguarded(const char *directory, const char *target, const char *temporary)
{
        char proc_path[64];
        int fd = open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);

        if (fd < 0)
                return -1;
        if (write(fd, content, sizeof(content)) != (ssize_t) sizeof(content) || fsync(fd) < 0) {
                close(fd);
                return -1;
        }
        if (linkat(fd, "", AT_FDCWD, temporary, AT_EMPTY_PATH) < 0) {
                snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
                if (linkat(AT_FDCWD, proc_path, AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) < 0) {
                        close(fd);
                        return -1;
                }
        }
        close(fd);
        return rename(temporary, target);
}

static int write_guarded(dsh_file_guard *guard, const char *target)
{
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_file_guard_write(guard, target, content, sizeof(content), 0, NULL, &error);

        if (result < 0)
                fprintf(stderr, "file-guard-write: %s\n", error.message);
        dsh_error_clear(&error);
        return result;
}

static int write_guarded_per_call(dsh_runtime *runtime, const dsh_policy *policy, const char *target)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        int result = dsh_file_guard_new(runtime, policy, &guard, &error);

        if (result == 0)
                result = write_guarded(guard, target);
        else
                fprintf(stderr, "file-guard-write: %s\n", error.message);
        dsh_file_guard_free(guard);
        dsh_error_clear(&error);
        return result;
}

int main(int argc, char **argv)
{
        int iterations = argc > 1 ? atoi(argv[1]) : 2000;
        const char *landlock_run = getenv("LANDLOCK_RUN_BIN");
        char scratch[] = "/var/tmp/dsh-bench-guard-XXXXXX";
        char workspace[256], state[256], target[512], temporary[512], launchers[PATH_MAX] = "";
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_file_guard *guard = NULL;
        double *unguarded, *guarded, *per_call, *ratio_guarded, *ratio_per_call;
        char command[PATH_MAX + 16];
        int status = 1;

        if (iterations < 10)
                iterations = 10;
        memset(content, 'x', sizeof(content));
        if (!mkdtemp(scratch))
                return 1;
        snprintf(workspace, sizeof(workspace), "%s/ws", scratch);
        snprintf(state, sizeof(state), "%s/state", scratch);
        snprintf(target, sizeof(target), "%s/file", workspace);
        snprintf(temporary, sizeof(temporary), "%s/.file.tmp", workspace);
        mkdir(workspace, 0755);
        if (landlock_run && strrchr(landlock_run, '/'))
                snprintf(launchers, sizeof(launchers), "%.*s", (int) (strrchr(landlock_run, '/') - landlock_run),
                         landlock_run);
        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        {
                static dsh_config config;

                if (dsh_config_init(&config, &error) < 0)
                        goto out;
                options.config = &config;
        }
        options.state_directory = state;
        options.use_verdict_cache = false;
        options.launcher_directory = launchers[0] ? launchers : NULL;
        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = workspace;
        if (dsh_runtime_new(&options, &runtime, &error) < 0 ||
            dsh_runtime_resolve(runtime, &request, &policy, &error) < 0 ||
            dsh_file_guard_new(runtime, &policy, &guard, &error) < 0) {
                fprintf(stderr, "file-guard-write: %s\n", error.message);
                goto out;
        }
        unguarded = calloc((size_t) iterations, sizeof(double));
        guarded = calloc((size_t) iterations, sizeof(double));
        per_call = calloc((size_t) iterations, sizeof(double));
        ratio_guarded = calloc((size_t) iterations, sizeof(double));
        ratio_per_call = calloc((size_t) iterations, sizeof(double));
        /* Warm-up: the file exists, the page cache and the dentries are hot. */
        for (int i = 0; i < 20; i++)
                if (write_unguarded(workspace, target, temporary) < 0 || write_guarded(guard, target) < 0)
                        goto out;
        for (int i = 0; i < iterations; i++) {
                double start = now_microseconds();

                if (write_unguarded(workspace, target, temporary) < 0)
                        goto out;
                unguarded[i] = now_microseconds() - start;
                start = now_microseconds();
                if (write_guarded(guard, target) < 0)
                        goto out;
                guarded[i] = now_microseconds() - start;
                start = now_microseconds();
                if (write_guarded_per_call(runtime, &policy, target) < 0)
                        goto out;
                per_call[i] = now_microseconds() - start;
                ratio_guarded[i] = guarded[i] / unguarded[i];
                ratio_per_call[i] = per_call[i] / unguarded[i];
        }
        printf("atomic 4 KiB write (O_TMPFILE, fsync, rename over), %d rounds in turn, on %s\n", iterations, scratch);
        printf("  %-34s %10.1f us\n", "unguarded (baseline)", median(unguarded, iterations));
        printf("  %-34s %10.1f us   %.3fx baseline (median of pair ratios)\n", "guarded, one guard",
               median(guarded, iterations), median(ratio_guarded, iterations));
        printf("  %-34s %10.1f us   %.3fx baseline (median of pair ratios)\n", "guarded, a guard per call",
               median(per_call, iterations), median(ratio_per_call, iterations));
        status = 0;
out:
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        snprintf(command, sizeof(command), "rm -rf '%s'", scratch);
        if (system(command) != 0)
                status = 1;
        return status;
}
