/* SPDX-License-Identifier: MIT */
/*
 * The mask plan of one call (shield/masks.h) on a throwaway home under
 * /var/tmp: what each entry expands to, what a wildcard leaves out (".pub"),
 * what a symlink is masked as, where a mask overlaps a writable root, and
 * what covers() says about names that exist and names that do not yet.  The
 * plan is what both backends and the file guard enforce, so each rule is
 * checked here on its own; the reach suite checks the enforcement on disk.
 *
 * HOME is set to the throwaway home and the homes come from
 * dsh_shield_user_homes(), as the provider takes them: the passwd entry's
 * home (/root here) is expanded too, so the assertions look only at paths
 * beneath the throwaway home.
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
#include "base/path.h"
#include "shield/masks.h"
#include "shield/protections.h"
#include "shield/shield.h"
#include "test-support.h"

struct fixture {
        char *home;             /* canonical, the throwaway $HOME */
        char *saved_home;
        char **homes;
        char **environment;
        dsh_policy policy;
        dsh_protections protections;
        dsh_mask_plan plan;
        dsh_error error;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char *made = test_make_directory(NULL);
        const char *home = getenv("HOME");

        f->home = realpath(made, NULL);
        free(made);
        f->saved_home = home ? strdup(home) : NULL;
        assert_int_equal(setenv("HOME", f->home, 1), 0);
        f->homes = dsh_shield_user_homes();
        assert_non_null(f->homes);
        f->environment = test_home_environment(f->home);
        f->policy = (dsh_policy) DSH_POLICY_INIT;
        f->protections = (dsh_protections) DSH_PROTECTIONS_INIT;
        f->plan = (dsh_mask_plan) DSH_MASK_PLAN_INIT;
        f->error = (dsh_error) DSH_ERROR_INIT;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        dsh_mask_plan_clear(&f->plan);
        dsh_protections_clear(&f->protections);
        dsh_policy_clear(&f->policy);
        dsh_error_clear(&f->error);
        test_home_environment_free(f->environment);
        dsh_strv_free(f->homes);
        if (f->saved_home)
                setenv("HOME", f->saved_home, 1);
        else
                unsetenv("HOME");
        free(f->saved_home);
        test_remove_tree(f->home);
        free(f);
        return 0;
}

static char *at(struct fixture *f, const char *name)
{
        return test_path_join(f->home, name);
}

static void shell(struct fixture *f, const char *line)
{
        test_setup_shell(f->home, line, (const char *const *) f->environment);
}

/* The configured entries (NULL-terminated list of literals; none given: the defaults). */
static void configure(struct fixture *f, const char *const *entries)
{
        dsh_strv_free(f->protections.masks);
        f->protections.masks = entries ? dsh_strv_copy((char *const *) entries) : NULL;
        if (entries)
                assert_non_null(f->protections.masks);
}

/* The policy `mode` with the home as workspace (`workspace` true) or no root. */
static void use_mode(struct fixture *f, dsh_mode mode, bool workspace)
{
        dsh_policy_clear(&f->policy);
        f->policy.mode = mode;
        if (workspace)
                f->policy.workspace_root = strdup(f->home);
}

static int build(struct fixture *f)
{
        dsh_mask_plan_clear(&f->plan);
        dsh_error_clear(&f->error);
        return dsh_mask_plan_build(&f->protections, &f->policy, f->homes, &f->plan, &f->error);
}

/* The mask at home-relative `name`, or NULL. */
static const dsh_mask *mask_at(struct fixture *f, const char *name)
{
        char *path = at(f, name);
        const dsh_mask *found = NULL;

        for (size_t i = 0; i < f->plan.count && !found; i++)
                if (strcmp(f->plan.masks[i].path, path) == 0)
                        found = &f->plan.masks[i];
        free(path);
        return found;
}

/* The kind of the mask at `name`, or -1 when there is none. */
static int kind_at(struct fixture *f, const char *name)
{
        const dsh_mask *mask = mask_at(f, name);

        return mask ? (int) mask->kind : -1;
}

/* The root the mask at `name` overlaps ("(no mask)" when there is none, NULL when it overlaps none). */
static const char *root_at(struct fixture *f, const char *name)
{
        const dsh_mask *mask = mask_at(f, name);

        return mask ? mask->inside_writable_root : "(no mask)";
}

static bool strv_holds(char *const *list, const char *value)
{
        for (; list && *list; list++)
                if (strcmp(*list, value) == 0)
                        return true;
        return false;
}

static bool holds_at(char *const *list, struct fixture *f, const char *name)
{
        char *path = at(f, name);
        bool found = strv_holds(list, path);

        free(path);
        return found;
}

static bool covers(struct fixture *f, const char *name)
{
        char *path = at(f, name);
        bool covered = dsh_mask_plan_covers(&f->plan, path);

        free(path);
        return covered;
}

/* How many masks lie at or beneath the home (the passwd home's are not ours to count). */
static size_t masks_in_home(struct fixture *f)
{
        size_t count = 0;

        for (size_t i = 0; i < f->plan.count; i++)
                count += dsh_path_is_beneath(f->plan.masks[i].path, f->home);
        return count;
}

static void test_wildcard_masks_private_keys_and_leaves_public_ones(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { ".ssh/id_*", "~/.ssh/*.pem", NULL };

        shell(f, "mkdir .ssh && touch .ssh/id_ed25519 .ssh/id_ed25519.pub .ssh/id_rsa .ssh/known_hosts "
                 ".ssh/config .ssh/deploy.pem .ssh/deploy.pem.pub");
        configure(f, entries);
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(build(f), 0);
        assert_non_null(mask_at(f, ".ssh/id_ed25519"));
        assert_int_equal(kind_at(f, ".ssh/id_ed25519"), DSH_MASK_FILE);
        assert_non_null(mask_at(f, ".ssh/id_rsa"));
        assert_non_null(mask_at(f, ".ssh/deploy.pem"));
        /* A public key matches "id_*" but is no secret: ssh and git signing read it. */
        assert_null(mask_at(f, ".ssh/id_ed25519.pub"));
        assert_null(mask_at(f, ".ssh/deploy.pem.pub"));
        assert_null(mask_at(f, ".ssh/known_hosts"));
        assert_null(mask_at(f, ".ssh/config"));
        assert_int_equal(masks_in_home(f), 3);
        /* The directory is closed: a name "id_*" created during the call must stay hidden too. */
        assert_true(holds_at(f->plan.closed_directories, f, ".ssh"));
        assert_true(holds_at(f->plan.closed_patterns, f, ".ssh/id_*"));
        assert_true(holds_at(f->plan.closed_patterns, f, ".ssh/*.pem"));
}

static void test_covers_masks_beneath_and_new_wildcard_names_only(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { ".ssh/id_*", ".aws", NULL };

        shell(f, "mkdir -p .ssh .aws && touch .ssh/id_ed25519 .ssh/id_ed25519.pub .ssh/known_hosts "
                 ".aws/credentials");
        configure(f, entries);
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(build(f), 0);
        assert_int_equal(kind_at(f, ".aws"), DSH_MASK_DIRECTORY);
        assert_true(covers(f, ".aws"));
        assert_true(covers(f, ".aws/credentials"));
        assert_true(covers(f, ".aws/not-yet/config"));
        assert_true(covers(f, ".ssh/id_ed25519"));
        /* A name the wildcard matches that does not exist yet (created during the call). */
        assert_true(covers(f, ".ssh/id_new"));
        assert_true(covers(f, ".ssh/id_new/inside"));
        /* Siblings, the public key, the directory itself and a look-alike stay readable. */
        assert_false(covers(f, ".ssh"));
        assert_false(covers(f, ".ssh/known_hosts"));
        assert_false(covers(f, ".ssh/id_ed25519.pub"));
        assert_false(covers(f, ".ssh/id_new.pub"));
        assert_false(covers(f, ".awsx"));
        assert_false(covers(f, ".aws-backup/credentials"));
        assert_false(covers(f, "."));
}

static void test_symlinked_entry_masks_its_target(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { ".aws", ".netrc", NULL };

        /* ~/.aws is a link to the real directory: the command reads the target by its own path. */
        shell(f, "mkdir -p real/aws && touch real/aws/credentials && ln -s real/aws .aws");
        /* A dangling ~/.netrc: its target, once created, is what the command would read. */
        shell(f, "ln -s elsewhere/netrc .netrc && mkdir elsewhere");
        configure(f, entries);
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(build(f), 0);
        assert_int_equal(kind_at(f, "real/aws"), DSH_MASK_DIRECTORY);
        assert_null(mask_at(f, ".aws"));
        assert_true(covers(f, "real/aws/credentials"));
        assert_non_null(mask_at(f, "elsewhere/netrc"));
        assert_int_equal(kind_at(f, "elsewhere/netrc"), DSH_MASK_ABSENT);
        /* The dangling link itself is kept unreadable as a name too. */
        assert_non_null(mask_at(f, ".netrc"));
        assert_int_equal(kind_at(f, ".netrc"), DSH_MASK_ABSENT);
}

/*
 * A mask reached through a symlink the command could repoint (its directory
 * inside the writable root) is named as not held, the link resolved or
 * dangling: a dangling link on the route leaves the canonical spelling as
 * given, so that spelling alone must not be taken for a route without links.
 */
static void test_mask_through_a_repointable_symlink_named_unheld(void **state)
{
        struct fixture *f = *state;
        static const char *const dangling[] = { ".config/gh/hosts.yml", NULL };
        static const char *const resolved[] = { ".aws/credentials", NULL };
        char *link = NULL;

        shell(f, "ln -s nowhere .config && mkdir -p real/aws && ln -s real/aws .aws");
        use_mode(f, DSH_MODE_WORKSPACE_WRITE, true);
        configure(f, dangling);
        assert_int_equal(build(f), 0);
        link = at(f, ".config");
        assert_int_equal(dsh_strv_length(f->plan.unheld), 1);
        assert_true(test_contains(f->plan.unheld[0], "reached through the symlink"));
        assert_true(test_contains(f->plan.unheld[0], link));
        free(link);
        configure(f, resolved);
        assert_int_equal(build(f), 0);
        link = at(f, ".aws");
        assert_int_equal(dsh_strv_length(f->plan.unheld), 1);
        assert_true(test_contains(f->plan.unheld[0], link));
        free(link);
        /* Read-only: no root to repoint anything in. */
        use_mode(f, DSH_MODE_READ_ONLY, true);
        assert_int_equal(build(f), 0);
        assert_int_equal(dsh_strv_length(f->plan.unheld), 0);
}

static void test_absent_entry_planned_as_absent(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { ".git-credentials", ".config/gh/hosts.yml", ".ssh/id_*", NULL };

        configure(f, entries);
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(build(f), 0);
        assert_non_null(mask_at(f, ".git-credentials"));
        assert_int_equal(kind_at(f, ".git-credentials"), DSH_MASK_ABSENT);
        assert_non_null(mask_at(f, ".config/gh/hosts.yml"));
        assert_int_equal(kind_at(f, ".config/gh/hosts.yml"), DSH_MASK_ABSENT);
        /* A wildcard whose directory does not exist: the directory is masked whole. */
        assert_non_null(mask_at(f, ".ssh"));
        assert_int_equal(kind_at(f, ".ssh"), DSH_MASK_ABSENT);
        assert_true(covers(f, ".ssh/id_ed25519"));
        assert_int_equal(masks_in_home(f), 3);
}

static void test_inside_writable_root_under_workspace_write_only(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { ".aws", "outside/.kube", NULL };
        char *extra = at(f, "outside/.kube/cache");

        shell(f, "mkdir -p .aws outside/.kube/cache");
        configure(f, entries);
        /* Workspace = the home: every mask in it overlaps the writable root. */
        use_mode(f, DSH_MODE_WORKSPACE_WRITE, true);
        assert_int_equal(build(f), 0);
        assert_string_equal(root_at(f, ".aws"), f->home);
        /* Read-only: nothing is writable, no mask overlaps a root. */
        use_mode(f, DSH_MODE_READ_ONLY, true);
        assert_int_equal(build(f), 0);
        assert_null(root_at(f, ".aws"));
        assert_null(root_at(f, "outside/.kube"));
        /* An extra root beneath a mask overlaps it as well (the root's write grant reads inside it). */
        use_mode(f, DSH_MODE_WORKSPACE_WRITE, false);
        f->policy.workspace_root = at(f, "elsewhere-root");
        assert_int_equal(dsh_strv_append(&f->policy.additional_writable_roots, extra), 0);
        assert_int_equal(build(f), 0);
        assert_null(root_at(f, ".aws"));
        assert_string_equal(root_at(f, "outside/.kube"), extra);
        free(extra);
}

static void test_mask_beneath_temp_area_names_it_under_workspace_write(void **state)
{
        struct fixture *f = *state;
        static const char *const entries[] = { "/tmp/dsh-unit-masks-absent-credential", NULL };

        configure(f, entries);
        use_mode(f, DSH_MODE_WORKSPACE_WRITE, true);
        assert_int_equal(build(f), 0);
        assert_int_equal(f->plan.count, 1);
        assert_string_equal(f->plan.masks[0].inside_writable_root, "/tmp");
        use_mode(f, DSH_MODE_READ_ONLY, true);
        assert_int_equal(build(f), 0);
        assert_null(f->plan.masks[0].inside_writable_root);
}

static void test_defaults_and_policy_entries_add_up(void **state)
{
        struct fixture *f = *state;
        char **paths;

        shell(f, "mkdir -p .ssh .aws && touch .ssh/id_ed25519 .npmrc .aws/config project-token");
        configure(f, NULL);
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(dsh_strv_append(&f->policy.masked_paths, "project-token"), 0);
        assert_int_equal(build(f), 0);
        assert_non_null(mask_at(f, ".ssh/id_ed25519"));
        assert_non_null(mask_at(f, ".aws"));
        assert_non_null(mask_at(f, ".npmrc"));
        assert_non_null(mask_at(f, ".claude/.credentials.json"));
        assert_non_null(mask_at(f, "project-token"));
        assert_null(mask_at(f, ".aws/config"));  /* beneath .aws: dropped, .aws covers it */
        paths = dsh_mask_plan_paths(&f->plan);
        assert_non_null(paths);
        assert_true(holds_at(paths, f, ".aws"));
        assert_true(holds_at(paths, f, ".ssh/*"));
        dsh_strv_free(paths);
        /* An empty configured list: only the call's own entry. */
        configure(f, (const char *const[]) { NULL });
        assert_int_equal(build(f), 0);
        assert_int_equal(masks_in_home(f), 1);
        assert_non_null(mask_at(f, "project-token"));
}

static void test_danger_full_access_masks_nothing(void **state)
{
        struct fixture *f = *state;

        shell(f, "mkdir .aws && touch .netrc");
        configure(f, NULL);
        use_mode(f, DSH_MODE_DANGER_FULL_ACCESS, false);
        assert_int_equal(build(f), 0);
        assert_int_equal(f->plan.count, 0);
        assert_null(f->plan.closed_directories);
        assert_false(covers(f, ".aws"));
}

static void test_bad_entry_refused_naming_it(void **state)
{
        struct fixture *f = *state;

        configure(f, (const char *const[]) { ".aws", ".ssh/../etc", NULL });
        use_mode(f, DSH_MODE_READ_ONLY, false);
        assert_int_equal(build(f), -EINVAL);
        assert_int_equal(f->error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(f->error.message, "\".ssh/../etc\""));
        assert_int_equal(f->plan.count, 0);
        /* The call's own entries are checked the same way. */
        configure(f, NULL);
        assert_int_equal(dsh_strv_append(&f->policy.masked_paths, "a/*/b"), 0);
        assert_int_equal(build(f), -EINVAL);
        assert_non_null(strstr(f->error.message, "\"a/*/b\""));
}

static void test_mask_entry_check(void **state)
{
        static const char *const accepted[] = { ".aws", "~/.aws", "/etc/secret", ".ssh/id_*", "/srv/keys/*.pem",
                                                ".config/gh/hosts.yml", "a/b/[abc]?", NULL };
        static const char *const refused[] = { "", "/", "~/", "~", "~root/.aws", "a//b", "a/", "./a", "a/./b",
                                               "a/..", "../a", "/a/../b", "*/x", ".ssh/*/id", NULL };
        const char *reason;

        (void) state;
        for (const char *const *entry = accepted; *entry; entry++) {
                reason = NULL;
                if (dsh_mask_entry_check(*entry, &reason) != 0)
                        fail_msg("\"%s\" refused: %s", *entry, reason);
        }
        for (const char *const *entry = refused; *entry; entry++) {
                reason = NULL;
                if (dsh_mask_entry_check(*entry, &reason) != -EINVAL)
                        fail_msg("\"%s\" accepted", *entry);
                assert_non_null(reason);
        }
        for (const char *const *entry = dsh_default_masked_paths(); *entry; entry++)
                assert_int_equal(dsh_mask_entry_check(*entry, &reason), 0);
}

static void test_environment_pattern_check(void **state)
{
        const char *reason;

        (void) state;
        assert_int_equal(dsh_environment_pattern_check("GITHUB_TOKEN", false, &reason), 0);
        assert_int_equal(dsh_environment_pattern_check("my_var9", false, &reason), 0);
        assert_int_equal(dsh_environment_pattern_check("*_TOKEN", true, &reason), 0);
        assert_int_equal(dsh_environment_pattern_check("A?C", true, &reason), 0);
        /* An allowed name is a name: no wildcard lets a whole family through. */
        assert_int_equal(dsh_environment_pattern_check("*_TOKEN", false, &reason), -EINVAL);
        assert_non_null(reason);
        assert_int_equal(dsh_environment_pattern_check("A?C", false, &reason), -EINVAL);
        assert_int_equal(dsh_environment_pattern_check("", true, &reason), -EINVAL);
        assert_int_equal(dsh_environment_pattern_check("A=B", false, &reason), -EINVAL);
        assert_int_equal(dsh_environment_pattern_check("A B", true, &reason), -EINVAL);
        assert_int_equal(dsh_environment_pattern_check("[AB]_TOKEN", true, &reason), -EINVAL);
        assert_int_equal(dsh_environment_pattern_check("A-B", false, &reason), -EINVAL);
        for (const char *const *pattern = dsh_default_environment_deny(); *pattern; pattern++)
                assert_int_equal(dsh_environment_pattern_check(*pattern, true, &reason), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_wildcard_masks_private_keys_and_leaves_public_ones, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_covers_masks_beneath_and_new_wildcard_names_only, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_entry_masks_its_target, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mask_through_a_repointable_symlink_named_unheld, setup, teardown),
                cmocka_unit_test_setup_teardown(test_absent_entry_planned_as_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inside_writable_root_under_workspace_write_only, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_mask_beneath_temp_area_names_it_under_workspace_write, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_defaults_and_policy_entries_add_up, setup, teardown),
                cmocka_unit_test_setup_teardown(test_danger_full_access_masks_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_entry_refused_naming_it, setup, teardown),
                cmocka_unit_test(test_mask_entry_check),
                cmocka_unit_test(test_environment_pattern_check),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
