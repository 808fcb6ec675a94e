/* SPDX-License-Identifier: MIT */
/*
 * What the sandbox trusts as a runner or a grant: a bwrap only where no
 * confined command could have written it, and a Landlock grant on a checked
 * canonical root never through a symlink swapped in since.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "provider/backend.h"
#include "provider/bwrap-trust.h"
#include "core/landlock.h"
#include "test-support.h"

static void copy_file(const char *from, const char *to)
{
        char *command = NULL;

        assert_true(asprintf(&command, "cp '%s' '%s'", from, to) > 0);
        assert_int_equal(system(command), 0);
        free(command);
        assert_int_equal(chmod(to, 0755), 0);
}

static void test_bwrap_trusted_only_where_root_alone_writes(void **state)
{
        char *scratch = test_make_directory(NULL);
        char *private_directory = test_path_join(scratch, "bin");
        char *planted = test_path_join(private_directory, "bwrap");
        char *trusted;

        (void) state;
        if (geteuid() != 0 || access("/usr/bin/bwrap", X_OK) < 0) {
                printf("# SKIP: needs root and /usr/bin/bwrap to build the ownership cases\n");
                test_remove_tree(scratch);
                skip();
        }
        trusted = dsh_bwrap_trusted_binary("/usr/bin/bwrap");
        assert_non_null(trusted);
        free(trusted);
        /* Root-owned, mode 0755, in a root-owned 0700 directory — but beneath the world-writable /var/tmp. */
        assert_int_equal(mkdir(private_directory, 0700), 0);
        copy_file("/usr/bin/bwrap", planted);
        assert_null(dsh_bwrap_trusted_binary(planted));
        /* A group-writable binary is refused even in /usr/bin's company. */
        assert_int_equal(chmod(planted, 0775), 0);
        assert_null(dsh_bwrap_trusted_binary(planted));
        /* Owned by someone else than root. */
        assert_int_equal(chmod(planted, 0755), 0);
        assert_int_equal(chown(planted, 65534, 65534), 0);
        assert_null(dsh_bwrap_trusted_binary(planted));
        assert_null(dsh_bwrap_trusted_binary("/nonexistent/bwrap"));
        free(planted);
        free(private_directory);
        test_remove_tree(scratch);
}

static void test_canonical_grant_refuses_a_swapped_in_symlink(void **state)
{
        char *scratch = test_make_directory(NULL);
        char *real = test_path_join(scratch, "real");
        char *link = test_path_join(scratch, "link");
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        const char *failed_step = "";

        (void) state;
        if (dsh_landlock_abi() < DSH_LANDLOCK_MINIMUM_ABI) {
                printf("# SKIP: this kernel does not enforce Landlock ABI >= 3\n");
                test_remove_tree(scratch);
                skip();
        }
        assert_int_equal(mkdir(real, 0755), 0);
        assert_int_equal(symlink(real, link), 0);
        assert_int_equal(dsh_landlock_ruleset_open(&ruleset), 0);
        assert_int_equal(dsh_landlock_ruleset_grant(&ruleset, real, true, true, &failed_step), 0);
        assert_int_equal(dsh_landlock_ruleset_grant(&ruleset, link, true, true, &failed_step), -ELOOP);
        assert_string_equal(failed_step, "open");
        /* The launcher's contract follows symlinks, as upstream does. */
        assert_int_equal(dsh_landlock_ruleset_grant(&ruleset, link, true, false, &failed_step), 0);
        dsh_landlock_ruleset_close(&ruleset);
        free(real);
        free(link);
        test_remove_tree(scratch);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bwrap_trusted_only_where_root_alone_writes),
                cmocka_unit_test(test_canonical_grant_refuses_a_swapped_in_symlink),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
