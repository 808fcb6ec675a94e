/* SPDX-License-Identifier: MIT */
/* The policy service: precedence, roots, registrations and the runtime context. */
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

#include "dsh-sandbox/policy-service.h"
#include "test-support.h"

#define READ_ONLY_TEXT                                                                                     \
        "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot " \
        "modify files in the standing mode. Do not refuse a required modification from this policy alone: "   \
        "try an available tool normally and follow any denial and escalation guidance it returns."
#define WORKSPACE_WRITE_TEXT(root)                                                                         \
        "Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox "  \
        "may modify files under the session workspace: \"" root "\". Some platform temporary areas may also " \
        "be writable."
#define DANGER_TEXT                                                                                        \
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file "            \
        "modifications by available operations."

typedef struct fixture {
        char *directory;        /* scratch: state and workspaces */
        char *state;
        dsh_session_store *store;
        dsh_config config;
        dsh_policy_service *service;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        dsh_error error = DSH_ERROR_INIT;

        f->directory = test_make_directory(NULL);
        f->state = test_path_join(f->directory, "state");
        assert_int_equal(dsh_session_store_open(f->state, &f->store, &error), 0);
        assert_int_equal(dsh_config_init(&f->config, &error), 0);
        free(f->config.workspace_root);
        f->config.workspace_root = strdup(f->directory);
        assert_int_equal(dsh_policy_service_new(&f->config, &f->service, &error), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        dsh_policy_service_free(f->service);
        dsh_config_clear(&f->config);
        dsh_session_store_free(f->store);
        free(f->state);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

static char *make_workspace(fixture *f, const char *name)
{
        char *path = test_path_join(f->directory, name);

        assert_int_equal(mkdir(path, 0755), 0);
        return path;
}

static dsh_session *new_session(fixture *f, const char *cwd)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;

        assert_int_equal(dsh_session_create(f->store, cwd, NULL, &session, &error), 0);
        return session;
}

static void resolve(fixture *f, dsh_session *session, const dsh_mode *mode, dsh_policy *policy)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_error error = DSH_ERROR_INIT;

        request.session = session;
        if (mode) {
                request.has_mode = true;
                request.mode = *mode;
        }
        assert_int_equal(dsh_policy_service_resolve(f->service, &request, policy, &error), 0);
}

static void test_agentless_uses_config(void **state)
{
        fixture *f = *state;
        dsh_policy policy;

        resolve(f, NULL, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_READ_ONLY);
        assert_string_equal(policy.workspace_root, f->directory);
        assert_null(policy.session_id);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 0);
        dsh_policy_clear(&policy);
}

static void test_sessions_are_independent(void **state)
{
        fixture *f = *state;
        char *root_a = make_workspace(f, "a"), *root_b = make_workspace(f, "b");
        dsh_session *a = new_session(f, root_a), *b = new_session(f, root_b);
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;

        assert_int_equal(dsh_session_set_mode(a, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        resolve(f, a, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(policy.workspace_root, root_a);
        assert_string_equal(policy.session_id, dsh_session_id(a));
        dsh_policy_clear(&policy);
        resolve(f, b, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_READ_ONLY);
        assert_string_equal(policy.workspace_root, root_b);
        dsh_policy_clear(&policy);
        dsh_session_free(a);
        dsh_session_free(b);
        free(root_a);
        free(root_b);
}

static void test_precedence(void **state)
{
        fixture *f = *state;
        dsh_session *session = new_session(f, f->directory);
        dsh_error error = DSH_ERROR_INIT;
        dsh_mode explicit_mode = DSH_MODE_READ_ONLY;
        dsh_policy policy;

        /* default < session override < explicit */
        f->config.mode = DSH_MODE_DANGER_FULL_ACCESS;
        dsh_policy_service_free(f->service);
        assert_int_equal(dsh_policy_service_new(&f->config, &f->service, &error), 0);
        resolve(f, session, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_DANGER_FULL_ACCESS);
        dsh_policy_clear(&policy);
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        resolve(f, session, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_policy_clear(&policy);
        resolve(f, session, &explicit_mode, &policy);
        assert_int_equal(policy.mode, DSH_MODE_READ_ONLY);
        dsh_policy_clear(&policy);
        dsh_session_free(session);
}

static void test_resolve_sees_other_handles(void **state)
{
        fixture *f = *state;
        dsh_session *session = new_session(f, f->directory), *other;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy policy;

        assert_int_equal(dsh_session_open(f->store, dsh_session_id(session), &other, &error), 0);
        assert_int_equal(dsh_session_set_mode(other, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        resolve(f, session, NULL, &policy);
        assert_int_equal(policy.mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_policy_clear(&policy);
        dsh_session_free(other);
        dsh_session_free(session);
}

static void test_root_canonicalized_before_lexical(void **state)
{
        fixture *f = *state;
        char *inner = make_workspace(f, "a");
        char *deep = test_path_join(inner, "b");
        char *link = test_path_join(f->directory, "link");
        char *spelled = NULL, *missing = NULL, *expected_missing = NULL;
        dsh_session *session;
        dsh_policy policy;

        assert_int_equal(mkdir(deep, 0755), 0);
        assert_int_equal(symlink(deep, link), 0);
        /* link/.. is where chdir lands (a), not the lexical parent (the scratch directory). */
        assert_true(asprintf(&spelled, "%s/link/..", f->directory) > 0);
        session = new_session(f, spelled);
        resolve(f, session, NULL, &policy);
        assert_string_equal(policy.workspace_root, inner);
        dsh_policy_clear(&policy);
        dsh_session_free(session);

        /* A root that does not exist yet: the existing prefix resolves, the rest is lexical. */
        assert_true(asprintf(&missing, "%s/link/new/./x/../y", f->directory) > 0);
        assert_true(asprintf(&expected_missing, "%s/new/y", deep) > 0);
        session = new_session(f, missing);
        resolve(f, session, NULL, &policy);
        assert_string_equal(policy.workspace_root, expected_missing);
        dsh_policy_clear(&policy);
        dsh_session_free(session);
        free(expected_missing);
        free(missing);
        free(spelled);
        free(link);
        free(deep);
        free(inner);
}

/* A log someone edited: the session loads, but its root is refused when resolving. */
static void test_invalid_recorded_cwd(void **state)
{
        fixture *f = *state;
        static const char *const cwds[] = { "relative/dir", "/tmp/a\\u0000b", "" };
        dsh_error error = DSH_ERROR_INIT;

        mkdir(f->state, 0700);
        for (size_t i = 0; i < sizeof(cwds) / sizeof(cwds[0]); i++) {
                char *path = test_path_join(f->state, "edited.jsonl"), *content = NULL;
                dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
                dsh_policy policy;
                dsh_session *session = NULL;

                assert_true(asprintf(&content,
                                     "{\"type\":\"session\",\"version\":0,\"id\":\"edited\",\"createdAt\":1,"
                                     "\"cwd\":\"%s\",\"delegationDepth\":0}\n",
                                     cwds[i]) > 0);
                test_write_file(path, content);
                assert_int_equal(dsh_session_open(f->store, "edited", &session, &error), 0);
                request.session = session;
                assert_true(dsh_policy_service_resolve(f->service, &request, &policy, &error) < 0);
                assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
                assert_null(policy.workspace_root);
                dsh_error_clear(&error);
                dsh_session_free(session);
                free(content);
                free(path);
        }
}

/*
 * A session's root is recorded canonical, so a symlink on it now was put
 * there afterwards, perhaps by a command confined in another session whose
 * workspace holds it: the last component replaced, a directory above it
 * replaced, or a link left dangling.  Resolving refuses the root instead of
 * following the link.
 */
static void test_recorded_root_swapped_for_symlink(void **state)
{
        fixture *f = *state;
        char *workspace = make_workspace(f, "ws"), *outside = make_workspace(f, "outside");
        char *sub = test_path_join(workspace, "sub"), *deeper = test_path_join(sub, "deeper");
        dsh_session *child, *grandchild;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy;

        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(mkdir(deeper, 0755), 0);
        child = new_session(f, sub);
        grandchild = new_session(f, deeper);
        resolve(f, child, NULL, &policy);
        assert_string_equal(policy.workspace_root, sub);
        dsh_policy_clear(&policy);

        /* What a command writing the workspace can do: move `sub` away, put a link in its place. */
        {
                char *moved = test_path_join(outside, "sub");

                assert_int_equal(rename(sub, moved), 0);
                assert_int_equal(symlink(moved, sub), 0);
                free(moved);
        }
        for (dsh_session **session = (dsh_session *[]) { child, grandchild, NULL }; *session; session++) {
                char *expected = NULL;

                request.session = *session;
                assert_true(dsh_policy_service_resolve(f->service, &request, &policy, &error) < 0);
                assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
                assert_true(asprintf(&expected, "recorded cwd \"%s\" now passes through a symlink (\"%s\")",
                                     dsh_session_cwd(*session, NULL), sub) > 0);
                if (!strstr(error.message, expected))
                        fail_msg("expected \"%s\" in \"%s\"", expected, error.message);
                assert_null(policy.workspace_root);
                dsh_error_clear(&error);
                free(expected);
        }

        /* A dangling link is refused the same way, though nothing resolves through it. */
        assert_int_equal(unlink(sub), 0);
        assert_int_equal(symlink("/nonexistent/dsh-sandbox", sub), 0);
        request.session = child;
        assert_true(dsh_policy_service_resolve(f->service, &request, &policy, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        assert_non_null(strstr(error.message, "now passes through a symlink"));
        dsh_error_clear(&error);

        /* An explicit root is the caller's to name this call, through a link or not. */
        request.workspace_root = sub;
        assert_int_equal(unlink(sub), 0);
        assert_int_equal(symlink(outside, sub), 0);
        assert_int_equal(dsh_policy_service_resolve(f->service, &request, &policy, &error), 0);
        assert_string_equal(policy.workspace_root, outside);
        dsh_policy_clear(&policy);

        dsh_session_free(grandchild);
        dsh_session_free(child);
        free(deeper);
        free(sub);
        free(outside);
        free(workspace);
}

/* A session created through a symlinked path keeps working: the link was resolved when it was recorded. */
static void test_root_named_through_symlink_at_creation(void **state)
{
        fixture *f = *state;
        char *real = make_workspace(f, "real"), *link = test_path_join(f->directory, "link");
        dsh_session *session;
        dsh_policy policy;

        assert_int_equal(symlink(real, link), 0);
        session = new_session(f, link);
        assert_string_equal(dsh_session_cwd(session, NULL), real);
        resolve(f, session, NULL, &policy);
        assert_string_equal(policy.workspace_root, real);
        dsh_policy_clear(&policy);
        dsh_session_free(session);
        free(link);
        free(real);
}

static void test_registrations(void **state)
{
        fixture *f = *state;
        char *extra = make_workspace(f, "extra"), *configured = make_workspace(f, "configured");
        dsh_session *session = new_session(f, f->directory), *other = new_session(f, f->directory), *resumed;
        dsh_error error = DSH_ERROR_INIT;
        uint64_t first = 0, second = 0;
        dsh_policy before, policy;

        dsh_policy_service_free(f->service);
        assert_int_equal(dsh_strv_append(&f->config.additional_writable_roots, configured), 0);
        assert_int_equal(dsh_policy_service_new(&f->config, &f->service, &error), 0);

        assert_true(dsh_session_register_writable_root(session, "relative", &first, &error) < 0);
        dsh_error_clear(&error);
        assert_int_equal(dsh_session_register_writable_root(session, extra, &first, &error), 0);
        assert_int_equal(dsh_session_register_writable_root(session, extra, &second, &error), 0);
        assert_true(first != 0 && second != 0 && first != second);

        resolve(f, session, NULL, &before);
        assert_int_equal(dsh_strv_length(before.additional_writable_roots), 2);
        assert_string_equal(before.additional_writable_roots[0], configured);
        assert_string_equal(before.additional_writable_roots[1], extra);

        /* Other sessions and agentless calls are unaffected. */
        resolve(f, other, NULL, &policy);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 1);
        dsh_policy_clear(&policy);

        /* Disposing one registration leaves the other grant of the same directory. */
        assert_int_equal(dsh_session_dispose_writable_root(session, first), 0);
        assert_int_equal(dsh_session_dispose_writable_root(session, first), -ENOENT);
        resolve(f, session, NULL, &policy);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 2);
        dsh_policy_clear(&policy);
        assert_int_equal(dsh_session_dispose_writable_root(session, second), 0);
        resolve(f, session, NULL, &policy);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 1);
        dsh_policy_clear(&policy);

        /* A policy resolved earlier keeps its permissions. */
        assert_int_equal(dsh_strv_length(before.additional_writable_roots), 2);
        assert_string_equal(before.additional_writable_roots[1], extra);
        dsh_policy_clear(&before);

        /* Runtime-only: a resumed handle has none, and the log never mentions them. */
        assert_int_equal(dsh_session_register_writable_root(session, extra, &first, &error), 0);
        assert_int_equal(dsh_session_open(f->store, dsh_session_id(session), &resumed, &error), 0);
        resolve(f, resumed, NULL, &policy);
        assert_int_equal(dsh_strv_length(policy.additional_writable_roots), 1);
        dsh_policy_clear(&policy);
        {
                char *log = test_read_file(dsh_session_path(session));

                assert_null(strstr(log, "extra"));
                free(log);
        }
        dsh_session_free(resumed);
        dsh_session_free(other);
        dsh_session_free(session);
        free(configured);
        free(extra);
}

static void test_context_texts(void **state)
{
        dsh_policy policy = { DSH_MODE_READ_ONLY, (char *) "/w \"q\"", NULL, NULL };
        char *text;

        (void) state;
        text = dsh_runtime_context_text(&policy);
        assert_string_equal(text, READ_ONLY_TEXT);
        free(text);
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        text = dsh_runtime_context_text(&policy);
        assert_string_equal(text, WORKSPACE_WRITE_TEXT("/w \\\"q\\\""));
        free(text);
        policy.mode = DSH_MODE_DANGER_FULL_ACCESS;
        text = dsh_runtime_context_text(&policy);
        assert_string_equal(text, DANGER_TEXT);
        free(text);
}

static void expect_context(fixture *f, dsh_session *session, const char *expected)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = (char *) "unset";

        assert_int_equal(dsh_policy_service_context(f->service, session, &text, &error), 0);
        if (expected) {
                assert_non_null(text);
                assert_string_equal(text, expected);
        } else {
                assert_null(text);
        }
        free(text);
}

static void test_context_once_per_change(void **state)
{
        fixture *f = *state;
        char *root = make_workspace(f, "ws"), *expected = NULL, *log;
        dsh_session *session = new_session(f, root), *resumed;
        dsh_error error = DSH_ERROR_INIT;

        assert_true(asprintf(&expected, WORKSPACE_WRITE_TEXT("%s"), root) > 0);
        expect_context(f, session, READ_ONLY_TEXT);
        expect_context(f, session, NULL);
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        expect_context(f, session, expected);
        expect_context(f, session, NULL);
        /* Switching to the mode it already has is no effective change. */
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        expect_context(f, session, NULL);
        /* What the model was last told comes from the log: a resumed handle agrees. */
        assert_int_equal(dsh_session_open(f->store, dsh_session_id(session), &resumed, &error), 0);
        assert_string_equal(dsh_session_last_context(resumed), expected);
        expect_context(f, resumed, NULL);
        assert_int_equal(dsh_session_set_mode(resumed, DSH_MODE_DANGER_FULL_ACCESS, NULL, &error), 0);
        expect_context(f, session, DANGER_TEXT);
        expect_context(f, resumed, NULL);
        log = test_read_file(dsh_session_path(session));
        assert_non_null(strstr(log, "{\"type\":\"sandbox/context\",\"seq\":1,"));
        assert_non_null(strstr(log, "\"data\":{\"text\":\"Current DSH file policy: danger-full-access."));
        free(log);
        dsh_session_free(resumed);
        dsh_session_free(session);
        free(expected);
        free(root);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_agentless_uses_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sessions_are_independent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
                cmocka_unit_test_setup_teardown(test_resolve_sees_other_handles, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_canonicalized_before_lexical, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invalid_recorded_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recorded_root_swapped_for_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_named_through_symlink_at_creation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_registrations, setup, teardown),
                cmocka_unit_test(test_context_texts),
                cmocka_unit_test_setup_teardown(test_context_once_per_change, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
