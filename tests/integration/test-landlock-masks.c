/* SPDX-License-Identifier: MIT */
/*
 * The Landlock backend's masks through the provider (dsh_provider_spawn,
 * dsh_provider_confine): a held mask is unreadable and named in the facts;
 * a mask inside the writable root, or beneath a directory too large to
 * enumerate, is not held — the call is partial naming it, never full — and
 * under requireMasks the call is refused with that sentence.  The facts
 * also name the variables the scrub removed.  A throwaway
 * HOME in the scratch; the masks are the provider's own entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/provider.h"
#include "core/read-mask.h"
#include "test-landlock.h"
#include "test-support.h"

static char *home;       /* canonical */
static char *project;
static char *old_home;
static dsh_provider *provider;

static int setup(void **state)
{
        const char *backends[] = { "landlock", NULL };
        char *made = test_make_directory(NULL);

        (void) state;
        home = realpath(made, NULL);
        free(made);
        assert_non_null(home);
        project = test_path_join(home, "proj");
        assert_int_equal(mkdir(project, 0755), 0);
        test_setup_shell(home, "echo SECRET-MARK > secret.txt && mkdir big && echo BIG-MARK > big/secret && "
                         "mkdir -p vault/ws && echo VAULT-MARK > vault/key && echo OPEN-FILE > readable.txt", NULL);
        old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
        setenv("HOME", home, 1);
        provider = dsh_provider_new();
        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, backends, NULL), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), NULL), 0);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        dsh_provider_free(provider);
        if (old_home)
                setenv("HOME", old_home, 1);
        free(old_home);
        test_remove_tree(home);
        free(project);
        return 0;
}

static void set_masks(bool required)
{
        const char *entries[] = { "secret.txt", "big/secret", "vault", NULL };

        assert_int_equal(dsh_provider_set_masked_paths(provider, entries, required, NULL), 0);
}

static void make_policy(dsh_policy *policy, dsh_mode mode, const char *root)
{
        *policy = (dsh_policy) DSH_POLICY_INIT;
        policy->mode = mode;
        policy->workspace_root = strdup(root);
}

static int spawn_argv(const dsh_policy *policy, const char **argv, char **output, dsh_child **child_out,
                      dsh_error *error);

/*
 * Spawns `sh -c script` in the policy's workspace root, stdout to
 * `output`; returns the exit status, the facts in *child_out.
 */
static int spawn(const dsh_policy *policy, const char *script, char **output, dsh_child **child_out,
                 dsh_error *error)
{
        char *line = NULL;
        const char *argv[] = { "sh", "-c", NULL, NULL };
        int result;

        assert_true(asprintf(&line, "cd '%s' || exit 97; %s", policy->workspace_root, script) > 0);
        argv[2] = line;
        result = spawn_argv(policy, argv, output, child_out, error);
        free(line);
        return result;
}

static int spawn_argv(const dsh_policy *policy, const char **argv, char **output, dsh_child **child_out,
                      dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        int pipe_fds[2], status = -1;

        assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
        options.stdout_fd = pipe_fds[1];
        if (dsh_provider_spawn(provider, (char *const *) argv, policy, &options, child_out, error) < 0) {
                close(pipe_fds[0]);
                close(pipe_fds[1]);
                return -1;
        }
        close(pipe_fds[1]);
        *output = test_read_fd(pipe_fds[0]);
        close(pipe_fds[0]);
        assert_int_equal(dsh_child_wait(*child_out, &status), 0);
        return status;
}

static bool list_holds(char *const *list, const char *needle)
{
        for (char *const *entry = list; entry && *entry; entry++)
                if (test_contains(*entry, needle))
                        return true;
        return false;
}

static void test_held_mask_unreadable_and_in_the_facts(void **state)
{
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        char *output = NULL, *secret = test_path_join(home, "secret.txt");

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        set_masks(false);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE, project);
        spawn(&policy, "cat ../secret.txt ../big/secret; cat ../readable.txt ../proj/../secret.txt; echo done", &output,
              &child, &error);
        assert_non_null(child);
        assert_false(test_contains(output, "MARK"));
        assert_true(test_contains(output, "done"));
        assert_true(test_contains(output, "OPEN-FILE"));   /* beside the mask, granted */
        assert_true(list_holds(dsh_child_facts(child)->masked, secret));
        assert_int_equal(dsh_child_facts(child)->enforcement, dsh_landlock_enforcement(dsh_landlock_abi()));
        assert_false(list_holds(dsh_child_facts(child)->partial_reasons, "mask"));
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(output);
        free(secret);
}

/*
 * The spawned command's facts name what the scrub took from its
 * environment, from the same pass that built that environment (what the
 * command saw and what the facts say cannot differ), and only that.
 */
static void test_removed_variables_in_the_spawned_facts(void **state)
{
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        char *output = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        set_masks(false);
        assert_int_equal(setenv("DSH_TEST_HELD_TOKEN", "HIDDEN-VALUE", 1), 0);
        assert_int_equal(setenv("DSH_TEST_PLAIN", "PLAIN-VALUE", 1), 0);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE, project);
        spawn(&policy, "env; echo done", &output, &child, &error);
        assert_non_null(child);
        assert_true(test_contains(output, "done"));
        assert_false(test_contains(output, "HIDDEN-VALUE"));
        assert_true(test_contains(output, "PLAIN-VALUE"));
        assert_true(list_holds(dsh_child_facts(child)->environment_removed, "DSH_TEST_HELD_TOKEN"));
        assert_false(list_holds(dsh_child_facts(child)->environment_removed, "DSH_TEST_PLAIN"));
        unsetenv("DSH_TEST_HELD_TOKEN");
        unsetenv("DSH_TEST_PLAIN");
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(output);
}

static void test_mask_inside_the_root_partial_never_full(void **state)
{
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        const char *argv[] = { "true", NULL };
        char *output = NULL, *secret = test_path_join(home, "secret.txt"), *sentence = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        set_masks(false);
        assert_true(asprintf(&sentence, "the mask %s lies inside the writable root %s", secret, home) > 0);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE, home);
        spawn(&policy, "true", &output, &child, &error);
        assert_non_null(child);
        assert_int_equal(dsh_child_facts(child)->enforcement, DSH_ENFORCEMENT_PARTIAL);
        assert_true(list_holds(dsh_child_facts(child)->partial_reasons, sentence));
        assert_false(list_holds(dsh_child_facts(child)->masked, secret));
        dsh_child_free(child);
        /* confine says the same, and passes no mask the launcher's --rw would cover (it would refuse it). */
        assert_int_equal(dsh_provider_confine(provider, (char *const *) argv, &policy, &confined, &error), 0);
        assert_int_equal(confined.enforcement, DSH_ENFORCEMENT_PARTIAL);
        assert_true(list_holds(confined.partial_reasons, sentence));
        for (size_t i = 1; confined.argv[i]; i++)
                if (strcmp(confined.argv[i], secret) == 0)
                        assert_string_equal(confined.argv[i - 1], "--protect");  /* no move, no link: no --mask */
        dsh_confined_argv_clear(&confined);
        dsh_policy_clear(&policy);
        free(output);
        free(secret);
        free(sentence);
}

static void test_require_masks_refuses(void **state)
{
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        const char *argv[] = { "true", NULL };
        char *output = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        set_masks(true);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE, home);
        assert_int_equal(spawn(&policy, "true", &output, &child, &error), -1);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        assert_true(test_contains(error.message, "requireMasks"));
        assert_true(test_contains(error.message, "lies inside the writable root"));
        dsh_error_clear(&error);
        assert_true(dsh_provider_confine(provider, (char *const *) argv, &policy, &confined, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        dsh_error_clear(&error);
        /* Held everywhere (the workspace is the project): the same provider runs it. */
        free(policy.workspace_root);
        policy.workspace_root = strdup(project);
        assert_int_equal(spawn(&policy, "cat ../secret.txt; true", &output, &child, &error), 0);
        assert_false(test_contains(output, "MARK"));
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(output);
}

/* A directory on the way with more entries than the rule limit: the mask beneath it is not held, and said. */
static void test_too_many_entries_partial_or_refused(void **state)
{
        char *big = test_path_join(home, "big");
        char *sentence = NULL, *output = NULL;
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_setup_shell(big, "for i in $(seq 1 4200); do : > f$i; done", NULL);
        assert_true(asprintf(&sentence, "the masks beneath %s are not held: it has more than %d entries", big,
                             DSH_READ_MASK_DEFAULT_RULE_LIMIT) > 0);
        set_masks(false);
        make_policy(&policy, DSH_MODE_READ_ONLY, project);
        spawn(&policy, "cat ../secret.txt ../big/secret; true", &output, &child, &error);
        assert_non_null(child);
        assert_int_equal(dsh_child_facts(child)->enforcement, DSH_ENFORCEMENT_PARTIAL);
        assert_true(list_holds(dsh_child_facts(child)->partial_reasons, sentence));
        /* Not held, as said (so the partial is true), while the other mask still holds. */
        assert_true(test_contains(output, "BIG-MARK"));
        assert_false(test_contains(output, "SECRET-MARK"));
        dsh_child_free(child);
        free(output);
        set_masks(true);
        assert_int_equal(spawn(&policy, "true", &output, &child, &error), -1);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_PREPARATION_FAILED);
        assert_true(test_contains(error.message, sentence));
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        free(big);
        free(sentence);
}

/* A writable root inside a masked directory: that part is readable (said), the rest of the mask still held. */
static void test_root_inside_a_mask(void **state)
{
        char *vault = test_path_join(home, "vault");
        char *root = test_path_join(vault, "ws");
        char *sentence = NULL, *output = NULL;
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        set_masks(false);
        assert_true(asprintf(&sentence, "the writable root %s lies inside the mask %s", root, vault) > 0);
        make_policy(&policy, DSH_MODE_WORKSPACE_WRITE, root);
        spawn(&policy, "cat ../key; echo made > here && cat here", &output, &child, &error);
        assert_non_null(child);
        assert_int_equal(dsh_child_facts(child)->enforcement, DSH_ENFORCEMENT_PARTIAL);
        assert_true(list_holds(dsh_child_facts(child)->partial_reasons, sentence));
        assert_false(test_contains(output, "VAULT-MARK"));
        assert_true(test_contains(output, "made"));
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        free(output);
        free(sentence);
        free(root);
        free(vault);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_held_mask_unreadable_and_in_the_facts, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mask_inside_the_root_partial_never_full, setup, teardown),
                cmocka_unit_test_setup_teardown(test_removed_variables_in_the_spawned_facts, setup, teardown),
                cmocka_unit_test_setup_teardown(test_require_masks_refuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_too_many_entries_partial_or_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_inside_a_mask, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
