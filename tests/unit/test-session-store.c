/* SPDX-License-Identifier: MIT */
/* The session store: format, fold, invariant, delegation, crash and concurrency rules. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "dsh-sandbox/policy-service.h"
#include "test-support.h"

typedef struct fixture {
        char *directory;
        dsh_session_store *store;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        dsh_error error = DSH_ERROR_INIT;

        f->directory = test_make_directory(NULL);
        assert_int_equal(dsh_session_store_open(f->directory, &f->store, &error), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        dsh_session_store_free(f->store);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

static dsh_session *create_session(fixture *f, const char *cwd, dsh_session *parent)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;

        assert_int_equal(dsh_session_create(f->store, cwd ? cwd : f->directory, parent, &session, &error), 0);
        return session;
}

static dsh_session *reopen(fixture *f, const dsh_session *session)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *again = NULL;

        assert_int_equal(dsh_session_open(f->store, dsh_session_id(session), &again, &error), 0);
        return again;
}

static size_t count_lines(const char *text)
{
        size_t lines = 0;

        for (; text && *text; text++)
                lines += *text == '\n';
        return lines;
}

/* Writes a log by hand (the id is the file name) and tries to open it. */
static int open_written(fixture *f, const char *id, const char *content, dsh_session **session, dsh_error *error)
{
        char *name = NULL, *path;

        assert_true(asprintf(&name, "%s.jsonl", id) > 0);
        path = test_path_join(f->directory, name);
        test_write_file(path, content);
        free(path);
        free(name);
        *session = NULL;
        return dsh_session_open(f->store, id, session, error);
}

static void test_ids(void **state)
{
        (void) state;
        assert_true(dsh_session_id_is_valid("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"));
        assert_true(dsh_session_id_is_valid("a.b_c-D9"));
        assert_false(dsh_session_id_is_valid("../x"));
        assert_false(dsh_session_id_is_valid(".."));
        assert_false(dsh_session_id_is_valid(".hidden"));
        assert_false(dsh_session_id_is_valid("a/b"));
        assert_false(dsh_session_id_is_valid(""));
        assert_false(dsh_session_id_is_valid(NULL));
        assert_false(dsh_session_id_is_valid("a b"));
        {
                char long_id[DSH_SESSION_ID_MAX + 2];

                memset(long_id, 'a', sizeof(long_id) - 1);
                long_id[sizeof(long_id) - 1] = '\0';
                assert_false(dsh_session_id_is_valid(long_id));
                long_id[DSH_SESSION_ID_MAX] = '\0';
                assert_true(dsh_session_id_is_valid(long_id));
        }
}

static void test_open_rejects_traversal(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;

        assert_true(dsh_session_open(f->store, "../x", &session, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_null(session);
        dsh_error_clear(&error);
}

static void test_create_writes_header(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, "/some/where", NULL);
        char *content = test_read_file(dsh_session_path(session));
        json_t *header = json_loads(content, JSON_DISABLE_EOF_CHECK, NULL);
        char **ids = NULL;
        dsh_error error = DSH_ERROR_INIT;
        size_t length = 0;
        dsh_mode mode;

        assert_true(dsh_session_id_is_valid(dsh_session_id(session)));
        assert_int_equal(strlen(dsh_session_id(session)), 36);
        assert_int_equal(count_lines(content), 1);
        assert_non_null(header);
        assert_string_equal(json_string_value(json_object_get(header, "type")), "session");
        assert_int_equal(json_integer_value(json_object_get(header, "version")), 0);
        assert_string_equal(json_string_value(json_object_get(header, "id")), dsh_session_id(session));
        assert_string_equal(json_string_value(json_object_get(header, "cwd")), "/some/where");
        assert_int_equal(json_integer_value(json_object_get(header, "delegationDepth")), 0);
        assert_true(json_integer_value(json_object_get(header, "createdAt")) > 1600000000000LL);
        assert_string_equal(dsh_session_cwd(session, &length), "/some/where");
        assert_int_equal(length, strlen("/some/where"));
        assert_false(dsh_session_override(session, &mode));
        assert_int_equal(dsh_session_event_count(session), 0);

        assert_int_equal(dsh_session_store_list(f->store, &ids, &error), 0);
        assert_int_equal(dsh_strv_length(ids), 1);
        assert_string_equal(ids[0], dsh_session_id(session));
        dsh_strv_free(ids);
        json_decref(header);
        free(content);
        dsh_session_free(session);
}

static void test_relative_cwd_rejected_at_create(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;

        assert_true(dsh_session_create(f->store, "relative/dir", NULL, &session, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
        assert_null(session);
        dsh_error_clear(&error);
}

static void test_set_mode_appends_one_event_and_survives_restart(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL), *again;
        dsh_error error = DSH_ERROR_INIT;
        uint64_t seq = 0;
        char *content;
        dsh_mode mode;

        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, &seq, &error), 0);
        assert_int_equal(seq, 1);
        content = test_read_file(dsh_session_path(session));
        assert_int_equal(count_lines(content), 2);
        assert_non_null(strstr(content, "\n{\"type\":\"sandbox/mode\",\"seq\":1,\"time\":"));
        assert_non_null(strstr(content, ",\"data\":{\"mode\":\"workspace-write\"}}\n"));
        free(content);
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_DANGER_FULL_ACCESS, &seq, &error), 0);
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_READ_ONLY, &seq, &error), 0);
        assert_int_equal(seq, 3);
        assert_true(dsh_session_override(session, &mode));
        assert_int_equal(mode, DSH_MODE_READ_ONLY);

        /* A new handle (as after a restart) replays to the same fold: the last event wins. */
        again = reopen(f, session);
        assert_true(dsh_session_override(again, &mode));
        assert_int_equal(mode, DSH_MODE_READ_ONLY);
        assert_int_equal(dsh_session_event_count(again), 3);
        assert_int_equal(dsh_session_last_seq(again), 3);

        /* A handle catches up with what another handle appended. */
        assert_int_equal(dsh_session_set_mode(again, DSH_MODE_WORKSPACE_WRITE, &seq, &error), 0);
        assert_int_equal(seq, 4);
        assert_int_equal(dsh_session_refresh(session, &error), 0);
        assert_true(dsh_session_override(session, &mode));
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_session_free(again);
        dsh_session_free(session);
}

static void test_invariant_on_append(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL);
        dsh_error error = DSH_ERROR_INIT;
        char *before = test_read_file(dsh_session_path(session)), *after;

        assert_true(dsh_session_append(session, "sandbox/mode", "{\"mode\":\"bogus\"}", NULL, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVARIANT);
        assert_string_equal(error.message, "sandbox/mode carries unknown mode \"bogus\"");
        dsh_error_clear(&error);
        /* A NUL inside the name is not "read-only". */
        assert_true(dsh_session_append(session, "sandbox/mode", "{\"mode\":\"read-only\\u0000x\"}", NULL, &error) < 0);
        assert_string_equal(error.message, "sandbox/mode carries unknown mode \"read-only\\u0000x\"");
        dsh_error_clear(&error);
        assert_true(dsh_session_append(session, "sandbox/mode", "{}", NULL, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVARIANT);
        dsh_error_clear(&error);
        assert_true(dsh_session_set_mode(session, (dsh_mode) 7, NULL, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVARIANT);
        dsh_error_clear(&error);
        assert_true(dsh_session_append(session, "session", NULL, NULL, &error) < 0);
        dsh_error_clear(&error);
        after = test_read_file(dsh_session_path(session));
        assert_string_equal(before, after);
        free(before);
        free(after);
        dsh_session_free(session);
}

#define HEADER(id) "{\"type\":\"session\",\"version\":0,\"id\":\"" id "\",\"createdAt\":1,\"cwd\":\"/w\",\"delegationDepth\":0}\n"
#define MODE_EVENT(seq, mode) "{\"type\":\"sandbox/mode\",\"seq\":" #seq ",\"time\":2,\"data\":{\"mode\":\"" mode "\"}}\n"

static void test_invariant_on_load(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session;

        assert_true(open_written(f, "edited", HEADER("edited") MODE_EVENT(1, "read-only") MODE_EVENT(2, "bogus"),
                                 &session, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_INVARIANT);
        assert_non_null(strstr(error.message, "edited.jsonl: line 3: sandbox/mode carries unknown mode \"bogus\""));
        dsh_error_clear(&error);
        /* Not the canonical spelling: the full parser applies the same invariant. */
        assert_true(open_written(f, "spaced", HEADER("spaced") "{\"type\": \"sandbox/mode\", \"seq\": 1, \"data\": {\"mode\": 5}}\n",
                                 &session, &error) < 0);
        assert_non_null(strstr(error.message, "line 2: sandbox/mode carries unknown mode 5"));
        dsh_error_clear(&error);
}

static void test_corrupt_lines(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session;

        assert_true(open_written(f, "middle", HEADER("middle") MODE_EVENT(1, "read-only") "{\"type\":\"sandbox/mo\n"
                                 MODE_EVENT(3, "workspace-write"), &session, &error) < 0);
        assert_non_null(strstr(error.message, "middle.jsonl: line 3: corrupt line"));
        dsh_error_clear(&error);
        assert_true(open_written(f, "dupseq", HEADER("dupseq") MODE_EVENT(1, "read-only") MODE_EVENT(1, "read-only"),
                                 &session, &error) < 0);
        assert_non_null(strstr(error.message, "line 3: seq 1 does not follow seq 1"));
        dsh_error_clear(&error);
        assert_true(open_written(f, "noheader", MODE_EVENT(1, "read-only"), &session, &error) < 0);
        assert_non_null(strstr(error.message, "line 1:"));
        dsh_error_clear(&error);
        assert_true(open_written(f, "wrongid", HEADER("other"), &session, &error) < 0);
        assert_non_null(strstr(error.message, "does not match"));
        dsh_error_clear(&error);
        assert_true(open_written(f, "empty", "", &session, &error) < 0);
        assert_non_null(strstr(error.message, "missing session header"));
        dsh_error_clear(&error);
        assert_true(dsh_session_open(f->store, "missing", &session, &error) < 0);
        assert_int_equal(error.errno_value, ENOENT);
        assert_non_null(strstr(error.message, "session \"missing\" does not exist"));
        dsh_error_clear(&error);
}

/* Events of ignored types take a syntax-only fast path; it must agree with jansson. */
static void test_ignored_event_syntax(void **state)
{
        static const char *const valid[] = {
                "{\"type\":\"user/message\",\"seq\":2}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":{\"text\":\"a \\\"q\\\" \\u00e9 \\n\",\"n\":[-1.5e+3,0,true,false,null,{}],\"type\":\"nested is fine\"}}",
                "{\"type\":\"user/message\",\"seq\":2, \"data\" : [ ] } ",
                "{\"type\":\"tool/call\",\"seq\":2,\"time\":1,\"data\":{\"x\":\"\xc3\xa9\"}}",
        };
        static const char *const corrupt[] = {
                "{\"type\":\"user/message\",\"seq\":2,\"data\":{\"a\":tru}}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":{}} x",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":\"open}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":\"tab\there\"}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":[1,]}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":01}",
                "{\"type\":\"user/message\",\"seq\":2,\"data\":\"\\x\"}",
                /* A second envelope key: JSON.parse would read the last one; refused. */
                "{\"type\":\"user/message\",\"seq\":2,\"type\":\"sandbox/mode\",\"data\":{\"mode\":\"bogus\"}}",
                "{\"type\":\"user/message\",\"seq\":2,\"seq\":1}",
        };
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;

        for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
                dsh_session *session = NULL;
                char *log = NULL;

                assert_true(asprintf(&log, HEADER("valid") MODE_EVENT(1, "workspace-write") "%s\n", valid[i]) > 0);
                assert_int_equal(open_written(f, "valid", log, &session, &error), 0);
                assert_int_equal(dsh_session_event_count(session), 2);
                assert_int_equal(dsh_session_last_seq(session), 2);
                dsh_session_free(session);
                free(log);
        }
        for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
                dsh_session *session = NULL;
                char *log = NULL;

                assert_true(asprintf(&log, HEADER("corrupt") MODE_EVENT(1, "workspace-write") "%s\n", corrupt[i]) > 0);
                assert_true(open_written(f, "corrupt", log, &session, &error) < 0);
                assert_non_null(strstr(error.message, "corrupt.jsonl: line 3: "));
                dsh_error_clear(&error);
                free(log);
        }
}

static void test_unknown_events_kept_and_ignored(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session;
        uint64_t seq = 0;
        dsh_mode mode;

        assert_int_equal(open_written(f, "newer", HEADER("newer") MODE_EVENT(1, "workspace-write")
                                      "{\"type\":\"user/message\",\"seq\":2,\"time\":3,\"data\":{\"text\":\"hi\",\"x\":[1,{}]}}\n"
                                      "{\"type\":\"future/thing\",\"seq\":5,\"extra\":true}\n",
                                      &session, &error), 0);
        assert_true(dsh_session_override(session, &mode));
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
        assert_int_equal(dsh_session_event_count(session), 3);
        assert_int_equal(dsh_session_append(session, "tool/call", "{\"name\":\"bash\"}", &seq, &error), 0);
        assert_int_equal(seq, 6);
        assert_true(dsh_session_override(session, &mode));
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_session_free(session);
}

static void test_delegation(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *parent = create_session(f, NULL, NULL), *child, *plain;
        bool stamped = true;
        char *content;
        dsh_mode mode;

        /* No override on the parent: nothing to stamp. */
        plain = create_session(f, NULL, parent);
        assert_false(dsh_session_override(plain, &mode));
        assert_int_equal(dsh_session_event_count(plain), 0);
        assert_int_equal(dsh_session_delegation_depth(plain), 1);

        assert_int_equal(dsh_session_set_mode(parent, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        child = create_session(f, "/elsewhere", parent);
        assert_int_equal(dsh_session_delegation_depth(child), 1);
        assert_true(dsh_session_override(child, &mode));
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
        content = test_read_file(dsh_session_path(child));
        assert_non_null(strstr(content, "\"data\":{\"mode\":\"workspace-write\",\"source\":\"delegation\"}"));
        assert_int_equal(count_lines(content), 2);
        free(content);

        /* Stamping what the child already folds to is skipped ... */
        assert_int_equal(dsh_session_stamp_override(child, DSH_MODE_WORKSPACE_WRITE, &stamped, &error), 0);
        assert_false(stamped);
        assert_int_equal(dsh_session_event_count(child), 1);
        /* ... a different mode is stamped. */
        assert_int_equal(dsh_session_stamp_override(child, DSH_MODE_READ_ONLY, &stamped, &error), 0);
        assert_true(stamped);
        assert_true(dsh_session_override(child, &mode));
        assert_int_equal(mode, DSH_MODE_READ_ONLY);
        /* The grandchild is one level deeper and inherits the child's tightened mode. */
        {
                dsh_session *grandchild = create_session(f, NULL, child);

                assert_int_equal(dsh_session_delegation_depth(grandchild), 2);
                assert_true(dsh_session_override(grandchild, &mode));
                assert_int_equal(mode, DSH_MODE_READ_ONLY);
                dsh_session_free(grandchild);
        }
        dsh_session_free(plain);
        dsh_session_free(child);
        dsh_session_free(parent);
}

/* Every byte offset of the last line: complete events all load, the fragment never counts,
 * and the next append lands on a line of its own. */
static void test_torn_last_line_at_every_offset(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL);
        dsh_error error = DSH_ERROR_INIT;
        char *content, *last_line, *path, *id;
        size_t full_length, last_start;

        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        assert_int_equal(dsh_session_append(session, "user/message", "{\"text\":\"between\"}", NULL, &error), 0);
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_DANGER_FULL_ACCESS, NULL, &error), 0);
        path = strdup(dsh_session_path(session));
        id = strdup(dsh_session_id(session));
        content = test_read_file(path);
        full_length = strlen(content);
        content[full_length - 1] = '\0';
        last_line = strrchr(content, '\n') + 1;
        last_start = (size_t) (last_line - content);
        content[full_length - 1] = '\n';
        dsh_session_free(session);

        for (size_t cut = last_start; cut <= full_length; cut++) {
                dsh_session *torn = NULL, *after = NULL;
                char *written;
                uint64_t seq = 0;
                dsh_mode mode;
                int fd = open(path, O_WRONLY | O_TRUNC);

                assert_true(fd >= 0);
                assert_int_equal(write(fd, content, cut), (ssize_t) cut);
                close(fd);
                assert_int_equal(dsh_session_open(f->store, id, &torn, &error), 0);
                assert_int_equal(dsh_session_event_count(torn), cut == full_length ? 3 : 2);
                assert_true(dsh_session_override(torn, &mode));
                assert_int_equal(mode, cut == full_length ? DSH_MODE_DANGER_FULL_ACCESS : DSH_MODE_WORKSPACE_WRITE);

                /* The next append cuts the fragment and starts on its own line. */
                assert_int_equal(dsh_session_set_mode(torn, DSH_MODE_READ_ONLY, &seq, &error), 0);
                assert_int_equal(seq, cut == full_length ? 4 : 3);
                written = test_read_file(path);
                assert_int_equal(strncmp(written, content, last_start), 0);
                assert_int_equal(count_lines(written), cut == full_length ? 5 : 4);
                after = reopen(f, torn);
                assert_int_equal(dsh_session_last_seq(after), seq);
                assert_true(dsh_session_override(after, &mode));
                assert_int_equal(mode, DSH_MODE_READ_ONLY);
                free(written);
                dsh_session_free(after);
                dsh_session_free(torn);
        }
        free(content);
        free(path);
        free(id);
}

#define APPENDERS 4
#define APPENDS_EACH 250

static void append_as_child(const char *directory, const char *id, int child, int report_fd)
{
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_session_store_open(directory, &store, &error) < 0 || dsh_session_open(store, id, &session, &error) < 0)
                _exit(2);
        for (int i = 0; i < APPENDS_EACH; i++) {
                char data[64];
                uint64_t seq = 0;

                snprintf(data, sizeof(data), "{\"child\":%d,\"n\":%d}", child, i);
                if (dsh_session_append(session, "test/ack", data, &seq, &error) < 0)
                        _exit(3);
                /* Acknowledged: the report names the seq this event got. */
                dprintf(report_fd, "%d %d %" PRIu64 "\n", child, i, seq);
        }
        dsh_session_free(session);
        dsh_session_store_free(store);
        _exit(0);
}

static void test_concurrent_appenders(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL);
        char *report_path = test_path_join(f->directory, "acks.txt");
        int report_fd = open(report_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        static uint64_t acknowledged[APPENDERS][APPENDS_EACH];
        static bool seen[APPENDERS * APPENDS_EACH + 1];
        pid_t children[APPENDERS];
        char *content, *line;
        FILE *reports;
        int child, n;
        uint64_t seq;

        assert_true(report_fd >= 0);
        for (int i = 0; i < APPENDERS; i++) {
                children[i] = fork();
                assert_true(children[i] >= 0);
                if (children[i] == 0)
                        append_as_child(f->directory, dsh_session_id(session), i, report_fd);
        }
        for (int i = 0; i < APPENDERS; i++) {
                int status = 0;

                assert_int_equal(waitpid(children[i], &status, 0), children[i]);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        close(report_fd);
        reports = fopen(report_path, "r");
        assert_non_null(reports);
        memset(acknowledged, 0, sizeof(acknowledged));
        while (fscanf(reports, "%d %d %" SCNu64, &child, &n, &seq) == 3)
                acknowledged[child][n] = seq;
        fclose(reports);

        /* The log: the header, then seq 1..N exactly once each, every acknowledged event present
         * with the seq its writer was told. */
        content = test_read_file(dsh_session_path(session));
        assert_int_equal(count_lines(content), 1 + APPENDERS * APPENDS_EACH);
        memset(seen, 0, sizeof(seen));
        line = strchr(content, '\n') + 1;
        for (uint64_t expected = 1; *line; expected++) {
                json_t *event = json_loadb(line, (size_t) (strchr(line, '\n') - line), 0, NULL);
                json_t *data = json_object_get(event, "data");

                assert_non_null(event);
                seq = (uint64_t) json_integer_value(json_object_get(event, "seq"));
                assert_int_equal(seq, expected);
                child = (int) json_integer_value(json_object_get(data, "child"));
                n = (int) json_integer_value(json_object_get(data, "n"));
                assert_int_equal(acknowledged[child][n], seq);
                assert_false(seen[seq]);
                seen[seq] = true;
                json_decref(event);
                line = strchr(line, '\n') + 1;
        }
        for (int i = 0; i < APPENDERS; i++)
                for (int j = 0; j < APPENDS_EACH; j++)
                        assert_true(acknowledged[i][j] > 0);
        free(content);
        free(report_path);
        dsh_session_free(session);
}

/* A full disk, simulated with RLIMIT_FSIZE: the append fails, and the log is byte for byte
 * what it was (no fragment, no event the caller was told failed). */
static void test_full_disk_leaves_log_unchanged(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL);
        dsh_error error = DSH_ERROR_INIT;
        char *before, *after;
        struct stat status;
        pid_t pid;
        int wait_status = 0;

        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        before = test_read_file(dsh_session_path(session));
        assert_int_equal(stat(dsh_session_path(session), &status), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rlimit limit = { (rlim_t) status.st_size + 20, (rlim_t) status.st_size + 20 };

                signal(SIGXFSZ, SIG_IGN);
                if (setrlimit(RLIMIT_FSIZE, &limit) < 0)
                        _exit(10);
                if (dsh_session_set_mode(session, DSH_MODE_READ_ONLY, NULL, &error) == 0)
                        _exit(11);
                if (!strstr(error.message, dsh_session_path(session)) || error.errno_value != EFBIG)
                        _exit(12);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &wait_status, 0), pid);
        assert_true(WIFEXITED(wait_status));
        assert_int_equal(WEXITSTATUS(wait_status), 0);
        after = test_read_file(dsh_session_path(session));
        assert_string_equal(before, after);
        /* And the log still takes appends once there is room. */
        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_READ_ONLY, NULL, &error), 0);
        assert_int_equal(dsh_session_last_seq(session), 2);
        free(before);
        free(after);
        dsh_session_free(session);
}

/* The largest seq a log can hold is INT64_MAX: after it no event can follow, and the log stays as it was. */
static void test_seq_overflow_refused(void **state)
{
        fixture *f = *state;
        static const char log[] = HEADER("last") MODE_EVENT(9223372036854775806, "read-only")
                MODE_EVENT(9223372036854775807, "workspace-write");
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL, *again = NULL;
        char *path, *after;
        dsh_mode mode;

        assert_int_equal(open_written(f, "last", log, &session, &error), 0);
        assert_int_equal(dsh_session_last_seq(session), 9223372036854775807ULL);
        path = strdup(dsh_session_path(session));
        assert_true(dsh_session_set_mode(session, DSH_MODE_READ_ONLY, NULL, &error) < 0);
        assert_int_equal(error.errno_value, EOVERFLOW);
        assert_non_null(strstr(error.message, "seq 9223372036854775807"));
        assert_non_null(strstr(error.message, path));
        dsh_error_clear(&error);
        assert_true(dsh_session_append(session, "user/message", NULL, NULL, &error) < 0);
        dsh_error_clear(&error);
        /* Nothing was written: the file is byte for byte what it was, and it still loads. */
        after = test_read_file(path);
        assert_string_equal(after, log);
        assert_int_equal(dsh_session_open(f->store, "last", &again, &error), 0);
        assert_true(dsh_session_override(again, &mode));
        assert_int_equal(mode, DSH_MODE_WORKSPACE_WRITE);
        dsh_session_free(again);
        dsh_session_free(session);
        free(after);
        free(path);
}

/*
 * A FIFO named like a session log (a confined command that can write the
 * store could plant one) is refused at once.  Root opens it read-write
 * without blocking; the read-only fallback, taken when the log is not
 * writable, would wait for a writer forever, so the open runs as an
 * unprivileged user when the test runs as root.
 */
static void test_fifo_log_refused_without_blocking(void **state)
{
        fixture *f = *state;
        char *fifo = test_path_join(f->directory, "fifo.jsonl");
        int status = 0;
        pid_t pid;

        assert_int_equal(chmod(f->directory, 0755), 0);
        assert_int_equal(mkfifo(fifo, 0444), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dsh_error error = DSH_ERROR_INIT;
                dsh_session *session = NULL;

                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(3);
                alarm(10);
                if (dsh_session_open(f->store, "fifo", &session, &error) == 0)
                        _exit(1);
                _exit(strstr(error.message, "fifo.jsonl is not a regular file") ? 0 : 2);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
                fail_msg("opening a FIFO session log blocked (killed by signal %d)", WTERMSIG(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        free(fifo);
}

/* The recorded cwd is canonical: a symlink the user named resolves once, at creation. */
static void test_cwd_recorded_canonical(void **state)
{
        fixture *f = *state;
        char *real = test_path_join(f->directory, "real"), *link = test_path_join(f->directory, "link");
        char *spelled = NULL, *expected = NULL;
        dsh_session *session;

        assert_int_equal(mkdir(real, 0755), 0);
        assert_int_equal(symlink(real, link), 0);
        assert_true(asprintf(&spelled, "%s/link/./new/../x", f->directory) > 0);
        assert_true(asprintf(&expected, "%s/x", real) > 0);
        session = create_session(f, spelled, NULL);
        assert_string_equal(dsh_session_cwd(session, NULL), expected);
        dsh_session_free(session);
        free(expected);
        free(spelled);
        free(link);
        free(real);
}

/* A cwd a JSON log cannot record is refused with the reason, not reported as "out of memory". */
static void test_cwd_not_utf8_refused(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;
        char **ids = NULL;

        assert_true(dsh_session_create(f->store, "/var/tmp/junk\xff", NULL, &session, &error) < 0);
        assert_null(session);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(strstr(error.message, "not valid UTF-8"));
        assert_non_null(strstr(error.message, "0xff"));
        dsh_error_clear(&error);
        assert_int_equal(dsh_session_store_list(f->store, &ids, &error), 0);
        assert_int_equal(dsh_strv_length(ids), 0);
        dsh_strv_free(ids);
}

static void test_unwritable_state_directory(void **state)
{
        fixture *f = *state;
        char *file = test_path_join(f->directory, "not-a-directory");
        char *below = test_path_join(file, "state");
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        dsh_error error = DSH_ERROR_INIT;

        test_write_file(file, "x");
        assert_int_equal(dsh_session_store_open(below, &store, &error), 0);
        assert_true(dsh_session_create(store, "/", NULL, &session, &error) < 0);
        assert_null(session);
        assert_non_null(strstr(error.message, below));
        dsh_error_clear(&error);
        dsh_session_store_free(store);
        free(below);
        free(file);
}

struct visit_count {
        int header;
        int events;
        char types[256];
};

static int count_visit(const dsh_session_event *event, void *userdata)
{
        struct visit_count *count = userdata;

        if (event->seq == 0) {
                count->header++;
                return 0;
        }
        count->events++;
        strncat(count->types, event->type, sizeof(count->types) - strlen(count->types) - 2);
        strcat(count->types, ",");
        return 0;
}

static void test_foreach_visits_every_line(void **state)
{
        fixture *f = *state;
        dsh_session *session = create_session(f, NULL, NULL);
        dsh_error error = DSH_ERROR_INIT;
        struct visit_count count = { 0, 0, "" };

        assert_int_equal(dsh_session_set_mode(session, DSH_MODE_WORKSPACE_WRITE, NULL, &error), 0);
        assert_int_equal(dsh_session_append(session, "user/message", NULL, NULL, &error), 0);
        assert_int_equal(dsh_session_foreach_event(session, count_visit, &count, &error), 0);
        assert_int_equal(count.header, 1);
        assert_int_equal(count.events, 2);
        assert_string_equal(count.types, "sandbox/mode,user/message,");
        dsh_session_free(session);
}

static void test_default_directory(void **state)
{
        char *directory;

        (void) state;
        setenv("DSH_SANDBOX_STATE_DIR", "/explicit/state", 1);
        directory = dsh_session_store_default_directory();
        assert_string_equal(directory, "/explicit/state");
        free(directory);
        unsetenv("DSH_SANDBOX_STATE_DIR");
        setenv("XDG_STATE_HOME", "/xdg", 1);
        directory = dsh_session_store_default_directory();
        assert_string_equal(directory, "/xdg/dsh-sandbox");
        free(directory);
        setenv("XDG_STATE_HOME", "relative", 1);
        setenv("HOME", "/home/someone", 1);
        directory = dsh_session_store_default_directory();
        assert_string_equal(directory, "/home/someone/.local/state/dsh-sandbox");
        free(directory);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ids),
                cmocka_unit_test_setup_teardown(test_open_rejects_traversal, setup, teardown),
                cmocka_unit_test_setup_teardown(test_create_writes_header, setup, teardown),
                cmocka_unit_test_setup_teardown(test_relative_cwd_rejected_at_create, setup, teardown),
                cmocka_unit_test_setup_teardown(test_set_mode_appends_one_event_and_survives_restart, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invariant_on_append, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invariant_on_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrupt_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_ignored_event_syntax, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_events_kept_and_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_delegation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_torn_last_line_at_every_offset, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_appenders, setup, teardown),
                cmocka_unit_test_setup_teardown(test_full_disk_leaves_log_unchanged, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unwritable_state_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_seq_overflow_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_log_refused_without_blocking, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cwd_recorded_canonical, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cwd_not_utf8_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_foreach_visits_every_line, setup, teardown),
                cmocka_unit_test(test_default_directory),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
