/* SPDX-License-Identifier: MIT */
/*
 * The bash tool (dsh-sandbox/bash-tool.h, `dsh-sandbox bash`) on the real
 * kernel with the real bwrap, on both backends, every write checked on disk:
 *
 *   - a denied write shows the denial marker and the escalation hint, each
 *     on its own line after the output; a command that fails on its own, or
 *     dies of a signal after a denied write, shows none;
 *   - an approved escalation lands the write, once: the session and the next
 *     call are untouched; a rejected one, an approval command that hangs or
 *     is missing, and no channel at all do not run the command; the
 *     controlling terminal asks, defaulting to no; the validation texts;
 *   - a granted confined mode still fails closed on a broken backend, and
 *     only a granted danger-full-access bypasses the provider;
 *   - a runner's fatal lines printed by the command are the command's own;
 *     a broken runner (a bwrap that fails before exec, early or after its
 *     status record, Landlock refused in the child, a missing launcher) is a
 *     runner failure with 125;
 *   - a timeout, a daemon the command leaves, SIGINT/SIGTERM to the tool and
 *     the library's cancellation leave no process of the command behind
 *     (found by a unique argv in /proc), also when they come as bwrap's
 *     sandbox starts; what left the group with setsid;
 *   - 300 MB of output is truncated and reported while the tool's peak
 *     memory stays under 128 MiB.
 *
 * No timing assertions: waits are for files and processes, within generous
 * bounds that only stop a broken run from hanging the suite.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <seccomp.h>

#include "core/landlock.h"
#include "dsh-sandbox/bash-tool.h"
#include "test-support.h"

#define MARKER_DENIED_READ_ONLY "[sandbox: file access denied under read-only mode]"
#define MARKER_DENIED_WORKSPACE_WRITE "[sandbox: file access denied under workspace-write mode]"
#define MARKER_ESCALATION                                                                                      \
        "[sandbox: escalation available \xe2\x80\x94 retry this exact command once with sandbox_permissions (the " \
        "narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
#define MARKER_RUNNER_FAILED(mode)                                                                             \
        "[sandbox: the sandbox runner itself failed under " mode " mode \xe2\x80\x94 the command did not run; "    \
        "this is a sandbox problem, not a command failure]"
#define REJECTED(mode)                                                                                         \
        "the user rejected escalating this command to \"" mode "\"; it stays denied, so stop and explain "       \
        "instead of working around it"
#define UNAVAILABLE_PREFIX(mode)                                                                               \
        "dsh-sandbox: SANDBOX_UNAVAILABLE: sandbox mode \"" mode "\" is requested but no sandbox backend is "     \
        "usable on this host; refusing to run the command unconfined."

/* A bound for synchronisation only: a healthy call takes milliseconds. */
#define RUN_BOUND_SECONDS 120

/* ------------------------------------------------------------ scratch -- */

static struct {
        char *root;
        char *workspace;   /* the calls' workspace root */
        char *outside;     /* a directory outside every writable root */
        char *config;      /* an empty config, so that the user's never leaks in */
        char *cache;
        char *state;
        char *xdg_config;
} scratch;

static int setup(void **state)
{
        char *canonical;

        (void) state;
        scratch.root = test_make_directory(NULL);
        canonical = realpath(scratch.root, NULL);
        assert_non_null(canonical);
        free(scratch.root);
        scratch.root = canonical;
        scratch.workspace = test_path_join(scratch.root, "workspace");
        scratch.outside = test_path_join(scratch.root, "outside");
        scratch.config = test_path_join(scratch.root, "config.json");
        scratch.cache = test_path_join(scratch.root, "cache");
        scratch.state = test_path_join(scratch.root, "state");
        scratch.xdg_config = test_path_join(scratch.root, "xdg-config");
        assert_int_equal(mkdir(scratch.workspace, 0755), 0);
        assert_int_equal(mkdir(scratch.outside, 0755), 0);
        test_write_file(scratch.config, "{}");
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(scratch.workspace);
        free(scratch.outside);
        free(scratch.config);
        free(scratch.cache);
        free(scratch.state);
        free(scratch.xdg_config);
        test_remove_tree(scratch.root);
        return 0;
}

static char *path_in(const char *directory, const char *format, ...) __attribute__((format(printf, 2, 3)));

static char *path_in(const char *directory, const char *format, ...)
{
        char name[256];
        va_list arguments;

        va_start(arguments, format);
        vsnprintf(name, sizeof(name), format, arguments);
        va_end(arguments);
        return test_path_join(directory, name);
}

static char *format_text(const char *format, ...) __attribute__((format(printf, 1, 2)));

static char *format_text(const char *format, ...)
{
        char *text = NULL;
        va_list arguments;

        va_start(arguments, format);
        assert_true(vasprintf(&text, format, arguments) >= 0);
        va_end(arguments);
        return text;
}

static void write_script(const char *path, const char *content)
{
        test_write_file(path, content);
        assert_int_equal(chmod(path, 0755), 0);
}

/* ----------------------------------------------------------- backends -- */

static const char *const backends[] = { "bwrap", "landlock" };
#define BACKEND_COUNT (sizeof(backends) / sizeof(backends[0]))

static bool backend_works(const char *backend)
{
        if (strcmp(backend, "bwrap") == 0)
                return test_bwrap_works();
        if (dsh_landlock_abi() < DSH_LANDLOCK_MINIMUM_ABI) {
                printf("# this kernel does not enforce Landlock ABI >= %d\n", DSH_LANDLOCK_MINIMUM_ABI);
                return false;
        }
        return true;
}

/* ------------------------------------------------------ running the CLI -- */

/* The environment of every CLI run: the scratch config, cache and state; `bwrap` overrides the runner. */
static void cli_environment(const char *bwrap, char *environment[8])
{
        size_t count = 0;

        environment[count++] = format_text("DSH_SANDBOX_CONFIG=%s", scratch.config);
        environment[count++] = format_text("XDG_CACHE_HOME=%s", scratch.cache);
        environment[count++] = format_text("DSH_SANDBOX_STATE_DIR=%s", scratch.state);
        environment[count++] = format_text("XDG_CONFIG_HOME=%s", scratch.xdg_config);
        if (bwrap)
                environment[count++] = format_text("DSH_SANDBOX_BWRAP=%s", bwrap);
        environment[count] = NULL;
}

static void free_environment(char *environment[8])
{
        for (size_t i = 0; environment[i]; i++)
                free(environment[i]);
}

/* argv for `[prefix] dsh-sandbox ARGUMENTS...`. */
static void cli_argv(const char *prefix, const char *const *arguments, const char *argv[48])
{
        size_t count = 0;

        if (prefix)
                argv[count++] = prefix;
        argv[count++] = test_dsh_sandbox_path();
        for (; *arguments; arguments++) {
                assert_true(count < 47);
                argv[count++] = *arguments;
        }
        argv[count] = NULL;
}

static void run_cli_with(const char *prefix, const char *const *arguments, const char *bwrap,
                         test_process_result *result)
{
        const char *argv[48];
        char *environment[8];

        cli_argv(prefix, arguments, argv);
        cli_environment(bwrap, environment);
        test_run_bounded(argv, (const char *const *) environment, RUN_BOUND_SECONDS, result);
        free_environment(environment);
}

static void run_cli(const char *const *arguments, test_process_result *result)
{
        run_cli_with(NULL, arguments, NULL, result);
}

static json_t *parse_json(const char *text)
{
        json_error_t error;
        json_t *root = json_loads(text ? text : "", 0, &error);

        if (!root)
                fail_msg("not one JSON object (%s): %s", error.text, text ? text : "(nothing)");
        return root;
}

/* Runs `dsh-sandbox ARGUMENTS...` (which must include --json) and returns the result object; exit status 0. */
static json_t *run_cli_json_with(const char *const *arguments, const char *bwrap)
{
        test_process_result result;
        json_t *root;

        run_cli_with(NULL, arguments, bwrap, &result);
        if (result.exit_code != 0)
                fail_msg("bash --json exited %d: %s", result.exit_code, result.stderr_text);
        root = parse_json(result.stdout_text);
        test_process_result_clear(&result);
        return root;
}

static json_t *run_cli_json(const char *const *arguments)
{
        return run_cli_json_with(arguments, NULL);
}

static const char *member_string(const json_t *object, const char *key)
{
        const json_t *value = json_object_get(object, key);

        if (!json_is_string(value))
                fail_msg("\"%s\" is not a string", key);
        return json_string_value(value);
}

static const char *kind_of(const json_t *result)
{
        return member_string(result, "kind");
}

static const json_t *sandbox_of(const json_t *result)
{
        return json_object_get(result, "sandbox");
}

/* The result's markers, each compared with the expected list (NULL-terminated). */
static void assert_markers(const json_t *result, const char *const *expected)
{
        const json_t *markers = json_object_get(result, "markers");
        size_t count = 0;

        assert_true(json_is_array(markers));
        for (; expected[count]; count++) {
                const json_t *marker = json_array_get(markers, count);

                if (!json_is_string(marker) || strcmp(json_string_value(marker), expected[count]) != 0)
                        fail_msg("marker %zu: expected %s, got %s", count, expected[count],
                                 json_is_string(marker) ? json_string_value(marker) : "(none)");
        }
        assert_int_equal(json_array_size(markers), count);
}

static long long member_integer(const json_t *object, const char *key)
{
        const json_t *value = json_object_get(object, key);

        if (!json_is_integer(value))
                fail_msg("\"%s\" is not an integer", key);
        return json_integer_value(value);
}

/* True when `text` ends with `suffix`. */
static bool ends_with(const char *text, const char *suffix)
{
        size_t length = text ? strlen(text) : 0, suffix_length = strlen(suffix);

        return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

/* ------------------------------------------------- processes in /proc -- */

/*
 * A sleep argument no other process has: "600.<pid><counter>" sleeps about
 * ten minutes, far beyond every wait bound here, so that a sleep left
 * behind is still there when it is looked for.
 */
static char *unique_sleep(void)
{
        static unsigned counter;

        return format_text("600.%d%04u", (int) getpid(), ++counter);
}

/* Whether `text` holds `argument` as a whole number (not followed by another digit). */
static bool holds_number(const char *text, const char *argument)
{
        for (const char *found = strstr(text, argument); found; found = strstr(found + 1, argument))
                if (found[strlen(argument)] < '0' || found[strlen(argument)] > '9')
                        return true;
        return false;
}

/*
 * The pids whose argv holds ARGUMENT (at most `capacity`; returns how many):
 * `sleep ARGUMENT` itself, and whatever runs it with ARGUMENT in its command
 * line — bash -c, and bwrap, the sandbox's init included, so that a sandbox
 * left running is found even before its command reached the sleep.
 */
struct sleep_search {
        const char *argument;
        pid_t *pids;
        size_t capacity, count;
};

static bool note_sleep(const char *pid, char *cmdline, ssize_t length, void *data)
{
        struct sleep_search *search = data;

        for (ssize_t i = 0; i < length; i++)
                if (cmdline[i] == '\0')
                        cmdline[i] = ' ';
        if (holds_number(cmdline, search->argument))
                search->pids[search->count++] = (pid_t) atoi(pid);
        return search->count < search->capacity;
}

static size_t find_sleeps(const char *argument, pid_t *pids, size_t capacity)
{
        struct sleep_search search = { argument, pids, capacity, 0 };

        if (capacity > 0)
                test_each_process(note_sleep, &search);
        return search.count;
}

/*
 * Nothing runs `sleep ARGUMENT` any more.  A process killed with SIGKILL
 * is gone from /proc only once its parent reaped it (the sandbox's init,
 * bash), which may take a moment after the tool returned: waits for that,
 * within the bound, and fails if one is still there.
 */
static void assert_no_sleep_left(const char *argument, const char *what)
{
        pid_t pids[8];
        size_t count = 0;

        for (long waited = 0; waited <= TEST_WAIT_BOUND_MS; waited += TEST_POLL_STEP_MS) {
                count = find_sleeps(argument, pids, 8);
                if (count == 0)
                        return;
                test_sleep_ms(TEST_POLL_STEP_MS);
        }
        for (size_t i = 0; i < count; i++)
                kill(pids[i], SIGKILL);
        fail_msg("%s: %zu process(es) with `sleep %s` in their argv still running after the tool returned", what,
                 count, argument);
}

/* ===================================================== denial markers == */

/*
 * A write the policy does not allow fails with the backend's dialect: the
 * denial marker and the escalation hint follow the output on stderr, each on
 * its own line, and the file is not there.  The same under workspace-write
 * for a file outside the root.
 */
static void test_denied_write_shows_both_markers(void **state)
{
        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *target = path_in(scratch.workspace, "denied-%s", backend);
                char *outside_target = path_in(scratch.outside, "denied-%s", backend);
                char *script = format_text("echo before; echo data > '%s'", target);
                char *outside_script = format_text("echo data > '%s'", outside_target);
                const char *human[] = { "bash", "--backend", backend, "--mode", "read-only", "--root",
                                        scratch.workspace, "--", script, NULL };
                const char *json[] = { "bash", "--backend", backend, "--mode", "read-only", "--root",
                                       scratch.workspace, "--json", "--", script, NULL };
                const char *outside_json[] = { "bash", "--backend", backend, "--mode", "workspace-write", "--root",
                                               scratch.workspace, "--json", "--", outside_script, NULL };
                const char *const read_only_markers[] = { MARKER_DENIED_READ_ONLY, MARKER_ESCALATION, NULL };
                const char *const workspace_markers[] = { MARKER_DENIED_WORKSPACE_WRITE, MARKER_ESCALATION, NULL };
                test_process_result result;
                json_t *root;

                if (!backend_works(backend))
                        goto next;
                run_cli(human, &result);
                assert_int_equal(result.exit_code, 1);
                assert_string_equal(result.stdout_text, "before\n");
                if (!ends_with(result.stderr_text, "\n" MARKER_DENIED_READ_ONLY "\n" MARKER_ESCALATION "\n"))
                        fail_msg("%s: the markers are not the last lines of stderr: %s", backend, result.stderr_text);
                assert_false(test_path_exists(target));
                test_process_result_clear(&result);

                root = run_cli_json(json);
                assert_string_equal(kind_of(root), "denied");
                assert_int_equal(member_integer(root, "exitCode"), 1);
                assert_true(json_is_true(json_object_get(sandbox_of(root), "denied")));
                assert_true(json_is_false(json_object_get(sandbox_of(root), "runnerFailed")));
                assert_string_equal(member_string(sandbox_of(root), "backend"), backend);
                assert_string_equal(member_string(sandbox_of(root), "mode"), "read-only");
                assert_string_equal(member_string(sandbox_of(root), "enforcement"), "full");
                assert_markers(root, read_only_markers);
                assert_false(test_path_exists(target));
                json_decref(root);

                root = run_cli_json(outside_json);
                assert_string_equal(kind_of(root), "denied");
                assert_markers(root, workspace_markers);
                assert_false(test_path_exists(outside_target));
                json_decref(root);
next:
                free(target);
                free(outside_target);
                free(script);
                free(outside_script);
        }
}

/*
 * Failures of the command's own make no marker: a missing file, a missing
 * program (127 from inside), denial-looking lines it printed itself.  A
 * signal death after a denied write is a denial all the same (the
 * supervisor's record is evidence whatever the status: docs/bash-tool.md,
 * "Attribution"), with the status as it came (under bwrap exit 139, as a
 * shell would report it).
 */
static void test_own_failure_shows_no_marker(void **state)
{
        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *target = path_in(scratch.workspace, "signal-%s", backend);
                char *signal_script = format_text("echo data > '%s'; kill -SEGV $$", target);
                const struct {
                        const char *script;
                        int exit_code;   /* -1: killed by SIGSEGV (Landlock) or 139 (bwrap) */
                        bool denied;     /* the write's record makes it a denial */
                } cases[] = {
                        { "ls /nonexistent-dsh-sandbox-path", 2, false },
                        { "no-such-command-dsh-sandbox", 127, false },
                        { "echo 'Permission denied, but mine' >&2; echo 'Read-only file system, mine too' >&2; exit 0",
                          0, false },
                        { "echo 'Permission denied, but mine' >&2; echo 'Read-only file system, mine too' >&2; exit 1",
                          1, false },
                        { signal_script, -1, true },
                };
                const char *const none[] = { NULL };

                if (!backend_works(backend))
                        goto next;
                for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                        const char *json[] = { "bash", "--backend", backend, "--mode", "read-only", "--root",
                                               scratch.workspace, "--json", "--", cases[i].script, NULL };
                        const char *human[] = { "bash", "--backend", backend, "--mode", "read-only", "--root",
                                                scratch.workspace, "--", cases[i].script, NULL };
                        test_process_result result;
                        json_t *root = run_cli_json(json);

                        if (cases[i].denied) {
                                json_t *denials = json_object_get(root, "denials");

                                assert_string_equal(kind_of(root), "denied");
                                assert_true(json_is_true(json_object_get(sandbox_of(root), "denied")));
                                assert_true(json_array_size(denials) >= 1);
                                assert_string_equal(json_string_value(json_object_get(json_array_get(denials, 0),
                                                                                      "path")),
                                                    target);
                        } else {
                                assert_string_equal(kind_of(root), "completed");
                                assert_markers(root, none);
                                assert_true(json_is_false(json_object_get(sandbox_of(root), "denied")));
                                assert_int_equal(json_array_size(json_object_get(root, "denials")), 0);
                        }
                        if (cases[i].exit_code >= 0) {
                                assert_int_equal(member_integer(root, "exitCode"), cases[i].exit_code);
                        } else if (strcmp(backend, "bwrap") == 0) {
                                assert_int_equal(member_integer(root, "exitCode"), 128 + SIGSEGV);
                        } else {
                                assert_true(json_is_null(json_object_get(root, "exitCode")));
                                assert_int_equal(member_integer(root, "signal"), SIGSEGV);
                        }
                        json_decref(root);
                        run_cli(human, &result);
                        if (!cases[i].denied && test_contains(result.stderr_text, "[sandbox:"))
                                fail_msg("%s, `%s`: a marker for the command's own failure: %s", backend,
                                         cases[i].script, result.stderr_text);
                        if (cases[i].denied && !test_contains(result.stderr_text, "dsh-sandbox: denied: write"))
                                fail_msg("%s, `%s`: no denial line: %s", backend, cases[i].script,
                                         result.stderr_text);
                        test_process_result_clear(&result);
                }
                assert_false(test_path_exists(target));
next:
                free(target);
                free(signal_script);
        }
}

/*
 * A command that prints a runner's fatal lines (bwrap's, the launcher's,
 * with the launcher's exit status 125) is not a runner failure: the status
 * channel (bwrap's --json-status-fd, the in-process spawn's pre-exec report)
 * says it ran.  Its own status comes back, 125 included.  (The lines avoid
 * the denial dialects — "operation not permitted" is Landlock's read-only
 * one since metadata calls fail with EPERM there — so "completed" holds.)
 */
static void test_fake_runner_lines_are_the_commands_own(void **state)
{
        static const char *const scripts[] = {
                "echo \"bwrap: Can't mount proc on /newroot/proc: No such device\" >&2; exit 1",
                "echo 'landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)' >&2; "
                "exit 125",
                "echo 'bwrap: execvp bash: No such file or directory' >&2; "
                "echo 'landlock-run: exec failed: No such file or directory' >&2; exit 125",
        };
        const char *const none[] = { NULL };

        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                if (!backend_works(backends[b]))
                        continue;
                for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
                        const char *json[] = { "bash", "--backend", backends[b], "--json", "--", scripts[i], NULL };
                        const char *human[] = { "bash", "--backend", backends[b], "--", scripts[i], NULL };
                        int expected = i == 0 ? 1 : 125;
                        test_process_result result;
                        json_t *root = run_cli_json(json);

                        if (strcmp(kind_of(root), "completed") != 0)
                                fail_msg("%s, `%s`: kind %s", backends[b], scripts[i], kind_of(root));
                        assert_true(json_is_false(json_object_get(sandbox_of(root), "runnerFailed")));
                        assert_int_equal(member_integer(root, "exitCode"), expected);
                        assert_markers(root, none);
                        assert_null(json_object_get(root, "error"));
                        json_decref(root);
                        run_cli(human, &result);
                        assert_int_equal(result.exit_code, expected);
                        assert_false(test_contains(result.stderr_text, "SANDBOX_UNAVAILABLE"));
                        assert_false(test_contains(result.stderr_text, "[sandbox:"));
                        test_process_result_clear(&result);
                }
        }
}

/* ========================================================= escalation == */

/* An approval command that records what it was asked (stdin, its DSH_SANDBOX_ESCALATION_* variables) and answers. */
static char *write_approver(const char *name, int answer)
{
        char *path = path_in(scratch.root, "%s", name);
        char *script = format_text("#!/bin/sh\n"
                                   "cat > '%s/%s.request'\n"
                                   "env | grep '^DSH_SANDBOX_ESCALATION_' | sort > '%s/%s.environment'\n"
                                   "exit %d\n",
                                   scratch.root, name, scratch.root, name, answer);

        write_script(path, script);
        free(script);
        return path;
}

/* `dsh-sandbox session new --cwd WORKSPACE`: the id. */
static char *new_session(void)
{
        const char *arguments[] = { "session", "new", "--cwd", scratch.workspace, NULL };
        test_process_result result;
        char *id;

        run_cli(arguments, &result);
        assert_int_equal(result.exit_code, 0);
        id = strndup(result.stdout_text, strcspn(result.stdout_text, "\n"));
        test_process_result_clear(&result);
        return id;
}

static char *session_log(const char *id)
{
        char *path = format_text("%s/%s.jsonl", scratch.state, id);
        char *text = test_read_file(path);

        if (!text)
                fail_msg("no session log at %s", path);
        free(path);
        return text;
}

/*
 * An approved escalation runs this one call under the wider mode: the write
 * lands, the approval command saw the request (JSON on stdin and its
 * environment), and nothing about the grant is kept — the session's log is
 * unchanged and the next call is denied as before.
 */
static void test_approved_escalation_lands_the_write_once(void **state)
{
        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *approver = write_approver("approve", 0);
                char *target = path_in(scratch.workspace, "granted-%s", backend);
                char *again = path_in(scratch.workspace, "again-%s", backend);
                char *script = format_text("echo data > '%s'", target);
                char *again_script = format_text("echo data > '%s'", again);
                char *request_path = path_in(scratch.root, "approve.request");
                char *environment_path = path_in(scratch.root, "approve.environment");
                char *id, *log_before, *log_after, *request_text, *environment_text;
                json_t *root, *request;

                if (!backend_works(backend))
                        goto next;
                id = new_session();
                log_before = session_log(id);
                {
                        const char *arguments[] = { "bash", "--backend", backend, "--session", id,
                                                    "--sandbox-permissions", "workspace-write", "--justification",
                                                    "the test writes one file in its workspace",
                                                    "--approval-command", approver, "--json", "--", script, NULL };

                        root = run_cli_json(arguments);
                }
                assert_string_equal(kind_of(root), "completed");
                assert_int_equal(member_integer(root, "exitCode"), 0);
                assert_string_equal(member_string(sandbox_of(root), "mode"), "workspace-write");
                assert_string_equal(member_string(sandbox_of(root), "backend"), backend);
                json_decref(root);
                {
                        char *content = test_read_file(target);

                        assert_non_null(content);
                        assert_string_equal(content, "data\n");
                        free(content);
                }
                request_text = test_read_file(request_path);
                request = parse_json(request_text);
                assert_string_equal(member_string(request, "command"), script);
                assert_string_equal(member_string(request, "sandboxPermissions"), "workspace-write");
                assert_string_equal(member_string(request, "currentMode"), "read-only");
                assert_string_equal(member_string(request, "justification"),
                                    "the test writes one file in its workspace");
                assert_string_equal(member_string(request, "workspaceRoot"), scratch.workspace);
                assert_string_equal(member_string(request, "sessionId"), id);
                json_decref(request);
                environment_text = test_read_file(environment_path);
                assert_non_null(environment_text);
                assert_true(test_contains(environment_text, "DSH_SANDBOX_ESCALATION_MODE=workspace-write\n"));
                assert_true(test_contains(environment_text, "DSH_SANDBOX_ESCALATION_CURRENT_MODE=read-only\n"));
                {
                        char *line = format_text("DSH_SANDBOX_ESCALATION_COMMAND=%s\n", script);

                        assert_true(test_contains(environment_text, line));
                        free(line);
                }

                /* Nothing persisted: the log is as it was, and the next call is read-only again. */
                log_after = session_log(id);
                assert_string_equal(log_after, log_before);
                {
                        const char *arguments[] = { "bash", "--backend", backend, "--session", id, "--json", "--",
                                                    again_script, NULL };

                        root = run_cli_json(arguments);
                }
                assert_string_equal(kind_of(root), "denied");
                assert_string_equal(member_string(sandbox_of(root), "mode"), "read-only");
                assert_false(test_path_exists(again));
                json_decref(root);
                free(id);
                free(log_before);
                free(log_after);
                free(request_text);
                free(environment_text);
                unlink(request_path);
                unlink(environment_path);
next:
                free(approver);
                free(target);
                free(again);
                free(script);
                free(again_script);
                free(request_path);
                free(environment_path);
        }
}

/* A rejected escalation: the exact text, exit 1, nothing ran. */
static void test_rejected_escalation_does_not_run(void **state)
{
        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *rejecter = write_approver("reject", 1);
                char *target = path_in(scratch.workspace, "rejected-%s", backend);
                char *script = format_text("echo data > '%s'", target);
                const char *human[] = { "bash", "--backend", backend, "--root", scratch.workspace,
                                        "--sandbox-permissions", "workspace-write", "--justification", "to write",
                                        "--approval-command", rejecter, "--", script, NULL };
                const char *json[] = { "bash", "--backend", backend, "--root", scratch.workspace,
                                       "--sandbox-permissions", "danger-full-access", "--justification", "to write",
                                       "--approval-command", rejecter, "--json", "--", script, NULL };
                const char *const none[] = { NULL };
                test_process_result result;
                json_t *root;

                if (!backend_works(backend))
                        goto next;
                run_cli(human, &result);
                assert_int_equal(result.exit_code, 1);
                assert_string_equal(result.stderr_text, "dsh-sandbox: " REJECTED("workspace-write") "\n");
                assert_false(test_path_exists(target));
                test_process_result_clear(&result);
                root = run_cli_json(json);
                assert_string_equal(kind_of(root), "rejected");
                assert_string_equal(member_string(root, "message"), REJECTED("danger-full-access"));
                assert_true(json_is_null(json_object_get(root, "exitCode")));
                assert_markers(root, none);
                assert_false(test_path_exists(target));
                json_decref(root);
next:
                free(rejecter);
                free(target);
                free(script);
        }
}

/*
 * An approval command that hangs is ended at its bound (its whole group:
 * nothing of it is left) and counts as a rejection; one that cannot be
 * found is a rejection too.  Nothing ran either time.
 */
static void test_approval_that_hangs_or_is_missing_rejects(void **state)
{
        char *sleep_argument = unique_sleep();
        char *hanging = format_text("sleep %s; exit 0", sleep_argument);
        char *target = path_in(scratch.workspace, "never");
        char *script = format_text("echo data > '%s'", target);
        const char *backend = backend_works("landlock") ? "landlock" : "bwrap";
        const char *hang[] = { "bash", "--backend", backend, "--root", scratch.workspace, "--sandbox-permissions",
                               "workspace-write", "--justification", "to write", "--approval-command", hanging,
                               "--approval-timeout", "300", "--json", "--", script, NULL };
        const char *missing[] = { "bash", "--backend", backend, "--root", scratch.workspace, "--sandbox-permissions",
                                  "workspace-write", "--justification", "to write", "--approval-command",
                                  "/nonexistent/dsh-sandbox-approver", "--json", "--", script, NULL };
        json_t *root, *warnings;

        (void) state;
        if (!backend_works(backend)) {
                skip();
                return;
        }
        root = run_cli_json(hang);
        assert_string_equal(kind_of(root), "rejected");
        assert_string_equal(member_string(root, "message"), REJECTED("workspace-write"));
        warnings = json_object_get(root, "warnings");
        assert_true(json_is_array(warnings));
        assert_true(test_contains(json_string_value(json_array_get(warnings, 0)),
                                  "the approval command did not answer within 300 ms"));
        json_decref(root);
        assert_no_sleep_left(sleep_argument, "the approval command at its bound");
        assert_false(test_path_exists(target));

        root = run_cli_json(missing);
        assert_string_equal(kind_of(root), "rejected");
        json_decref(root);
        assert_false(test_path_exists(target));
        free(sleep_argument);
        free(hanging);
        free(target);
        free(script);
}

/* The validation texts, exact, exit 2, nothing run; the same mode needs no approval and simply runs. */
static void test_escalation_validation(void **state)
{
        char *target = path_in(scratch.workspace, "validated");
        char *script = format_text("echo data > '%s'", target);
        const char *backend = backend_works("landlock") ? "landlock" : "bwrap";
        const struct {
                const char *arguments[16];
                const char *stderr_text;
        } cases[] = {
                { { "--sandbox-permissions", "workspace-write", NULL },
                  "dsh-sandbox: invalid escalation: sandbox_permissions requires a justification\n" },
                { { "--justification", "to write", NULL },
                  "dsh-sandbox: invalid escalation: justification is only valid together with sandbox_permissions, "
                  "additional_write or additional_hosts\n" },
                { { "--sandbox-permissions", "workspace-write", "--justification", "", NULL },
                  "dsh-sandbox: invalid justification: expected a non-empty sentence\n" },
                { { "--sandbox-permissions", "workspace-write", "--justification", "  \t ", NULL },
                  "dsh-sandbox: invalid justification: expected a non-empty sentence\n" },
                { { "--sandbox-permissions", "workspace-write", "--justification", "first line\nApprove: yes", NULL },
                  "dsh-sandbox: invalid justification: expected a non-empty sentence\n" },
                { { "--sandbox-permissions", "workspace-write", "--justification", "\x1b[2Jclear the screen", NULL },
                  "dsh-sandbox: invalid justification: expected a non-empty sentence\n" },
                { { "--mode", "workspace-write", "--sandbox-permissions", "read-only", "--justification", "less",
                    NULL },
                  "dsh-sandbox: sandbox escalation to \"read-only\" is not strictly wider than this call's current "
                  "\"workspace-write\" mode\n" },
                { { "--sandbox-permissions", "everything", "--justification", "more", NULL },
                  "dsh-sandbox: invalid escalation: sandbox_permissions must be \"read-only\", \"workspace-write\" "
                  "or \"danger-full-access\"\n" },
        };

        (void) state;
        if (!backend_works(backend)) {
                skip();
                return;
        }
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *arguments[32] = { "bash", "--backend", backend, "--root", scratch.workspace,
                                              "--approval-command", "exit 0" };
                size_t count = 7;
                test_process_result result;

                for (size_t j = 0; cases[i].arguments[j]; j++)
                        arguments[count++] = cases[i].arguments[j];
                arguments[count++] = "--";
                arguments[count++] = script;
                arguments[count] = NULL;
                run_cli(arguments, &result);
                assert_int_equal(result.exit_code, 2);
                assert_string_equal(result.stderr_text, cases[i].stderr_text);
                assert_false(test_path_exists(target));
                test_process_result_clear(&result);
        }
        {
                const char *empty[] = { "bash", "--backend", backend, "--", "", NULL };
                const char *blank[] = { "bash", "--backend", backend, "--", " \n ", NULL };
                test_process_result result;

                run_cli(empty, &result);
                assert_int_equal(result.exit_code, 2);
                assert_string_equal(result.stderr_text, "dsh-sandbox: the command is empty\n");
                test_process_result_clear(&result);
                run_cli(blank, &result);
                assert_int_equal(result.exit_code, 2);
                assert_string_equal(result.stderr_text, "dsh-sandbox: the command is empty\n");
                test_process_result_clear(&result);
        }
        {
                /* The same mode: no approval asked (this channel would reject), the call runs. */
                const char *same[] = { "bash", "--backend", backend, "--root", scratch.workspace, "--mode",
                                       "workspace-write", "--sandbox-permissions", "workspace-write",
                                       "--justification", "already allowed", "--approval-command", "exit 1", "--",
                                       script, NULL };
                test_process_result result;

                run_cli(same, &result);
                assert_int_equal(result.exit_code, 0);
                assert_true(test_path_exists(target));
                test_process_result_clear(&result);
        }
        free(target);
        free(script);
}

/* With no terminal (a new session) and no --approval-command, the escalation is refused, and says why. */
static void test_escalation_without_a_channel_is_refused(void **state)
{
        char *target = path_in(scratch.workspace, "unasked");
        char *script = format_text("echo data > '%s'", target);
        const char *backend = backend_works("landlock") ? "landlock" : "bwrap";
        const char *arguments[] = { "bash", "--backend", backend, "--root", scratch.workspace,
                                    "--sandbox-permissions", "workspace-write", "--justification", "to write", "--",
                                    script, NULL };
        test_process_result result;

        (void) state;
        if (!backend_works(backend)) {
                skip();
                return;
        }
        run_cli_with("setsid", arguments, NULL, &result);
        assert_int_equal(result.exit_code, 1);
        assert_string_equal(result.stderr_text,
                            "dsh-sandbox: warning: there is no terminal to ask and no --approval-command\n"
                            "dsh-sandbox: escalating this command to \"workspace-write\" needs the user's approval, "
                            "and there is no approval channel to ask the user; it stays denied, so stop and explain "
                            "instead of working around it\n");
        assert_false(test_path_exists(target));
        test_process_result_clear(&result);
        free(target);
        free(script);
}

/* Reads the terminal's output until `expected` shows up (or EOF, or the bound); returns all read. */
static char *read_terminal_until(int terminal, const char *expected)
{
        size_t size = 0;
        char *text = NULL;
        FILE *buffer = open_memstream(&text, &size);

        assert_non_null(buffer);
        for (long waited = 0; waited < TEST_WAIT_BOUND_MS;) {
                struct pollfd poll_fd = { terminal, POLLIN, 0 };
                char chunk[512];
                ssize_t length;

                if (poll(&poll_fd, 1, TEST_POLL_STEP_MS) <= 0) {
                        waited += TEST_POLL_STEP_MS;
                        continue;
                }
                length = read(terminal, chunk, sizeof(chunk));
                if (length <= 0)
                        break;
                fwrite(chunk, 1, (size_t) length, buffer);
                fflush(buffer);
                if (expected && strstr(text, expected))
                        break;
        }
        fclose(buffer);
        return text;
}

/*
 * The controlling terminal asks: the prompt names the command (its escape
 * sequences and line breaks shown, not acted on), the justification and the
 * mode; "y" allows the call once, a bare Enter is no.
 */
static void test_terminal_prompt_defaults_to_no(void **state)
{
        const char *backend = backend_works("landlock") ? "landlock" : "bwrap";
        static const char *const answers[] = { "y\n", "\n" };

        (void) state;
        if (!backend_works(backend)) {
                skip();
                return;
        }
        for (size_t i = 0; i < 2; i++) {
                char *target = path_in(scratch.workspace, "prompted-%zu", i);
                /* An escape sequence, a right-to-left override, a C1 CSI, a line break: none may act on the prompt. */
                char *script = format_text("echo data > '%s' # \x1b[2J \xe2\x80\xae \xc2\x9b\nprintf 'x'", target);
                char *environment[8], *seen, *rest;
                int terminal, status = 0;
                pid_t pid;

                cli_environment(NULL, environment);
                pid = forkpty(&terminal, NULL, NULL, NULL);
                assert_true(pid >= 0);
                if (pid == 0) {
                        const char *argv[] = { test_dsh_sandbox_path(), "bash", "--backend", backend, "--root",
                                               scratch.workspace, "--sandbox-permissions", "workspace-write",
                                               "--justification", "the test asks the terminal", "--", script, NULL };

                        for (size_t j = 0; environment[j]; j++)
                                putenv(environment[j]);
                        execv(argv[0], (char *const *) argv);
                        _exit(255);
                }
                seen = read_terminal_until(terminal, "[y/N] ");
                if (!test_contains(seen, "[y/N] "))
                        fail_msg("no prompt on the terminal: %s", seen);
                assert_true(test_contains(seen, "workspace-write"));
                assert_true(test_contains(seen, "the test asks the terminal"));
                assert_true(test_contains(seen, "\\x1b[2J"));   /* shown, not sent to the terminal */
                assert_false(test_contains(seen, "\x1b[2J"));
                assert_true(test_contains(seen, "\\u202e \\u009b"));
                assert_false(test_contains(seen, "\xe2\x80\xae"));
                assert_false(test_contains(seen, "\xc2\x9b"));
                /* The second line of the command is indented under the first, not at the prompt's margin. */
                assert_true(test_contains(seen, "\n                  printf 'x'"));
                assert_int_equal(write(terminal, answers[i], strlen(answers[i])), (ssize_t) strlen(answers[i]));
                rest = read_terminal_until(terminal, NULL);
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                close(terminal);
                assert_true(WIFEXITED(status));
                if (i == 0) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        assert_true(test_path_exists(target));
                } else {
                        assert_int_equal(WEXITSTATUS(status), 1);
                        assert_true(test_contains(rest, REJECTED("workspace-write")));
                        assert_false(test_path_exists(target));
                }
                free(seen);
                free(rest);
                free_environment(environment);
                free(target);
                free(script);
        }
}

/* A bwrap that fails the way it does when namespaces are blocked: before any status record. */
static char *write_failing_bwrap(void)
{
        char *path = path_in(scratch.root, "bwrap-early");

        write_script(path, "#!/bin/sh\n"
                           "echo 'bwrap: No permissions to creating new namespace, likely because the kernel does "
                           "not allow non-privileged user namespaces.' >&2\n"
                           "exit 1\n");
        return path;
}

/* A bwrap that reports its sandbox on --json-status-fd, then fails before exec (as a mount error does). */
static char *write_late_failing_bwrap(void)
{
        char *path = path_in(scratch.root, "bwrap-late");

        /* bash, not sh: the status fd may have two digits, which dash cannot redirect to. */
        write_script(path, "#!/bin/bash\n"
                           "fd=''\n"
                           "while [ $# -gt 0 ]; do\n"
                           "  if [ \"$1\" = --json-status-fd ]; then fd=$2; fi\n"
                           "  shift\n"
                           "done\n"
                           "[ -n \"$fd\" ] && echo '{ \"child-pid\": 4242 }' >&\"$fd\"\n"
                           "echo \"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\" >&2\n"
                           "exit 1\n");
        return path;
}

/*
 * A granted escalation is not a working sandbox: with bwrap broken, an
 * approved workspace-write still goes through the provider and fails closed
 * (the command never runs); only an approved danger-full-access runs it,
 * unconfined, without the provider.
 */
static void test_only_danger_full_access_bypasses_the_provider(void **state)
{
        char *broken = write_failing_bwrap();
        char *approver = write_approver("grant", 0);
        char *target = path_in(scratch.workspace, "bypassed");
        char *script = format_text("echo data > '%s'", target);
        const char *confined[] = { "bash", "--backend", "bwrap", "--root", scratch.workspace, "--sandbox-permissions",
                                   "workspace-write", "--justification", "to write", "--approval-command", approver,
                                   "--json", "--", script, NULL };
        const char *unconfined[] = { "bash", "--backend", "bwrap", "--root", scratch.workspace,
                                     "--sandbox-permissions", "danger-full-access", "--justification", "to write",
                                     "--approval-command", approver, "--json", "--", script, NULL };
        const char *const runner_marker[] = { MARKER_RUNNER_FAILED("workspace-write"), NULL };
        json_t *root;

        (void) state;
        root = run_cli_json_with(confined, broken);
        assert_string_equal(kind_of(root), "runner-failed");
        assert_markers(root, runner_marker);
        assert_false(test_path_exists(target));
        json_decref(root);

        root = run_cli_json_with(unconfined, broken);
        assert_string_equal(kind_of(root), "completed");
        assert_string_equal(member_string(sandbox_of(root), "mode"), "danger-full-access");
        assert_string_equal(member_string(sandbox_of(root), "backend"), "none");
        assert_true(json_is_null(json_object_get(sandbox_of(root), "enforcement")));
        assert_true(test_path_exists(target));
        json_decref(root);
        free(broken);
        free(approver);
        free(target);
        free(script);
}

/* ===================================================== runner failures == */

/*
 * A bwrap that fails before exec — before its status record (the runner
 * could not be spawned) or after it (its status channel never reports an
 * exec) — is a runner failure: 125, the SANDBOX_UNAVAILABLE message with
 * the runner's own line, the runner marker, and the command never ran.
 */
static void test_broken_bwrap_is_a_runner_failure(void **state)
{
        char *early = write_failing_bwrap();
        char *late = write_late_failing_bwrap();
        char *target = path_in(scratch.workspace, "ran");
        char *script = format_text("touch '%s'", target);
        const char *human[] = { "bash", "--backend", "bwrap", "--mode", "workspace-write", "--root",
                                scratch.workspace, "--", script, NULL };
        const char *json[] = { "bash", "--backend", "bwrap", "--mode", "workspace-write", "--root",
                               scratch.workspace, "--json", "--", script, NULL };
        const char *const runners[] = { early, late };
        const char *const lines[] = { "bwrap: No permissions to creating new namespace",
                                      " Runner failure: bwrap: Can't mount proc on /newroot/proc: Operation not "
                                      "permitted\n" };
        const char *const runner_marker[] = { MARKER_RUNNER_FAILED("workspace-write"), NULL };

        (void) state;
        for (size_t i = 0; i < 2; i++) {
                test_process_result result;
                json_t *root, *error;

                run_cli_with(NULL, human, runners[i], &result);
                assert_int_equal(result.exit_code, 125);
                assert_true(test_contains(result.stderr_text, UNAVAILABLE_PREFIX("workspace-write")));
                assert_true(test_contains(result.stderr_text, " Runner failure: "));
                if (!test_contains(result.stderr_text, lines[i]))
                        fail_msg("runner %zu: no `%s` in: %s", i, lines[i], result.stderr_text);
                assert_true(ends_with(result.stderr_text, MARKER_RUNNER_FAILED("workspace-write") "\n"));
                assert_false(test_path_exists(target));
                test_process_result_clear(&result);

                root = run_cli_json_with(json, runners[i]);
                assert_string_equal(kind_of(root), "runner-failed");
                assert_true(json_is_true(json_object_get(sandbox_of(root), "runnerFailed")));
                assert_true(json_is_null(json_object_get(root, "exitCode")));
                assert_markers(root, runner_marker);
                error = json_object_get(root, "error");
                assert_string_equal(member_string(error, "code"), "SANDBOX_UNAVAILABLE");
                assert_false(test_path_exists(target));
                json_decref(root);
        }
        free(early);
        free(late);
        free(target);
        free(script);
}

/*
 * Starts `dsh-sandbox bash ... --json` with its stdout into `output_fd`, in a process group of its
 * own.  With `refuse_landlock`, under a seccomp filter that fails landlock_restrict_self with EPERM:
 * Landlock's last step is refused in the child.
 */
static pid_t start_cli(const char *const *arguments, int output_fd, bool refuse_landlock)
{
        const char *argv[48];
        char *environment[8];
        pid_t pid;

        cli_argv(NULL, arguments, argv);
        cli_environment(NULL, environment);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int null_fd = open("/dev/null", O_RDWR);
                sigset_t none;

                if (refuse_landlock) {
                        scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
                        int number = seccomp_syscall_resolve_name("landlock_restrict_self");

                        if (!filter || number == __NR_SCMP_ERROR ||
                            seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 0) < 0 || seccomp_load(filter) < 0)
                                _exit(254);
                }

                setpgid(0, 0);
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                dup2(null_fd, 0);
                dup2(output_fd, 1);
                dup2(null_fd, 2);
                for (size_t i = 0; environment[i]; i++)
                        putenv(environment[i]);
                alarm(RUN_BOUND_SECONDS);
                execv(argv[0], (char *const *) argv);
                _exit(255);
        }
        free_environment(environment);
        return pid;
}

/*
 * Landlock's in-process spawn reports a failure before exec out of band:
 * with the restriction refused in the child, the command never runs and the
 * call is a runner failure, not the command's.
 */
static void test_refused_landlock_is_a_runner_failure(void **state)
{
        char *target = path_in(scratch.workspace, "unconfined");
        char *script = format_text("touch '%s'", target);
        const char *arguments[] = { "bash", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                    scratch.workspace, "--json", "--", script, NULL };
        char *output = path_in(scratch.root, "refused.json");
        int output_fd, status = 0;
        char *text;
        json_t *root;
        pid_t pid;

        (void) state;
        if (!backend_works("landlock")) {
                skip();
                return;
        }
        output_fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(output_fd >= 0);
        pid = start_cli(arguments, output_fd, true);
        close(output_fd);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        text = test_read_file(output);
        root = parse_json(text);
        assert_string_equal(kind_of(root), "runner-failed");
        assert_true(test_contains(member_string(json_object_get(root, "error"), "message"),
                                  "Runner failure: cannot apply the sandbox in the child"));
        assert_false(test_path_exists(target));
        json_decref(root);
        free(text);
        free(output);
        free(target);
        free(script);
}

/* A runtime for the library tests: the scratch config values, `launchers` as its launcher directory. */
static dsh_runtime *library_runtime(const char *launchers, const char *backend, const char *const *chain)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_config config;

        assert_int_equal(dsh_config_init(&config, &error), 0);
        if (chain) {
                config.backends = dsh_strv_copy((char *const *) chain);
                assert_non_null(config.backends);
        }
        options.config_source = DSH_RUNTIME_CONFIG_VALUES;
        options.config = &config;
        options.backend = backend;
        options.launcher_directory = launchers;
        options.state_directory = scratch.state;
        options.use_verdict_cache = false;
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message);
        dsh_config_clear(&config);
        return runtime;
}

static void library_policy(dsh_runtime *runtime, dsh_mode mode, dsh_policy *policy)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_error error = DSH_ERROR_INIT;

        request.has_mode = true;
        request.mode = mode;
        request.workspace_root = scratch.workspace;
        if (dsh_runtime_resolve(runtime, &request, policy, &error) < 0)
                fail_msg("dsh_runtime_resolve: %s", error.message);
}

/*
 * A missing launcher: a runtime whose launcher directory holds neither
 * landlock-run nor dsh-sandbox-exec cannot confine — bwrap misses its last
 * step, and a chain that probes Landlock finds no launcher — and the call is
 * a runner failure that names what is missing; the command never ran.
 */
static void test_missing_launcher_is_a_runner_failure(void **state)
{
        char *empty = path_in(scratch.root, "no-launchers");
        char *broken = write_failing_bwrap();
        char *target = path_in(scratch.workspace, "launched");
        char *script = format_text("touch '%s'", target);
        const char *chain[] = { "bwrap", "landlock", NULL };
        const struct {
                const char *backend;
                const char *const *chain;
                const char *missing;
        } cases[] = {
                { "bwrap", NULL, "dsh-sandbox-exec" },
                { NULL, chain, "landlock-run" },
        };

        (void) state;
        assert_int_equal(mkdir(empty, 0755), 0);
        /* The chain's bwrap is broken too, so that nothing in it can run the command. */
        assert_int_equal(setenv("DSH_SANDBOX_BWRAP", broken, 1), 0);
        for (size_t i = 0; i < 2; i++) {
                dsh_runtime *runtime = library_runtime(empty, cases[i].backend, (const char *const *) cases[i].chain);
                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;

                library_policy(runtime, DSH_MODE_WORKSPACE_WRITE, &policy);
                request.command = script;
                request.policy = &policy;
                if (dsh_bash_run(runtime, &request, &result, &error) < 0)
                        fail_msg("dsh_bash_run: %s", error.message);
                assert_int_equal(result.kind, DSH_BASH_RUNNER_FAILED);
                assert_true(result.sandbox.runner_failed);
                assert_int_equal(result.error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
                if (!test_contains(result.error.message, cases[i].missing))
                        fail_msg("case %zu: the failure does not name %s: %s", i, cases[i].missing,
                                 result.error.message);
                assert_string_equal(result.markers[0], MARKER_RUNNER_FAILED("workspace-write"));
                assert_false(test_path_exists(target));
                dsh_bash_result_clear(&result);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
        unsetenv("DSH_SANDBOX_BWRAP");
        free(empty);
        free(broken);
        free(target);
        free(script);
}

/* ================================================ the group ends with it == */

/*
 * At the timeout the whole process group goes: `sleep 30 & sleep 30` leaves
 * no sleep behind, under either backend and unconfined; the human form
 * exits 124.  A command that starts a daemon and exits returns at once, and
 * the daemon is gone too.  Output that never ends is cut at the timeout.
 */
static void test_timeout_leaves_nothing_behind(void **state)
{
        static const char *const modes[] = { "bwrap", "landlock", "danger-full-access" };

        (void) state;
        for (size_t m = 0; m < 3; m++) {
                bool unconfined = m == 2;
                const char *backend = unconfined ? "auto" : modes[m];
                const char *mode = unconfined ? "danger-full-access" : "read-only";
                char *argument = unique_sleep();
                char *both = format_text("sleep %s & sleep %s", argument, argument);
                /* The daemon has exec'd (its argv is in /proc) before the command exits: no race with the check. */
                char *daemon = format_text("sleep %s >/dev/null 2>&1 & "
                                           "until grep -qa %s /proc/$!/cmdline 2>/dev/null; do sleep 0.01; done; "
                                           "echo started",
                                           argument, argument);
                const char *timed[] = { "bash", "--backend", backend, "--mode", mode, "--timeout", "300", "--json",
                                        "--", both, NULL };
                const char *human[] = { "bash", "--backend", backend, "--mode", mode, "--timeout", "300", "--",
                                        both, NULL };
                const char *forked[] = { "bash", "--backend", backend, "--mode", mode, "--json", "--", daemon, NULL };
                const char *endless[] = { "bash", "--backend", backend, "--mode", mode, "--timeout", "300",
                                          "--output-limit", "4096", "--json", "--", "yes", NULL };
                test_process_result result;
                json_t *root, *output;

                if (!unconfined && !backend_works(backend))
                        goto next;
                root = run_cli_json(timed);
                assert_string_equal(kind_of(root), "timed-out");
                assert_true(json_is_true(json_object_get(root, "timedOut")));
                assert_true(json_is_false(json_object_get(root, "cancelled")));
                json_decref(root);
                assert_no_sleep_left(argument, modes[m]);

                run_cli(human, &result);
                assert_int_equal(result.exit_code, 124);
                assert_true(test_contains(result.stderr_text, "did not finish within 300 ms"));
                test_process_result_clear(&result);
                assert_no_sleep_left(argument, modes[m]);

                root = run_cli_json(forked);
                assert_string_equal(kind_of(root), "completed");
                assert_string_equal(member_string(json_object_get(root, "stdout"), "text"), "started\n");
                json_decref(root);
                assert_no_sleep_left(argument, modes[m]);

                root = run_cli_json(endless);
                assert_string_equal(kind_of(root), "timed-out");
                output = json_object_get(root, "stdout");
                assert_true(json_is_true(json_object_get(output, "truncated")));
                assert_true(member_integer(output, "bytes") > 4096);
                json_decref(root);
next:
                free(argument);
                free(both);
                free(daemon);
        }
}

/* Runs `script` (which creates $READY once set up) under the CLI, sends `signal_number` once ready; the JSON. */
static json_t *signal_cli(const char *backend, const char *script, const char *ready, int signal_number)
{
        char *output = path_in(scratch.root, "cancelled.json");
        const char *arguments[] = { "bash", "--backend", backend, "--mode", "workspace-write", "--root",
                                    scratch.workspace, "--json", "--", script, NULL };
        int output_fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), status = 0;
        char *text;
        json_t *root;
        pid_t pid;

        assert_true(output_fd >= 0);
        unlink(ready);
        pid = start_cli(arguments, output_fd, false);
        close(output_fd);
        if (!test_wait_for_file(ready)) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fail_msg("%s: the command never became ready", backend);
        }
        assert_int_equal(kill(pid, signal_number), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s: bash --json ended with status %#x", backend, status);
        text = test_read_file(output);
        root = parse_json(text);
        free(text);
        free(output);
        return root;
}

/*
 * SIGINT and SIGTERM to `dsh-sandbox bash` reach the command's process
 * group — the command's trap runs (its output and its status come back) —
 * and the result says cancelled; a command that ignores the signal is
 * killed after the grace.  No sleep of the command is left.
 */
static void test_signals_cancel_the_call(void **state)
{
        static const int signals[] = { SIGINT, SIGTERM };

        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *ready = path_in(scratch.workspace, "ready");

                if (!backend_works(backend))
                        goto next;
                for (size_t s = 0; s < 2; s++) {
                        char *argument = unique_sleep();
                        char *script = format_text("trap 'echo trapped; exit 7' INT TERM; sleep %s & : > '%s'; wait",
                                                   argument, ready);
                        json_t *root = signal_cli(backend, script, ready, signals[s]);

                        assert_string_equal(kind_of(root), "cancelled");
                        assert_true(json_is_true(json_object_get(root, "cancelled")));
                        assert_string_equal(member_string(json_object_get(root, "stdout"), "text"), "trapped\n");
                        assert_int_equal(member_integer(root, "exitCode"), 7);
                        json_decref(root);
                        assert_no_sleep_left(argument, backend);
                        free(argument);
                        free(script);
                }
                {
                        char *argument = unique_sleep();
                        char *script = format_text("trap '' INT; : > '%s'; sleep %s", ready, argument);
                        json_t *root = signal_cli(backend, script, ready, SIGINT);

                        assert_string_equal(kind_of(root), "cancelled");
                        assert_true(test_contains(member_string(root, "message"), "SIGKILL"));
                        json_decref(root);
                        assert_no_sleep_left(argument, backend);
                        free(argument);
                        free(script);
                }
next:
                free(ready);
        }
}

struct cancel_later {
        dsh_bash_cancellation *cancellation;
        const char *ready;
};

static void *cancel_when_ready(void *data)
{
        struct cancel_later *later = data;

        if (test_wait_for_file(later->ready))
                dsh_bash_cancel(later->cancellation, SIGTERM);
        else
                dsh_bash_cancel(later->cancellation, SIGKILL);
        return NULL;
}

/*
 * The library's cancellation: requested before the call, nothing runs;
 * requested from another thread while it runs, the command's group gets the
 * signal and the result says cancelled.
 */
static void test_library_cancellation(void **state)
{
        const char *landlock_run = test_landlock_run_path();
        char *launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        char *target = path_in(scratch.workspace, "not-started");
        char *ready = path_in(scratch.workspace, "library-ready");
        char *argument = unique_sleep();
        char *early_script = format_text("touch '%s'", target);
        char *script = format_text("trap 'echo trapped; exit 5' TERM; sleep %s & : > '%s'; wait", argument, ready);

        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                dsh_runtime *runtime;
                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                dsh_bash_cancellation *cancellation = NULL;
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_error error = DSH_ERROR_INIT;
                struct cancel_later later;
                pthread_t thread;

                if (!backend_works(backends[b]))
                        continue;
                runtime = library_runtime(launchers, backends[b], NULL);
                library_policy(runtime, DSH_MODE_WORKSPACE_WRITE, &policy);
                assert_int_equal(dsh_bash_cancellation_new(&cancellation, &error), 0);
                dsh_bash_cancel(cancellation, SIGINT);
                request.command = early_script;
                request.policy = &policy;
                request.cancellation = cancellation;
                assert_int_equal(dsh_bash_run(runtime, &request, &result, &error), 0);
                assert_int_equal(result.kind, DSH_BASH_CANCELLED);
                assert_true(result.cancelled);
                assert_string_equal(result.message, "cancelled before the command started: it did not run");
                assert_false(test_path_exists(target));
                dsh_bash_result_clear(&result);
                dsh_bash_cancellation_free(cancellation);

                assert_int_equal(dsh_bash_cancellation_new(&cancellation, &error), 0);
                unlink(ready);
                later = (struct cancel_later) { cancellation, ready };
                assert_int_equal(pthread_create(&thread, NULL, cancel_when_ready, &later), 0);
                request.command = script;
                request.cancellation = cancellation;
                assert_int_equal(dsh_bash_run(runtime, &request, &result, &error), 0);
                assert_int_equal(pthread_join(thread, NULL), 0);
                assert_int_equal(result.kind, DSH_BASH_CANCELLED);
                assert_int_equal(result.exit_code, 5);
                assert_string_equal(result.standard_output.text, "trapped\n");
                dsh_bash_result_clear(&result);
                dsh_bash_cancellation_free(cancellation);
                assert_no_sleep_left(argument, backends[b]);
                dsh_policy_clear(&policy);
                dsh_runtime_free(runtime);
        }
        free(launchers);
        free(target);
        free(ready);
        free(argument);
        free(early_script);
        free(script);
}

/*
 * The library's cwd (dsh_bash_request.cwd), per backend and confined mode:
 * none starts in the workspace root, a relative one is taken against it,
 * an absolute one is used as is, and one that is missing or not a
 * directory is the request's error with nothing run.  The cwd grants
 * nothing: a relative write from a cwd inside the root under read-only,
 * or outside it under workspace-write, is denied and absent on disk (under
 * bwrap it would land if the command sat on the host's mount of its cwd).
 */
static void test_library_cwd(void **state)
{
        static const dsh_mode modes[] = { DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE };
        const char *landlock_run = test_landlock_run_path();
        char *launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        char *sub = path_in(scratch.workspace, "sub");
        char *file = path_in(scratch.workspace, "plain-file");
        char *never = path_in(scratch.workspace, "never-ran");
        char *never_command = format_text("touch '%s'", never);

        (void) state;
        assert_int_equal(mkdir(sub, 0755), 0);
        test_write_file(file, "x");
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                if (!backend_works(backends[b]))
                        continue;
                for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
                        const struct { const char *cwd; const char *shown; } starts[] = {
                                { NULL, scratch.workspace }, { "sub", sub }, { sub, sub },
                                { scratch.outside, scratch.outside }, { "sub/..", scratch.workspace },
                        };
                        const char *const refused[] = { "missing", file, "" };
                        dsh_runtime *runtime = library_runtime(launchers, backends[b], NULL);
                        dsh_policy policy = DSH_POLICY_INIT;
                        char *written = path_in(modes[m] == DSH_MODE_READ_ONLY ? sub : scratch.outside, "relative");

                        library_policy(runtime, modes[m], &policy);
                        for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
                                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                                dsh_error error = DSH_ERROR_INIT;
                                char *expected = format_text("%s\n", starts[i].shown);

                                request.command = "pwd -P";
                                request.policy = &policy;
                                request.cwd = starts[i].cwd;
                                assert_int_equal(dsh_bash_run(runtime, &request, &result, &error), 0);
                                assert_int_equal(result.exit_code, 0);
                                assert_string_equal(result.standard_output.text, expected);
                                dsh_bash_result_clear(&result);
                                free(expected);
                        }
                        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                                dsh_error error = DSH_ERROR_INIT;

                                request.command = never_command;
                                request.policy = &policy;
                                request.cwd = refused[i];
                                assert_int_equal(dsh_bash_run(runtime, &request, &result, &error), -EINVAL);
                                assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
                                assert_non_null(strstr(error.message, "cwd"));
                                assert_int_equal(dsh_bash_check_cwd(&policy, refused[i], NULL), -EINVAL);
                                assert_false(test_path_exists(never));
                                dsh_error_clear(&error);
                        }
                        {
                                /* Not a grant: the write goes nowhere from a cwd the mode does not let it write. */
                                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                                dsh_error error = DSH_ERROR_INIT;

                                request.command = "echo x > relative";
                                request.policy = &policy;
                                request.cwd = modes[m] == DSH_MODE_READ_ONLY ? "sub" : scratch.outside;
                                assert_int_equal(dsh_bash_run(runtime, &request, &result, &error), 0);
                                assert_int_equal(result.kind, DSH_BASH_DENIED);
                                assert_false(test_path_exists(written));
                                dsh_bash_result_clear(&result);
                        }
                        free(written);
                        dsh_policy_clear(&policy);
                        dsh_runtime_free(runtime);
                }
        }
        free(launchers);
        free(sub);
        free(file);
        free(never);
        free(never_command);
}

/* How often a call is ended at its start: enough that the end lands before, in and after the sandbox's start. */
#define EARLY_END_REPEATS 20

/* Ends a call after `delay_us`: SIGINT through its cancellation. */
struct cancel_early {
        dsh_bash_cancellation *cancellation;
        long delay_us;
};

static void *cancel_after_delay(void *data)
{
        struct cancel_early *early = data;
        struct timespec pause = { 0, early->delay_us * 1000 };

        while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
                ;
        dsh_bash_cancel(early->cancellation, SIGINT);
        return NULL;
}

/*
 * Calls under bwrap ended in their first moments: with a 1 ms timeout, and
 * cancelled (SIGINT) from another thread after 0 to ~10 ms, while the call
 * spawns.  The sandbox's init makes the command's group (setsid) and asks to
 * die with bwrap only some moments after it exists; an end that reached
 * bwrap alone before then left the init — and the command it went on to
 * exec, which writes its pid into the workspace — running for ever.  Each
 * call says timed-out or cancelled, and no sleep of any call is left.
 */
static void test_end_at_start_leaves_nothing_behind(void **state)
{
        const char *landlock_run = test_landlock_run_path();
        char *launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        char *arguments[2 * EARLY_END_REPEATS];
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime;

        (void) state;
        TEST_REQUIRE_BWRAP();
        runtime = library_runtime(launchers, "bwrap", NULL);
        library_policy(runtime, DSH_MODE_WORKSPACE_WRITE, &policy);
        for (size_t i = 0; i < 2 * EARLY_END_REPEATS; i++) {
                bool timed = i < EARLY_END_REPEATS;
                struct cancel_early early = { NULL, (long) (i % EARLY_END_REPEATS) * 500 };
                dsh_bash_request request = DSH_BASH_REQUEST_INIT;
                dsh_bash_result result = DSH_BASH_RESULT_INIT;
                dsh_error error = DSH_ERROR_INIT;
                pthread_t thread;
                char *script;

                arguments[i] = unique_sleep();
                script = format_text("echo $$ > '%s/started-%s'; exec sleep %s", scratch.workspace, arguments[i],
                                     arguments[i]);
                request.command = script;
                request.policy = &policy;
                request.timeout_ms = timed ? 1 : 0;
                if (!timed) {
                        assert_int_equal(dsh_bash_cancellation_new(&early.cancellation, &error), 0);
                        assert_int_equal(pthread_create(&thread, NULL, cancel_after_delay, &early), 0);
                        request.cancellation = early.cancellation;
                }
                if (dsh_bash_run(runtime, &request, &result, &error) < 0)
                        fail_msg("dsh_bash_run: %s", error.message);
                assert_int_equal(result.kind, timed ? DSH_BASH_TIMED_OUT : DSH_BASH_CANCELLED);
                if (!timed) {
                        assert_int_equal(pthread_join(thread, NULL), 0);
                        dsh_bash_cancellation_free(early.cancellation);
                }
                dsh_bash_result_clear(&result);
                free(script);
        }
        for (size_t i = 0; i < 2 * EARLY_END_REPEATS; i++) {
                assert_no_sleep_left(arguments[i], i < EARLY_END_REPEATS ? "bwrap, timeout 1 ms"
                                                                          : "bwrap, cancelled at the start");
                free(arguments[i]);
        }
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        free(launchers);
}

/*
 * A process that leaves the command's group (setsid) and keeps its output
 * open does not hold the tool, and does not outlive the call: under bwrap
 * the sandbox's pid namespace ends it, under Landlock the call's stand-in
 * (docs/backends.md, "Landlock: nothing outlives its call").
 */
static void test_setsid_escapee_does_not_hold_the_tool(void **state)
{
        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *backend = backends[b];
                char *argument = unique_sleep();
                char *ready = path_in(scratch.workspace, "escaped");
                char *script = format_text("setsid sh -c ': > \"$1\"; exec sleep %s' sh '%s' & "
                                           "while [ ! -e '%s' ]; do sleep 0.01; done; echo done",
                                           argument, ready, ready);
                const char *arguments[] = { "bash", "--backend", backend, "--mode", "workspace-write", "--root",
                                            scratch.workspace, "--json", "--", script, NULL };
                pid_t pids[8];
                size_t survivors;
                json_t *root;

                if (!backend_works(backend))
                        goto next;
                unlink(ready);
                root = run_cli_json(arguments);
                assert_string_equal(kind_of(root), "completed");
                assert_string_equal(member_string(json_object_get(root, "stdout"), "text"), "done\n");
                survivors = find_sleeps(argument, pids, 8);
                for (size_t i = 0; i < survivors; i++)
                        kill(pids[i], SIGKILL);   /* a failing case leaves nothing running */
                /* bwrap's pid namespace ends it; under Landlock the call's stand-in does (issue 19). */
                assert_int_equal(survivors, 0);
                assert_no_sleep_left(argument, backend);
                json_decref(root);
next:
                free(argument);
                free(ready);
                free(script);
        }
}

/* ====================================================== bounded output == */

#define BIG_LINE "0123456789abcdefghijklmnopqrstuvwxyz"   /* `yes` prints it with "\n": 37 bytes a line */
#define BIG_BYTES 300000000LL
#define MEMORY_BOUND_KIB (128 * 1024)

/*
 * 300 MB on stdout: the result keeps the first and the last 128 KiB with the
 * omission line between them, says truncated and counts every byte, while
 * the tool's peak memory (its maximum resident set, from wait4) stays under
 * 128 MiB.
 */
static void test_output_is_truncated_within_bounded_memory(void **state)
{
        char *command = format_text("yes %s | head -c %lld", BIG_LINE, BIG_BYTES);

        (void) state;
        for (size_t b = 0; b < BACKEND_COUNT; b++) {
                const char *arguments[] = { "bash", "--backend", backends[b], "--json", "--", command, NULL };
                char *output = path_in(scratch.root, "big.json");
                size_t line_length = strlen(BIG_LINE) + 1, half = DSH_BASH_OUTPUT_LIMIT_DEFAULT / 2;
                char *note, *text_file;
                int output_fd, status = 0;
                struct rusage usage;
                const char *text;
                json_t *root, *stream;
                pid_t pid;

                if (!backend_works(backends[b]))
                        goto next;
                output_fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                assert_true(output_fd >= 0);
                pid = start_cli(arguments, output_fd, false);
                close(output_fd);
                while (wait4(pid, &status, 0, &usage) < 0)
                        assert_int_equal(errno, EINTR);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
                printf("# %s: peak resident memory of the tool: %ld KiB\n", backends[b], usage.ru_maxrss);
                if (usage.ru_maxrss >= MEMORY_BOUND_KIB)
                        fail_msg("%s: the tool's peak memory was %ld KiB", backends[b], usage.ru_maxrss);
                text_file = test_read_file(output);
                root = parse_json(text_file);
                free(text_file);
                assert_string_equal(kind_of(root), "completed");
                stream = json_object_get(root, "stdout");
                assert_true(json_is_true(json_object_get(stream, "truncated")));
                assert_int_equal(member_integer(stream, "bytes"), BIG_BYTES);
                text = member_string(stream, "text");
                note = format_text("\n[... %lld bytes omitted ...]\n", BIG_BYTES - 2 * (long long) half);
                assert_int_equal(strlen(text), 2 * half + strlen(note));
                /* The head is the stream's first bytes, the tail its last: byte p of the stream is line[p % 37]. */
                for (size_t i = 0; i < half; i++) {
                        size_t tail_position = (size_t) BIG_BYTES - half + i;

                        if (text[i] != (BIG_LINE "\n")[i % line_length] ||
                            text[half + strlen(note) + i] != (BIG_LINE "\n")[tail_position % line_length])
                                fail_msg("%s: byte %zu of the kept text is not the stream's", backends[b], i);
                }
                assert_memory_equal(text + half, note, strlen(note));
                json_decref(root);
                free(note);
next:
                free(output);
        }
        free(command);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_denied_write_shows_both_markers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_own_failure_shows_no_marker, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fake_runner_lines_are_the_commands_own, setup, teardown),
                cmocka_unit_test_setup_teardown(test_approved_escalation_lands_the_write_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rejected_escalation_does_not_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_approval_that_hangs_or_is_missing_rejects, setup, teardown),
                cmocka_unit_test_setup_teardown(test_escalation_validation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_escalation_without_a_channel_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_terminal_prompt_defaults_to_no, setup, teardown),
                cmocka_unit_test_setup_teardown(test_only_danger_full_access_bypasses_the_provider, setup, teardown),
                cmocka_unit_test_setup_teardown(test_broken_bwrap_is_a_runner_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_landlock_is_a_runner_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_launcher_is_a_runner_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_timeout_leaves_nothing_behind, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signals_cancel_the_call, setup, teardown),
                cmocka_unit_test_setup_teardown(test_library_cancellation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_library_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_end_at_start_leaves_nothing_behind, setup, teardown),
                cmocka_unit_test_setup_teardown(test_setsid_escapee_does_not_hold_the_tool, setup, teardown),
                cmocka_unit_test_setup_teardown(test_output_is_truncated_within_bounded_memory, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
