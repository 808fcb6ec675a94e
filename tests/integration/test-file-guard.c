/* SPDX-License-Identifier: MIT */
/*
 * The file guard (dsh-sandbox/file-guard.h) on the real filesystem: each
 * operation under each mode, inside the workspace and outside every root;
 * the escape set (absolute paths outside, `..`, symlinks inside pointing
 * out, a dangling symlink to outside as a create target, a hard link of an
 * outside file, renames in and out, /proc/self/root and /proc/self/cwd,
 * protected subpaths and the sandbox's own files, a thread swapping a
 * directory for a symlink to outside while writes run); atomicity (a full
 * disk halfway through a write, in a private mount namespace); and the
 * errors.  Every outcome is checked on disk: a denial leaves the tree as it
 * was, snapshot for snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <sys/syscall.h>

#include "dsh-sandbox/file-guard.h"
#include "guard-fixture.h"
#include "test-support.h"

static guard_fixture fixture;

static int setup(void **state)
{
        (void) state;
        guard_fixture_setup(&fixture);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        guard_fixture_teardown(&fixture);
        return 0;
}

static char *in_workspace(const char *name)
{
        return guard_fixture_path(fixture.workspace, name);
}

static char *outside(const char *name)
{
        return guard_fixture_path(fixture.outside, name);
}

static void assert_content(const char *path, const char *expected)
{
        char *content = test_read_file(path);

        if (!content || strcmp(content, expected) != 0)
                fail_msg("%s holds \"%s\", expected \"%s\"", path, content ? content : "(missing)", expected);
        free(content);
}

/* The outside directory and the scratch around the roots, as they are now. */
static char *outside_snapshot(void)
{
        return guard_fixture_snapshot(fixture.outside);
}

static void assert_snapshot(const char *before, const char *directory)
{
        char *after = guard_fixture_snapshot(directory);

        if (strcmp(before, after) != 0)
                fail_msg("%s changed:\nbefore:\n%s\nafter:\n%s", directory, before, after);
        free(after);
}

/* ------------------------------------------------------ operation × mode -- */

/* One operation on `base` (the workspace or the outside directory), and whether its effect is on disk. */
typedef struct operation_case {
        const char *name;
        bool changes;
        int (*run)(dsh_file_guard *guard, const char *base, dsh_error *error);
        bool (*happened)(const char *base);
} operation_case;

static int with_path(const char *base, const char *name, char **path)
{
        *path = guard_fixture_path(base, name);
        return 0;
}

static bool file_is(const char *base, const char *name, const char *content)
{
        char *path = guard_fixture_path(base, name);
        char *actual = test_read_file(path);
        bool is = actual && strcmp(actual, content) == 0;

        free(actual);
        free(path);
        return is;
}

static bool is_directory(const char *base, const char *name)
{
        char *path = guard_fixture_path(base, name);
        struct stat status;
        bool is = lstat(path, &status) == 0 && S_ISDIR(status.st_mode);

        free(path);
        return is;
}

static bool exists(const char *base, const char *name)
{
        char *path = guard_fixture_path(base, name);
        bool is = test_path_exists(path);

        free(path);
        return is;
}

#define PATH_OF(base, name) (with_path((base), (name), &path), path)

static int run_write_new(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_write(guard, PATH_OF(base, "new"), "x\n", 2, 0, NULL, error);

        free(path);
        return result;
}

static bool happened_write_new(const char *base)
{
        return file_is(base, "new", "x\n");
}

static int run_write_replace(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_write(guard, PATH_OF(base, "file"), "new\n", 4, 0, NULL, error);

        free(path);
        return result;
}

static bool happened_write_replace(const char *base)
{
        return file_is(base, "file", "new\n");
}

static int run_create_only(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_write(guard, PATH_OF(base, "created"), "c\n", 2, DSH_FILE_WRITE_CREATE_ONLY,
                                          NULL, error);

        free(path);
        return result;
}

static bool happened_create_only(const char *base)
{
        return file_is(base, "created", "c\n");
}

static int run_edit(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_edit(guard, PATH_OF(base, "file"), "old", "edited", 0, NULL, error);

        free(path);
        return result;
}

static bool happened_edit(const char *base)
{
        return file_is(base, "file", "edited\n");
}

static int run_mkdir(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_mkdir(guard, PATH_OF(base, "made"), 0, NULL, error);

        free(path);
        return result;
}

static bool happened_mkdir(const char *base)
{
        return is_directory(base, "made");
}

static int run_mkdir_parents(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_mkdir(guard, PATH_OF(base, "p/q/r"), DSH_FILE_MKDIR_PARENTS, NULL, error);

        free(path);
        return result;
}

static bool happened_mkdir_parents(const char *base)
{
        return is_directory(base, "p/q/r");
}

static int run_remove(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_remove(guard, PATH_OF(base, "file"), 0, NULL, error);

        free(path);
        return result;
}

static bool happened_remove(const char *base)
{
        return !exists(base, "file");
}

static int run_remove_tree(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path;
        int result = dsh_file_guard_remove(guard, PATH_OF(base, "tree"), DSH_FILE_REMOVE_RECURSIVE, NULL, error);

        free(path);
        return result;
}

static bool happened_remove_tree(const char *base)
{
        return !exists(base, "tree");
}

static int run_move(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        char *path, *destination = guard_fixture_path(base, "moved");
        int result = dsh_file_guard_move(guard, PATH_OF(base, "file"), destination, 0, NULL, error);

        free(destination);
        free(path);
        return result;
}

static bool happened_move(const char *base)
{
        return !exists(base, "file") && file_is(base, "moved", "old\n");
}

static int run_read(dsh_file_guard *guard, const char *base, dsh_error *error)
{
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        char *path;
        int outcome = dsh_file_guard_read(guard, PATH_OF(base, "file"), &result, error);

        if (outcome == 0) {
                assert_int_equal(result.bytes, 4);
                assert_string_equal(result.content, "old\n");
        }
        dsh_file_result_clear(&result);
        free(path);
        return outcome;
}

static bool happened_read(const char *base)
{
        return file_is(base, "file", "old\n");
}

static const operation_case operation_cases[] = {
        { "write (new file)", true, run_write_new, happened_write_new },
        { "write (replace)", true, run_write_replace, happened_write_replace },
        { "write (create only)", true, run_create_only, happened_create_only },
        { "edit", true, run_edit, happened_edit },
        { "mkdir", true, run_mkdir, happened_mkdir },
        { "mkdir -p", true, run_mkdir_parents, happened_mkdir_parents },
        { "remove", true, run_remove, happened_remove },
        { "remove -r", true, run_remove_tree, happened_remove_tree },
        { "move", true, run_move, happened_move },
        { "read", false, run_read, happened_read },
};

/* Gives `base` the same starting content as the workspace: "file" and "tree/a/b". */
static void reset_base(const char *base)
{
        char *command = NULL;

        assert_true(asprintf(&command, "rm -rf '%s'/* && printf 'old\\n' > '%s/file' && mkdir -p '%s/tree/a' && "
                                       "printf 'b\\n' > '%s/tree/a/b'",
                             base, base, base, base) > 0);
        assert_int_equal(system(command), 0);
        free(command);
}

/* Each operation under each mode, on the workspace and outside every root: allowed exactly where the mode says. */
static void test_each_operation_under_each_mode(void **state)
{
        static const dsh_mode modes[] = { DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE, DSH_MODE_DANGER_FULL_ACCESS };
        const char *bases[] = { fixture.workspace, fixture.outside };

        (void) state;
        for (size_t m = 0; m < 3; m++)
                for (size_t b = 0; b < 2; b++)
                        for (size_t c = 0; c < sizeof(operation_cases) / sizeof(operation_cases[0]); c++) {
                                const operation_case *operation = &operation_cases[c];
                                bool allowed = !operation->changes || modes[m] == DSH_MODE_DANGER_FULL_ACCESS ||
                                               (modes[m] == DSH_MODE_WORKSPACE_WRITE && b == 0);
                                dsh_error error = DSH_ERROR_INIT;
                                dsh_file_guard *guard;
                                char *before;
                                int result;

                                reset_base(bases[b]);
                                before = guard_fixture_snapshot(bases[b]);
                                guard = guard_fixture_guard(&fixture, modes[m]);
                                result = operation->run(guard, bases[b], &error);
                                if (allowed && result < 0)
                                        fail_msg("%s under %s in %s: %s", operation->name, dsh_mode_name(modes[m]),
                                                 bases[b], error.message);
                                if (allowed && !operation->happened(bases[b]))
                                        fail_msg("%s under %s in %s: not done on disk", operation->name,
                                                 dsh_mode_name(modes[m]), bases[b]);
                                if (!allowed) {
                                        if (result != -EACCES || error.code != DSH_ERROR_FS_SANDBOX_DENIED)
                                                fail_msg("%s under %s in %s: expected a denial, got %d (%s)",
                                                         operation->name, dsh_mode_name(modes[m]), bases[b], result,
                                                         error.message ? error.message : "no error");
                                        assert_snapshot(before, bases[b]);
                                }
                                dsh_error_clear(&error);
                                dsh_file_guard_free(guard);
                                free(before);
                        }
        reset_base(fixture.outside);
}

/* The denial's text is the spec's, exactly, with the path as given (relative paths too). */
static void test_denial_text_is_exact(void **state)
{
        dsh_file_guard *read_only = guard_fixture_guard(&fixture, DSH_MODE_READ_ONLY);
        dsh_file_guard *workspace_write = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_error error = DSH_ERROR_INIT;
        char *secret = outside("secret");
        int result;

        (void) state;
        result = dsh_file_guard_write(read_only, "file", "x", 1, 0, NULL, &error);
        guard_fixture_expect_denied(result, &error, "file", DSH_MODE_READ_ONLY);
        result = dsh_file_guard_remove(workspace_write, secret, 0, NULL, &error);
        guard_fixture_expect_denied(result, &error, secret, DSH_MODE_WORKSPACE_WRITE);
        result = dsh_file_guard_write(workspace_write, "../outside/x\n\x1b[1m", "x", 1, 0, NULL, &error);
        guard_fixture_expect_denied(result, &error, "../outside/x\\x0a\\x1b[1m", DSH_MODE_WORKSPACE_WRITE);
        free(secret);
        dsh_file_guard_free(workspace_write);
        dsh_file_guard_free(read_only);
}

/* Relative paths are taken from the workspace root; the extra root and the temp area are writable too. */
static void test_relative_paths_extra_roots_and_temp_area(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *relative = in_workspace("sub/relative");
        char *extra = guard_fixture_path(fixture.extra, "in-extra");
        char temp[64];

        (void) state;
        assert_int_equal(dsh_file_guard_write(guard, "sub/relative", "r", 1, 0, &result, &error), 0);
        assert_string_equal(result.path, relative);
        assert_true(result.created);
        assert_int_equal(result.bytes, 1);
        assert_content(relative, "r");
        dsh_file_result_clear(&result);
        assert_int_equal(dsh_file_guard_write(guard, extra, "e", 1, 0, NULL, &error), 0);
        assert_content(extra, "e");
        /*
         * /tmp is the command's: the host's under Landlock, the session's
         * scratch under bwrap (what auto selects where it works), never
         * the host's /tmp there; the result names it as the command does.
         */
        snprintf(temp, sizeof(temp), "/tmp/dsh-file-guard-%ld", (long) getpid());
        assert_int_equal(dsh_file_guard_write(guard, temp, "t", 1, 0, &result, &error), 0);
        assert_string_equal(result.path, temp);
        dsh_file_result_clear(&result);
        if (access(temp, F_OK) == 0) {
                assert_content(temp, "t");
                unlink(temp);
        } else {
                char *pattern = NULL;
                glob_t found;

                assert_true(asprintf(&pattern, "%s/cache/dsh-sandbox/scratch/*/tmp%s", fixture.scratch,
                                     temp + strlen("/tmp")) > 0);
                assert_int_equal(glob(pattern, 0, NULL, &found), 0);
                assert_int_equal(found.gl_pathc, 1);
                assert_content(found.gl_pathv[0], "t");
                unlink(found.gl_pathv[0]);
                globfree(&found);
                free(pattern);
        }
        free(extra);
        free(relative);
        dsh_file_guard_free(guard);
}

/* ---------------------------------------------------------------- escapes -- */

/* Absolute paths outside and `..` out of the workspace: every operation denied, nothing outside changed. */
static void test_absolute_outside_and_dot_dot(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *before = outside_snapshot();
        char *secret = outside("secret"), *created = outside("created");
        char *dot_dot = in_workspace("../outside/created"), *deep_dot_dot = in_workspace("tree/a/../../../outside/secret");
        char *inside = in_workspace("file");
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        guard_fixture_expect_denied(dsh_file_guard_write(guard, created, "x", 1, 0, NULL, &error), &error, created,
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, dot_dot, "x", 1, 0, NULL, &error), &error, dot_dot,
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, "../outside/created", "x", 1, 0, NULL, &error),
                                    &error, "../outside/created", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_edit(guard, deep_dot_dot, "original", "changed", 0, NULL, &error),
                                    &error, deep_dot_dot, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, created, DSH_FILE_MKDIR_PARENTS, NULL, &error),
                                    &error, created, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, secret, 0, NULL, &error), &error, secret,
                                    DSH_MODE_WORKSPACE_WRITE);
        /* A rename of an outside file in, and of an inside file out. */
        guard_fixture_expect_denied(dsh_file_guard_move(guard, secret, inside, 0, NULL, &error), &error, secret,
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, inside, created, 0, NULL, &error), &error, created,
                                    DSH_MODE_WORKSPACE_WRITE);
        /* `..` that stays inside is fine. */
        assert_int_equal(dsh_file_guard_write(guard, "tree/a/../x", "x", 1, 0, NULL, &error), 0);
        assert_snapshot(before, fixture.outside);
        assert_content(inside, "old\n");
        free(inside);
        free(deep_dot_dot);
        free(dot_dot);
        free(created);
        free(secret);
        free(before);
        dsh_file_guard_free(guard);
}

/* A symlinked directory inside pointing out (absolute and relative links): denied through it, the link itself ours. */
static void test_symlinked_directory_pointing_out(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *absolute_link = in_workspace("out"), *relative_link = in_workspace("tree/rel");
        char *before;
        dsh_error error = DSH_ERROR_INIT;
        const char *through[] = { "out/new", "out/secret", "tree/rel/new", "tree/rel/secret" };

        (void) state;
        assert_int_equal(symlink(fixture.outside, absolute_link), 0);
        assert_int_equal(symlink("../../outside", relative_link), 0);
        before = outside_snapshot();
        for (size_t i = 0; i < 4; i++) {
                guard_fixture_expect_denied(dsh_file_guard_write(guard, through[i], "x", 1, 0, NULL, &error), &error,
                                            through[i], DSH_MODE_WORKSPACE_WRITE);
                guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, through[i], DSH_FILE_MKDIR_PARENTS, NULL,
                                                                 &error),
                                            &error, through[i], DSH_MODE_WORKSPACE_WRITE);
                guard_fixture_expect_denied(dsh_file_guard_remove(guard, through[i], DSH_FILE_REMOVE_RECURSIVE, NULL,
                                                                  &error),
                                            &error, through[i], DSH_MODE_WORKSPACE_WRITE);
                guard_fixture_expect_denied(dsh_file_guard_move(guard, through[i], "moved", 0, NULL, &error), &error,
                                            through[i], DSH_MODE_WORKSPACE_WRITE);
        }
        guard_fixture_expect_denied(dsh_file_guard_edit(guard, "out/secret", "original", "x", 0, NULL, &error),
                                    &error, "out/secret", DSH_MODE_WORKSPACE_WRITE);
        /* The links themselves are entries of the workspace: removing one leaves its target alone. */
        assert_int_equal(dsh_file_guard_remove(guard, "out", DSH_FILE_REMOVE_RECURSIVE, NULL, &error), 0);
        assert_int_equal(dsh_file_guard_remove(guard, "tree", DSH_FILE_REMOVE_RECURSIVE, NULL, &error), 0);
        assert_false(test_path_exists(absolute_link));
        assert_snapshot(before, fixture.outside);
        free(before);
        free(relative_link);
        free(absolute_link);
        dsh_file_guard_free(guard);
}

/* A dangling symlink to outside as the target of a create is denied; one to inside creates its target, as open(2). */
static void test_dangling_symlink_as_create_target(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *to_outside = in_workspace("dangling-out"), *to_inside = in_workspace("dangling-in");
        char *planted = outside("planted"), *target = in_workspace("target");
        char *before = outside_snapshot();
        dsh_error error = DSH_ERROR_INIT;
        struct stat status;

        (void) state;
        assert_int_equal(symlink(planted, to_outside), 0);
        assert_int_equal(symlink("target", to_inside), 0);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, to_outside, "x", 1, 0, NULL, &error), &error,
                                    to_outside, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, to_outside, "x", 1, DSH_FILE_WRITE_CREATE_ONLY, NULL,
                                                         &error),
                                    &error, to_outside, DSH_MODE_WORKSPACE_WRITE);
        assert_false(test_path_exists(planted));
        assert_snapshot(before, fixture.outside);
        assert_int_equal(dsh_file_guard_write(guard, to_inside, "in", 2, DSH_FILE_WRITE_CREATE_ONLY, NULL, &error), 0);
        assert_content(target, "in");
        assert_int_equal(lstat(to_inside, &status), 0);
        assert_true(S_ISLNK(status.st_mode));
        free(before);
        free(target);
        free(planted);
        free(to_inside);
        free(to_outside);
        dsh_file_guard_free(guard);
}

/* A hard link of an outside file in the workspace: a write or an edit replaces the link, never the outside file. */
static void test_hard_link_of_an_outside_file(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *secret = outside("secret"), *linked = in_workspace("linked");
        dsh_error error = DSH_ERROR_INIT;
        struct stat status;

        (void) state;
        assert_int_equal(link(secret, linked), 0);
        assert_int_equal(dsh_file_guard_write(guard, linked, "written\n", 8, 0, NULL, &error), 0);
        assert_content(linked, "written\n");
        assert_content(secret, "original\n");
        assert_int_equal(stat(secret, &status), 0);
        assert_int_equal(status.st_nlink, 1);
        assert_int_equal(unlink(linked), 0);
        assert_int_equal(link(secret, linked), 0);
        assert_int_equal(dsh_file_guard_edit(guard, linked, "original", "edited", 0, NULL, &error), 0);
        assert_content(linked, "edited\n");
        assert_content(secret, "original\n");
        free(linked);
        free(secret);
        dsh_file_guard_free(guard);
}

/* /proc/self/root and /proc/self/cwd lead anywhere: never followed, whatever they point at now. */
static void test_proc_self_paths(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_file_guard *danger = guard_fixture_guard(&fixture, DSH_MODE_DANGER_FULL_ACCESS);
        char *before_outside = outside_snapshot(), *before_workspace = guard_fixture_snapshot(fixture.workspace);
        char *via_root = NULL, *via_root_outside = NULL, *cwd = getcwd(NULL, 0);
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_true(asprintf(&via_root, "/proc/self/root%s/new", fixture.workspace) > 0);
        assert_true(asprintf(&via_root_outside, "/proc/self/root%s/secret", fixture.outside) > 0);
        assert_int_equal(chdir(fixture.workspace), 0);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, via_root, "x", 1, 0, NULL, &error), &error, via_root,
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_edit(guard, via_root_outside, "original", "x", 0, NULL, &error),
                                    &error, via_root_outside, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, "/proc/self/cwd/new", "x", 1, 0, NULL, &error),
                                    &error, "/proc/self/cwd/new", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, "/proc/thread-self/cwd/d", 0, NULL, &error), &error,
                                    "/proc/thread-self/cwd/d", DSH_MODE_WORKSPACE_WRITE);
        /* Where nothing is denied, the path is still refused, with a reason. */
        guard_fixture_expect_code(dsh_file_guard_write(danger, "/proc/self/cwd/new", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_INVALID_INPUT);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "/proc/self/cwd/file", NULL, &error), &error,
                                  DSH_ERROR_INVALID_INPUT);
        assert_int_equal(chdir(cwd), 0);
        assert_snapshot(before_outside, fixture.outside);
        assert_snapshot(before_workspace, fixture.workspace);
        free(cwd);
        free(via_root_outside);
        free(via_root);
        free(before_workspace);
        free(before_outside);
        dsh_file_guard_free(danger);
        dsh_file_guard_free(guard);
}

/* Runs a shell line in the workspace (test setup); fails the test when it fails. */
static void workspace_shell(const char *line)
{
        test_setup_shell(fixture.workspace, line, NULL);
}

/*
 * Protected subpaths, as bwrap holds them back: hooks and config are denied,
 * .git itself can neither be removed nor renamed (it holds them), other
 * entries of .git stay writable; a protected subpath that does not exist
 * yet is denied too.
 */
static void test_protected_subpaths(void **state)
{
        dsh_file_guard *guard;
        char *hooks_dir = in_workspace(".git/hooks"), *before;
        dsh_error error = DSH_ERROR_INIT;
        const char *denied_writes[] = { ".git/hooks/pre-commit", ".git/config", ".git/hooks/sub/x" };

        (void) state;
        workspace_shell("git init -q . && git config user.email t@example.invalid && git config user.name t");
        guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        before = guard_fixture_snapshot(fixture.workspace);
        for (size_t i = 0; i < 3; i++)
                guard_fixture_expect_denied(dsh_file_guard_write(guard, denied_writes[i], "x", 1, 0, NULL, &error),
                                            &error, denied_writes[i], DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_edit(guard, ".git/config", "[core]", "[x]", 0, NULL, &error),
                                    &error, ".git/config", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, ".git", DSH_FILE_REMOVE_RECURSIVE, NULL, &error),
                                    &error, ".git", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, ".git/hooks", DSH_FILE_REMOVE_RECURSIVE, NULL, &error),
                                    &error, ".git/hooks", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, ".git", "g", 0, NULL, &error), &error, ".git",
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, ".git/config", "c", 0, NULL, &error), &error,
                                    ".git/config", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, "file", ".git/hooks/post-commit", 0, NULL, &error),
                                    &error, ".git/hooks/post-commit", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, ".git/hooks/d", 0, NULL, &error), &error,
                                    ".git/hooks/d", DSH_MODE_WORKSPACE_WRITE);
        assert_snapshot(before, fixture.workspace);
        /* Inside .git, what is not protected stays writable (git itself writes there). */
        assert_int_equal(dsh_file_guard_write(guard, ".git/description", "d\n", 2, 0, NULL, &error), 0);
        dsh_file_guard_free(guard);
        /* Missing hooks: bwrap can only report them; the guard denies creating them. */
        workspace_shell("rm -rf .git/hooks");
        guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, ".git/hooks/pre-commit", "x", 1, 0, NULL, &error),
                                    &error, ".git/hooks/pre-commit", DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, ".git/hooks", 0, NULL, &error), &error, ".git/hooks",
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, "tree", ".git/hooks", 0, NULL, &error), &error,
                                    ".git/hooks", DSH_MODE_WORKSPACE_WRITE);
        assert_false(test_path_exists(hooks_dir));
        free(before);
        free(hooks_dir);
        dsh_file_guard_free(guard);
}

/* The sandbox's own files (here the session store, put inside the workspace) are denied as bwrap holds them back. */
static void test_own_files(void **state)
{
        char *store = in_workspace("state"), *log = in_workspace("state/s.jsonl"), *before;
        dsh_runtime *runtime = guard_fixture_runtime(&fixture, NULL, store);
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        dsh_policy policy;

        (void) state;
        assert_int_equal(mkdir(store, 0700), 0);
        test_write_file(log, "{}\n");
        guard_fixture_policy(&fixture, runtime, DSH_MODE_WORKSPACE_WRITE, &policy);
        if (dsh_file_guard_new(runtime, &policy, &guard, &error) < 0)
                fail_msg("dsh_file_guard_new: %s", error.message);
        before = guard_fixture_snapshot(store);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, log, "x", 1, 0, NULL, &error), &error, log,
                                    DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, store, DSH_FILE_REMOVE_RECURSIVE, NULL, &error),
                                    &error, store, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, "state", "elsewhere", 0, NULL, &error), &error,
                                    "state", DSH_MODE_WORKSPACE_WRITE);
        assert_snapshot(before, store);
        /* The rest of the workspace is writable. */
        assert_int_equal(dsh_file_guard_write(guard, "file", "x", 1, 0, NULL, &error), 0);
        free(before);
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(log);
        free(store);
}

/* A writable root that holds a runner is refused when the guard is made, as every backend refuses it. */
static void test_root_holding_a_runner_is_refused(void **state)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;

        (void) state;
        request.has_mode = true;
        request.mode = DSH_MODE_WORKSPACE_WRITE;
        request.workspace_root = fixture.launchers;
        assert_int_equal(dsh_runtime_resolve(fixture.runtime, &request, &policy, &error), 0);
        assert_true(dsh_file_guard_new(fixture.runtime, &policy, &guard, &error) < 0);
        assert_null(guard);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
}

/* --------------------------------------------------------------- the race -- */

struct swapper {
        char *directory;        /* ws/d: a directory, or the symlink to outside */
        char *link;             /* ws/l: the other one */
        atomic_bool stop;
        unsigned long swaps;
};

/* Exchanges ws/d and the symlink ws/l (renameat2 RENAME_EXCHANGE: d is never missing), as fast as it can. */
static void *swap_loop(void *data)
{
        struct swapper *swapper = data;

        while (!atomic_load(&swapper->stop))
                if (renameat2(AT_FDCWD, swapper->directory, AT_FDCWD, swapper->link, RENAME_EXCHANGE) == 0)
                        swapper->swaps++;
        return NULL;
}

/*
 * A thread swaps a directory of the workspace for a symlink to outside, and
 * back, in a loop, while thousands of writes, mkdirs and moves go through
 * it: each lands in the workspace or is denied, and nothing ever lands
 * outside (checked on disk), with the symlink absolute and relative.
 */
static void test_racing_symlink_swap(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *before = outside_snapshot();
        struct swapper swapper = { in_workspace("d"), in_workspace("l"), false, 0 };
        unsigned long allowed = 0, denied = 0, other = 0;
        const char *targets[] = { fixture.outside, "../outside" };
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        for (size_t t = 0; t < 2; t++) {
                pthread_t thread;

                assert_int_equal(mkdir(swapper.directory, 0755), 0);
                assert_int_equal(symlink(targets[t], swapper.link), 0);
                atomic_store(&swapper.stop, false);
                assert_int_equal(pthread_create(&thread, NULL, swap_loop, &swapper), 0);
                for (int i = 0; i < 1500; i++) {
                        char name[64], previous[64];
                        int result;

                        snprintf(name, sizeof(name), "d/f%d", i);
                        snprintf(previous, sizeof(previous), "d/f%d", i - 1);
                        switch (i % 4) {
                        case 0:
                        case 1:
                                result = dsh_file_guard_write(guard, name, "x", 1, 0, NULL, &error);
                                break;
                        case 2:
                                result = dsh_file_guard_mkdir(guard, name, DSH_FILE_MKDIR_PARENTS, NULL, &error);
                                break;
                        default:
                                result = dsh_file_guard_move(guard, previous, name, 0, NULL, &error);
                                break;
                        }
                        if (result == 0)
                                allowed++;
                        else if (error.code == DSH_ERROR_FS_SANDBOX_DENIED)
                                denied++;
                        else {
                                other++;
                                if (other <= 5)
                                        print_message("race: other failure: %s\n", error.message);
                        }
                        dsh_error_clear(&error);
                }
                atomic_store(&swapper.stop, true);
                assert_int_equal(pthread_join(thread, NULL), 0);
                assert_snapshot(before, fixture.outside);
                workspace_shell("rm -rf d l");
        }
        print_message("race: %lu swaps; %lu operations done in the workspace, %lu denied, %lu failed otherwise\n",
                      swapper.swaps, allowed, denied, other);
        assert_snapshot(before, fixture.outside);
        free(swapper.link);
        free(swapper.directory);
        free(before);
        dsh_file_guard_free(guard);
}

/* ------------------------------------------------------------- atomicity -- */

/* The checks of the namespace child: a failed one is reported on stderr and ends the child with 1. */
#define CHILD_CHECK(condition, ...)                                                                  \
        do {                                                                                         \
                if (!(condition)) {                                                                  \
                        fprintf(stderr, "# check failed (line %d): ", __LINE__);                    \
                        fprintf(stderr, __VA_ARGS__);                                                \
                        fprintf(stderr, "\n");                                                       \
                        _exit(1);                                                                    \
                }                                                                                    \
        } while (0)

/* Entries of `directory` other than "." and ".."; the names, space-separated, into `names`. */
static int list_directory(const char *directory, char *names, size_t size)
{
        char *command = NULL, *output;
        FILE *pipe;
        size_t length;

        if (asprintf(&command, "ls -A '%s'", directory) < 0 || !(pipe = popen(command, "r")))
                return -1;
        length = fread(names, 1, size - 1, pipe);
        names[length] = '\0';
        for (output = names; *output; output++)
                if (*output == '\n')
                        *output = ' ';
        pclose(pipe);
        free(command);
        return 0;
}

/*
 * In a private mount namespace: a small tmpfs as the workspace.  A write
 * that the disk cannot hold fails with ENOSPC, and the old content is there,
 * whole, with no temporary file beside it; once there is room, the same
 * write goes through.  A read-only remount fails a write with EROFS.  A
 * recursive remove does not enter a mount inside the tree.
 */
static void namespace_child(const char *disk)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        dsh_policy policy = DSH_POLICY_INIT;
        char *file = guard_fixture_path(disk, "file"), *filler = guard_fixture_path(disk, "filler");
        char *tree = guard_fixture_path(disk, "tree"), *mount_point = guard_fixture_path(disk, "tree/mnt");
        char *kept = guard_fixture_path(disk, "tree/mnt/kept");
        size_t big_length = 256 * 1024;
        char *big = malloc(big_length), names[4096], chunk[4096];
        int fd, result;

        memset(big, 'n', big_length);
        memset(chunk, 'f', sizeof(chunk));
        test_write_file(file, "old content\n");
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup(disk);
        result = dsh_file_guard_new(fixture.runtime, &policy, &guard, &error);
        CHILD_CHECK(result == 0, "dsh_file_guard_new: %s", error.message);
        fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        CHILD_CHECK(fd >= 0, "open filler: %s", strerror(errno));
        while (write(fd, chunk, sizeof(chunk)) > 0)
                ;
        close(fd);
        /* Room for a few blocks, never for the new content: the write fails halfway through. */
        {
                struct stat status;

                CHILD_CHECK(stat(filler, &status) == 0 && status.st_size > 64 * 1024, "the filler did not fill");
                CHILD_CHECK(truncate(filler, status.st_size - 4 * (off_t) sizeof(chunk)) == 0, "truncate: %s",
                            strerror(errno));
        }
        result = dsh_file_guard_write(guard, file, big, big_length, 0, NULL, &error);
        CHILD_CHECK(result == -ENOSPC && error.code == DSH_ERROR_SYSTEM, "expected ENOSPC, got %d: %s", result,
                    error.message ? error.message : "(none)");
        dsh_error_clear(&error);
        {
                char *content = test_read_file(file);

                CHILD_CHECK(content && strcmp(content, "old content\n") == 0, "the old content is not whole: %s",
                            content ? content : "(missing)");
                free(content);
        }
        CHILD_CHECK(list_directory(disk, names, sizeof(names)) == 0 && strcmp(names, "file filler ") == 0,
                    "entries after the failed write: %s", names);
        /* With room again, the same write goes through. */
        CHILD_CHECK(unlink(filler) == 0, "unlink filler");
        result = dsh_file_guard_write(guard, file, big, big_length, 0, NULL, &error);
        CHILD_CHECK(result == 0, "write with room: %s", error.message);
        /* A recursive remove stops at a mount inside the tree, before touching it. */
        CHILD_CHECK(mkdir(tree, 0755) == 0 && mkdir(mount_point, 0755) == 0, "mkdir tree");
        CHILD_CHECK(mount("tmpfs", mount_point, "tmpfs", 0, "size=64k") == 0, "mount: %s", strerror(errno));
        test_write_file(kept, "kept\n");
        result = dsh_file_guard_remove(guard, tree, DSH_FILE_REMOVE_RECURSIVE, NULL, &error);
        CHILD_CHECK(result == -EXDEV, "rm -r across a mount: %d %s", result, error.message ? error.message : "");
        dsh_error_clear(&error);
        CHILD_CHECK(test_path_exists(kept), "the remove entered the mount");
        CHILD_CHECK(umount(mount_point) == 0, "umount");
        /* A read-only filesystem: a clear error, the content as it was. */
        CHILD_CHECK(mount(NULL, disk, NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0, "remount: %s", strerror(errno));
        result = dsh_file_guard_write(guard, file, "x", 1, 0, NULL, &error);
        CHILD_CHECK(result == -EROFS && error.message && strstr(error.message, "Read-only file system"),
                    "expected EROFS, got %d: %s", result, error.message ? error.message : "(none)");
        dsh_error_clear(&error);
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        free(big);
        _exit(0);
}

static void test_full_disk_keeps_the_old_content(void **state)
{
        char *disk = guard_fixture_path(fixture.scratch, "disk");
        int status = 0;
        pid_t pid;

        (void) state;
        assert_int_equal(mkdir(disk, 0755), 0);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                        fprintf(stderr, "# cannot make a private mount namespace: %s\n", strerror(errno));
                        _exit(77);
                }
                if (mount("tmpfs", disk, "tmpfs", 0, "size=512k") < 0) {
                        fprintf(stderr, "# cannot mount a tmpfs: %s\n", strerror(errno));
                        _exit(77);
                }
                namespace_child(disk);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
                print_message("skipped: no private mount namespace for a small tmpfs here (needs CAP_SYS_ADMIN)\n");
                free(disk);
                skip();
        }
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        free(disk);
}

/* A write leaves no temporary file, keeps the replaced file's mode, and gives a new one 0666 less the umask. */
static void test_atomic_write_leaves_nothing_behind(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *file = in_workspace("file"), *fresh = in_workspace("fresh"), names[4096];
        dsh_error error = DSH_ERROR_INIT;
        struct stat status;
        mode_t mask = umask(022);

        (void) state;
        assert_int_equal(chmod(file, 0640), 0);
        assert_int_equal(dsh_file_guard_write(guard, file, "replaced\n", 9, 0, NULL, &error), 0);
        assert_int_equal(stat(file, &status), 0);
        assert_int_equal(status.st_mode & 07777, 0640);
        assert_int_equal(dsh_file_guard_write(guard, fresh, "", 0, 0, NULL, &error), 0);
        assert_int_equal(stat(fresh, &status), 0);
        assert_int_equal(status.st_mode & 07777, 0644);
        assert_int_equal(status.st_size, 0);
        assert_int_equal(list_directory(fixture.workspace, names, sizeof(names)), 0);
        assert_string_equal(names, "file fresh tree ");
        umask(mask);
        free(fresh);
        free(file);
        dsh_file_guard_free(guard);
}

/* Writes, replaces and creates-only in the workspace; the child's checks of the fallbacks below. */
static void write_three_ways(dsh_file_guard *guard, const char *what)
{
        dsh_error error = DSH_ERROR_INIT;
        char *file = in_workspace("file"), *created = in_workspace("created"), names[4096], *content;
        int result = dsh_file_guard_write(guard, file, "replaced\n", 9, 0, NULL, &error);

        CHILD_CHECK(result == 0, "%s: replace: %s", what, error.message);
        result = dsh_file_guard_write(guard, created, "c", 1, DSH_FILE_WRITE_CREATE_ONLY, NULL, &error);
        CHILD_CHECK(result == 0, "%s: create only: %s", what, error.message);
        result = dsh_file_guard_write(guard, created, "d", 1, DSH_FILE_WRITE_CREATE_ONLY, NULL, &error);
        CHILD_CHECK(result == -EEXIST && error.code == DSH_ERROR_FS_ALREADY_EXISTS, "%s: create only again: %d", what,
                    result);
        dsh_error_clear(&error);
        content = test_read_file(file);
        CHILD_CHECK(content && strcmp(content, "replaced\n") == 0, "%s: content %s", what, content);
        free(content);
        content = test_read_file(created);
        CHILD_CHECK(content && strcmp(content, "c") == 0, "%s: created %s", what, content);
        free(content);
        CHILD_CHECK(list_directory(fixture.workspace, names, sizeof(names)) == 0 &&
                    strcmp(names, "created file tree ") == 0, "%s: entries %s", what, names);
        free(created);
        free(file);
}

/* Runs `body` in a child process (its own capabilities and filters), and fails the test when the child fails. */
static void in_child(void (*body)(void))
{
        int status = 0;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                body();
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* A filesystem without O_TMPFILE (seccomp makes the kernel say so): a hidden temporary name, then the rename. */
static void without_tmpfile(void)
{
        scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
        dsh_file_guard *guard;

        CHILD_CHECK(filter && seccomp_rule_add(filter, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(openat), 1,
                                               SCMP_A2(SCMP_CMP_MASKED_EQ, __O_TMPFILE, __O_TMPFILE)) == 0 &&
                            seccomp_load(filter) == 0,
                    "cannot install the filter");
        CHILD_CHECK(open(fixture.workspace, O_TMPFILE | O_WRONLY, 0600) < 0 && errno == EOPNOTSUPP,
                    "the filter does not refuse O_TMPFILE");
        guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        write_three_ways(guard, "without O_TMPFILE");
        dsh_file_guard_free(guard);
}

/* A harness without CAP_DAC_READ_SEARCH (most are): the O_TMPFILE inode is linked in through /proc/self/fd. */
static void without_dac_read_search(void)
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];
        dsh_file_guard *guard;

        CHILD_CHECK(syscall(SYS_capget, &header, data) == 0, "capget: %s", strerror(errno));
        data[CAP_TO_INDEX(CAP_DAC_READ_SEARCH)].effective &= ~CAP_TO_MASK(CAP_DAC_READ_SEARCH);
        data[CAP_TO_INDEX(CAP_DAC_READ_SEARCH)].permitted &= ~CAP_TO_MASK(CAP_DAC_READ_SEARCH);
        CHILD_CHECK(syscall(SYS_capset, &header, data) == 0, "capset: %s", strerror(errno));
        guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        write_three_ways(guard, "without CAP_DAC_READ_SEARCH");
        dsh_file_guard_free(guard);
}

static void test_write_without_tmpfile(void **state)
{
        (void) state;
        in_child(without_tmpfile);
}

static void test_write_without_dac_read_search(void **state)
{
        (void) state;
        in_child(without_dac_read_search);
}

/* ----------------------------------------------------------------- errors -- */

/*
 * A read is bounded: a sparse file that claims 20 GiB is refused at once with
 * FS_TOO_LARGE naming the limit (a long-lived serve or mcp would otherwise
 * allocate what the file claims), and a range of it still reads.  The limit
 * comes from the config (fileReadLimitBytes): past it, whole reads and edits
 * are refused, ranges up to it work, and the file on disk is unchanged.
 */
static void test_read_is_bounded(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *sparse = in_workspace("sparse"), *config_path = NULL, *file = in_workspace("file");
        dsh_runtime *runtime;
        dsh_policy policy;
        int fd;

        (void) state;
        fd = open(sparse, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) 20 << 30), 0);
        close(fd);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "sparse", NULL, &error), &error, DSH_ERROR_FS_TOO_LARGE);
        assert_int_equal(dsh_file_guard_read(guard, "sparse", NULL, &error), -EFBIG);
        assert_non_null(strstr(error.message, "21474836480 bytes, over the 16777216 bytes"));
        assert_non_null(strstr(error.message, "read a range"));
        dsh_error_clear(&error);
        assert_int_equal(dsh_file_guard_read_range(guard, "sparse", (10ULL << 30), 3, &result, &error), 0);
        assert_int_equal(result.bytes, 3);
        assert_memory_equal(result.content, "\0\0\0", 3);
        dsh_file_result_clear(&result);
        guard_fixture_expect_code(dsh_file_guard_read_range(guard, "sparse", 0, (size_t) 16 << 20 | 1, NULL, &error),
                                  &error, DSH_ERROR_INVALID_INPUT);
        dsh_file_guard_free(guard);

        /* A limit of 8 bytes from the config. */
        assert_true(asprintf(&config_path, "%s/config/dsh-sandbox", fixture.scratch) > 0);
        assert_int_equal(mkdir(config_path, 0700) == 0 || errno == EEXIST, 1);
        free(config_path);
        assert_true(asprintf(&config_path, "%s/config/dsh-sandbox/config.json", fixture.scratch) > 0);
        test_write_file(config_path, "{\"fileReadLimitBytes\": 8}\n");
        test_write_file(file, "0123456789\n");
        runtime = guard_fixture_runtime(&fixture, NULL, NULL);
        guard_fixture_policy(&fixture, runtime, DSH_MODE_WORKSPACE_WRITE, &policy);
        assert_int_equal(dsh_file_guard_new(runtime, &policy, &guard, &error), 0);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "file", NULL, &error), &error, DSH_ERROR_FS_TOO_LARGE);
        guard_fixture_expect_code(dsh_file_guard_edit(guard, "file", "0", "x", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_TOO_LARGE);
        assert_int_equal(dsh_file_guard_read_range(guard, "file", 2, 0, &result, &error), 0);
        assert_int_equal(result.bytes, 8);
        assert_string_equal(result.content, "23456789");
        dsh_file_result_clear(&result);
        assert_int_equal(dsh_file_guard_read_range(guard, "file", 9, 8, &result, &error), 0);
        assert_string_equal(result.content, "9\n");
        dsh_file_result_clear(&result);
        assert_int_equal(dsh_file_guard_read_range(guard, "file", 100, 8, &result, &error), 0);
        assert_int_equal(result.bytes, 0);
        dsh_file_result_clear(&result);
        assert_true(file_is(fixture.workspace, "file", "0123456789\n"));
        unlink(config_path);
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(config_path);
        free(sparse);
        free(file);
}

static void test_errors(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_error error = DSH_ERROR_INIT;
        char *file = in_workspace("file"), *before, *expected = NULL;

        (void) state;
        test_write_file(file, "one two two\n");
        before = guard_fixture_snapshot(fixture.workspace);
        /* Bad input. */
        guard_fixture_expect_code(dsh_file_guard_write(guard, "", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_INVALID_INPUT);
        guard_fixture_expect_code(dsh_file_guard_remove(guard, "tree/..", DSH_FILE_REMOVE_RECURSIVE, NULL, &error),
                                  &error, DSH_ERROR_INVALID_INPUT);
        guard_fixture_expect_code(dsh_file_guard_edit(guard, "file", "", "x", 0, NULL, &error), &error,
                                  DSH_ERROR_INVALID_INPUT);
        /* Not found, not a directory (a path through a regular file), is a directory, already exists. */
        guard_fixture_expect_code(dsh_file_guard_edit(guard, "missing", "a", "b", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_NOT_FOUND);
        guard_fixture_expect_code(dsh_file_guard_remove(guard, "missing/x", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_NOT_FOUND);
        guard_fixture_expect_code(dsh_file_guard_mkdir(guard, "missing/x", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_NOT_FOUND);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "missing", NULL, &error), &error, DSH_ERROR_FS_NOT_FOUND);
        guard_fixture_expect_code(dsh_file_guard_write(guard, "file/x", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_FS_NOT_A_DIRECTORY);
        guard_fixture_expect_code(dsh_file_guard_write(guard, "tree", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_FS_IS_A_DIRECTORY);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "tree", NULL, &error), &error,
                                  DSH_ERROR_FS_IS_A_DIRECTORY);
        guard_fixture_expect_code(dsh_file_guard_write(guard, "file", "x", 1, DSH_FILE_WRITE_CREATE_ONLY, NULL,
                                                       &error),
                                  &error, DSH_ERROR_FS_ALREADY_EXISTS);
        guard_fixture_expect_code(dsh_file_guard_mkdir(guard, "tree", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_ALREADY_EXISTS);
        guard_fixture_expect_code(dsh_file_guard_mkdir(guard, "file", DSH_FILE_MKDIR_PARENTS, NULL, &error), &error,
                                  DSH_ERROR_FS_ALREADY_EXISTS);
        guard_fixture_expect_code(dsh_file_guard_move(guard, "file", "tree", DSH_FILE_MOVE_NO_REPLACE, NULL, &error),
                                  &error, DSH_ERROR_FS_ALREADY_EXISTS);
        guard_fixture_expect_code(dsh_file_guard_remove(guard, "tree", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_NOT_EMPTY);
        /* Edit: the text must occur, and once unless every occurrence is asked for. */
        guard_fixture_expect_code(dsh_file_guard_edit(guard, "file", "three", "3", 0, NULL, &error), &error,
                                  DSH_ERROR_FS_TEXT_NOT_FOUND);
        assert_true(dsh_file_guard_edit(guard, "file", "two", "2", 0, NULL, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_FS_TEXT_NOT_UNIQUE);
        assert_true(asprintf(&expected, "cannot edit \"file\": the text to replace occurs 2 times in \"%s\"; give more "
                                        "context to make it unique, or replace every occurrence",
                             file) > 0);
        assert_string_equal(error.message, expected);
        dsh_error_clear(&error);
        assert_snapshot(before, fixture.workspace);
        free(expected);
        free(before);
        free(file);
        dsh_file_guard_free(guard);
}

/* Edit with every occurrence, a file without write permission, a non-regular file. */
static void test_edit_all_and_unwritable(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *file = in_workspace("file"), *fifo = in_workspace("fifo");

        (void) state;
        test_write_file(file, "aXbXc\n");
        assert_int_equal(dsh_file_guard_edit(guard, "file", "X", "--", DSH_FILE_EDIT_ALL, &result, &error), 0);
        assert_int_equal(result.replacements, 2);
        assert_int_equal(result.bytes, 8);
        assert_content(file, "a--b--c\n");
        dsh_file_result_clear(&result);
        assert_int_equal(chmod(file, 0444), 0);
        guard_fixture_expect_code(dsh_file_guard_write(guard, "file", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_SYSTEM);
        guard_fixture_expect_code(dsh_file_guard_edit(guard, "file", "a", "b", 0, NULL, &error), &error,
                                  DSH_ERROR_SYSTEM);
        assert_content(file, "a--b--c\n");
        assert_int_equal(mkfifo(fifo, 0644), 0);
        guard_fixture_expect_code(dsh_file_guard_write(guard, "fifo", "x", 1, 0, NULL, &error), &error,
                                  DSH_ERROR_INVALID_INPUT);
        guard_fixture_expect_code(dsh_file_guard_read(guard, "fifo", NULL, &error), &error, DSH_ERROR_INVALID_INPUT);
        free(fifo);
        free(file);
        dsh_file_guard_free(guard);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_each_operation_under_each_mode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_denial_text_is_exact, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_paths_extra_roots_and_temp_area, setup, teardown),
                cmocka_unit_test_setup_teardown(test_absolute_outside_and_dot_dot, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_directory_pointing_out, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dangling_symlink_as_create_target, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hard_link_of_an_outside_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_proc_self_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected_subpaths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_own_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_holding_a_runner_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_racing_symlink_swap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_full_disk_keeps_the_old_content, setup, teardown),
                cmocka_unit_test_setup_teardown(test_atomic_write_leaves_nothing_behind, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_without_tmpfile, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_without_dac_read_search, setup, teardown),
                cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_is_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_edit_all_and_unwritable, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
