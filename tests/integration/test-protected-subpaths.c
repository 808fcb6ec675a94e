/* SPDX-License-Identifier: MIT */
/*
 * Protected subpaths: a git repository's hooks and config inside a writable
 * root are what runs, unconfined, at the user's next `git commit`.  bwrap
 * holds them back (and pins .git, so renaming it away does not help), git
 * itself keeps working, nothing is created on the host to serve as a mount
 * target; under Landlock, which can only grant, the write supervisor holds
 * them back (EACCES) and the call is "full".  Checked on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static char *scratch;
static char **environment;

static int setup(void **state)
{
        (void) state;
        scratch = test_make_directory(NULL);
        environment = test_home_environment(scratch);
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

/* Runs a shell line on the host (test setup), in `directory`; fails the test when it fails. */
static void host_shell(const char *directory, const char *line)
{
        test_setup_shell(directory, line, env());
}

static char *make_repository(const char *name)
{
        char *repository = test_path_join(scratch, name);

        host_shell(scratch, "true");
        {
                char *line = NULL;

                assert_true(asprintf(&line, "mkdir -p '%s' && cd '%s' && git init -q . && echo one > a && git add a && "
                                            "git commit -qm one",
                                     repository, repository) > 0);
                host_shell(scratch, line);
                free(line);
        }
        return repository;
}

/* `dsh-sandbox run --backend BACKEND --mode workspace-write --root ROOT -- sh -c SCRIPT`, from ROOT. */
static void run_confined(const char *backend, const char *root, const char *script, test_process_result *result)
{
        char *line = NULL;

        assert_true(asprintf(&line, "cd '%s' && exec '%s' run --backend %s --mode workspace-write --root '%s' -- "
                                    "sh -c \"$0\"",
                             root, test_dsh_sandbox_path(), backend, root) > 0);
        {
                const char *with_script[] = { "sh", "-c", line, script, NULL };

                test_run(with_script, env(), result);
        }
        free(line);
}

static void test_bwrap_holds_hooks_and_config(void **state)
{
        char *repository = make_repository("plain");
        char *hook = test_path_join(repository, ".git/hooks/post-commit");
        char *config = test_path_join(repository, ".git/config");
        char *renamed = test_path_join(repository, ".g");
        char *before = test_read_file(config), *after;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        run_confined("bwrap", repository,
                     "echo evil > .git/hooks/post-commit; printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config; "
                     "git config core.fsmonitor 'touch /var/tmp/x'; mv .git/hooks .git/h; mv .git .g; "
                     "mv .git/config .git/c; rm -rf .git/hooks; true",
                     &result);
        after = test_read_file(config);
        assert_false(test_path_exists(hook));
        assert_false(test_path_exists(renamed));
        assert_string_equal(before, after);
        assert_true(test_contains(result.stderr_text, "Read-only file system"));
        assert_true(test_contains(result.stderr_text, "Device or resource busy"));
        test_process_result_clear(&result);
        free(after);
        free(before);
        free(renamed);
        free(config);
        free(hook);
        free(repository);
}

/* Git keeps working inside the sandbox: add, commit, branch, stash, rebase, gc. */
static void test_bwrap_git_still_works(void **state)
{
        char *repository = make_repository("work");
        char *marker = test_path_join(repository, "git-done");
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        run_confined("bwrap", repository,
                     "set -e; echo two > b; git add b; git commit -qm two; git branch side; "
                     "echo dirty >> a; git stash -q; git stash pop -q; git commit -qam three; "
                     "git checkout -q side; echo four > c; git add c; git commit -qm four; "
                     "git rebase -q master 2>/dev/null || git rebase -q main; git gc -q; touch git-done",
                     &result);
        if (!test_path_exists(marker))
                fail_msg("git failed inside the sandbox: status %d, %s", result.exit_code, result.stderr_text);
        test_process_result_clear(&result);
        free(marker);
        free(repository);
}

/*
 * A linked worktree keeps its index and HEAD in the main repository's
 * .git/worktrees/<name> and its objects and refs in the main .git: rooted at
 * the worktree, a commit still works, and the main repository's hooks and
 * config stay out of reach.
 */
static void test_bwrap_linked_worktree(void **state)
{
        char *repository = make_repository("main");
        char *worktree = test_path_join(scratch, "linked");
        char *hook = test_path_join(repository, ".git/hooks/post-commit");
        char *marker = test_path_join(worktree, "committed");
        char *line = NULL;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        assert_true(asprintf(&line, "git worktree add -q '%s' -b linked", worktree) > 0);
        host_shell(repository, line);
        run_confined("bwrap", worktree,
                     "echo evil > \"$(git rev-parse --git-common-dir)/hooks/post-commit\"; "
                     "echo w > w && git add w && git commit -qm w && touch committed",
                     &result);
        if (!test_path_exists(marker))
                fail_msg("commit in a linked worktree failed: %s", result.stderr_text);
        assert_false(test_path_exists(hook));
        test_process_result_clear(&result);
        free(line);
        free(marker);
        free(hook);
        free(worktree);
        free(repository);
}

/* A submodule's git directory lives in the superproject's .git/modules: its hooks are held back too. */
static void test_bwrap_submodule_hooks(void **state)
{
        char *library = make_repository("library");
        char *super = make_repository("super");
        char *hook = test_path_join(super, ".git/modules/library/hooks/post-checkout");
        char *line = NULL;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        assert_true(asprintf(&line, "git -c protocol.file.allow=always submodule add -q '%s' library && "
                                    "git commit -qm sub",
                             library) > 0);
        host_shell(super, line);
        run_confined("bwrap", super, "echo evil > .git/modules/library/hooks/post-checkout; "
                                     "cd library && echo evil > \"$(git rev-parse --git-dir)/hooks/post-checkout\"; true",
                     &result);
        assert_false(test_path_exists(hook));
        test_process_result_clear(&result);
        free(line);
        free(hook);
        free(super);
        free(library);
}

/*
 * A repository without .git/hooks: creating it on the host to bind over is
 * litter, so it is not created; it is kept absent instead — the supervisor
 * refuses its creation (and a spawn moves aside one that appeared) — so a
 * spawned call plants no hook.  A harness-spawned argv has nobody to refuse
 * or audit it: its confine facts stay partial.
 */
static void test_missing_hooks_kept_absent_not_created(void **state)
{
        char *repository = make_repository("nohooks");
        char *hooks = test_path_join(repository, ".git/hooks");
        const char *argv[] = { test_dsh_sandbox_path(), "confine", "--backend", "bwrap", "--mode", "workspace-write",
                               "--root", repository, "--", "true", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_BWRAP();
        host_shell(repository, "rm -rf .git/hooks");
        test_run(argv, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "\"enforcement\":\"partial\""));
        assert_false(test_path_exists(hooks));
        test_process_result_clear(&result);
        run_confined("bwrap", repository, "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit", &result);
        assert_int_not_equal(result.exit_code, 0);
        assert_false(test_path_exists(hooks));
        test_process_result_clear(&result);
        free(hooks);
        free(repository);
}

/*
 * Landlock can only grant, so the write supervisor holds the hooks and the
 * config back (issue 20): the same attack as under bwrap is refused with
 * EACCES, judged on disk, and a root holding a repository is "full" in
 * confine, run and the probe.
 */
static void test_landlock_holds_hooks_and_config(void **state)
{
        char *repository = make_repository("landlock");
        char *hook = test_path_join(repository, ".git/hooks/post-commit");
        char *hooks = test_path_join(repository, ".git/hooks");
        char *config = test_path_join(repository, ".git/config");
        char *renamed = test_path_join(repository, ".g");
        char *ordinary = test_path_join(repository, "ordinary");
        char *before = test_read_file(config), *after;
        test_process_result result;

        (void) state;
        run_confined("landlock", repository,
                     "echo evil > .git/hooks/post-commit; printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config; "
                     "git config core.fsmonitor 'touch /var/tmp/x'; mv .git/hooks .git/h; mv .git .g; "
                     "mv .git/config .git/c; rm -rf .git/hooks; echo fine > ordinary",
                     &result);
        after = test_read_file(config);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(ordinary));
        assert_false(test_path_exists(hook));
        assert_true(test_path_exists(hooks));
        assert_false(test_path_exists(renamed));
        assert_string_equal(before, after);
        assert_true(test_contains(result.stderr_text, "Permission denied"));
        assert_false(test_contains(result.stderr_text, "partial enforcement"));
        test_process_result_clear(&result);
        free(after);
        free(before);
        free(ordinary);
        free(renamed);
        free(config);
        free(hooks);
        free(hook);
        free(repository);
}

/* A root holding a repository is "full" under Landlock now, in confine and in the probe. */
static void test_landlock_reports_full(void **state)
{
        char *repository = make_repository("landlock");
        const char *confine[] = { test_dsh_sandbox_path(), "confine", "--backend", "landlock", "--mode",
                                  "workspace-write", "--root", repository, "--", "true", NULL };
        const char *probe[] = { test_dsh_sandbox_path(), "probe", "--json", NULL };
        test_process_result result;

        (void) state;
        test_run(confine, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "\"enforcement\":\"full\""));
        assert_false(test_contains(result.stdout_text, "protected subpaths"));
        test_process_result_clear(&result);
        test_run(probe, env(), &result);
        assert_true(test_contains(result.stdout_text, "\"landlock\""));
        assert_false(test_contains(result.stdout_text, "protected subpaths"));
        test_process_result_clear(&result);
        free(repository);
}

/*
 * A repository without .git/hooks under Landlock: the missing directory is
 * kept absent, so the supervisor refuses its creation (the hook is never
 * planted), confine passes it to landlock-run (--protect) and every form
 * says "full"; requireProtectedSubpaths has nothing to refuse.
 */
static void test_landlock_missing_hooks_kept_absent(void **state)
{
        char *repository = make_repository("landlock-nohooks");
        char *config_required = test_path_join(scratch, "required.json");
        char *marker = test_path_join(repository, "ran");
        char *hooks = test_path_join(repository, ".git/hooks");
        const char *confine[] = { test_dsh_sandbox_path(), "confine", "--backend", "landlock", "--mode",
                                  "workspace-write", "--root", repository, "--", "true", NULL };
        const char *required[] = { test_dsh_sandbox_path(), "run", "--config", config_required, "--backend",
                                   "landlock", "--mode", "workspace-write", "--root", repository, "--", "touch",
                                   marker, NULL };
        test_process_result result;

        (void) state;
        host_shell(repository, "rm -rf .git/hooks");
        test_write_file(config_required, "{\"requireProtectedSubpaths\": true}\n");
        test_run(confine, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "\"enforcement\":\"full\""));
        assert_true(test_contains(result.stdout_text, "\"--protect\""));
        assert_true(test_contains(result.stdout_text, "/.git/hooks\""));
        test_process_result_clear(&result);
        run_confined("landlock", repository, "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit", &result);
        assert_int_not_equal(result.exit_code, 0);
        assert_false(test_contains(result.stderr_text, "partial enforcement"));
        assert_false(test_path_exists(hooks));
        test_process_result_clear(&result);
        test_run(required, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(marker));
        test_process_result_clear(&result);
        free(hooks);
        free(marker);
        free(config_required);
        free(repository);
}

/*
 * Configured: requireProtectedSubpaths no longer refuses a Landlock call
 * (the subpaths are held back there now), and the hook is still refused; []
 * turns the feature off, and then the same write lands (so the refusal
 * above is the feature's, not an accident of the test).
 */
static void test_configured_subpaths(void **state)
{
        char *repository = make_repository("configured");
        char *config_required = test_path_join(scratch, "required.json");
        char *config_off = test_path_join(scratch, "off.json");
        char *marker = test_path_join(repository, "ran");
        char *hook = test_path_join(repository, ".git/hooks/post-commit");
        const char *required[] = { test_dsh_sandbox_path(), "run", "--config", config_required, "--backend",
                                   "landlock", "--mode", "workspace-write", "--root", repository, "--", "sh", "-c",
                                   "echo evil > .git/hooks/post-commit; touch ran", NULL };
        const char *off[] = { test_dsh_sandbox_path(), "confine", "--config", config_off, "--backend", "landlock",
                              "--mode", "workspace-write", "--root", repository, "--", "true", NULL };
        const char *off_run[] = { test_dsh_sandbox_path(), "run", "--config", config_off, "--backend", "landlock",
                                  "--mode", "workspace-write", "--root", repository, "--", "sh", "-c",
                                  "echo evil > .git/hooks/post-commit", NULL };
        test_process_result result;

        (void) state;
        test_write_file(config_required, "{\"requireProtectedSubpaths\": true}\n");
        test_write_file(config_off, "{\"protectedSubpaths\": []}\n");
        assert_int_equal(chdir(repository), 0);
        test_run(required, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(marker));
        assert_false(test_path_exists(hook));
        test_process_result_clear(&result);
        test_run(off, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "\"enforcement\":\"full\""));
        test_process_result_clear(&result);
        test_run(off_run, env(), &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(hook));
        test_process_result_clear(&result);
        assert_int_equal(chdir("/"), 0);
        free(hook);
        free(marker);
        free(config_off);
        free(config_required);
        free(repository);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bwrap_holds_hooks_and_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_git_still_works, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_linked_worktree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bwrap_submodule_hooks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_hooks_kept_absent_not_created, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_holds_hooks_and_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_reports_full, setup, teardown),
                cmocka_unit_test_setup_teardown(test_landlock_missing_hooks_kept_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_configured_subpaths, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
