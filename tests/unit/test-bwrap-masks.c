/* SPDX-License-Identifier: MIT */
/*
 * bwrap's part of the masks (provider/bwrap-masks.c) as a function of the
 * plan, the mode and the roots: what is mounted, what is pinned, what goes
 * to dsh-sandbox-exec's inner layer, what is not held and said, what is
 * refused.  The plan is made by hand here (shield/masks.c's own tests make
 * it from entries); the mask file is a real file in a temp directory.  That
 * the mounts do what this plans is judged on the real bwrap by
 * tests/reach/test_bwrap_masks.py.
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

#include "config.h"
#include "dsh-sandbox/sandbox.h"
#include "core/landlock.h"
#include "provider/bwrap-masks.h"
#include "test-support.h"

#define MASK_COUNT 7

struct fixture {
        char *scratch;          /* canonical */
        char *home;             /* scratch/home: the workspace */
        char *outside;          /* scratch/outside: in no root */
        char *launchers;        /* scratch/launchers, with the mask file */
        char *mask_file;
        dsh_protections protections;
        dsh_prepared_policy prepared;
        dsh_bwrap_masks masks;
        char **pins;
        char **argv;
        dsh_error error;
};

static void add_mask(struct fixture *f, size_t index, const char *directory, const char *name, dsh_mask_kind kind)
{
        f->prepared.masks.masks[index].path = test_path_join(directory, name);
        f->prepared.masks.masks[index].kind = kind;
}

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char *made = test_make_directory(NULL);
        dsh_mask_plan *plan;

        f->scratch = realpath(made, NULL);
        free(made);
        f->home = test_path_join(f->scratch, "home");
        f->outside = test_path_join(f->scratch, "outside");
        f->launchers = test_path_join(f->scratch, "launchers");
        f->mask_file = test_path_join(f->launchers, DSH_BWRAP_MASK_FILE_NAME);
        assert_int_equal(mkdir(f->home, 0755), 0);
        assert_int_equal(mkdir(f->outside, 0755), 0);
        assert_int_equal(mkdir(f->launchers, 0755), 0);
        test_write_file(f->mask_file, "");
        assert_int_equal(chmod(f->mask_file, 0444), 0);
        f->protections = (dsh_protections) DSH_PROTECTIONS_INIT;
        f->protections.launcher_directory = strdup(f->launchers);
        f->prepared = (dsh_prepared_policy) DSH_PREPARED_POLICY_INIT;
        f->prepared.policy.mode = DSH_MODE_WORKSPACE_WRITE;
        f->prepared.policy.workspace_root = strdup(f->home);
        f->masks = (dsh_bwrap_masks) DSH_BWRAP_MASKS_INIT;
        f->error = (dsh_error) DSH_ERROR_INIT;
        plan = &f->prepared.masks;
        plan->masks = calloc(MASK_COUNT, sizeof(*plan->masks));
        plan->count = MASK_COUNT;
        add_mask(f, 0, f->home, ".ssh/id_ed25519", DSH_MASK_FILE);
        add_mask(f, 1, f->home, ".config/gh/hosts.yml", DSH_MASK_FILE);
        add_mask(f, 2, f->home, ".aws", DSH_MASK_DIRECTORY);
        add_mask(f, 3, f->home, ".kube", DSH_MASK_ABSENT);
        add_mask(f, 4, f->outside, ".netrc", DSH_MASK_FILE);
        add_mask(f, 5, f->outside, ".docker/config.json", DSH_MASK_ABSENT);
        add_mask(f, 6, "/tmp/dsh-sandbox-unit-not-in-view", "secret", DSH_MASK_FILE);
        assert_int_equal(dsh_strv_append(&plan->closed_directories, f->home), 0);
        free(plan->closed_directories[0]);
        plan->closed_directories[0] = test_path_join(f->home, ".ssh");
        assert_int_equal(dsh_strv_append(&plan->closed_directories, f->outside), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        dsh_bwrap_masks_clear(&f->masks);
        dsh_prepared_policy_clear(&f->prepared);
        dsh_protections_clear(&f->protections);
        dsh_strv_free(f->pins);
        dsh_strv_free(f->argv);
        dsh_error_clear(&f->error);
        test_remove_tree(f->scratch);
        free(f->home);
        free(f->outside);
        free(f->launchers);
        free(f->mask_file);
        free(f);
        return 0;
}

static char *path_in(const char *directory, const char *name)
{
        return test_path_join(directory, name);
}

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* The words of `argv` joined by spaces, for comparing a whole sequence at once. */
static char *joined(char *const *argv)
{
        size_t length = 1;
        char *text;

        for (char *const *word = argv; word && *word; word++)
                length += strlen(*word) + 1;
        text = calloc(1, length);
        for (char *const *word = argv; word && *word; word++) {
                if (word != argv)
                        strcat(text, " ");
                strcat(text, *word);
        }
        return text;
}

static int plan(struct fixture *f)
{
        return dsh_bwrap_masks_plan(&f->masks, &f->protections, &f->prepared, NULL, &f->pins, &f->error);
}

static void test_workspace_write_mounts_pins_and_hands_on(void **state)
{
        struct fixture *f = *state;
        char *config = path_in(f->home, ".config"), *gh = path_in(f->home, ".config/gh");
        char *ssh = path_in(f->home, ".ssh"), *expected = NULL, *words;

        assert_int_equal(plan(f), 0);
        /* Every directory between the workspace and an existing mask in it, parents first; none outside it. */
        assert_int_equal(dsh_strv_length(f->pins), 3);
        assert_string_equal(f->pins[0], config);
        assert_string_equal(f->pins[1], gh);
        assert_string_equal(f->pins[2], ssh);
        assert_string_equal(f->masks.empty_file, f->mask_file);

        assert_int_equal(dsh_bwrap_append_last_mounts(&f->argv, NULL, &f->masks, NULL), 0);
        words = joined(f->argv);
        assert_true(asprintf(&expected, "--ro-bind %s %s --ro-bind %s %s --ro-bind %s %s "
                                        "--perms 0700 --tmpfs %s/.aws --remount-ro %s/.aws",
                             f->mask_file, f->prepared.masks.masks[0].path, f->mask_file,
                             f->prepared.masks.masks[1].path, f->mask_file, f->prepared.masks.masks[4].path,
                             f->home, f->home) > 0);
        /* The mask beneath the host's /tmp that no root brings back is not in the sandbox's view: nothing. */
        assert_string_equal(words, expected);
        free(words);
        free(expected);
        dsh_strv_free(f->argv);
        f->argv = NULL;

        assert_int_equal(dsh_bwrap_masks_append_exec_options(&f->argv, &f->masks, NULL), 0);
        words = joined(f->argv);
        if (dsh_landlock_abi() >= 2) {
                assert_true(asprintf(&expected, "--mask %s/.docker/config.json --mask-closed %s", f->outside,
                                     f->outside) > 0);
                assert_string_equal(words, expected);
                free(expected);
                assert_int_equal(dsh_strv_length(f->masks.not_held), 2);
        } else {
                assert_string_equal(words, "");
                assert_int_equal(dsh_strv_length(f->masks.not_held), 4);
        }
        free(words);
        /* Inside the writable root, a name made during the call is the command's to read: said, not passed. */
        assert_true(asprintf(&expected, "the mask %s/.kube does not exist and lies inside the writable root %s: a "
                                        "file created there during the call would be readable",
                             f->home, f->home) > 0);
        assert_true(strv_has(f->masks.not_held, expected));
        free(expected);
        assert_true(asprintf(&expected, "the names the masks of %s match lie inside the writable root %s: a file "
                                        "created there during the call would be readable", ssh, f->home) > 0);
        assert_true(strv_has(f->masks.not_held, expected));
        free(expected);
        free(config);
        free(gh);
        free(ssh);
}

static void test_read_only_pins_nothing_and_hands_every_later_name_on(void **state)
{
        struct fixture *f = *state;
        char *words, *expected = NULL;

        f->prepared.policy.mode = DSH_MODE_READ_ONLY;
        assert_int_equal(plan(f), 0);
        assert_null(f->pins);
        assert_int_equal(dsh_bwrap_masks_append_exec_options(&f->argv, &f->masks, NULL), 0);
        words = joined(f->argv);
        if (dsh_landlock_abi() >= 2) {
                assert_null(f->masks.not_held);
                assert_true(asprintf(&expected, "--mask %s/.kube --mask %s/.docker/config.json --mask-closed %s/.ssh "
                                                "--mask-closed %s", f->home, f->outside, f->home, f->outside) > 0);
                assert_string_equal(words, expected);
                free(expected);
        } else {
                assert_int_equal(dsh_strv_length(f->masks.not_held), 4);
        }
        free(words);
}

static void test_require_masks_refuses_what_is_not_held(void **state)
{
        struct fixture *f = *state;

        f->protections.require_masks = true;
        assert_true(plan(f) < 0);
        assert_int_equal(f->error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        assert_true(test_contains(f->error.message, "requireMasks"));
        assert_true(test_contains(f->error.message, "/.kube does not exist"));
}

static void test_a_masked_directory_holding_the_workspace_is_not_mounted_and_said(void **state)
{
        struct fixture *f = *state;
        char *words;

        free(f->prepared.masks.masks[2].path);
        f->prepared.masks.masks[2].path = strdup(f->scratch);
        assert_int_equal(plan(f), 0);
        assert_int_equal(dsh_bwrap_append_last_mounts(&f->argv, NULL, &f->masks, NULL), 0);
        words = joined(f->argv);
        assert_false(test_contains(words, "--tmpfs"));
        free(words);
        assert_true(test_contains(f->masks.not_held[0], "bwrap cannot present it empty without hiding the root"));
}

static void test_a_mask_beneath_the_start_directory_under_tmp_is_mounted(void **state)
{
        struct fixture *f = *state;
        char *words;

        assert_int_equal(plan(f), 0);
        assert_int_equal(dsh_bwrap_append_last_mounts(&f->argv, NULL, &f->masks,
                                                      "/tmp/dsh-sandbox-unit-not-in-view"), 0);
        words = joined(f->argv);
        assert_true(test_contains(words, " /tmp/dsh-sandbox-unit-not-in-view/secret"));
        free(words);
}

/* The hidden directories that exist come first, then the masks: nothing mounted after a mask covers it. */
static void test_hidden_directories_then_masks(void **state)
{
        struct fixture *f = *state;
        char *missing = path_in(f->scratch, "no-such-directory");
        char *hidden[] = { f->launchers, missing, NULL };
        char *words, *expected = NULL;

        assert_int_equal(plan(f), 0);
        assert_int_equal(dsh_bwrap_append_last_mounts(&f->argv, hidden, &f->masks, NULL), 0);
        words = joined(f->argv);
        assert_true(asprintf(&expected, "--tmpfs %s --remount-ro %s --ro-bind %s %s ", f->launchers, f->launchers,
                             f->mask_file, f->prepared.masks.masks[0].path) > 0);
        assert_true(strncmp(words, expected, strlen(expected)) == 0);
        assert_false(test_contains(words, missing));
        free(expected);
        free(words);
        free(missing);
}

/* A grown, group- or other-writable, symlinked or missing mask file is a refusal naming it. */
static void test_the_mask_file_is_checked(void **state)
{
        struct fixture *f = *state;
        char *target = path_in(f->scratch, "empty");

        test_write_file(target, "");
        for (int variant = 0; variant < 4; variant++) {
                unlink(f->mask_file);
                if (variant == 0)
                        test_write_file(f->mask_file, "x");
                if (variant == 1) {
                        test_write_file(f->mask_file, "");
                        assert_int_equal(chmod(f->mask_file, 0464), 0);
                }
                if (variant == 2)
                        assert_int_equal(symlink(target, f->mask_file), 0);
                /* Missing beside the launchers, the installed one is looked for: only a host without it can say. */
                if (variant == 3 && access(DSH_SANDBOX_LIBEXECDIR "/" DSH_BWRAP_MASK_FILE_NAME, F_OK) == 0)
                        break;
                dsh_bwrap_masks_clear(&f->masks);
                dsh_error_clear(&f->error);
                assert_true(plan(f) < 0);
                assert_int_equal(f->error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
                assert_true(test_contains(f->error.message, "is missing or not an empty read-only file"));
        }
        free(target);
}

static void test_facts_name_what_is_held(void **state)
{
        struct fixture *f = *state;
        char *kube = path_in(f->home, ".kube"), *netrc = path_in(f->outside, ".netrc");
        dsh_confined_argv out = DSH_CONFINED_ARGV_INIT;

        assert_int_equal(plan(f), 0);
        assert_int_equal(dsh_bwrap_masks_report(&out, &f->masks), 0);
        assert_true(strv_has(out.masked, f->prepared.masks.masks[0].path));
        assert_true(strv_has(out.masked, netrc));
        assert_false(strv_has(out.masked, kube));
        assert_int_equal(dsh_strv_length(out.partial_reasons), dsh_strv_length(f->masks.not_held));
        dsh_confined_argv_clear(&out);
        free(kube);
        free(netrc);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_workspace_write_mounts_pins_and_hands_on, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_only_pins_nothing_and_hands_every_later_name_on, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_require_masks_refuses_what_is_not_held, setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_masked_directory_holding_the_workspace_is_not_mounted_and_said,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_a_mask_beneath_the_start_directory_under_tmp_is_mounted, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_hidden_directories_then_masks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_the_mask_file_is_checked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_facts_name_what_is_held, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
