/* SPDX-License-Identifier: MIT */
/*
 * The file guard and the masks (src/fs/file-guard.c, docs/secrets.md): in a
 * throwaway home (the guard fixture's HOME), planted with credentials that
 * the default masked entries name, every operation on a masked path is
 * FS_SANDBOX_DENIED with the text of every denial, in both confined modes,
 * whether the masked name exists or not; a symlink from the workspace to a
 * credential is refused as the credential; a move or removal of a
 * directory holding a mask, and a move onto a mask, are refused; each
 * denial leaves the home as it was, snapshot for snapshot.  What is not
 * masked — a public key, known_hosts — still reads, and danger-full-access
 * masks nothing.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/file-guard.h"
#include "guard-fixture.h"
#include "test-support.h"

static guard_fixture fixture;
static char *home;

/* HOME/RELATIVE holding `content`, its directories made on the way. */
static void plant(const char *relative, const char *content)
{
        char *path = guard_fixture_path(home, relative);

        for (char *slash = strchr(path + strlen(home) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
                *slash = '/';
        }
        test_write_file(path, content);
        free(path);
}

static int setup(void **state)
{
        (void) state;
        guard_fixture_setup(&fixture);
        home = strdup(getenv("HOME"));
        assert_int_equal(mkdir(home, 0700) == 0 || errno == EEXIST, 1);
        plant(".aws/credentials", "aws-secret\n");
        plant(".ssh/id_ed25519", "private key\n");
        plant(".ssh/id_ed25519.pub", "public key\n");
        plant(".ssh/known_hosts", "known\n");
        plant(".netrc", "machine x password y\n");
        plant(".config/gh/hosts.yml", "oauth_token: z\n");
        plant(".claude/.credentials.json", "{}\n");
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(home);
        guard_fixture_teardown(&fixture);
        return 0;
}

/* A guard whose workspace is `root` (the home itself, for the cases where a mask lies in a writable root). */
static dsh_file_guard *guard_over(const char *root, dsh_mode mode)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;

        request.has_mode = true;
        request.mode = mode;
        request.workspace_root = root;
        if (dsh_runtime_resolve(fixture.runtime, &request, &policy, &error) < 0)
                fail_msg("dsh_runtime_resolve: %s", error.message);
        if (dsh_file_guard_new(fixture.runtime, &policy, &guard, &error) < 0)
                fail_msg("dsh_file_guard_new: %s", error.message);
        dsh_policy_clear(&policy);
        return guard;
}

static void expect_read_denied(dsh_file_guard *guard, const char *path, dsh_mode mode)
{
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;

        guard_fixture_expect_denied(dsh_file_guard_read(guard, path, &result, &error), &error, path, mode);
        assert_null(result.content);
        guard_fixture_expect_denied(dsh_file_guard_read_range(guard, path, 0, 4, &result, &error), &error, path,
                                    mode);
        assert_null(result.content);
}

static void test_reads_of_masks_are_denied_in_both_modes(void **state)
{
        static const char *const masked[] = {
                ".aws/credentials", ".aws", ".aws/absent", ".ssh/id_ed25519", ".ssh/id_rsa", ".netrc",
                ".config/gh/hosts.yml", ".claude/.credentials.json", ".git-credentials", ".kube/config", NULL,
        };
        static const dsh_mode modes[] = { DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE };

        (void) state;
        for (size_t m = 0; m < 2; m++) {
                dsh_file_guard *guard = guard_fixture_guard(&fixture, modes[m]);

                for (const char *const *relative = masked; *relative; relative++) {
                        char *path = guard_fixture_path(home, *relative);

                        expect_read_denied(guard, path, modes[m]);
                        free(path);
                }
                dsh_file_guard_free(guard);
        }
}

static void expect_reads(dsh_file_guard *guard, const char *relative, const char *content)
{
        char *path = guard_fixture_path(home, relative);
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_file_guard_read(guard, path, &result, &error) < 0)
                fail_msg("read %s: %s", path, error.message);
        assert_string_equal(result.content, content);
        dsh_file_result_clear(&result);
        free(path);
}

static void test_what_is_not_masked_still_reads(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_READ_ONLY);

        (void) state;
        expect_reads(guard, ".ssh/id_ed25519.pub", "public key\n");
        expect_reads(guard, ".ssh/known_hosts", "known\n");
        dsh_file_guard_free(guard);
        /* danger-full-access confines nothing: its plan is empty. */
        guard = guard_fixture_guard(&fixture, DSH_MODE_DANGER_FULL_ACCESS);
        expect_reads(guard, ".aws/credentials", "aws-secret\n");
        dsh_file_guard_free(guard);
}

/* A name in the workspace that leads to a credential is the credential; the denial names what was asked. */
static void test_a_symlink_to_a_mask_is_denied(void **state)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        char *link = guard_fixture_path(fixture.workspace, "innocent");
        char *directory_link = guard_fixture_path(fixture.workspace, "keys");
        char *through = guard_fixture_path(directory_link, "id_ed25519");
        char *target = guard_fixture_path(home, ".aws/credentials");
        char *ssh = guard_fixture_path(home, ".ssh");

        (void) state;
        assert_int_equal(symlink(target, link), 0);
        assert_int_equal(symlink(ssh, directory_link), 0);
        expect_read_denied(guard, link, DSH_MODE_WORKSPACE_WRITE);
        expect_read_denied(guard, through, DSH_MODE_WORKSPACE_WRITE);
        dsh_file_guard_free(guard);
        free(link);
        free(directory_link);
        free(through);
        free(target);
        free(ssh);
}

/*
 * The home as the workspace: every mask is inside the writable root.  A
 * write, an edit, a removal, a move away of a credential or of a directory
 * holding one (a later call would find it unmasked under the new name), a
 * move onto one, a mkdir of an absent one: each denied, the home unchanged.
 */
static void test_changes_to_masks_in_a_writable_home_are_denied(void **state)
{
        dsh_file_guard *guard = guard_over(home, DSH_MODE_WORKSPACE_WRITE);
        const dsh_mode mode = DSH_MODE_WORKSPACE_WRITE;
        char *before = guard_fixture_snapshot(home);
        char *credentials = guard_fixture_path(home, ".aws/credentials");
        char *aws = guard_fixture_path(home, ".aws");
        char *ssh = guard_fixture_path(home, ".ssh");
        char *key = guard_fixture_path(home, ".ssh/id_ed25519");
        char *elsewhere = guard_fixture_path(home, "elsewhere");
        char *kube = guard_fixture_path(home, ".kube");
        char *plain = guard_fixture_path(home, "plain");
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *after;

        (void) state;
        guard_fixture_expect_denied(dsh_file_guard_write(guard, credentials, "x", 1, 0, &result, &error), &error,
                                    credentials, mode);
        guard_fixture_expect_denied(dsh_file_guard_edit(guard, credentials, "aws", "gcp", 0, &result, &error), &error,
                                    credentials, mode);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, credentials, 0, &result, &error), &error,
                                    credentials, mode);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, ssh, DSH_FILE_REMOVE_RECURSIVE, &result, &error),
                                    &error, ssh, mode);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, credentials, elsewhere, 0, &result, &error), &error,
                                    credentials, mode);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, aws, elsewhere, 0, &result, &error), &error, aws,
                                    mode);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, ssh, elsewhere, 0, &result, &error), &error, ssh,
                                    mode);
        guard_fixture_expect_denied(dsh_file_guard_mkdir(guard, kube, 0, &result, &error), &error, kube, mode);
        after = guard_fixture_snapshot(home);
        assert_string_equal(before, after);
        free(after);
        /* A move onto a credential would replace it: denied, naming the destination. */
        test_write_file(plain, "attacker's key\n");
        guard_fixture_expect_denied(dsh_file_guard_move(guard, plain, key, 0, &result, &error), &error, key, mode);
        after = test_read_file(key);
        assert_string_equal(after, "private key\n");
        free(after);
        /* A new file beside the masks is the workspace's own. */
        if (dsh_file_guard_write(guard, elsewhere, "mine", 4, 0, &result, &error) < 0)
                fail_msg("write %s: %s", elsewhere, error.message);
        dsh_file_result_clear(&result);
        unlink(elsewhere);
        unlink(plain);
        dsh_file_guard_free(guard);
        free(before);
        free(credentials);
        free(aws);
        free(ssh);
        free(key);
        free(elsewhere);
        free(kube);
        free(plain);
}

/*
 * A mask reached through a symlink in a writable home (~/.aws -> a
 * directory elsewhere): the plan masks the target, and removing, moving or
 * renaming over the link would repoint ~/.aws for every later call while the
 * credentials stay where they were.  Each is denied; the link is left.
 */
static void test_a_symlinked_route_to_a_mask_is_kept(void **state)
{
        char *elsewhere = guard_fixture_path(fixture.outside, "aws-data");
        char *credentials = guard_fixture_path(elsewhere, "credentials");
        char *aws = guard_fixture_path(home, ".aws");
        char *moved = guard_fixture_path(home, "aws-moved");
        char *plain = guard_fixture_path(home, "plain-file");
        char target[PATH_MAX];
        const dsh_mode mode = DSH_MODE_WORKSPACE_WRITE;
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard;
        ssize_t length;

        (void) state;
        test_remove_tree(strdup(aws));
        assert_int_equal(mkdir(elsewhere, 0700), 0);
        test_write_file(credentials, "aws-secret\n");
        assert_int_equal(symlink(elsewhere, aws), 0);
        test_write_file(plain, "x\n");
        guard = guard_over(home, mode);
        expect_read_denied(guard, credentials, mode);
        guard_fixture_expect_denied(dsh_file_guard_remove(guard, aws, 0, &result, &error), &error, aws, mode);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, aws, moved, 0, &result, &error), &error, aws, mode);
        guard_fixture_expect_denied(dsh_file_guard_move(guard, plain, aws, 0, &result, &error), &error, aws, mode);
        length = readlink(aws, target, sizeof(target) - 1);
        assert_true(length > 0);
        target[length] = '\0';
        assert_string_equal(target, elsewhere);
        assert_false(test_path_exists(moved));
        dsh_file_guard_free(guard);
        free(elsewhere);
        free(credentials);
        free(aws);
        free(moved);
        free(plain);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_reads_of_masks_are_denied_in_both_modes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_what_is_not_masked_still_reads, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_symlink_to_a_mask_is_denied, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changes_to_masks_in_a_writable_home_are_denied, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_a_symlinked_route_to_a_mask_is_kept, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
