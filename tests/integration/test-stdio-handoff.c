/* SPDX-License-Identifier: MIT */
/*
 * The caller's stdio under bwrap: what the command gets must not be
 * reopenable, through /proc/self/fd, with more rights than the policy gives
 * (the escape matrix covers files and directories the sandbox can see).
 * Here: a read-only stdin that only the host sees (its /tmp, behind the
 * private one) is still readable, through a pipe, and cannot be written; a
 * device that cannot be re-homed ends the run before the command starts;
 * an output file the caller opened for writing still receives the output.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static char *workspace;

static int setup(void **state)
{
        (void) state;
        workspace = test_make_directory(NULL);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_remove_tree(workspace);
        return 0;
}

/* Runs dsh-sandbox with stdin from `input_fd` and stdout to `output_fd`; returns the exit status. */
static int run_with_stdio(const char *const *argv, int input_fd, int output_fd)
{
        pid_t pid = fork();
        int status = 0;

        assert_true(pid >= 0);
        if (pid == 0) {
                int null_fd = open("/dev/null", O_WRONLY);

                dup2(input_fd, 0);
                dup2(output_fd >= 0 ? output_fd : null_fd, 1);
                dup2(null_fd, 2);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_hidden_input_is_fed_not_reopened(void **state)
{
        char input_path[] = "/tmp/dsh-sandbox-stdin-XXXXXX";
        char *output_path = test_path_join(workspace, "out");
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", "bwrap", "--mode", "workspace-write",
                               "--root", workspace, "--", "sh", "-c",
                               "cat > \"$0\"; echo escaped > /proc/self/fd/0; true", output_path, NULL };
        int input_fd = mkstemp(input_path);
        char *content, *output;

        (void) state;
        if (!test_bwrap_works()) {
                printf("# skipped: bwrap cannot create a sandbox on this host\n");
                skip();
        }
        assert_true(input_fd >= 0);
        assert_int_equal(write(input_fd, "secret input\n", 13), 13);
        close(input_fd);
        input_fd = open(input_path, O_RDONLY);
        assert_int_equal(run_with_stdio(argv, input_fd, -1), 0);
        close(input_fd);
        content = test_read_file(input_path);
        output = test_read_file(output_path);
        assert_string_equal(content, "secret input\n");   /* not reopened for writing */
        assert_non_null(output);
        assert_string_equal(output, "secret input\n");    /* but read, through the feeding pipe */
        unlink(input_path);
        free(output);
        free(content);
        free(output_path);
}

static void test_unhomeable_device_stops_the_run(void **state)
{
        char *marker = test_path_join(workspace, "ran");
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", "bwrap", "--mode", "workspace-write",
                               "--root", workspace, "--", "touch", marker, NULL };
        int device = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

        (void) state;
        if (device < 0) {
                printf("# skipped: no readable /dev/kmsg on this host to stand for a device stdin\n");
                free(marker);
                skip();
        }
        if (!test_bwrap_works()) {
                printf("# skipped: bwrap cannot create a sandbox on this host\n");
                skip();
        }
        assert_int_equal(run_with_stdio(argv, device, -1), 125);
        assert_false(test_path_exists(marker));
        close(device);
        free(marker);
}

static void test_output_file_still_written(void **state)
{
        char *outside = test_make_directory(NULL);
        char *log = test_path_join(outside, "log");
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", "bwrap", "--", "echo", "logged", NULL };
        int null_fd = open("/dev/null", O_RDONLY), log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *content;

        (void) state;
        if (!test_bwrap_works()) {
                printf("# skipped: bwrap cannot create a sandbox on this host\n");
                skip();
        }
        assert_int_equal(run_with_stdio(argv, null_fd, log_fd), 0);
        close(log_fd);
        close(null_fd);
        content = test_read_file(log);
        assert_string_equal(content, "logged\n");
        free(content);
        free(log);
        test_remove_tree(outside);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_hidden_input_is_fed_not_reopened, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unhomeable_device_stops_the_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_output_file_still_written, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
