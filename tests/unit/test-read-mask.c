/* SPDX-License-Identifier: MIT */
/*
 * Read grants that leave masks out (core/read-mask.h), on the real kernel:
 * a tree in the scratch, a ruleset built with dsh_read_mask_grant() and
 * enforced in a forked child, each claim of read-mask.c's opening tried
 * there.  The masked file, a symlink to it, the same file through
 * /proc/self/root, a name created after the enforcement (beside the masks,
 * and as a new match of a wildcard) all EACCES; siblings, the ".pub" beside
 * a key and the rest of "/" read; a rename or link of the mask into a
 * writable directory is refused and nothing moved on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/landlock.h"
#include "core/own-domain.h"
#include "core/read-mask.h"
#include "test-landlock.h"
#include "test-support.h"

#define READ_ACCESS (DSH_LANDLOCK_ACCESS_FS_EXECUTE | DSH_LANDLOCK_ACCESS_FS_READ_FILE | \
                     DSH_LANDLOCK_ACCESS_FS_READ_DIR)

static char *scratch;   /* canonical */
static char *masked[4];
static char *closed[2];

static char *at(const char *name)
{
        return test_path_join(scratch, name);
}

static int setup(void **state)
{
        char *made = test_make_directory(NULL);
        char *command = NULL;

        (void) state;
        scratch = realpath(made, NULL);
        free(made);
        assert_non_null(scratch);
        assert_true(asprintf(&command,
                             "cd '%s' && mkdir -p home/.ssh home/.aws home/docs work && "
                             "echo KEY > home/.ssh/id_ed25519 && echo PUB > home/.ssh/id_ed25519.pub && "
                             "echo HOSTS > home/.ssh/known_hosts && echo AWS > home/.aws/credentials && "
                             "echo DOC > home/docs/readme && ln -s .ssh/id_ed25519 home/key-link",
                             scratch) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        masked[0] = at("home/.ssh/id_ed25519");
        masked[1] = at("home/.aws");
        masked[2] = at("home/.netrc");  /* absent at the start */
        masked[3] = NULL;
        closed[0] = at("home/.ssh");    /* the wildcard .ssh/id_*'s directory */
        closed[1] = NULL;
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        for (size_t i = 0; masked[i]; i++)
                free(masked[i]);
        free(closed[0]);
        test_remove_tree(scratch);
        return 0;
}

/* 0, or the errno of opening `path` (relative to the scratch unless absolute) for reading. */
static int read_errno(const char *path)
{
        char *full = path[0] == '/' ? strdup(path) : at(path);
        int fd = open(full, O_RDONLY | O_CLOEXEC);
        int result = fd < 0 ? errno : 0;
        char byte;

        if (fd >= 0 && read(fd, &byte, 1) < 0)
                result = errno;
        if (fd >= 0)
                close(fd);
        free(full);
        return result;
}

static int list_errno(const char *path)
{
        char *full = at(path);
        DIR *directory = opendir(full);
        int result = directory ? 0 : errno;

        if (directory)
                closedir(directory);
        free(full);
        return result;
}

struct expectation {
        const char *path;
        int error;      /* the errno of reading it; 0: readable */
};

/* In the child: how many expectations failed, each printed. */
static int check_reads(const struct expectation *expected, size_t count)
{
        int failures = 0;

        for (size_t i = 0; i < count; i++) {
                int error = read_errno(expected[i].path);

                if (error != expected[i].error) {
                        printf("read %s: errno %d, expected %d\n", expected[i].path, error, expected[i].error);
                        failures++;
                }
        }
        return failures;
}

/*
 * Enforces the mask in this (child) process: read everywhere but the masks,
 * read-write on work/ (a writable root of its own, beside them).
 */
static int enforce_mask(const dsh_read_mask *mask)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        const char *failed_path = NULL, *failed_step = NULL;
        char *work = at("work");
        int result = dsh_landlock_ruleset_open(&ruleset);

        if (result == 0)
                result = dsh_read_mask_grant(&ruleset, READ_ACCESS, mask, &failed_path);
        if (result >= 0)
                result = dsh_landlock_ruleset_grant(&ruleset, work, true, true, &failed_step);
        if (result >= 0)
                result = dsh_landlock_enforce(ruleset.fd);
        if (result < 0)
                printf("enforce: %s (at %s)\n", strerror(-result), failed_path ? failed_path : "?");
        free(work);
        return result < 0 ? 1 : 0;
}

/* Runs `body` in a forked child after `enforce`; asserts it found nothing wrong. */
static void in_confined_child(int (*enforce)(const dsh_read_mask *mask), int (*body)(void))
{
        dsh_read_mask mask = { masked, closed, 0 };
        pid_t pid;
        int status;

        fflush(stdout);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int failures = enforce(&mask);

                if (failures == 0)
                        failures = body();
                fflush(stdout);
                _exit(failures > 90 ? 90 : failures);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static int reads_at_the_start(void)
{
        static const struct expectation expected[] = {
                { "home/.ssh/id_ed25519", EACCES },
                { "home/.aws/credentials", EACCES },
                { "home/key-link", EACCES },            /* a symlink to the mask: judged on its target */
                { "home/.ssh/id_ed25519.pub", 0 },
                { "home/.ssh/known_hosts", 0 },
                { "home/docs/readme", 0 },
                { "/etc/passwd", 0 },
                { "/proc/self/status", 0 },
        };
        char through_proc[PATH_MAX];
        int failures = check_reads(expected, sizeof(expected) / sizeof(expected[0]));

        /* The same inode by the magic link of its own root: the walk is the same, no grant on it. */
        snprintf(through_proc, sizeof(through_proc), "/proc/self/root%s/home/.ssh/id_ed25519", scratch);
        if (read_errno(through_proc) != EACCES) {
                printf("read %s: not EACCES\n", through_proc);
                failures++;
        }
        /* The directories on the way, and a masked one, list (names only). */
        if (list_errno("home") != 0 || list_errno("home/.ssh") != 0 || list_errno("home/.aws") != 0) {
                printf("a directory on the way does not list\n");
                failures++;
        }
        return failures;
}

static void test_masks_unreadable_rest_readable(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        in_confined_child(enforce_mask, reads_at_the_start);
}

/* Moving or linking the mask to where work/ would grant it: refused (no REFER, no REMOVE beside it). */
static int moves_refused(void)
{
        char *key = at("home/.ssh/id_ed25519");
        char *moved = at("work/key");
        char *directory = at("home/.ssh");
        char *directory_moved = at("work/ssh");
        int failures = 0;

        if (rename(key, moved) == 0 || link(key, moved) == 0 || rename(directory, directory_moved) == 0 ||
            symlink(key, moved) != 0 || read_errno(moved) != EACCES) {
                printf("a rename or link of the mask succeeded, or its symlink reads\n");
                failures++;
        }
        free(key);
        free(moved);
        free(directory);
        free(directory_moved);
        return failures;
}

static void test_rename_and_link_refused(void **state)
{
        char *key = at("home/.ssh/id_ed25519");
        char *moved = at("work/ssh");
        char *content;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        in_confined_child(enforce_mask, moves_refused);
        /* Judged on disk: the key is where it was, with what it held, and nothing of it reached work/. */
        content = test_read_file(key);
        assert_string_equal(content, "KEY\n");
        assert_false(test_path_exists(moved));
        free(content);
        free(key);
        free(moved);
}

static int reads_after_creation(void)
{
        static const struct expectation expected[] = {
                { "home/.netrc", EACCES },              /* the absent mask, created during the call */
                { "home/.ssh/id_new", EACCES },         /* a new match of the wildcard */
                { "home/.ssh/config", EACCES },         /* any new name in a closed directory */
                { "home/later", EACCES },               /* any new name in a directory on the way */
                { "home/.aws/config", EACCES },         /* inside a masked directory */
                { "home/docs/later", 0 },               /* beneath a directory granted whole */
        };

        return check_reads(expected, sizeof(expected) / sizeof(expected[0]));
}

static void test_names_created_after_enforcement_unreadable(void **state)
{
        static const char *const created[] = { "home/.netrc", "home/.ssh/id_new", "home/.ssh/config",
                                               "home/later", "home/.aws/config", "home/docs/later" };
        int ready[2], go_ahead[2];
        char byte = 0;
        pid_t pid;
        int status;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(pipe(ready), 0);
        assert_int_equal(pipe(go_ahead), 0);
        fflush(stdout);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dsh_read_mask mask = { masked, closed, 0 };
                int failures = enforce_mask(&mask);

                if (write(ready[1], &byte, 1) != 1 || read(go_ahead[0], &byte, 1) != 1)
                        _exit(99);
                if (failures == 0)
                        failures = reads_after_creation();
                fflush(stdout);
                _exit(failures);
        }
        /* Created by the test, outside the domain, once the child's ruleset is in force. */
        assert_int_equal(read(ready[0], &byte, 1), 1);
        for (size_t i = 0; i < sizeof(created) / sizeof(created[0]); i++) {
                char *path = at(created[i]);

                test_write_file(path, "LATER\n");
                free(path);
        }
        assert_int_equal(write(go_ahead[1], &byte, 1), 1);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        close(ready[0]);
        close(ready[1]);
        close(go_ahead[0]);
        close(go_ahead[1]);
}

/* The own domain of dsh-sandbox-exec with a mask: masks unreadable, writes untouched (not handled). */
static int enter_own_domain(const dsh_read_mask *mask)
{
        const char *failed_path = NULL;
        int result = dsh_landlock_enter_own_domain(mask, &failed_path);

        if (result < 0)
                printf("own domain: %s (at %s)\n", strerror(-result), failed_path ? failed_path : "?");
        return result < 0 ? 1 : 0;
}

static int own_domain_reads_and_writes(void)
{
        char *written = at("home/docs/written");
        int failures = reads_at_the_start();

        test_write_file(written, "W\n");
        if (read_errno(written) == 0) {
                /* Beneath a directory granted whole: a file made there reads back. */
        } else {
                printf("a file written beneath a granted directory does not read back\n");
                failures++;
        }
        free(written);
        return failures;
}

static void test_own_domain_holds_the_mask(void **state)
{
        (void) state;
        if (!dsh_landlock_own_domain_available())
                skip();
        in_confined_child(enter_own_domain, own_domain_reads_and_writes);
}

/* Too many entries: -E2BIG naming the directory, and nothing was to be enforced. */
static void test_rule_limit_reported(void **state)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        dsh_read_mask mask = { masked, closed, 3 };
        const char *failed_path = NULL;
        int result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(dsh_landlock_ruleset_open(&ruleset), 0);
        result = dsh_read_mask_grant(&ruleset, READ_ACCESS, &mask, &failed_path);
        assert_int_equal(result, -E2BIG);
        assert_non_null(failed_path);
        /* "/" has more than three entries: the first directory enumerated is the one named. */
        assert_string_equal(failed_path, "/");
        dsh_landlock_ruleset_close(&ruleset);
}

/* No mask: one grant on "/", as before masks. */
static void test_no_mask_one_rule(void **state)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        dsh_read_mask none = { NULL, NULL, 0 };

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(dsh_landlock_ruleset_open(&ruleset), 0);
        assert_int_equal(dsh_read_mask_grant(&ruleset, READ_ACCESS, &none, NULL), 1);
        assert_int_equal(dsh_read_mask_grant(&ruleset, READ_ACCESS, NULL, NULL), 1);
        dsh_landlock_ruleset_close(&ruleset);
}

/* A directory on the way swapped for a symlink since the plan: refused, never followed. */
static void test_symlink_on_the_way_refused(void **state)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        char *aside = at("home-real");
        char *home = at("home");
        char *expected = at("home");
        dsh_read_mask mask = { masked, closed, 0 };
        const char *failed_path = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(rename(home, aside), 0);
        assert_int_equal(symlink("home-real", home), 0);
        assert_int_equal(dsh_landlock_ruleset_open(&ruleset), 0);
        assert_int_equal(dsh_read_mask_grant(&ruleset, READ_ACCESS, &mask, &failed_path), -ELOOP);
        assert_string_equal(failed_path, expected);
        dsh_landlock_ruleset_close(&ruleset);
        free(aside);
        free(home);
        free(expected);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_masks_unreadable_rest_readable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rename_and_link_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_names_created_after_enforcement_unreadable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_own_domain_holds_the_mask, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_limit_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_mask_one_rule, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_on_the_way_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
