/* SPDX-License-Identifier: MIT */
/*
 * A session's denial store (policy/session-denials.h): bounded with the
 * count of those dropped, durable across handles, safe under appends from
 * several processes at once, and refusing a store it must not trust (a
 * symlink, a FIFO, a corrupt line) without repairing it.
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

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/json.h"
#include "dsh-sandbox/policy-service.h"
#include "dsh-sandbox/runtime.h"
#include "policy/session-denials.h"
#include "test-support.h"

typedef struct fixture {
        char *directory;
        dsh_session_store *store;
        dsh_session *session;
        char *store_path;               /* <directory>/<id>.denials */
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        dsh_error error = DSH_ERROR_INIT;

        f->directory = test_make_directory(NULL);
        assert_int_equal(dsh_session_store_open(f->directory, &f->store, &error), 0);
        assert_int_equal(dsh_session_create(f->store, f->directory, NULL, &f->session, &error), 0);
        assert_true(asprintf(&f->store_path, "%s/%s.denials", f->directory, dsh_session_id(f->session)) > 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        dsh_session_free(f->session);
        dsh_session_store_free(f->store);
        test_remove_tree(f->directory);
        free(f->store_path);
        free(f);
        return 0;
}

/* One write refused outside the roots: `path`, with its grant. */
static void make_denial(dsh_denial *denial, const char *path)
{
        *denial = (dsh_denial) DSH_DENIAL_INIT;
        denial->op = DSH_DENIAL_WRITE;
        denial->call = strdup("open");
        denial->path = strdup(path);
        denial->rule = strdup("outside-roots");
        denial->grant.kind = DSH_GRANT_WRITABLE_ROOT;
        denial->grant.mode = DSH_MODE_WORKSPACE_WRITE;
        denial->grant.target = strdup("/etc");
        assert_non_null(denial->path);
}

/* Appends one denial of `path` through `session`. */
static int append_one(dsh_session *session, const char *path, dsh_error *error)
{
        dsh_denials denials = DSH_DENIALS_INIT;
        dsh_denial denial;
        int result;

        make_denial(&denial, path);
        denials.items = &denial;
        denials.count = 1;
        result = session_denials_append(session, "bash", 1700000000000LL, &denials, error);
        dsh_denial_clear(&denial);
        return result;
}

static dsh_session *reopen(fixture *f)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *again = NULL;

        assert_int_equal(dsh_session_open(f->store, dsh_session_id(f->session), &again, &error), 0);
        return again;
}

static void load(dsh_session *session, dsh_session_denials *out)
{
        dsh_error error = DSH_ERROR_INIT;

        if (session_denials_load(session, out, &error) < 0)
                fail_msg("session_denials_load: %s", error.message);
}

/* A session that never recorded one has none, and an empty append writes no file. */
static void test_none_yet(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_denials empty = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;

        load(f->session, &kept);
        assert_int_equal(kept.count, 0);
        assert_int_equal(kept.dropped, 0);
        assert_int_equal(session_denials_append(f->session, "bash", 1, &empty, &error), 0);
        assert_false(test_path_exists(f->store_path));
}

/* 1030 appends keep the newest 1024, oldest first, and count the 6 dropped; a new handle reads the same. */
static void test_bounded_and_durable(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *again;
        char path[64];

        for (int i = 0; i < 1030; i++) {
                snprintf(path, sizeof(path), "/etc/x-%d", i);
                if (append_one(f->session, path, &error) < 0)
                        fail_msg("append %d: %s", i, error.message);
        }
        again = reopen(f);
        load(again, &kept);
        assert_int_equal(kept.count, DSH_SESSION_DENIALS_MAX);
        assert_int_equal(kept.dropped, 6);
        assert_string_equal(kept.items[0].denial.path, "/etc/x-6");
        assert_string_equal(kept.items[1023].denial.path, "/etc/x-1029");
        assert_string_equal(kept.items[0].surface, "bash");
        assert_int_equal(kept.items[0].at_ms, 1700000000000LL);
        assert_string_equal(kept.items[0].denial.rule, "outside-roots");
        assert_int_equal(kept.items[0].denial.grant.kind, DSH_GRANT_WRITABLE_ROOT);
        assert_string_equal(kept.items[0].denial.grant.target, "/etc");
        dsh_session_denials_clear(&kept);
        dsh_session_free(again);
}

/* A call's own dropped count is the session's too; the store is not a session `session list` shows. */
static void test_call_dropped_counted(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_denials denials = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_denial denial;
        char **ids = NULL;

        make_denial(&denial, "/usr/y");
        denials.items = &denial;
        denials.count = 1;
        denials.dropped = 5;
        assert_int_equal(session_denials_append(f->session, "fs", 2, &denials, &error), 0);
        denials.count = 0;
        denials.dropped = 2;
        assert_int_equal(session_denials_append(f->session, "fs", 3, &denials, &error), 0);
        dsh_denial_clear(&denial);
        load(f->session, &kept);
        assert_int_equal(kept.count, 1);
        assert_int_equal(kept.dropped, 7);
        assert_string_equal(kept.items[0].surface, "fs");
        dsh_session_denials_clear(&kept);
        assert_int_equal(dsh_session_store_list(f->store, &ids, &error), 0);
        assert_int_equal(dsh_strv_length(ids), 1);
        assert_string_equal(ids[0], dsh_session_id(f->session));
        dsh_strv_free(ids);
}

#define APPENDERS 2
#define APPENDS_EACH 60

/* A child with a handle of its own appends /w/<child>/<n>, one at a time. */
static void append_as_child(const char *directory, const char *id, int child)
{
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        dsh_error error = DSH_ERROR_INIT;
        char path[64];

        if (dsh_session_store_open(directory, &store, &error) < 0 || dsh_session_open(store, id, &session, &error) < 0)
                _exit(2);
        for (int n = 0; n < APPENDS_EACH; n++) {
                snprintf(path, sizeof(path), "/w/%d/%d", child, n);
                if (append_one(session, path, &error) < 0)
                        _exit(3);
        }
        dsh_session_free(session);
        dsh_session_store_free(store);
        _exit(0);
}

/* Two processes appending at once lose nothing: every record is there exactly once, in each writer's order. */
static void test_concurrent_appends_lose_nothing(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        int next[APPENDERS] = { 0 };
        pid_t children[APPENDERS];

        for (int i = 0; i < APPENDERS; i++) {
                children[i] = fork();
                assert_true(children[i] >= 0);
                if (children[i] == 0)
                        append_as_child(f->directory, dsh_session_id(f->session), i);
        }
        for (int i = 0; i < APPENDERS; i++) {
                int status = 0;

                assert_int_equal(waitpid(children[i], &status, 0), children[i]);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        load(f->session, &kept);
        assert_int_equal(kept.count, APPENDERS * APPENDS_EACH);
        assert_int_equal(kept.dropped, 0);
        for (size_t i = 0; i < kept.count; i++) {
                int child = -1, n = -1;

                assert_int_equal(sscanf(kept.items[i].denial.path, "/w/%d/%d", &child, &n), 2);
                assert_true(child >= 0 && child < APPENDERS);
                assert_int_equal(n, next[child]);
                next[child]++;
        }
        for (int i = 0; i < APPENDERS; i++)
                assert_int_equal(next[i], APPENDS_EACH);
        dsh_session_denials_clear(&kept);
}

/* A store replaced by a symlink is refused, on read and on append; neither the link nor its target changes. */
static void test_symlinked_store_refused(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *target = test_path_join(f->directory, "elsewhere");
        char *content;
        struct stat status;

        test_write_file(target, "someone else's file\n");
        assert_int_equal(symlink(target, f->store_path), 0);
        assert_int_equal(session_denials_load(f->session, &kept, &error), -EINVAL);
        assert_true(test_contains(error.message, "is not a regular file"));
        dsh_error_clear(&error);
        assert_true(append_one(f->session, "/etc/x", &error) < 0);
        assert_true(test_contains(error.message, "is not a regular file"));
        dsh_error_clear(&error);
        assert_int_equal(lstat(f->store_path, &status), 0);
        assert_true(S_ISLNK(status.st_mode));
        content = test_read_file(target);
        assert_string_equal(content, "someone else's file\n");
        free(content);
        free(target);
}

/* A FIFO in the store's place is refused at once: the open does not wait for a writer. */
static void test_fifo_store_refused_without_blocking(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        struct stat status;

        assert_int_equal(mkfifo(f->store_path, 0600), 0);
        assert_int_equal(session_denials_load(f->session, &kept, &error), -EINVAL);
        assert_true(test_contains(error.message, "is not a regular file"));
        dsh_error_clear(&error);
        assert_true(append_one(f->session, "/etc/x", &error) < 0);
        dsh_error_clear(&error);
        assert_int_equal(lstat(f->store_path, &status), 0);
        assert_true(S_ISFIFO(status.st_mode));
}

/* Rewrites the store with line `number` (1-based) replaced by `replacement`. */
static void replace_line(const char *path, int number, const char *replacement)
{
        char *content = test_read_file(path), *line = content, *end;
        FILE *out;

        for (int i = 1; i < number; i++)
                line = strchr(line, '\n') + 1;
        end = strchr(line, '\n');
        out = fopen(path, "w");
        assert_non_null(out);
        fprintf(out, "%.*s%s%s", (int) (line - content), content, replacement, end);
        fclose(out);
        free(content);
}

/* A corrupt line is reported with the file and the line, and an append leaves the store byte for byte as it was. */
static void test_corrupt_line_reported_never_overwritten(void **state)
{
        static const struct {
                int line;
                const char *text;
                const char *reason;
        } cases[] = {
                { 2, "{\"op\":\"write\"", "not JSON" },
                { 2, "{\"op\":\"teleport\",\"rule\":\"x\",\"source\":\"supervisor\",\"grant\":{\"kind\":\"none\"},"
                     "\"at\":1,\"surface\":\"bash\"}", "op" },
                { 2, "{\"op\":\"write\",\"rule\":\"x\",\"source\":\"supervisor\",\"grant\":{\"kind\":\"none\"}}",
                  "\"at\"" },
                { 3, "{\"op\":\"write\",\"rule\":\"x\",\"source\":\"supervisor\",\"grant\":{\"kind\":\"none\"},"
                     "\"at\":1,\"surface\":\"bash\",\"extra\":true}", "extra" },
                { 1, "{\"type\":\"denials\",\"version\":0,\"id\":\"another\",\"dropped\":0}", "another session" },
                { 1, "{\"type\":\"denials\",\"version\":1,\"id\":\"x\",\"dropped\":0}", "version" },
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
                dsh_error error = DSH_ERROR_INIT;
                char *before, *after, where[32];

                unlink(f->store_path);
                assert_int_equal(append_one(f->session, "/etc/a", &error), 0);
                assert_int_equal(append_one(f->session, "/etc/b", &error), 0);
                replace_line(f->store_path, cases[i].line, cases[i].text);
                before = test_read_file(f->store_path);
                assert_int_equal(session_denials_load(f->session, &kept, &error), -EBADMSG);
                snprintf(where, sizeof(where), ": line %d: ", cases[i].line);
                if (!test_contains(error.message, where) || !test_contains(error.message, cases[i].reason) ||
                    !test_contains(error.message, f->store_path))
                        fail_msg("case %zu: %s", i, error.message);
                assert_int_equal(error.code, DSH_ERROR_INVARIANT);
                dsh_error_clear(&error);
                assert_int_equal(append_one(f->session, "/etc/c", &error), -EBADMSG);
                dsh_error_clear(&error);
                after = test_read_file(f->store_path);
                assert_string_equal(before, after);
                free(before);
                free(after);
        }
}

/* A store cut short (no final newline) is corrupt, not a torn tail to drop: it is only ever renamed in whole. */
static void test_cut_store_reported(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *content;

        assert_int_equal(append_one(f->session, "/etc/a", &error), 0);
        content = test_read_file(f->store_path);
        assert_int_equal(truncate(f->store_path, (off_t) strlen(content) - 1), 0);
        assert_int_equal(session_denials_load(f->session, &kept, &error), -EBADMSG);
        assert_true(test_contains(error.message, "line 2: not terminated by a newline"));
        dsh_error_clear(&error);
        test_write_file(f->store_path, "");
        assert_int_equal(session_denials_load(f->session, &kept, &error), -EBADMSG);
        assert_true(test_contains(error.message, "line 1: missing header"));
        dsh_error_clear(&error);
        free(content);
}

/* A store longer than the bound is refused without reading it all (a sparse file claims what it likes). */
static void test_oversized_store_refused(void **state)
{
        fixture *f = *state;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        struct stat status;

        test_write_file(f->store_path, "");
        assert_int_equal(truncate(f->store_path, (off_t) SESSION_DENIALS_FILE_LIMIT + 4096), 0);
        assert_int_equal(session_denials_load(f->session, &kept, &error), -EFBIG);
        assert_true(test_contains(error.message, "is longer than"));
        dsh_error_clear(&error);
        assert_int_equal(append_one(f->session, "/etc/x", &error), -EFBIG);
        dsh_error_clear(&error);
        assert_int_equal(stat(f->store_path, &status), 0);
        assert_int_equal(status.st_size, (off_t) SESSION_DENIALS_FILE_LIMIT + 4096);
}

/* A surface must name a tool: what a record says it came from is one short word. */
static void test_surface_checked(void **state)
{
        fixture *f = *state;
        dsh_denials denials = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;

        denials.dropped = 1;
        assert_int_equal(session_denials_append(f->session, "Bash\n", 1, &denials, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        assert_int_equal(session_denials_append(f->session, "", 1, &denials, &error), -EINVAL);
        dsh_error_clear(&error);
        assert_false(test_path_exists(f->store_path));
}

/* Through the runtime: an agentless policy keeps nothing, a session's policy keeps its records, JSON shows them. */
static void test_runtime_records(void **state)
{
        fixture *f = *state;
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_session_denials kept = DSH_SESSION_DENIALS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_denials denials = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_denial denial;
        char *text = NULL;

        setenv("XDG_CONFIG_HOME", f->directory, 1);
        unsetenv("DSH_SANDBOX_CONFIG");
        options.state_directory = f->directory;
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message);
        make_denial(&denial, "/etc/hosts");
        denials.items = &denial;
        denials.count = 1;
        assert_int_equal(dsh_runtime_record_denials(runtime, &policy, "bash", &denials, &error), 0);
        assert_false(test_path_exists(f->store_path));
        policy.session_id = (char *) dsh_session_id(f->session);
        assert_int_equal(dsh_runtime_record_denials(runtime, &policy, "bash", &denials, &error), 0);
        assert_int_equal(dsh_runtime_session_denials(runtime, dsh_session_id(f->session), &kept, &error), 0);
        assert_int_equal(kept.count, 1);
        assert_string_equal(kept.items[0].denial.path, "/etc/hosts");
        assert_true(kept.items[0].at_ms > 1700000000000LL);
        assert_int_equal(dsh_json_encode_session_denials(dsh_session_id(f->session), &kept, &text, &error), 0);
        assert_true(test_contains(text, "\"path\":\"/etc/hosts\""));
        assert_true(test_contains(text, "\"surface\":\"bash\""));
        assert_false(test_contains(text, "\"dropped\""));
        free(text);
        dsh_session_denials_clear(&kept);
        assert_int_equal(dsh_runtime_session_denials(runtime, "no-such-session", &kept, &error), -ENOENT);
        dsh_error_clear(&error);
        assert_int_equal(dsh_runtime_session_denials(runtime, "../escape", &kept, &error), -EINVAL);
        dsh_error_clear(&error);
        policy.session_id = NULL;
        dsh_denial_clear(&denial);
        dsh_runtime_free(runtime);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_none_yet, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bounded_and_durable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_call_dropped_counted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_appends_lose_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_store_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_store_refused_without_blocking, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrupt_line_reported_never_overwritten, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cut_store_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_oversized_store_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_surface_checked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_runtime_records, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
