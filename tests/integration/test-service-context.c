/* SPDX-License-Identifier: MIT */
/*
 * The runtime shared by serve and mcp (service/service-context.c), with
 * real confined commands: a root registered on a session lasts for the
 * later calls and ends when disposed (checked on disk), two long calls run
 * at once on runtimes of their own, the pool lends a runtime to one call at
 * a time, a bad backend is refused by name, and the file guard it makes
 * denies outside the roots.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "service-context.h"
#include "test-support.h"

typedef struct fixture {
        char *scratch;
        char *workspace;
        char *extra;            /* a directory outside the workspace, registered on the session */
        char *launchers;
        service_context *context;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_config config;
        dsh_error error = DSH_ERROR_INIT;
        const char *landlock_run = test_landlock_run_path();
        char *state_directory;

        f->scratch = test_make_directory(NULL);
        f->workspace = test_make_directory(f->scratch);
        f->extra = test_make_directory(f->scratch);
        state_directory = test_path_join(f->scratch, "state");
        f->launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        assert_int_equal(dsh_config_init(&config, &error), 0);
        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        options.config = &config;
        options.state_directory = state_directory;
        options.launcher_directory = f->launchers;
        options.use_verdict_cache = false;
        assert_int_equal(service_context_new(&options, &f->context, &error), 0);
        dsh_config_clear(&config);
        free(state_directory);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        service_context_free(f->context);
        free(f->launchers);
        free(f->workspace);
        free(f->extra);
        test_remove_tree(f->scratch);
        free(f);
        return 0;
}

/* Runs `command` as the bash tool under `fields`; returns its kind and exit code. */
static dsh_bash_kind run_bash(fixture *f, const service_policy_fields *fields, const char *command, int *exit_code)
{
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_bash_kind kind;

        request.command = command;
        request.timeout_ms = 60000;
        if (service_bash_run(f->context, fields, &request, &result, &error) < 0)
                fail_msg("service_bash_run: %s", error.message);
        kind = result.kind;
        *exit_code = result.exit_code;
        dsh_bash_result_clear(&result);
        return kind;
}

static char *write_command(const char *directory)
{
        char *command = NULL;

        assert_true(asprintf(&command, "echo x > '%s/written'", directory) > 0);
        return command;
}

static void test_a_registered_root_lasts_until_disposed(void **state)
{
        fixture *f = *state;
        service_policy_fields fields = SERVICE_POLICY_FIELDS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session;
        const char *id;
        uint64_t registration;
        char *command = write_command(f->extra), *written = test_path_join(f->extra, "written");
        int exit_code;

        service_lock(f->context);
        assert_int_equal(service_session_create(f->context, f->workspace, NULL, &id, &error), 0);
        assert_int_equal(service_session(f->context, id, &session, &error), 0);
        assert_int_equal(dsh_session_register_writable_root(session, f->extra, &registration, &error), 0);
        service_unlock(f->context);

        fields.session_id = id;
        fields.has_mode = true;
        fields.mode = DSH_MODE_WORKSPACE_WRITE;
        fields.backend = "landlock";
        assert_int_equal(run_bash(f, &fields, command, &exit_code), DSH_BASH_COMPLETED);
        assert_int_equal(exit_code, 0);
        assert_true(test_path_exists(written));
        assert_int_equal(unlink(written), 0);

        service_lock(f->context);
        assert_int_equal(dsh_session_dispose_writable_root(session, registration), 0);
        service_unlock(f->context);
        assert_int_equal(run_bash(f, &fields, command, &exit_code), DSH_BASH_DENIED);
        assert_false(test_path_exists(written));
        free(written);
        free(command);
}

typedef struct waiter {
        fixture *f;
        char *command;
        dsh_bash_kind kind;
        int exit_code;
} waiter;

static void *run_waiter(void *data)
{
        waiter *w = data;
        service_policy_fields fields = SERVICE_POLICY_FIELDS_INIT;

        fields.has_mode = true;
        fields.mode = DSH_MODE_WORKSPACE_WRITE;
        fields.root = w->f->workspace;
        fields.backend = "landlock";
        w->kind = run_bash(w->f, &fields, w->command, &w->exit_code);
        return NULL;
}

/*
 * Two long calls at once: the first, already running, waits for a file only
 * the second creates.  Were the calls serialised on one runtime, the first
 * would reach its 60 s timeout before the second could start.
 */
static void test_two_long_calls_run_at_once(void **state)
{
        fixture *f = *state;
        waiter first = { f, NULL, DSH_BASH_COMPLETED, -1 }, second = { f, NULL, DSH_BASH_COMPLETED, -1 };
        pthread_t first_thread, second_thread;
        char *started = test_path_join(f->workspace, "started");

        assert_true(asprintf(&first.command, "touch '%s'; while [ ! -e '%s/flag' ]; do sleep 0.05; done", started,
                             f->workspace) > 0);
        assert_true(asprintf(&second.command, "touch '%s/flag'", f->workspace) > 0);
        assert_int_equal(pthread_create(&first_thread, NULL, run_waiter, &first), 0);
        /* The second call starts only once the first one's command runs: serialised, it would wait for it. */
        while (!test_path_exists(started))
                usleep(10 * 1000);
        assert_int_equal(pthread_create(&second_thread, NULL, run_waiter, &second), 0);
        pthread_join(first_thread, NULL);
        pthread_join(second_thread, NULL);
        assert_int_equal(first.kind, DSH_BASH_COMPLETED);
        assert_int_equal(first.exit_code, 0);
        assert_int_equal(second.kind, DSH_BASH_COMPLETED);
        free(first.command);
        free(second.command);
        free(started);
}

static void test_the_pool_lends_a_runtime_to_one_call_at_a_time(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *first, *second, *again;

        assert_int_equal(service_runtime_acquire(f->context, "landlock", &first, &error), 0);
        assert_int_equal(service_runtime_acquire(f->context, "landlock", &second, &error), 0);
        assert_ptr_not_equal(first, second);
        assert_ptr_not_equal(first, service_primary_runtime(f->context));
        service_runtime_release(f->context, first);
        assert_int_equal(service_runtime_acquire(f->context, "landlock", &again, &error), 0);
        assert_ptr_equal(again, first);
        service_runtime_release(f->context, again);
        service_runtime_release(f->context, second);
}

static void test_an_unknown_backend_is_refused_by_name(void **state)
{
        fixture *f = *state;
        service_policy_fields fields = SERVICE_POLICY_FIELDS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime;

        fields.backend = "docker";
        assert_int_equal(service_resolve(f->context, &fields, &policy, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_true(test_contains(error.message, "\"docker\""));
        dsh_error_clear(&error);
        assert_int_equal(service_runtime_acquire(f->context, "docker", &runtime, &error), -EINVAL);
        assert_true(test_contains(error.message, "\"docker\""));
        dsh_error_clear(&error);
}

static void test_the_file_guard_denies_outside_the_roots(void **state)
{
        fixture *f = *state;
        service_policy_fields fields = SERVICE_POLICY_FIELDS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard;
        char *inside = test_path_join(f->workspace, "inside"), *outside = test_path_join(f->extra, "outside");

        fields.has_mode = true;
        fields.mode = DSH_MODE_WORKSPACE_WRITE;
        fields.root = f->workspace;
        assert_int_equal(service_file_guard(f->context, &fields, &guard, &error), 0);
        assert_int_equal(dsh_file_guard_write(guard, inside, "x", 1, 0, NULL, &error), 0);
        assert_true(test_path_exists(inside));
        assert_true(dsh_file_guard_write(guard, outside, "x", 1, 0, NULL, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_FS_SANDBOX_DENIED);
        assert_false(test_path_exists(outside));
        dsh_error_clear(&error);
        dsh_file_guard_free(guard);
        free(inside);
        free(outside);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_a_registered_root_lasts_until_disposed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_two_long_calls_run_at_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_the_pool_lends_a_runtime_to_one_call_at_a_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_an_unknown_backend_is_refused_by_name, setup, teardown),
                cmocka_unit_test_setup_teardown(test_the_file_guard_denies_outside_the_roots, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
