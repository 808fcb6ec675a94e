/* SPDX-License-Identifier: MIT */
/*
 * The library's in-process spawn path (dsh_provider_spawn with Landlock):
 * the restriction applied in the forked child, the facts it reports, pre-exec
 * failures reported out of band, and refusal when Landlock is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/landlock.h"
#include "dsh-sandbox/provider.h"
#include "test-landlock.h"
#include "core/read-mask.h"
#include "test-support.h"

static char *workspace;
static char *outside;
static dsh_provider *provider;

static int setup(void **state)
{
        const char *backends[] = { "landlock", NULL };

        (void) state;
        workspace = test_make_directory(NULL);
        outside = test_make_directory(NULL);
        provider = dsh_provider_new();
        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, backends, NULL), 0);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        dsh_provider_free(provider);
        test_remove_tree(workspace);
        test_remove_tree(outside);
        return 0;
}

static void make_policy(dsh_policy *policy, dsh_mode mode)
{
        *policy = (dsh_policy) DSH_POLICY_INIT;
        policy->mode = mode;
        policy->workspace_root = strdup(workspace);
}

/* Spawns `sh -c script` and returns its exit code (128+N for a signal). */
static int spawn_and_wait(const dsh_policy *policy, const char *script, dsh_child **facts_out)
{
        const char *argv[] = { "sh", "-c", script, NULL };
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int status = 0;

        if (dsh_provider_spawn(provider, (char *const *) argv, policy, NULL, &child, &error) < 0)
                fail_msg("spawn failed: %s", error.message);
        assert_true(dsh_child_pid(child) > 0);
        assert_int_equal(dsh_child_wait(child, &status), 0);
        if (facts_out)
                *facts_out = child;
        else
                dsh_child_free(child);
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void test_workspace_write_confines_child(void **state)
{
        char *inside = test_path_join(workspace, "in");
        char *escaped = test_path_join(outside, "out");
        char *script = NULL;
        dsh_policy policy;
        dsh_child *child = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE);
        assert_true(asprintf(&script, "echo x > '%s'; echo x > '%s'; exit 3", inside, escaped) > 0);
        assert_int_equal(spawn_and_wait(&policy, script, &child), 3);
        assert_true(test_path_exists(inside));
        assert_false(test_path_exists(escaped));
        assert_string_equal(dsh_child_facts(child)->backend, "landlock");
        assert_int_equal(dsh_child_facts(child)->enforcement, dsh_landlock_enforcement(dsh_landlock_abi()));
        assert_string_equal(dsh_child_facts(child)->denial_signatures[0], "permission denied");
        assert_null(dsh_child_facts(child)->denial_signatures[1]);
        assert_int_equal(dsh_child_facts(child)->runner_failure_rule_count, 1);
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(script);
        free(inside);
        free(escaped);
}

/* The parent process stays unrestricted: only the child is confined. */
static void test_parent_stays_unrestricted(void **state)
{
        char *after = test_path_join(outside, "parent-wrote");
        dsh_policy policy;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_policy(&policy, DSH_MODE_READ_ONLY);
        assert_int_equal(spawn_and_wait(&policy, "true", NULL), 0);
        test_write_file(after, "still free\n");
        assert_true(test_path_exists(after));
        dsh_policy_clear(&policy);
        free(after);
}

static void test_exec_failure_is_reported_not_run(void **state)
{
        const char *argv[] = { "dsh-sandbox-no-such-program", NULL };
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_policy(&policy, DSH_MODE_READ_ONLY);
        assert_int_equal(dsh_provider_spawn(provider, (char *const *) argv, &policy, NULL, &child, &error), -ENOENT);
        assert_int_equal(error.code, DSH_ERROR_EXEC_FAILED);
        assert_int_equal(error.errno_value, ENOENT);
        assert_null(child);  /* nothing to wait for: the command never ran */
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
}

static void test_stdio_redirection(void **state)
{
        const char *argv[] = { "sh", "-c", "echo to-out; echo to-err >&2", NULL };
        char *out_path = test_path_join(outside, "stdout");
        char *err_path = test_path_join(outside, "stderr");
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;
        char *content;
        int status;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_policy(&policy, DSH_MODE_READ_ONLY);
        /* Opened by the caller before the domain exists: the command writes through them. */
        options.stdout_fd = open(out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        options.stderr_fd = open(err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_int_equal(dsh_provider_spawn(provider, (char *const *) argv, &policy, &options, &child, &error), 0);
        assert_int_equal(dsh_child_wait(child, &status), 0);
        close(options.stdout_fd);
        close(options.stderr_fd);
        content = test_read_file(out_path);
        assert_string_equal(content, "to-out\n");
        free(content);
        content = test_read_file(err_path);
        assert_string_equal(content, "to-err\n");
        free(content);
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(out_path);
        free(err_path);
}

/* Runs in a forked child: Landlock syscalls fail with ENOSYS, then the spawn must refuse. */
static int spawn_without_landlock(const char *marker)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444, 0, 3),
                BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446, 2, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog program = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
        const char *argv[] = { "touch", marker, NULL };
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) < 0)
                return 90;
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE);
        if (dsh_provider_spawn(provider, (char *const *) argv, &policy, NULL, &child, &error) == 0)
                return 91;
        if (error.code != DSH_ERROR_SANDBOX_UNAVAILABLE || !strstr(error.message, " Runner failure: "))
                return 92;
        return 0;
}

static void test_fails_closed_without_landlock(void **state)
{
        char *marker = test_path_join(workspace, "ran");
        int status = 0;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(spawn_without_landlock(marker));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_false(test_path_exists(marker));
        free(marker);
}

static void test_confine_names_the_launcher(void **state)
{
        const char *argv[] = { "make", "-j2", NULL };
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;
        char *expected_ws = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), NULL), 0);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE);
        assert_int_equal(dsh_provider_confine(provider, (char *const *) argv, &policy, &confined, &error), 0);
        {
                /* /dev/ptmx where the host has one (a new pty on each open: backend-landlock.c); the command's
                 * TMPDIR rides in the argv: the harness spawns it with its own environment. */
                const char *with_ptys[] = { test_landlock_run_path(), "--ro", "/", "--rw", "/dev/null", "--rw", "/tmp",
                                            "--rw", "/dev/ptmx", "--rw", workspace, "--setenv", "TMPDIR", "/tmp", "--",
                                            "make", "-j2", NULL };
                const char *without_ptys[] = { test_landlock_run_path(), "--ro", "/", "--rw", "/dev/null", "--rw",
                                               "/tmp", "--rw", workspace, "--setenv", "TMPDIR", "/tmp", "--", "make",
                                               "-j2", NULL };
                const char **expected = access("/dev/ptmx", F_OK) == 0 ? with_ptys : without_ptys;
                size_t grants = 0, at = 0, protected_paths = 0;
                bool mcp_config_held = false;
                char *mcp_config = test_path_join(workspace, ".mcp.json");

                while (strcmp(expected[grants], "--setenv") != 0)
                        grants++;
                for (; at < grants; at++)
                        assert_string_equal(confined.argv[at], expected[at]);
                /*
                 * Then every protected subpath of the roots as `--protect PATH`
                 * (the launcher's supervisor holds them back): canonical, in a
                 * root, the missing .mcp.json among them (kept absent).
                 */
                for (; confined.argv[at] && strcmp(confined.argv[at], "--protect") == 0; at += 2, protected_paths++) {
                        const char *path = confined.argv[at + 1];

                        assert_non_null(path);
                        assert_true(strncmp(path, workspace, strlen(workspace)) == 0 ||
                                    strncmp(path, "/tmp/", 5) == 0);
                        assert_null(strstr(path, "//"));
                        mcp_config_held |= strcmp(path, mcp_config) == 0;
                }
                assert_true(protected_paths > 0);
                assert_true(mcp_config_held);
                /* Then the masks Landlock holds (the default ones under the homes: docs/secrets.md), each canonical. */
                for (; confined.argv[at] && (strcmp(confined.argv[at], "--mask") == 0 ||
                                             strcmp(confined.argv[at], "--mask-closed") == 0); at += 2) {
                        assert_non_null(confined.argv[at + 1]);
                        assert_true(dsh_read_mask_path_well_formed(confined.argv[at + 1]));
                }
                /* The environment's rules before `--` (call-environment.h): the launcher scrubs what the harness gives. */
                for (size_t i = grants; expected[i]; i++, at++) {
                        bool rules = false;

                        while (strcmp(expected[i], "--") == 0 && (strcmp(confined.argv[at], "--deny-env") == 0 ||
                                                                   strcmp(confined.argv[at], "--allow-env") == 0)) {
                                rules |= strcmp(confined.argv[at], "--deny-env") == 0;
                                assert_non_null(confined.argv[at + 1]);
                                at += 2;
                        }
                        assert_true(strcmp(expected[i], "--") != 0 || rules);
                        assert_string_equal(confined.argv[at], expected[i]);
                }
                assert_null(confined.argv[at]);
                free(mcp_config);
        }
        assert_int_equal(confined.runner_failure_rules[0].allowed_exit_code_count, 1);
        assert_int_equal(confined.runner_failure_rules[0].allowed_exit_codes[0], 125);
        assert_string_equal(confined.runner_failure_rules[0].fatal_signatures[0], "landlock-run: ");
        assert_string_equal(confined.runner_failure_rules[0].informational_lines[0],
                            "landlock-run: partial enforcement (older Landlock ABI)");
        dsh_confined_argv_clear(&confined);
        /* The launcher takes every --protect the backend gives it (`true` makes no write-intent call). */
        {
                const char *true_argv[] = { "true", NULL };
                test_process_result result;

                assert_int_equal(dsh_provider_confine(provider, (char *const *) true_argv, &policy, &confined, &error),
                                 0);
                test_run((const char *const *) confined.argv, NULL, &result);
                assert_string_equal(result.stderr_text, "");
                assert_int_equal(result.exit_code, 0);
                test_process_result_clear(&result);
                dsh_confined_argv_clear(&confined);
        }
        /* danger-full-access is never handed to a provider. */
        policy.mode = DSH_MODE_DANGER_FULL_ACCESS;
        assert_true(dsh_provider_confine(provider, (char *const *) argv, &policy, &confined, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        free(expected_ws);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_workspace_write_confines_child, setup, teardown),
                cmocka_unit_test_setup_teardown(test_parent_stays_unrestricted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exec_failure_is_reported_not_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stdio_redirection, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fails_closed_without_landlock, setup, teardown),
                cmocka_unit_test_setup_teardown(test_confine_names_the_launcher, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
