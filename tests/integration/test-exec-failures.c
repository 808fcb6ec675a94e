/* SPDX-License-Identifier: MIT */
/*
 * A program that cannot be executed is the command's failure (126/127, as
 * env reports it), never the sandbox's: under bwrap the last step inside
 * (dsh-sandbox-exec) reports the exec errno out of band, so there is no
 * stray runner line, no "no sandbox backend is usable", and the verdict
 * cache survives.  The same table runs under Landlock for parity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static char *scratch;
static char *environment[3];

static int setup(void **state)
{
        (void) state;
        scratch = test_make_directory(NULL);
        assert_true(asprintf(&environment[0], "XDG_CACHE_HOME=%s/cache", scratch) > 0);
        assert_true(asprintf(&environment[1], "HOME=%s", scratch) > 0);
        environment[2] = NULL;
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(environment[0]);
        free(environment[1]);
        test_remove_tree(scratch);
        return 0;
}

/* A copy of /bin/true whose ELF interpreter names a loader that does not exist (same length, one byte changed). */
static char *write_elf_with_missing_loader(void)
{
        static const char loader[] = "/lib64/ld-linux-x86-64.so.2";
        char *path = test_path_join(scratch, "no-loader");
        FILE *input = fopen("/bin/true", "rb");
        char *content = malloc(4 << 20), *found;
        size_t length;
        FILE *output;

        assert_non_null(input);
        assert_non_null(content);
        length = fread(content, 1, 4 << 20, input);
        fclose(input);
        found = memmem(content, length, loader, sizeof(loader) - 1);
        if (!found) {
                free(content);
                free(path);
                return NULL;
        }
        found[sizeof(loader) - 2] = 'X';
        output = fopen(path, "wb");
        assert_non_null(output);
        assert_int_equal(fwrite(content, 1, length, output), length);
        fclose(output);
        chmod(path, 0755);
        free(content);
        return path;
}

static void expect_status(const char *backend, const char *program, int expected)
{
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", backend, "--", program, NULL };
        test_process_result result;

        test_run(argv, (const char *const *) environment, &result);
        if (result.exit_code != expected || test_contains(result.stderr_text, "bwrap: ") ||
            test_contains(result.stderr_text, "no sandbox backend is usable"))
                fail_msg("%s under %s: status %d (expected %d), stderr: %s", program, backend, result.exit_code,
                         expected, result.stderr_text);
        test_process_result_clear(&result);
}

static void test_exec_failures_are_the_commands(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        char *script = test_path_join(scratch, "bad-interpreter");
        char *no_loader = write_elf_with_missing_loader();

        (void) state;
        test_write_file(script, "#!/nonexistent/interpreter\necho never\n");
        chmod(script, 0755);
        for (size_t i = 0; i < 2; i++) {
                expect_status(backends[i], "/etc", 126);
                expect_status(backends[i], "/nonexistent/program", 127);
                expect_status(backends[i], "no-such-program-on-path", 127);
                expect_status(backends[i], script, 127);
                if (no_loader)
                        expect_status(backends[i], no_loader, 127);
        }
        if (!no_loader)
                printf("# the ELF-loader case was not run: /bin/true names no x86-64 loader here\n");
        free(no_loader);
        free(script);
}

/* Under `auto`, an exec failure is not a runner failure: the persisted verdict stays. */
static void test_exec_failure_keeps_the_verdict(void **state)
{
        const char *warm[] = { test_dsh_sandbox_path(), "run", "--", "true", NULL };
        const char *missing[] = { test_dsh_sandbox_path(), "run", "--", "/nonexistent/program", NULL };
        char *cache = test_path_join(scratch, "cache/dsh-sandbox");
        char *listing = NULL;
        test_process_result result;

        (void) state;
        test_run(warm, (const char *const *) environment, &result);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        assert_true(test_path_exists(cache));
        {
                const char *ls[] = { "sh", "-c", "ls \"$0\" | grep -c verdict", cache, NULL };

                test_run(ls, NULL, &result);
                listing = strdup(result.stdout_text);
                test_process_result_clear(&result);
        }
        test_run(missing, (const char *const *) environment, &result);
        assert_int_equal(result.exit_code, 127);
        test_process_result_clear(&result);
        {
                const char *ls[] = { "sh", "-c", "ls \"$0\" | grep -c verdict", cache, NULL };

                test_run(ls, NULL, &result);
                assert_string_equal(result.stdout_text, listing);
                assert_string_not_equal(result.stdout_text, "0\n");
                test_process_result_clear(&result);
        }
        free(listing);
        free(cache);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_exec_failures_are_the_commands, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exec_failure_keeps_the_verdict, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
