/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static const char *required_env(const char *name)
{
        const char *value = getenv(name);

        if (!value || !value[0])
                fail_msg("%s is not set; run the tests through meson", name);
        return value;
}

const char *test_dsh_sandbox_path(void)
{
        return required_env("DSH_SANDBOX_BIN");
}

const char *test_landlock_run_path(void)
{
        return required_env("LANDLOCK_RUN_BIN");
}

size_t test_run_command_prefix(const char **argv, size_t count, const char *backend, const char *mode,
                               const char *root)
{
        const char *prefix[] = { test_dsh_sandbox_path(), "run", "--backend", backend, "--mode", mode, "--root", root };

        for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
                argv[count++] = prefix[i];
        return count;
}

char *test_make_directory(const char *parent)
{
        char *template = NULL;

        if (!parent)
                parent = required_env("DSH_TEST_SCRATCH");
        if (strncmp(parent, "/tmp/", 5) == 0 || strcmp(parent, "/tmp") == 0)
                fail_msg("scratch %s lies in the temp area every backend may grant", parent);
        mkdir(parent, 01777);
        assert_true(asprintf(&template, "%s/case-XXXXXX", parent) > 0);
        assert_non_null(mkdtemp(template));
        return template;
}

void test_remove_tree(char *path)
{
        const char *argv[] = { "rm", "-rf", "--", path, NULL };
        test_process_result result;

        if (!path)
                return;
        test_run(argv, NULL, &result);
        test_process_result_clear(&result);
        free(path);
}

char *test_path_join(const char *directory, const char *name)
{
        char *path = NULL;

        assert_true(asprintf(&path, "%s/%s", directory, name) > 0);
        return path;
}

bool test_path_exists(const char *path)
{
        struct stat status;

        return lstat(path, &status) == 0;
}

char **test_home_environment(const char *home)
{
        static const char *const git_identity[] = { "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
                                                    "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid" };
        char **environment = calloc(9, sizeof(*environment));

        assert_non_null(environment);
        assert_true(asprintf(&environment[0], "HOME=%s", home) > 0);
        assert_true(asprintf(&environment[1], "XDG_CONFIG_HOME=%s/.config", home) > 0);
        assert_true(asprintf(&environment[2], "XDG_STATE_HOME=%s/.local/state", home) > 0);
        assert_true(asprintf(&environment[3], "XDG_CACHE_HOME=%s/.cache", home) > 0);
        for (size_t i = 0; i < 4; i++) {
                environment[4 + i] = strdup(git_identity[i]);
                assert_non_null(environment[4 + i]);
        }
        return environment;
}

void test_home_environment_free(char **environment)
{
        if (!environment)
                return;
        for (size_t i = 0; environment[i]; i++)
                free(environment[i]);
        free(environment);
}

void test_write_file(const char *path, const char *content)
{
        FILE *file = fopen(path, "w");

        assert_non_null(file);
        assert_int_equal(fputs(content, file) >= 0, 1);
        assert_int_equal(fclose(file), 0);
}

ssize_t test_read_proc_file(const char *pid, const char *name, char *buffer, size_t size)
{
        char path[300];
        ssize_t length;
        int fd;

        snprintf(path, sizeof(path), "/proc/%s/%s", pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        length = read(fd, buffer, size - 1);
        close(fd);
        buffer[length > 0 ? length : 0] = '\0';
        return length;
}

void test_each_process(bool (*visit)(const char *pid, char *cmdline, ssize_t length, void *data), void *data)
{
        DIR *proc = opendir("/proc");
        struct dirent *entry;

        assert_non_null(proc);
        while ((entry = readdir(proc))) {
                char cmdline[8192];
                ssize_t length;

                if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
                        continue;
                length = test_read_proc_file(entry->d_name, "cmdline", cmdline, sizeof(cmdline));
                if (length > 0 && !visit(entry->d_name, cmdline, length, data))
                        break;
        }
        closedir(proc);
}

char *test_read_file(const char *path)
{
        FILE *file = fopen(path, "r");
        char *content = NULL;
        size_t size = 0;
        FILE *buffer;
        int c;

        if (!file)
                return NULL;
        buffer = open_memstream(&content, &size);
        assert_non_null(buffer);
        while ((c = fgetc(file)) != EOF)
                fputc(c, buffer);
        fclose(buffer);
        fclose(file);
        return content;
}

char *test_read_fd(int fd)
{
        char *content = NULL;
        size_t size = 0;
        FILE *buffer = open_memstream(&content, &size);
        char chunk[4096];
        ssize_t length;

        assert_non_null(buffer);
        while ((length = read(fd, chunk, sizeof(chunk))) != 0) {
                if (length < 0 && errno == EINTR)
                        continue;
                if (length < 0)
                        break;
                fwrite(chunk, 1, (size_t) length, buffer);
        }
        fclose(buffer);
        return content;
}

bool test_bwrap_works(void)
{
        static int known = -1;

        if (known < 0) {
                const char *argv[] = { "/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid",
                                       "--proc", "/proc", "--new-session", "--", "true", NULL };
                test_process_result result;

                test_run(argv, NULL, &result);
                known = result.exit_code == 0;
                if (!known)
                        printf("# bwrap cannot run on this host: %s\n", result.stderr_text ? result.stderr_text : "");
                test_process_result_clear(&result);
        }
        return known;
}

void test_run(const char *const *argv, const char *const *extra_env, test_process_result *result)
{
        test_run_bounded(argv, extra_env, 0, result);
}

void test_run_bounded(const char *const *argv, const char *const *extra_env, unsigned seconds,
                      test_process_result *result)
{
        int out_pipe[2], err_pipe[2], status = 0;
        char *stdout_text;
        pid_t pid;

        memset(result, 0, sizeof(*result));
        assert_int_equal(pipe2(out_pipe, O_CLOEXEC), 0);
        assert_int_equal(pipe2(err_pipe, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int null_fd = open("/dev/null", O_RDONLY);

                dup2(null_fd, 0);
                dup2(out_pipe[1], 1);
                dup2(err_pipe[1], 2);
                for (const char *const *assignment = extra_env; assignment && *assignment; assignment++)
                        putenv((char *) *assignment);
                if (seconds > 0)
                        alarm(seconds);
                execvp(argv[0], (char *const *) argv);
                dprintf(2, "test_run: exec %s: %s\n", argv[0], strerror(errno));
                _exit(255);
        }
        close(out_pipe[1]);
        close(err_pipe[1]);
        /* stderr of a failing run is small; read stdout first, then stderr. */
        stdout_text = test_read_fd(out_pipe[0]);
        result->stderr_text = test_read_fd(err_pipe[0]);
        result->stdout_text = stdout_text;
        close(out_pipe[0]);
        close(err_pipe[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status)) {
                result->signaled = true;
                result->exit_code = 128 + WTERMSIG(status);
        } else {
                result->exit_code = WEXITSTATUS(status);
        }
}

void test_process_result_clear(test_process_result *result)
{
        free(result->stdout_text);
        free(result->stderr_text);
        memset(result, 0, sizeof(*result));
}

void test_setup_shell(const char *directory, const char *line, const char *const *extra_env)
{
        char *script = NULL;
        const char *argv[] = { "sh", "-c", NULL, NULL };
        test_process_result result;

        assert_true(asprintf(&script, "cd '%s' && %s", directory, line) > 0);
        argv[2] = script;
        test_run(argv, extra_env, &result);
        if (result.exit_code != 0)
                fail_msg("setup `%s` failed: %s", line, result.stderr_text);
        test_process_result_clear(&result);
        free(script);
}

void test_sleep_ms(long milliseconds)
{
        struct timespec pause = { milliseconds / 1000, (milliseconds % 1000) * 1000000 };

        while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
                ;
}

bool test_wait_for_file(const char *path)
{
        for (long waited = 0; waited < TEST_WAIT_BOUND_MS; waited += TEST_POLL_STEP_MS) {
                if (test_path_exists(path))
                        return true;
                test_sleep_ms(TEST_POLL_STEP_MS);
        }
        return test_path_exists(path);
}

bool test_contains(const char *haystack, const char *needle)
{
        return haystack && strstr(haystack, needle) != NULL;
}
