/* SPDX-License-Identifier: MIT */
/* Shared helpers for the tests: scratch directories and running real processes. */
#ifndef DSH_SANDBOX_TEST_SUPPORT_H
#define DSH_SANDBOX_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Paths of the built programs, set by meson through the environment. */
const char *test_dsh_sandbox_path(void);
const char *test_landlock_run_path(void);

/* Puts `dsh-sandbox run --backend BACKEND --mode MODE --root ROOT` at argv[count...]; returns the
 * count after it (the caller's array must hold 8 more). */
size_t test_run_command_prefix(const char **argv, size_t count, const char *backend, const char *mode,
                               const char *root);

/* Creates a fresh directory under `parent` (NULL: $DSH_TEST_SCRATCH, under /var/tmp,
 * so that the Landlock temp-area grant does not cover it).  Caller frees. */
char *test_make_directory(const char *parent);

/* rm -rf; the path is freed. */
void test_remove_tree(char *path);

/* "dir/name", caller frees. */
char *test_path_join(const char *directory, const char *name);

bool test_path_exists(const char *path);

/*
 * The environment the CLI runs with in a test: HOME=`home`, the XDG config, state and cache
 * directories beneath it (as they default to), and a git identity, so that no run reads or
 * writes the user's own files and git commits work.  NULL-terminated; free it with
 * test_home_environment_free().
 */
char **test_home_environment(const char *home);
void test_home_environment_free(char **environment);

/* Writes `content` to `path` (create/truncate); aborts the test on failure. */
void test_write_file(const char *path, const char *content);

/*
 * Whether /usr/bin/bwrap can make a sandbox here (a user namespace, a fresh
 * /proc); asked once per process, the reason printed when it cannot.
 */
bool test_bwrap_works(void);

/* In a cmocka test: skips it, saying why, where bwrap cannot make a sandbox. */
#define TEST_REQUIRE_BWRAP()                                                                     \
        do {                                                                                     \
                if (!test_bwrap_works()) {                                                       \
                        printf("# skipped: bwrap cannot create a sandbox on this host\n");     \
                        skip();                                                                  \
                }                                                                                \
        } while (0)

/* Reads /proc/PID/NAME into `buffer` (NUL-terminated after what was read); returns the length
 * read, <= 0 when the process is gone or the file is empty (a zombie's cmdline). */
ssize_t test_read_proc_file(const char *pid, const char *name, char *buffer, size_t size);

/*
 * Calls `visit` for each running process, with its pid (as in /proc) and its
 * command line (the argv, NUL-separated, NUL-terminated after `length`
 * bytes); a process gone meanwhile, or a zombie (no command line), is
 * skipped.  Stops when `visit` returns false.  The one /proc scan of the tests.
 */
void test_each_process(bool (*visit)(const char *pid, char *cmdline, ssize_t length, void *data), void *data);

/* Reads a whole file; NULL if it does not exist.  Caller frees. */
char *test_read_file(const char *path);
/* Everything readable from `fd` until EOF (the fd stays open); caller frees. */
char *test_read_fd(int fd);

typedef struct test_process_result {
        int exit_code;          /* exit status, or 128+N for signal N */
        bool signaled;
        char *stdout_text;      /* caller frees (test_process_result_clear) */
        char *stderr_text;
} test_process_result;

/* Runs argv (NULL-terminated; argv[0] is a path or PATH name) with stdin
 * from /dev/null, capturing stdout and stderr.  `extra_env` (NULL-terminated
 * NAME=VALUE list, may be NULL) is added to the environment. */
void test_run(const char *const *argv, const char *const *extra_env, test_process_result *result);

/* test_run() with an alarm of `seconds` armed in the child before exec (it survives exec): a
 * program that blocks for good dies of SIGALRM (exit_code 142, signaled) instead of hanging the
 * suite. */
void test_run_bounded(const char *const *argv, const char *const *extra_env, unsigned seconds,
                      test_process_result *result);

void test_process_result_clear(test_process_result *result);

/* Test setup: runs `line` with sh in `directory` (`extra_env` as for test_run); fails the test,
 * naming the line and its stderr, when it fails. */
void test_setup_shell(const char *directory, const char *line, const char *const *extra_env);

/* Bounds for synchronisation only (never a timed assertion): a healthy run takes milliseconds. */
#define TEST_WAIT_BOUND_MS 30000
#define TEST_POLL_STEP_MS 10

/* Sleeps `milliseconds`, resuming after a signal. */
void test_sleep_ms(long milliseconds);

/* Polls for `path` to exist within TEST_WAIT_BOUND_MS; whether it does. */
bool test_wait_for_file(const char *path);

/* True when `haystack` contains `needle`. */
bool test_contains(const char *haystack, const char *needle);

#endif
