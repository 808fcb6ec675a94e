/* SPDX-License-Identifier: MIT */
/*
 * The session-log loader over arbitrary bytes: each input is written as a
 * session's JSONL log and opened through the public API, which replays it
 * (both fast paths and the full jansson parse), walked event by event, then
 * appended to and opened again.  Beyond memory errors and UB it checks the
 * store's promises: what loads is walked the same way, with seqs rising; a
 * torn tail is never read; a log that loaded and took an append still loads,
 * with that append folded in.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/policy-service.h"
#include "fuzz-support.h"

#define FUZZ_SESSION_ID "fuzz"

static char scratch_directory[PATH_MAX];
static char log_path[PATH_MAX + sizeof("/" FUZZ_SESSION_ID ".jsonl")];
static dsh_session_store *store;

struct walk {
        uint64_t lines;
        uint64_t events;
        uint64_t last_seq;
};

static void remove_scratch(void)
{
        unlink(log_path);
        rmdir(scratch_directory);
        dsh_session_store_free(store);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        const char *parent = getenv("TMPDIR");
        dsh_error error = DSH_ERROR_INIT;

        (void) argc;
        (void) argv;
        /* tmpfs by default: every input is written and fdatasync'ed, which costs nothing there. */
        snprintf(scratch_directory, sizeof(scratch_directory), "%s/dsh-fuzz-session-XXXXXX",
                 parent && parent[0] ? parent : "/dev/shm");
        FUZZ_CHECK(mkdtemp(scratch_directory) != NULL);
        snprintf(log_path, sizeof(log_path), "%s/" FUZZ_SESSION_ID ".jsonl", scratch_directory);
        FUZZ_CHECK(dsh_session_store_open(scratch_directory, &store, &error) == 0);
        atexit(remove_scratch);
        return 0;
}

static void write_log(const uint8_t *data, size_t size)
{
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        FUZZ_CHECK(fd >= 0);
        for (size_t written = 0; written < size;) {
                ssize_t result = write(fd, data + written, size - written);

                FUZZ_CHECK(result > 0);
                written += (size_t) result;
        }
        close(fd);
}

static int visit(const dsh_session_event *event, void *userdata)
{
        struct walk *walk = userdata;

        FUZZ_CHECK(event->line_number == ++walk->lines);
        FUZZ_CHECK(event->line[event->line_length] == '\0' && !memchr(event->line, '\n', event->line_length));
        FUZZ_CHECK(event->type != NULL);
        if (event->line_number == 1) {
                FUZZ_CHECK(event->seq == 0 && strcmp(event->type, "session") == 0);
                return 0;
        }
        FUZZ_CHECK(event->seq > walk->last_seq);
        walk->last_seq = event->seq;
        walk->events++;
        return 0;
}

/*
 * A log that loaded still loads after an append: with the event folded in
 * when the append succeeded, unchanged when it was refused or failed.
 */
static void check_append(dsh_session *session, dsh_mode mode)
{
        uint64_t events = dsh_session_event_count(session), last_seq = dsh_session_last_seq(session), seq = 0;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *reopened = NULL;
        bool appended = dsh_session_set_mode(session, mode, &seq, &error) == 0;
        dsh_mode override;

        FUZZ_CHECK(appended == (error.message == NULL));
        dsh_error_clear(&error);
        FUZZ_CHECK(dsh_session_open(store, FUZZ_SESSION_ID, &reopened, &error) == 0);
        if (appended) {
                FUZZ_CHECK(dsh_session_event_count(reopened) == events + 1);
                FUZZ_CHECK(seq > last_seq && dsh_session_last_seq(reopened) == seq);
                FUZZ_CHECK(dsh_session_override(reopened, &override) && override == mode);
        } else {
                FUZZ_CHECK(dsh_session_event_count(reopened) == events);
                FUZZ_CHECK(dsh_session_last_seq(reopened) == last_seq);
        }
        dsh_session_free(reopened);
}

static uint64_t count_newlines(const uint8_t *data, size_t size)
{
        uint64_t count = 0;

        for (size_t i = 0; i < size; i++)
                count += data[i] == '\n';
        return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;
        struct walk walk = { 0, 0, 0 };

        write_log(data, size);
        if (dsh_session_open(store, FUZZ_SESSION_ID, &session, &error) < 0) {
                FUZZ_CHECK(session == NULL && error.message != NULL);
                fuzz_check_one_printable_line(error.message);
                dsh_error_clear(&error);
                return 0;
        }
        FUZZ_CHECK(dsh_session_cwd(session, NULL) != NULL);
        FUZZ_CHECK(dsh_session_foreach_event(session, visit, &walk, &error) == 0);
        /* Every complete line is a record, and the bytes after the last newline are not. */
        FUZZ_CHECK(walk.lines == count_newlines(data, size));
        FUZZ_CHECK(walk.events == dsh_session_event_count(session));
        FUZZ_CHECK(walk.last_seq == dsh_session_last_seq(session));
        check_append(session, (dsh_mode) (size % DSH_MODE_COUNT));
        dsh_session_free(session);
        return 0;
}
