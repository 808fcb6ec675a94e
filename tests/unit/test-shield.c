/* SPDX-License-Identifier: MIT */
/*
 * The shield as a function of (policy, protections, runners): real temp
 * directories and repositories git made, protected paths inside and outside
 * the roots, runners planted in a root, symlinked routes and roots.  What
 * the plan says is what the backends bind or refuse (the integration suites
 * check that on disk); here each rule is checked on its own.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/sandbox.h"
#include "shield/protections.h"
#include "shield/shield.h"
#include "test-support.h"

struct fixture {
        char *scratch;          /* canonical */
        char *workspace;        /* scratch/ws, the writable root */
        char **environment;
        dsh_policy policy;
        dsh_protections protections;
        dsh_shield shield;
        dsh_error error;
};

static char *const git_subpaths[] = { (char *) ".git/hooks", (char *) ".git/config", NULL };

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char *made = test_make_directory(NULL);

        f->scratch = realpath(made, NULL);
        free(made);
        f->workspace = test_path_join(f->scratch, "ws");
        assert_int_equal(mkdir(f->workspace, 0755), 0);
        f->environment = test_home_environment(f->scratch);
        f->policy = (dsh_policy) DSH_POLICY_INIT;
        f->protections = (dsh_protections) DSH_PROTECTIONS_INIT;
        f->shield = (dsh_shield) DSH_SHIELD_INIT;
        f->error = (dsh_error) DSH_ERROR_INIT;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        dsh_shield_clear(&f->shield);
        dsh_protections_clear(&f->protections);
        dsh_policy_clear(&f->policy);
        dsh_error_clear(&f->error);
        test_home_environment_free(f->environment);
        free(f->workspace);
        test_remove_tree(f->scratch);
        free(f);
        return 0;
}

static char *at(struct fixture *f, const char *name)
{
        return test_path_join(f->scratch, name);
}

static void shell(struct fixture *f, const char *line)
{
        test_setup_shell(f->scratch, line, (const char *const *) f->environment);
}

static void require_git(void)
{
        if (access("/usr/bin/git", X_OK) < 0) {
                printf("# SKIP: git is not installed\n");
                skip();
        }
}

/* The policy `mode` on `root` (scratch-relative), prepared as the provider prepares it. */
static void use_policy(struct fixture *f, dsh_mode mode, const char *root)
{
        dsh_policy_clear(&f->policy);
        f->policy.mode = mode;
        f->policy.workspace_root = at(f, root);
        assert_int_equal(dsh_policy_prepare(&f->policy, &f->error), 0);
}

static void protect_subpaths(struct fixture *f)
{
        f->protections.subpaths = dsh_strv_copy(git_subpaths);
        assert_non_null(f->protections.subpaths);
}

static void protect_path(struct fixture *f, const char *name)
{
        char *path = name[0] == '/' ? strdup(name) : at(f, name);

        assert_int_equal(dsh_strv_append(&f->protections.paths, path), 0);
        free(path);
}

static int plan(struct fixture *f, char *const *runners, bool with_subpaths)
{
        dsh_shield_clear(&f->shield);
        dsh_error_clear(&f->error);
        return dsh_shield_plan(&f->policy, &f->protections, runners, NULL, with_subpaths, &f->shield, &f->error);
}

static bool holds(char *const *list, struct fixture *f, const char *name)
{
        char *path = at(f, name);
        bool found = false;

        for (; list && *list; list++)
                found = found || strcmp(*list, path) == 0;
        free(path);
        return found;
}

static void assert_refused(struct fixture *f, int result, const char *words)
{
        assert_int_equal(result, -EPERM);
        assert_int_equal(f->error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        if (!strstr(f->error.message, words))
                fail_msg("expected \"%s\" in: %s", words, f->error.message);
        assert_null(f->shield.read_only);
        assert_null(f->shield.pins);
}

static void test_read_only_grants_nothing_to_shield(void **state)
{
        struct fixture *f = *state;
        char *runner = at(f, "ws/bin/bwrap");
        char *const runners[] = { runner, NULL };

        use_policy(f, DSH_MODE_READ_ONLY, "ws");
        protect_subpaths(f);
        protect_path(f, "ws/own.json");
        shell(f, "mkdir -p ws/bin && touch ws/bin/bwrap ws/own.json");
        assert_int_equal(plan(f, runners, true), 0);
        assert_null(f->shield.read_only);
        assert_null(f->shield.pins);
        assert_false(f->shield.has_subpaths);
        free(runner);
}

static void test_git_hooks_and_config_held_back_in_a_repository(void **state)
{
        struct fixture *f = *state;

        require_git();
        shell(f, "cd ws && git init -q . && git commit -q --allow-empty -m one");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_subpaths(f);
        assert_int_equal(plan(f, NULL, true), 0);
        assert_true(f->shield.has_subpaths);
        assert_true(holds(f->shield.read_only, f, "ws/.git/hooks"));
        assert_true(holds(f->shield.read_only, f, "ws/.git/config"));
        /* .git pinned, so that renaming it away and back takes nothing from under the binds. */
        assert_true(holds(f->shield.pins, f, "ws/.git"));
        assert_false(holds(f->shield.pins, f, "ws"));
        /* A commondir created during the call would redirect git: it must still be absent afterwards. */
        assert_true(holds(f->shield.must_stay_absent, f, "ws/.git/commondir"));
        assert_null(f->shield.unprotected);
        /* Without the subpaths planned, only their presence is decided. */
        assert_int_equal(plan(f, NULL, false), 0);
        assert_true(f->shield.has_subpaths);
        assert_null(f->shield.read_only);
        assert_null(f->shield.must_stay_absent);
        /* No protected subpaths configured: nothing to hold back at all. */
        dsh_strv_free(f->protections.subpaths);
        f->protections.subpaths = NULL;
        assert_int_equal(plan(f, NULL, true), 0);
        assert_false(f->shield.has_subpaths);
        assert_null(f->shield.read_only);
}

static void test_missing_hooks_kept_absent_and_symlinked_dotgit_reported(void **state)
{
        struct fixture *f = *state;

        /* A missing .git/hooks cannot be bound over: it is kept absent (refused at creation, audited after). */
        shell(f, "mkdir -p ws/.git && touch ws/.git/config");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_subpaths(f);
        assert_int_equal(plan(f, NULL, true), 0);
        assert_true(holds(f->shield.read_only, f, "ws/.git/config"));
        assert_false(holds(f->shield.read_only, f, "ws/.git/hooks"));
        assert_true(holds(f->shield.kept_absent, f, "ws/.git/hooks"));
        assert_null(f->shield.unprotected);
        /* A .git that is a symlink could be repointed by the command: reported, nothing bound through it. */
        shell(f, "rm -rf ws/.git && mkdir -p elsewhere/hooks && touch elsewhere/config && ln -s ../elsewhere ws/.git");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_null(f->shield.read_only);
        assert_int_equal(dsh_strv_length(f->shield.unprotected), 1);
        assert_true(test_contains(f->shield.unprotected[0], "is a symlink the command could repoint"));
}

static char *const agent_subpaths[] = { (char *) ".mcp.json", (char *) ".claude", (char *) "~/.bashrc",
                                        (char *) "~/.local/bin", NULL };

/* HOME set to `name` under the fixture for one plan (the passwd entry's home, /root, lies in no root here). */
static void use_home(struct fixture *f, const char *name)
{
        char *home = at(f, name);

        assert_int_equal(setenv("HOME", home, 1), 0);
        free(home);
}

/*
 * The agent's launch config at a root, a home's startup files where the
 * root is the home: an existing one held back, a missing one kept absent
 * (no "partial" for it), and only what is on disk makes Landlock partial.
 */
static void test_agent_config_held_back_or_kept_absent(void **state)
{
        struct fixture *f = *state;
        char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

        shell(f, "mkdir -p ws/.claude elsewhere && touch ws/.claude/settings.json ws/.bashrc");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        f->protections.subpaths = dsh_strv_copy(agent_subpaths);
        use_home(f, "ws");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_true(holds(f->shield.read_only, f, "ws/.claude"));
        assert_true(holds(f->shield.read_only, f, "ws/.bashrc"));
        assert_true(holds(f->shield.kept_absent, f, "ws/.mcp.json"));
        assert_true(holds(f->shield.kept_absent, f, "ws/.local/bin"));
        assert_null(f->shield.unprotected);
        assert_true(f->shield.has_subpaths);
        /* Planned for Landlock: nothing kept, and with none of them on disk the call is full. */
        assert_int_equal(plan(f, NULL, false), 0);
        assert_null(f->shield.kept_absent);
        assert_true(f->shield.has_subpaths);
        shell(f, "rm -rf ws/.claude ws/.bashrc");
        assert_int_equal(plan(f, NULL, false), 0);
        assert_false(f->shield.has_subpaths);
        /* A home outside the roots: its names are not the root's. */
        use_home(f, "elsewhere");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_true(holds(f->shield.kept_absent, f, "ws/.mcp.json"));
        assert_false(holds(f->shield.kept_absent, f, "ws/.bashrc"));
        assert_false(holds(f->shield.kept_absent, f, "ws/.local/bin"));
        if (saved_home)
                setenv("HOME", saved_home, 1);
        free(saved_home);
}

/*
 * The audit after the command: a created entry is moved aside, and a
 * symlink planted on the way (ws/.local -> the fixture's "target", which
 * holds a bin/) is moved aside itself, never followed: the directory it
 * pointed at keeps its name.
 */
static void test_audit_moves_what_appeared_and_follows_no_symlink(void **state)
{
        struct fixture *f = *state;
        char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
        char **warnings = NULL, **moved = NULL;
        char *path;
        struct stat status;

        shell(f, "mkdir -p ws target/bin");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        f->protections.subpaths = dsh_strv_copy(agent_subpaths);
        use_home(f, "ws");
        assert_int_equal(plan(f, NULL, true), 0);
        shell(f, "echo x > ws/.mcp.json && ln -s ../target ws/.local");
        assert_int_equal(dsh_shield_audit(f->shield.kept_absent, &warnings, &moved), 2);
        assert_int_equal(dsh_strv_length(warnings), 2);
        /* Each named by its original path, for the records (a denial each, source "cleanup"). */
        assert_int_equal(dsh_strv_length(moved), 2);
        assert_true(holds(moved, f, "ws/.mcp.json"));
        assert_true(holds(moved, f, "ws/.local"));
        dsh_strv_free(moved);
        moved = NULL;
        path = at(f, "ws/.mcp.json");
        assert_int_equal(lstat(path, &status), -1);
        free(path);
        path = at(f, "ws/.local");
        assert_int_equal(lstat(path, &status), -1);
        free(path);
        path = at(f, "target/bin");
        assert_int_equal(lstat(path, &status), 0);
        assert_true(S_ISDIR(status.st_mode));
        free(path);
        /* Nothing appeared: nothing moved, nothing said. */
        dsh_strv_free(warnings);
        warnings = NULL;
        assert_int_equal(dsh_shield_audit(f->shield.kept_absent, &warnings, &moved), 0);
        assert_null(warnings);
        assert_null(moved);
        if (saved_home)
                setenv("HOME", saved_home, 1);
        free(saved_home);
}

static void test_protected_path_inside_a_root_is_held_back_outside_left_alone(void **state)
{
        struct fixture *f = *state;

        shell(f, "mkdir -p ws/state/deep outside && touch ws/state/deep/own.json outside/own.json");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_path(f, "ws/state/deep/own.json");
        protect_path(f, "outside/own.json");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_int_equal(dsh_strv_length(f->shield.read_only), 1);
        assert_true(holds(f->shield.read_only, f, "ws/state/deep/own.json"));
        /* Every directory between the root and the file, parents first. */
        assert_int_equal(dsh_strv_length(f->shield.pins), 2);
        assert_true(holds(f->shield.pins, f, "ws/state"));
        assert_true(holds(f->shield.pins + 1, f, "ws/state/deep"));
}

static void test_root_inside_the_sandboxs_own_files_is_refused(void **state)
{
        struct fixture *f = *state;

        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_path(f, f->scratch);
        assert_refused(f, plan(f, NULL, true), "lies inside");
}

static void test_runner_or_protected_executable_in_a_root_is_refused(void **state)
{
        struct fixture *f = *state;
        char *planted = at(f, "ws/bin/bwrap");
        char *outside = at(f, "bin/bwrap");
        char *const inside_runners[] = { outside, planted, NULL };
        char *const outside_runners[] = { outside, NULL };

        /* A runner need not exist yet: one planted where the lookup would find it is as dangerous. */
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        assert_refused(f, plan(f, inside_runners, true), "which the sandbox runs or loads");
        assert_true(test_contains(f->error.message, planted));
        assert_int_equal(plan(f, outside_runners, true), 0);
        /* The deployment's own trusted programs, the same way. */
        f->protections.executables = dsh_strv_copy(inside_runners + 1);
        assert_refused(f, plan(f, outside_runners, true), "contains");
        /* A root that holds the loader's files (here "/": /etc/ld.so.cache, /usr/lib) is refused with no runner. */
        dsh_strv_free(f->protections.executables);
        f->protections.executables = NULL;
        dsh_policy_clear(&f->policy);
        f->policy.mode = DSH_MODE_WORKSPACE_WRITE;
        f->policy.workspace_root = strdup("/");
        assert_refused(f, plan(f, NULL, true), "which the sandbox runs or loads");
        free(outside);
        free(planted);
}

static void test_own_file_reached_through_a_repointable_symlink_is_refused(void **state)
{
        struct fixture *f = *state;

        shell(f, "mkdir -p ws state && touch state/own.json && ln -s ../state ws/link");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_path(f, "ws/link/own.json");
        assert_refused(f, plan(f, NULL, true), "reached through the symlink");
        assert_true(test_contains(f->error.message, "/ws/link"));
}

static void test_symlink_outside_the_roots_is_followed_to_the_root(void **state)
{
        struct fixture *f = *state;

        /* The route's symlink lies outside every writable root: this call cannot repoint it. */
        shell(f, "touch ws/own.json && ln -s ws alias");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "alias");
        assert_string_equal(f->policy.workspace_root, f->workspace);
        protect_path(f, "alias/own.json");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_int_equal(dsh_strv_length(f->shield.read_only), 1);
        assert_true(holds(f->shield.read_only, f, "ws/own.json"));
}

static void test_linked_worktree_common_directory_made_writable_minus_its_hooks(void **state)
{
        struct fixture *f = *state;

        require_git();
        shell(f, "rmdir ws && git init -q main && cd main && git commit -q --allow-empty -m one && "
                 "git worktree add -q ../ws");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_subpaths(f);
        assert_int_equal(plan(f, NULL, true), 0);
        assert_int_equal(dsh_strv_length(f->shield.extra_writable), 1);
        assert_true(holds(f->shield.extra_writable, f, "main/.git"));
        assert_true(holds(f->shield.read_only, f, "main/.git/hooks"));
        assert_true(holds(f->shield.read_only, f, "main/.git/config"));
        assert_true(holds(f->shield.read_only, f, "ws/.git"));
        assert_true(holds(f->shield.read_only, f, "main/.git/worktrees/ws/commondir"));
        assert_true(holds(f->shield.read_only, f, "main/.git/worktrees/ws/gitdir"));
        /* Landlock's plan (no subpaths) makes nothing outside the roots writable. */
        assert_int_equal(plan(f, NULL, false), 0);
        assert_null(f->shield.extra_writable);
        /* A .git file whose pointers do not agree is not believed: the main repository stays read-only. */
        shell(f, "echo /elsewhere/.git > main/.git/worktrees/ws/gitdir");
        assert_int_equal(plan(f, NULL, true), 0);
        assert_null(f->shield.extra_writable);
}

static void test_runner_inside_a_planned_common_directory_is_refused(void **state)
{
        struct fixture *f = *state;
        char *runner = at(f, "main/.git/bwrap");
        char *const runners[] = { runner, NULL };

        require_git();
        shell(f, "rmdir ws && git init -q main && cd main && git commit -q --allow-empty -m one && "
                 "git worktree add -q ../ws");
        use_policy(f, DSH_MODE_WORKSPACE_WRITE, "ws");
        protect_subpaths(f);
        /* The common directory the shield makes writable is a writable root for every check after it. */
        assert_refused(f, plan(f, runners, true), "which the sandbox runs or loads");
        free(runner);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_read_only_grants_nothing_to_shield, setup, teardown),
                cmocka_unit_test_setup_teardown(test_git_hooks_and_config_held_back_in_a_repository, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_hooks_kept_absent_and_symlinked_dotgit_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_agent_config_held_back_or_kept_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_audit_moves_what_appeared_and_follows_no_symlink, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_protected_path_inside_a_root_is_held_back_outside_left_alone,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_inside_the_sandboxs_own_files_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_runner_or_protected_executable_in_a_root_is_refused, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_own_file_reached_through_a_repointable_symlink_is_refused, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_symlink_outside_the_roots_is_followed_to_the_root, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_linked_worktree_common_directory_made_writable_minus_its_hooks,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_runner_inside_a_planned_common_directory_is_refused, setup,
                                                teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
