/* SPDX-License-Identifier: MIT */
/*
 * A workspace whose content is hostile: what an earlier call left there
 * (a `.git` file pointing anywhere, a `.git/commondir`, thousands of decoy
 * submodule directories) must not widen or weaken a later call.  And the
 * process-level leftovers of the review: the terminal filter under bwrap, a
 * writable root that is another name for the sandbox's own directory.
 * Checked on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static char *scratch;
static char **environment;

static int setup(void **state)
{
        char *home_directory;

        (void) state;
        scratch = test_make_directory(NULL);
        home_directory = test_path_join(scratch, "home");
        environment = test_home_environment(home_directory);
        free(home_directory);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        test_home_environment_free(environment);
        environment = NULL;
        test_remove_tree(scratch);
        return 0;
}

static const char *const *env(void)
{
        return (const char *const *) environment;
}

/* A shell line on the host, in the scratch directory (setup only). */
static void host(const char *format, ...)
{
        char *line = NULL, *prefixed = NULL;
        va_list arguments;

        va_start(arguments, format);
        assert_true(vasprintf(&line, format, arguments) > 0);
        va_end(arguments);
        assert_true(asprintf(&prefixed, "mkdir -p home && %s", line) > 0);
        test_setup_shell(scratch, prefixed, env());
        free(prefixed);
        free(line);
}

/* dsh-sandbox SUBCOMMAND --backend BACKEND --mode workspace-write --root ROOT -- sh -c SCRIPT, from ROOT. */
static void sandbox(const char *subcommand, const char *backend, const char *root, const char *script,
                    test_process_result *result)
{
        char *line = NULL;

        assert_true(asprintf(&line, "cd '%s' && exec '%s' %s --backend %s --mode workspace-write --root '%s' -- "
                                    "sh -c \"$0\"",
                             root, test_dsh_sandbox_path(), subcommand, backend, root) > 0);
        {
                const char *argv[] = { "sh", "-c", line, script, NULL };

                test_run(argv, env(), result);
        }
        free(line);
}

static void expect_file(const char *relative, const char *content)
{
        char *path = test_path_join(scratch, relative);
        char *actual = test_read_file(path);

        if (!actual || strcmp(actual, content) != 0)
                fail_msg("%s holds \"%s\", expected \"%s\"", path, actual ? actual : "(missing)", content);
        free(actual);
        free(path);
}

/*
 * A `.git` file names the git directory; one an earlier call wrote can name
 * anything.  A later call must not make that writable: neither by "gitdir:"
 * nor through a `commondir` in a git directory of the command's making.
 */
static void test_git_file_cannot_widen_the_policy(void **state)
{
        char *workspace = test_path_join(scratch, "ws");
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        host("mkdir -p ws/fake outside && echo original > outside/victim && printf 'gitdir: %s/outside\\n' > ws/.git",
             scratch);
        sandbox("run", "bwrap", workspace, "echo escaped > ../outside/victim", &result);
        test_process_result_clear(&result);
        expect_file("outside/victim", "original\n");
        /* The same through a commondir in a git directory inside the workspace. */
        host("printf 'gitdir: fake\\n' > ws/.git && printf '%s/outside\\n' > ws/fake/commondir", scratch);
        sandbox("run", "bwrap", workspace, "echo escaped > ../outside/victim", &result);
        test_process_result_clear(&result);
        expect_file("outside/victim", "original\n");
        free(workspace);
}

/*
 * git reads `commondir` in any git directory: one created in a plain
 * repository's .git would send the user's next commit to another directory's
 * hooks.  The write supervisor refuses its creation during the call, on both
 * backends (nothing can be bound over a missing name; Landlock cannot hold
 * anything back), so a plain write leaves no warning behind.  What it does
 * not see (a unix socket bound at the name: bind() is not supervised) the
 * audit moves aside once the command is gone, and says so; an argv for
 * someone else to run says it is a gap.
 */
static void check_commondir_held_back(const char *backend)
{
        char *repository = test_path_join(scratch, "repo");
        char *commondir = test_path_join(scratch, "repo/.git/commondir");
        char *ordinary = test_path_join(scratch, "repo/ordinary");
        test_process_result result;

        sandbox("run", backend, repository, "mkdir -p .git/evil && echo evil > .git/commondir; echo fine > ordinary",
                &result);
        assert_true(test_path_exists(ordinary));
        assert_false(test_path_exists(commondir));
        assert_true(test_contains(result.stderr_text, "Permission denied"));
        assert_false(test_contains(result.stderr_text, "warning: the command created"));
        test_process_result_clear(&result);
        sandbox("run", backend, repository,
                "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\".git/commondir\")'", &result);
        assert_int_equal(result.exit_code, 0);
        assert_false(test_path_exists(commondir));
        assert_true(test_contains(result.stderr_text, "warning: the command created"));
        assert_true(test_contains(result.stderr_text, "moved aside"));
        test_process_result_clear(&result);
        free(ordinary);
        free(commondir);
        free(repository);
}

static void test_created_commondir_is_refused_or_moved_aside(void **state)
{
        test_process_result result;
        char *repository = test_path_join(scratch, "repo");

        (void) state;
        host("git init -q repo && cd repo && git commit -q --allow-empty -m init");
        check_commondir_held_back("landlock");
        if (test_bwrap_works()) {
                check_commondir_held_back("bwrap");
                sandbox("confine", "bwrap", repository, "true", &result);
                assert_true(test_contains(result.stdout_text, "commondir could be created by the command"));
                test_process_result_clear(&result);
        } else {
                print_message("# SKIP: bwrap cannot make a sandbox on this host (the bwrap half)\n");
        }
        free(repository);
}

/* With extensions.worktreeConfig on (sparse checkout), config.worktree is a config git reads: held back. */
static void test_config_worktree_held_back(void **state)
{
        char *repository = test_path_join(scratch, "sparse");
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        host("git init -q sparse && cd sparse && git commit -q --allow-empty -m init && "
             "git config extensions.worktreeConfig true && git config --worktree core.sparseCheckout false");
        sandbox("run", "bwrap", repository, "printf '[core]\\n\\thooksPath = /tmp/h\\n' >> .git/config.worktree",
                &result);
        assert_true(test_contains(result.stderr_text, "Read-only file system"));
        test_process_result_clear(&result);
        expect_file("sparse/.git/config.worktree", "[core]\n\tsparseCheckout = false\n");
        free(repository);
}

/*
 * Submodule git directories are found from the (held back) config, not by
 * listing .git/modules: thousands of decoys an earlier call created there do
 * not push the real one past any bound.
 */
static void test_submodule_decoys_change_nothing(void **state)
{
        char *superproject = test_path_join(scratch, "super");
        char *hook = test_path_join(scratch, "super/.git/modules/lib/hooks/post-checkout");
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        host("git init -q lib && (cd lib && git commit -q --allow-empty -m lib) && git init -q super && cd super && "
             "git -c protocol.file.allow=always submodule add -q '%s/lib' lib && git commit -q -m sub",
             scratch);
        sandbox("run", "bwrap", superproject, "cd .git/modules && seq -f 'decoy%05g/x' 1 600 | xargs mkdir -p",
                &result);
        test_process_result_clear(&result);
        sandbox("run", "bwrap", superproject, "echo evil > .git/modules/lib/hooks/post-checkout", &result);
        assert_true(test_contains(result.stderr_text, "Read-only file system"));
        assert_false(test_path_exists(hook));
        test_process_result_clear(&result);
        free(hook);
        free(superproject);
}

/* Under bwrap too, TIOCSTI is refused by a filter (EPERM), not merely unreachable (ENOTTY on a pipe). */
static void test_bwrap_terminal_filter(void **state)
{
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", "bwrap", "--",
                               getenv("TIOCSTI_PROBE_BIN"), NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        test_run(argv, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "EPERM\n");
        test_process_result_clear(&result);
}

/* A writable root that is a bind mount of the directory holding the sandbox's own files is refused. */
static void test_aliased_root_refused(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        char *home = test_path_join(scratch, "home");
        char *alias = test_path_join(scratch, "alias");

        (void) state;
        host("mkdir -p alias home/.config/dsh-sandbox");
        if (geteuid() != 0 || mount(home, alias, NULL, MS_BIND, NULL) < 0) {
                printf("# skipped: making a bind mount needs root\n");
                free(alias);
                free(home);
                skip();
        }
        for (size_t i = 0; i < 2; i++) {
                test_process_result result;

                sandbox("run", backends[i], alias, "echo '{}' > .config/dsh-sandbox/config.json", &result);
                if (result.exit_code != 125 || !test_contains(result.stderr_text, "another name"))
                        fail_msg("%s: status %d, %s", backends[i], result.exit_code, result.stderr_text);
                test_process_result_clear(&result);
        }
        umount2(alias, MNT_DETACH);
        {
                char *config = test_path_join(home, ".config/dsh-sandbox/config.json");

                assert_false(test_path_exists(config));
                free(config);
        }
        free(alias);
        free(home);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_git_file_cannot_widen_the_policy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_created_commondir_is_refused_or_moved_aside, setup, teardown),
                cmocka_unit_test_setup_teardown(test_config_worktree_held_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_submodule_decoys_change_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_terminal_filter, setup, teardown),
                cmocka_unit_test_setup_teardown(test_aliased_root_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
