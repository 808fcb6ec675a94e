/* SPDX-License-Identifier: MIT */
/*
 * Parity with the runner: one table of paths, each written through the file
 * guard and through a confined `sh -c 'printf ... > PATH'` on both backends
 * (`dsh-sandbox run --backend bwrap|landlock`), under read-only and
 * workspace-write, must get the same answer: allowed everywhere or denied
 * everywhere.  Each attempt starts from a fresh tree, and is judged on disk:
 * an allowed write put the content where the path leads, a denied one left
 * the whole tree as it was.
 *
 * Where the answers differ on purpose, a second table says so and checks
 * it (docs/file-guard.md): the protected subpaths, which Landlock cannot
 * hold back (its runs say "partial"); /dev/null, the sink every runner
 * grants, which the guard never replaces; /proc/self/cwd, which the guard
 * never follows.
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

#include "dsh-sandbox/file-guard.h"
#include "guard-fixture.h"
#include "test-support.h"

static guard_fixture fixture;
static char temp_name[64];

static int setup(void **state)
{
        (void) state;
        guard_fixture_setup(&fixture);
        snprintf(temp_name, sizeof(temp_name), "/tmp/dsh-guard-parity-%ld", (long) getpid());
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        unlink(temp_name);
        guard_fixture_teardown(&fixture);
        return 0;
}

/* The backends a confined `sh -c` runs under. */
static const char *const backends[] = { "bwrap", "landlock" };

typedef enum answer { DENIED = 0, ALLOWED = 1 } answer;

typedef struct parity_row {
        const char *path;       /* {ws}, {out}, {extra}, {tmp} stand for the fixture's places */
        const char *lands;      /* where an allowed write puts the content (same placeholders) */
        answer workspace_write; /* the answer of all three under workspace-write; read-only denies every row but {tmp} under bwrap (a private tmpfs) */
} parity_row;

/*
 * The tree every attempt starts from: the workspace with a file, a
 * directory, symlinks pointing out (absolute and relative), one pointing in,
 * dangling ones to outside and inside, a hard link of an outside file; a
 * symlink outside pointing into the workspace.
 */
#define FRESH_TREE                                                                                                   \
        "rm -rf ws outside extra && mkdir -p ws/sub outside extra && printf 'old\\n' > ws/file && "                 \
        "printf 'original\\n' > outside/secret && ln -s \"$PWD/outside\" ws/link-out && "                            \
        "ln -s ../outside ws/rel-out && ln -s \"$PWD/ws/sub\" ws/link-in && "                                          \
        "ln -s \"$PWD/outside/planted\" ws/dangling-out && ln -s sub/planted-in ws/dangling-in && "                   \
        "ln -s \"$PWD/ws\" outside/link-ws && ln outside/secret ws/hard"

static const parity_row rows[] = {
        { "{ws}/new", "{ws}/new", ALLOWED },
        { "{ws}/sub/new", "{ws}/sub/new", ALLOWED },
        { "{ws}/file", "{ws}/file", ALLOWED },
        { "{ws}/sub/../new", "{ws}/new", ALLOWED },
        { "{ws}/link-in/new", "{ws}/sub/new", ALLOWED },
        { "{ws}/dangling-in", "{ws}/sub/planted-in", ALLOWED },
        { "{out}/link-ws/new", "{ws}/new", ALLOWED },
        { "{extra}/new", "{extra}/new", ALLOWED },
        { "{ws}/hard", "{ws}/hard", ALLOWED },
        { "{tmp}", "{tmp}", ALLOWED },
        { "{out}/new", "{out}/new", DENIED },
        { "{out}/secret", "{out}/secret", DENIED },
        { "{ws}/../outside/new", "{out}/new", DENIED },
        { "{ws}/link-out/new", "{out}/new", DENIED },
        { "{ws}/link-out/secret", "{out}/secret", DENIED },
        { "{ws}/rel-out/new", "{out}/new", DENIED },
        { "{ws}/dangling-out", "{out}/planted", DENIED },
        { "/proc/self/root{out}/new", "{out}/new", DENIED },
        { "{ws}/file/x", "{ws}/file/x", DENIED },
};

/* `text` with the placeholders replaced; caller frees. */
static char *expand(const char *text)
{
        const struct { const char *name; const char *value; } places[] = {
                { "{ws}", fixture.workspace }, { "{out}", fixture.outside }, { "{extra}", fixture.extra },
                { "{tmp}", temp_name },
        };
        char *result = strdup(text);

        for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
                char *at;

                while ((at = strstr(result, places[i].name))) {
                        char *longer = NULL;

                        assert_true(asprintf(&longer, "%.*s%s%s", (int) (at - result), result, places[i].value,
                                             at + strlen(places[i].name)) > 0);
                        free(result);
                        result = longer;
                }
        }
        return result;
}

/* Runs `line` with sh in the scratch directory; fails the test when it fails. */
static void scratch_shell(const char *line)
{
        test_setup_shell(fixture.scratch, line, NULL);
}

static void fresh_tree(const char *extra_setup)
{
        unlink(temp_name);
        scratch_shell(FRESH_TREE);
        if (extra_setup)
                scratch_shell(extra_setup);
}

/* The whole tree an attempt may touch: the three places (the temp file is judged by itself). */
static char *tree_snapshot(void)
{
        char *workspace = guard_fixture_snapshot(fixture.workspace), *out = guard_fixture_snapshot(fixture.outside);
        char *extra = guard_fixture_snapshot(fixture.extra), *all = NULL;

        assert_true(asprintf(&all, "%s--\n%s--\n%s", workspace, out, extra) > 0);
        free(extra);
        free(out);
        free(workspace);
        return all;
}

/* The guard's answer: dsh_file_guard_write() through a guard made for this attempt, as a tool call makes one. */
static answer through_guard(dsh_mode mode, const char *path)
{
        dsh_file_guard *guard = guard_fixture_guard(&fixture, mode);
        dsh_error error = DSH_ERROR_INIT;
        int result = dsh_file_guard_write(guard, path, "parity\n", 7, 0, NULL, &error);

        dsh_error_clear(&error);
        dsh_file_guard_free(guard);
        return result == 0 ? ALLOWED : DENIED;
}

/* The runner's answer: `dsh-sandbox run` of a shell that writes the path, from the workspace. */
static answer through_runner(const char *backend, dsh_mode mode, const char *path)
{
        char *line = NULL;
        test_process_result result;
        answer outcome;

        assert_true(asprintf(&line, "cd '%s' && exec '%s' run --backend %s --mode %s --root '%s' %s%s%s -- "
                                    "sh -c 'printf \"parity\\n\" > \"$1\"' sh \"$0\"",
                             fixture.workspace, test_dsh_sandbox_path(), backend, dsh_mode_name(mode),
                             fixture.workspace, mode == DSH_MODE_WORKSPACE_WRITE ? "--allow-write '" : "",
                             mode == DSH_MODE_WORKSPACE_WRITE ? fixture.extra : "",
                             mode == DSH_MODE_WORKSPACE_WRITE ? "'" : "") > 0);
        {
                const char *argv[] = { "sh", "-c", line, path, NULL };

                test_run(argv, NULL, &result);
        }
        if (result.exit_code == 125)
                fail_msg("the %s runner could not confine: %s", backend, result.stderr_text);
        outcome = result.exit_code == 0 ? ALLOWED : DENIED;
        test_process_result_clear(&result);
        free(line);
        return outcome;
}

/*
 * What the disk says about one attempt: an allowed write put the content
 * where the path leads; a denied one left everything as it was.  The temp
 * area of a bwrap run is its own private /tmp: nothing of it reaches the
 * host.
 */
static void check_disk(const char *who, const char *path, const char *lands, answer said, const char *before,
                       bool private_temp)
{
        char *after = tree_snapshot();
        char *content = test_read_file(lands);
        bool is_temp = strcmp(lands, temp_name) == 0;

        if (said == ALLOWED && !(is_temp && private_temp) && (!content || strcmp(content, "parity\n") != 0))
                fail_msg("%s: \"%s\" was allowed, but %s holds \"%s\"", who, path, lands, content ? content : "nothing");
        if (said == DENIED && strcmp(before, after) != 0)
                fail_msg("%s: \"%s\" was denied, but the tree changed:\nbefore:\n%s\nafter:\n%s", who, path, before,
                         after);
        if (said == DENIED && is_temp && content)
                fail_msg("%s: \"%s\" was denied, but it was written", who, path);
        free(content);
        free(after);
}

static bool backend_works(const char *backend)
{
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", backend, "--", "true", NULL };
        test_process_result result;
        bool works;

        test_run(argv, NULL, &result);
        works = result.exit_code == 0;
        if (!works)
                print_message("skipped: the %s backend cannot confine here: %s", backend, result.stderr_text);
        test_process_result_clear(&result);
        return works;
}

/* One attempt of `path` by everyone; returns each answer in `answers` (guard, bwrap, landlock). */
static void attempt(dsh_mode mode, const char *raw_path, const char *raw_lands, const char *setup_line,
                    const bool *usable, answer answers[3])
{
        char *path = expand(raw_path), *lands = expand(raw_lands), *before;
        char who[128];

        fresh_tree(setup_line);
        before = tree_snapshot();
        answers[0] = through_guard(mode, path);
        snprintf(who, sizeof(who), "guard under %s", dsh_mode_name(mode));
        /* Where auto selects bwrap, the guard's /tmp is the one bwrap binds there: the session's scratch. */
        check_disk(who, path, lands, answers[0], before, usable[0]);
        for (size_t b = 0; b < 2; b++) {
                if (!usable[b]) {
                        answers[b + 1] = b == 0 && mode == DSH_MODE_READ_ONLY && strcmp(raw_path, "{tmp}") == 0
                                                 ? ALLOWED
                                                 : answers[0];
                        continue;
                }
                fresh_tree(setup_line);
                answers[b + 1] = through_runner(backends[b], mode, path);
                snprintf(who, sizeof(who), "%s under %s", backends[b], dsh_mode_name(mode));
                check_disk(who, path, lands, answers[b + 1], before, b == 0);
        }
        free(before);
        free(lands);
        free(path);
}

static const char *answer_name(answer said)
{
        return said == ALLOWED ? "allowed" : "denied";
}

static void test_same_answer_as_the_runner(void **state)
{
        static const dsh_mode modes[] = { DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE };
        bool usable[2] = { backend_works(backends[0]), backend_works(backends[1]) };
        int mismatches = 0;

        (void) state;
        for (size_t m = 0; m < 2; m++)
                for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
                        answer expected = modes[m] == DSH_MODE_READ_ONLY ? DENIED : rows[r].workspace_write;
                        /* Read-only bwrap gives a fresh tmpfs on /tmp: scratch space, nothing reaches the host. */
                        answer bwrap_expected = modes[m] == DSH_MODE_READ_ONLY && strcmp(rows[r].path, "{tmp}") == 0
                                                        ? ALLOWED
                                                        : expected;
                        answer answers[3];

                        attempt(modes[m], rows[r].path, rows[r].lands, NULL, usable, answers);
                        print_message("%-17s %-28s guard %-7s bwrap %-7s landlock %s\n", dsh_mode_name(modes[m]),
                                      rows[r].path, answer_name(answers[0]), answer_name(answers[1]),
                                      answer_name(answers[2]));
                        if (answers[0] != expected || answers[1] != bwrap_expected || answers[2] != expected) {
                                print_message("MISMATCH: expected %s from all three\n", answer_name(expected));
                                mismatches++;
                        }
                }
        assert_int_equal(mismatches, 0);
}

/*
 * The answers that differ on purpose, and the protected subpaths that no
 * longer do: the guard denies them as bwrap does, and so does Landlock now
 * that the write supervisor holds them back (issue 20).  /dev/null: every runner grants the sink; the guard,
 * which replaces a file's directory entry, never replaces a device node.
 * /proc/self/cwd: a runner's shell resolves it to its own cwd; the guard
 * follows no link of /proc.
 */
static void test_deliberate_differences(void **state)
{
        static const struct {
                const char *path, *lands, *setup;
                answer guard, bwrap, landlock;
        } differences[] = {
                { "{ws}/.git/hooks/post-commit", "{ws}/.git/hooks/post-commit", "cd ws && git init -q .", DENIED,
                  DENIED, DENIED },
                { "{ws}/.git/config", "{ws}/.git/config", "cd ws && git init -q .", DENIED, DENIED, DENIED },
                { "/proc/self/cwd/new", "{ws}/new", NULL, DENIED, ALLOWED, ALLOWED },
        };
        bool usable[2] = { backend_works(backends[0]), backend_works(backends[1]) };
        dsh_file_guard *guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        for (size_t i = 0; i < sizeof(differences) / sizeof(differences[0]); i++) {
                answer answers[3];

                attempt(DSH_MODE_WORKSPACE_WRITE, differences[i].path, differences[i].lands, differences[i].setup,
                        usable, answers);
                print_message("%-28s guard %-7s bwrap %-7s landlock %s\n", differences[i].path, answer_name(answers[0]),
                              answer_name(answers[1]), answer_name(answers[2]));
                assert_int_equal(answers[0], differences[i].guard);
                if (usable[0])
                        assert_int_equal(answers[1], differences[i].bwrap);
                if (usable[1])
                        assert_int_equal(answers[2], differences[i].landlock);
        }
        /* /dev/null: never replaced (a runner's shell only opens it). */
        dsh_file_guard_free(guard);
        fresh_tree(NULL);
        guard = guard_fixture_guard(&fixture, DSH_MODE_WORKSPACE_WRITE);
        guard_fixture_expect_denied(dsh_file_guard_write(guard, "/dev/null", "x", 1, 0, NULL, &error), &error,
                                    "/dev/null", DSH_MODE_WORKSPACE_WRITE);
        {
                struct stat status;

                assert_int_equal(stat("/dev/null", &status), 0);
                assert_true(S_ISCHR(status.st_mode));
        }
        dsh_file_guard_free(guard);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_same_answer_as_the_runner, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deliberate_differences, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
