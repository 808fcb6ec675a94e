/* SPDX-License-Identifier: MIT */
/*
 * Git-layout discovery (src/shield/git-layout.c) on real repositories made
 * by git itself — a linked worktree, a submodule, a bare repository — and on
 * the hostile files an earlier call could have planted: a "gitdir:" pointer
 * at "/", a worktree whose back pointer names another checkout, submodule
 * names that climb out of modules/, a symlinked ".git" file.
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
#include "shield/git-layout.h"
#include "test-support.h"

struct fixture {
        char *scratch;          /* canonical */
        char **environment;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char *made = test_make_directory(NULL);

        f->scratch = realpath(made, NULL);
        free(made);
        f->environment = test_home_environment(f->scratch);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        test_home_environment_free(f->environment);
        test_remove_tree(f->scratch);
        free(f);
        return 0;
}

static void shell(struct fixture *f, const char *line)
{
        test_setup_shell(f->scratch, line, (const char *const *) f->environment);
}

static char *at(struct fixture *f, const char *name)
{
        return test_path_join(f->scratch, name);
}

static void require_git(void)
{
        if (access("/usr/bin/git", X_OK) < 0) {
                printf("# SKIP: git is not installed\n");
                skip();
        }
}

static void test_linked_worktree_is_found_and_validated(void **state)
{
        struct fixture *f = *state;
        char *dotgit, *gitdir, *common, *expected_gitdir, *expected_common, *linked;

        require_git();
        shell(f, "git init -q main && cd main && git commit -q --allow-empty -m one && "
                 "git worktree add -q ../linked");
        dotgit = at(f, "linked/.git");
        expected_gitdir = at(f, "main/.git/worktrees/linked");
        expected_common = at(f, "main/.git");
        linked = at(f, "linked");
        gitdir = dsh_git_layout_gitdir_of_file(linked, dotgit);
        free(linked);
        assert_non_null(gitdir);
        assert_string_equal(gitdir, expected_gitdir);
        common = dsh_git_layout_commondir(gitdir);
        assert_non_null(common);
        assert_string_equal(common, expected_common);
        free(common);
        common = dsh_git_layout_worktree_common(dotgit, gitdir);
        assert_non_null(common);
        assert_string_equal(common, expected_common);
        /* The main checkout's own git directory has no commondir: it is its own. */
        assert_null(dsh_git_layout_commondir(expected_common));
        assert_true(dsh_git_layout_is_common_directory(expected_common));
        free(common);
        free(gitdir);
        free(dotgit);
        free(expected_gitdir);
        free(expected_common);
}

static void test_worktree_that_does_not_agree_is_not_believed(void **state)
{
        struct fixture *f = *state;
        char *dotgit, *gitdir, *back, *other;

        require_git();
        shell(f, "git init -q main && cd main && git commit -q --allow-empty -m one && "
                 "git worktree add -q ../linked && mkdir ../other");
        dotgit = at(f, "linked/.git");
        gitdir = at(f, "main/.git/worktrees/linked");
        back = at(f, "main/.git/worktrees/linked/gitdir");
        other = at(f, "other/.git");
        /* The back pointer names another checkout: the common directory is not made writable for this one. */
        test_write_file(other, "gitdir: ../main/.git/worktrees/linked\n");
        {
                char *line = NULL;

                assert_true(asprintf(&line, "%s\n", other) > 0);
                test_write_file(back, line);
                free(line);
        }
        assert_null(dsh_git_layout_worktree_common(dotgit, gitdir));
        /* The other checkout's ".git" names the same git directory, but the main one is not beneath worktrees/. */
        free(gitdir);
        gitdir = at(f, "main/.git");
        assert_null(dsh_git_layout_worktree_common(other, gitdir));
        free(gitdir);
        free(back);
        free(other);
        free(dotgit);
}

static void test_gitdir_pointer_at_the_root_is_not_a_worktree(void **state)
{
        struct fixture *f = *state;
        char *checkout = at(f, "checkout");
        char *dotgit = at(f, "checkout/.git");
        char *gitdir;

        assert_int_equal(mkdir(checkout, 0755), 0);
        test_write_file(dotgit, "gitdir: /\n");
        gitdir = dsh_git_layout_gitdir_of_file(checkout, dotgit);
        assert_non_null(gitdir);
        assert_string_equal(gitdir, "/");
        /* "/" has no commondir and is no worktrees/NAME: nothing would make it writable. */
        assert_null(dsh_git_layout_worktree_common(dotgit, gitdir));
        free(gitdir);
        /* A ".git" file without the "gitdir: " prefix names nothing. */
        test_write_file(dotgit, "/etc\n");
        assert_null(dsh_git_layout_gitdir_of_file(checkout, dotgit));
        free(dotgit);
        free(checkout);
}

static void test_symlinked_dotgit_file_is_not_read(void **state)
{
        struct fixture *f = *state;
        char *checkout = at(f, "checkout");
        char *dotgit = at(f, "checkout/.git");
        char *planted = at(f, "planted");

        assert_int_equal(mkdir(checkout, 0755), 0);
        test_write_file(planted, "gitdir: /\n");
        assert_int_equal(symlink(planted, dotgit), 0);
        assert_null(dsh_git_layout_gitdir_of_file(checkout, dotgit));
        free(planted);
        free(dotgit);
        free(checkout);
}

static void test_relative_gitdir_pointer_is_taken_from_its_directory(void **state)
{
        struct fixture *f = *state;
        char *checkout = at(f, "sub/checkout");
        char *dotgit = at(f, "sub/checkout/.git");
        char *target = at(f, "sub/real-git");
        char *gitdir;

        shell(f, "mkdir -p sub/checkout sub/real-git");
        test_write_file(dotgit, "gitdir: ../real-git\r\n");
        gitdir = dsh_git_layout_gitdir_of_file(checkout, dotgit);
        assert_non_null(gitdir);
        assert_string_equal(gitdir, target);
        free(gitdir);
        free(target);
        free(dotgit);
        free(checkout);
}

static void test_submodule_git_directories_come_from_the_config(void **state)
{
        struct fixture *f = *state;
        char *gitdir, *expected, *dotgit, *checkout, *found_gitdir;
        char **modules = NULL;

        require_git();
        shell(f, "git init -q library && cd library && git commit -q --allow-empty -m lib && cd .. && "
                 "git init -q app && cd app && "
                 "git -c protocol.file.allow=always submodule add -q ../library vendor/lib && "
                 "git commit -q -m 'add library'");
        gitdir = at(f, "app/.git");
        expected = at(f, "app/.git/modules/vendor/lib");
        assert_int_equal(dsh_git_layout_submodule_directories(gitdir, &modules), 0);
        assert_int_equal(dsh_strv_length(modules), 1);
        assert_string_equal(modules[0], expected);
        /* The submodule checkout's .git file names the same directory. */
        checkout = at(f, "app/vendor/lib");
        dotgit = at(f, "app/vendor/lib/.git");
        found_gitdir = dsh_git_layout_gitdir_of_file(checkout, dotgit);
        assert_non_null(found_gitdir);
        assert_string_equal(found_gitdir, expected);
        free(found_gitdir);
        free(dotgit);
        free(checkout);
        dsh_strv_free(modules);
        free(expected);
        free(gitdir);
}

static void test_submodule_names_that_climb_or_decoys_are_ignored(void **state)
{
        struct fixture *f = *state;
        char *gitdir = at(f, "repo/.git");
        char *config = at(f, "repo/.git/config");
        char *expected = at(f, "repo/.git/modules/a/b");
        char **modules = NULL;

        /* Declared: a plain nested name, names climbing out, one whose directory is missing; listed only: a decoy. */
        shell(f, "mkdir -p repo/.git/modules/a/b repo/.git/modules/decoy repo/.git/escape repo/.git/modules/x/.. "
                 "repo/.git/modules/c");
        test_write_file(config, "[core]\n\tbare = false\n"
                                "[submodule \"../escape\"]\n\turl = x\n"
                                "[submodule \"a/b\"]\n\turl = x\n"
                                "[submodule \"a/./b\"]\n\turl = x\n"
                                "[submodule \"/etc\"]\n\turl = x\n"
                                "[submodule \"missing\"]\n\turl = x\n"
                                "[submodule \"\"]\n\turl = x\n");
        assert_int_equal(dsh_git_layout_submodule_directories(gitdir, &modules), 0);
        assert_int_equal(dsh_strv_length(modules), 1);
        assert_string_equal(modules[0], expected);
        dsh_strv_free(modules);
        /* No config: no submodules, and no failure. */
        assert_int_equal(unlink(config), 0);
        modules = (char **) 1;
        assert_int_equal(dsh_git_layout_submodule_directories(gitdir, &modules), 0);
        assert_null(modules);
        free(expected);
        free(config);
        free(gitdir);
}

static void test_bare_repository_is_a_common_directory(void **state)
{
        struct fixture *f = *state;
        char *bare = at(f, "bare.git");
        char *plain = at(f, "plain");

        require_git();
        shell(f, "git init -q --bare bare.git && mkdir -p plain/objects plain/refs");
        assert_true(dsh_git_layout_is_common_directory(bare));
        assert_null(dsh_git_layout_commondir(bare));
        /* objects and refs without HEAD: not a git directory. */
        assert_false(dsh_git_layout_is_common_directory(plain));
        free(plain);
        free(bare);
}

static void test_worktree_config_extension_is_noticed(void **state)
{
        struct fixture *f = *state;
        char *gitdir = at(f, "repo/.git");
        char *linked_gitdir = at(f, "repo/.git/worktrees/linked");

        require_git();
        shell(f, "git init -q repo && cd repo && git commit -q --allow-empty -m one && git worktree add -q ../linked");
        assert_false(dsh_git_layout_worktree_config_enabled(gitdir));
        assert_false(dsh_git_layout_worktree_config_enabled(linked_gitdir));
        shell(f, "cd repo && git config extensions.worktreeConfig true");
        assert_true(dsh_git_layout_worktree_config_enabled(gitdir));
        /* A linked worktree reads the common directory's config. */
        assert_true(dsh_git_layout_worktree_config_enabled(linked_gitdir));
        free(linked_gitdir);
        free(gitdir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_linked_worktree_is_found_and_validated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_worktree_that_does_not_agree_is_not_believed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gitdir_pointer_at_the_root_is_not_a_worktree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_dotgit_file_is_not_read, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_gitdir_pointer_is_taken_from_its_directory, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_submodule_git_directories_come_from_the_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_submodule_names_that_climb_or_decoys_are_ignored, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_bare_repository_is_a_common_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_worktree_config_extension_is_noticed, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
