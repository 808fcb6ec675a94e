/* SPDX-License-Identifier: MIT */
/*
 * The session log's scanner (src/policy/session-log.c) on its own: a log
 * written to a file and replayed with session_log_replay_from(), without the
 * store around it.  A torn tail, a bad line, duplicate keys, a header for
 * another session, a huge line, a replay resumed where the last one stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/session-log.h"
#include "test-support.h"

#define HEADER(id) "{\"type\":\"session\",\"version\":0,\"id\":\"" id "\",\"cwd\":\"/w\",\"createdAt\":7}\n"
#define MODE_EVENT(seq, mode) \
        "{\"type\":\"sandbox/mode\",\"seq\":" #seq ",\"time\":1,\"data\":{\"mode\":\"" mode "\"}}\n"

typedef struct fixture {
        char *directory;
        char *path;
        int fd;
        session_fold fold;
        off_t offset;
        dsh_error error;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));

        f->directory = test_make_directory(NULL);
        f->path = test_path_join(f->directory, "s.jsonl");
        f->fd = -1;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        if (f->fd >= 0)
                close(f->fd);
        free(f->fold.last_context);
        dsh_error_clear(&f->error);
        free(f->path);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

/* Appends `text` to the log (creating it) and keeps a read-only fd on it, as a reader's handle. */
static void append_log(fixture *f, const char *text)
{
        int fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        size_t length = strlen(text);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, length), (ssize_t) length);
        close(fd);
        if (f->fd < 0)
                f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
        assert_true(f->fd >= 0);
}

/* Replays from where the last replay stopped, checking the header's id against "s". */
static int replay(fixture *f, dsh_session_event_visitor visitor, void *userdata)
{
        session_log_replay replay = { f->path, "s", &f->fold, NULL, visitor, userdata };

        dsh_error_clear(&f->error);
        return session_log_replay_from(f->fd, &f->offset, &replay, &f->error);
}

/* Refused as a broken invariant (EBADMSG for the format, EINVAL for an unknown mode), the line named. */
static void assert_refused(fixture *f, const char *expected)
{
        int result = replay(f, NULL, NULL);

        assert_true(result == -EBADMSG || result == -EINVAL);
        assert_int_equal(f->error.code, DSH_ERROR_INVARIANT);
        assert_non_null(f->error.message);
        if (!strstr(f->error.message, expected))
                fail_msg("expected \"%s\" in: %s", expected, f->error.message);
}

/* Bytes after the last newline were never acknowledged: not read, and the offset stops before them. */
static void test_torn_tail_left_alone(void **state)
{
        static const char complete[] = HEADER("s") MODE_EVENT(1, "read-only");
        fixture *f = *state;

        append_log(f, complete);
        append_log(f, "{\"type\":\"sandbox/mode\",\"seq\":2,\"time\":1,\"data\":{\"mode\":\"danger-full");
        assert_int_equal(replay(f, NULL, NULL), 0);
        assert_int_equal(f->offset, (off_t) strlen(complete));
        assert_int_equal(f->fold.line_count, 2);
        assert_int_equal(f->fold.last_seq, 1);
        assert_true(f->fold.has_override);
        assert_int_equal(f->fold.override, DSH_MODE_READ_ONLY);
        /* The torn write completed by a later writer is read then, and only then. */
        append_log(f, "-access\"}}\n");
        assert_int_equal(replay(f, NULL, NULL), 0);
        assert_int_equal(f->fold.line_count, 3);
        assert_int_equal(f->fold.override, DSH_MODE_DANGER_FULL_ACCESS);
}

static void test_bad_line_named(void **state)
{
        fixture *f = *state;

        append_log(f, HEADER("s") MODE_EVENT(1, "read-only") "{\"type\":\"sandbox/mode\",\"seq\":2,\n");
        assert_refused(f, "s.jsonl: line 3: corrupt line (not JSON");
        /* What came before the bad line was folded; the offset stops before it. */
        assert_int_equal(f->fold.line_count, 2);
        assert_int_equal(f->offset, (off_t) strlen(HEADER("s") MODE_EVENT(1, "read-only")));
}

/* A key twice is read differently by other parsers (the last one wins in JSON.parse): refused, in each place. */
static void test_duplicate_keys_refused(void **state)
{
        fixture *f = *state;

        append_log(f, HEADER("s") "{\"type\":\"sandbox/mode\",\"seq\":1,\"time\":1,"
                                  "\"data\":{\"mode\":\"read-only\",\"mode\":\"danger-full-access\"}}\n");
        assert_refused(f, "line 2: corrupt line (not JSON: duplicate object key");
        assert_false(f->fold.has_override);
}

/* Starts the log afresh: a new file, an empty fold. */
static void reset_log(fixture *f)
{
        if (f->fd >= 0)
                close(f->fd);
        f->fd = -1;
        unlink(f->path);
        free(f->fold.last_context);
        memset(&f->fold, 0, sizeof(f->fold));
        f->offset = 0;
}

/* Logs that break the format, each refused with the line named: a duplicate key anywhere, a line out of place. */
static void test_broken_logs_refused(void **state)
{
        static const struct {
                const char *log;
                const char *expected;
        } cases[] = {
                { "{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"cwd\":\"/w\",\"cwd\":\"/\"}\n",
                  "line 1: the session header is not JSON: duplicate object key" },
                { HEADER("s") "{\"type\":\"user/message\",\"seq\":1,\"seq\":9}\n", "line 2: corrupt line" },
                { MODE_EVENT(1, "read-only"), "line 1: the first line is not a session header" },
                { HEADER("s") "{\"type\":\"session\",\"seq\":1,\"version\":0,\"id\":\"s\",\"cwd\":\"/\"}\n",
                  "line 2: a second session header" },
                { HEADER("s") MODE_EVENT(2, "read-only") "{\"type\":\"user/message\",\"seq\":2}\n",
                  "line 3: seq 2 does not follow seq 2" },
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                reset_log(f);
                append_log(f, cases[i].log);
                assert_refused(f, cases[i].expected);
        }
}

/* A log whose header names another session is not this session's log. */
static void test_header_of_another_session_refused(void **state)
{
        fixture *f = *state;

        append_log(f, HEADER("t") MODE_EVENT(1, "read-only"));
        assert_refused(f, "line 1: the header's id does not match the file name \"s\"");
        assert_int_equal(f->fold.line_count, 0);
}

static void test_unknown_mode_refused(void **state)
{
        fixture *f = *state;

        append_log(f, HEADER("s") "{\"type\":\"sandbox/mode\",\"seq\":1,\"data\":{\"mode\":\"read-only\\u0000x\"}}\n");
        assert_refused(f, "line 2: sandbox/mode carries unknown mode");
        assert_false(f->fold.has_override);
}

struct visits {
        unsigned count;
        char types[4][32];
        unsigned stop_at;
};

static int record_visit(const dsh_session_event *event, void *userdata)
{
        struct visits *visits = userdata;

        if (visits->count < 4)
                snprintf(visits->types[visits->count], sizeof(visits->types[0]), "%s", event->type);
        visits->count++;
        return visits->count == visits->stop_at ? 42 : 0;
}

/* An event of a type this build does not know is counted, visited, and changes nothing else. */
static void test_unknown_event_type_counted_and_ignored(void **state)
{
        fixture *f = *state;
        struct visits visits = { 0 };

        append_log(f, HEADER("s") "{\"type\":\"tool/call\",\"seq\":1,\"data\":{\"mode\":\"danger-full-access\"}}\n"
                      "{\"type\":\"sandbox/context\",\"seq\":2,\"data\":{\"text\":\"ctx\"}}\n");
        assert_int_equal(replay(f, record_visit, &visits), 0);
        assert_int_equal(visits.count, 3);
        assert_string_equal(visits.types[0], "session");
        assert_string_equal(visits.types[1], "tool/call");
        assert_string_equal(visits.types[2], "sandbox/context");
        assert_int_equal(f->fold.event_count, 2);
        assert_false(f->fold.has_override);
        assert_string_equal(f->fold.last_context, "ctx");
}

/* A visitor's non-zero value stops the replay there, and is what the replay returns. */
static void test_visitor_stops_replay(void **state)
{
        fixture *f = *state;
        struct visits visits = { .stop_at = 2 };

        append_log(f, HEADER("s") MODE_EVENT(1, "read-only") MODE_EVENT(2, "workspace-write"));
        assert_int_equal(replay(f, record_visit, &visits), 42);
        assert_int_equal(visits.count, 2);
        assert_int_equal(f->fold.override, DSH_MODE_READ_ONLY);
}

/* A line far longer than a read chunk (256 KiB) grows the buffer and is read whole, on either path. */
static void test_huge_lines(void **state)
{
        static const size_t huge = 3 * 1024 * 1024;
        fixture *f = *state;
        char *line = malloc(huge + 128);
        size_t length;

        assert_non_null(line);
        length = (size_t) sprintf(line, "{\"type\":\"user/message\",\"seq\":1,\"data\":\"");
        memset(line + length, 'x', huge);
        length += huge;
        strcpy(line + length, "\"}\n");
        append_log(f, HEADER("s"));
        append_log(f, line);
        /* The same size through the full parse: a context event's text is kept. */
        length = (size_t) sprintf(line, "{\"type\":\"sandbox/context\",\"seq\":2,\"data\":{\"text\":\"");
        memset(line + length, 'y', huge);
        length += huge;
        strcpy(line + length, "\"}}\n");
        append_log(f, line);
        append_log(f, MODE_EVENT(3, "read-only"));
        assert_int_equal(replay(f, NULL, NULL), 0);
        assert_int_equal(f->fold.line_count, 4);
        assert_int_equal(f->fold.last_seq, 3);
        assert_int_equal(strlen(f->fold.last_context), huge);
        assert_int_equal(f->fold.override, DSH_MODE_READ_ONLY);
        free(line);
}

/* A huge torn tail is still a torn tail: nothing of it is folded. */
static void test_huge_torn_tail(void **state)
{
        static const size_t huge = 1024 * 1024;
        fixture *f = *state;
        char *tail = malloc(huge + 64);
        size_t length;

        assert_non_null(tail);
        length = (size_t) sprintf(tail, "{\"type\":\"sandbox/context\",\"seq\":2,\"data\":{\"text\":\"");
        memset(tail + length, 'z', huge);
        tail[length + huge] = '\0';
        append_log(f, HEADER("s") MODE_EVENT(1, "workspace-write"));
        append_log(f, tail);
        assert_int_equal(replay(f, NULL, NULL), 0);
        assert_int_equal(f->fold.line_count, 2);
        assert_null(f->fold.last_context);
        assert_int_equal(f->offset, (off_t) strlen(HEADER("s") MODE_EVENT(1, "workspace-write")));
        free(tail);
}

/* The header fills the session it is replayed for: its cwd kept with its length, the optional integers. */
static void test_header_fills_target(void **state)
{
        fixture *f = *state;
        dsh_session session = { .fd = -1 };
        session_log_replay replay = { f->path, "s", &f->fold, &session, NULL, NULL };

        append_log(f, "{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"cwd\":\"/a\\u0000b\",\"createdAt\":7,"
                      "\"delegationDepth\":2}\n");
        assert_int_equal(session_log_replay_from(f->fd, &f->offset, &replay, &f->error), 0);
        assert_int_equal(session.cwd_length, 4);
        assert_memory_equal(session.cwd, "/a\0b", 4);
        assert_int_equal(session.created_at, 7);
        assert_int_equal(session.delegation_depth, 2);
        free(session.cwd);
}

static void test_unreadable_fd_is_a_system_error(void **state)
{
        fixture *f = *state;
        session_log_replay replay = { f->path, "s", &f->fold, NULL, NULL, NULL };

        assert_int_equal(session_log_replay_from(-1, &f->offset, &replay, &f->error), -EBADF);
        assert_int_equal(f->error.code, DSH_ERROR_SYSTEM);
        assert_non_null(strstr(f->error.message, "cannot read session log"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_torn_tail_left_alone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_line_named, setup, teardown),
                cmocka_unit_test_setup_teardown(test_duplicate_keys_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_broken_logs_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_header_of_another_session_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_mode_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_event_type_counted_and_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_visitor_stops_replay, setup, teardown),
                cmocka_unit_test_setup_teardown(test_huge_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_huge_torn_tail, setup, teardown),
                cmocka_unit_test_setup_teardown(test_header_fills_target, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable_fd_is_a_system_error, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
