/* SPDX-License-Identifier: MIT */
/*
 * What the CLI takes in before it confines anything: the config file is
 * checked at load by every subcommand that reads it, a file that would block
 * (a FIFO at the config, verdict-cache or session-log path) is never waited
 * on, and bytes a JSON string cannot carry are refused, never dropped from
 * the JSON the tool prints.  Every run is bounded by an alarm, so a
 * regression that blocks fails instead of hanging the suite.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

#define DEADLINE_SECONDS 20
/* The exit status of a run the alarm ended. */
#define KILLED_BY_ALARM (128 + 14)

typedef struct fixture {
        char *directory;
        char *environment[6];   /* state, config and cache homes in the scratch directory; no named config */
        char *config;           /* a config file path for --config */
        char *state;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));

        f->directory = test_make_directory(NULL);
        f->config = test_path_join(f->directory, "config.json");
        f->state = test_path_join(f->directory, "state");
        assert_true(asprintf(&f->environment[0], "DSH_SANDBOX_STATE_DIR=%s", f->state) > 0);
        assert_true(asprintf(&f->environment[1], "XDG_CONFIG_HOME=%s/config-home", f->directory) > 0);
        assert_true(asprintf(&f->environment[2], "XDG_CACHE_HOME=%s/cache-home", f->directory) > 0);
        f->environment[3] = strdup("DSH_SANDBOX_CONFIG=");
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        for (int i = 0; f->environment[i]; i++)
                free(f->environment[i]);
        free(f->config);
        free(f->state);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

/* dsh-sandbox with the arguments (a NULL-terminated list), bounded, in this fixture's environment. */
static void cli_argv(fixture *f, const char *const *arguments, test_process_result *result)
{
        const char *argv[40] = { test_dsh_sandbox_path() };
        size_t count = 1;

        for (; *arguments && count < 39; arguments++)
                argv[count++] = *arguments;
        argv[count] = NULL;
        test_run_bounded(argv, (const char *const *) f->environment, DEADLINE_SECONDS, result);
        if (result->signaled && result->exit_code == KILLED_BY_ALARM)
                fail_msg("dsh-sandbox %s %s blocked until the alarm", argv[1], argv[2] ? argv[2] : "");
}

#define cli(f, result, ...) cli_argv((f), (const char *const[]) { __VA_ARGS__, NULL }, (result))

/* mkdir -p, for directories this test creates below its scratch directory. */
static int make_path(const char *path)
{
        const char *argv[] = { "mkdir", "-p", "--", path, NULL };
        test_process_result result;
        int status;

        test_run(argv, NULL, &result);
        status = result.exit_code;
        test_process_result_clear(&result);
        return status;
}

static char *new_session(fixture *f, const char *cwd)
{
        test_process_result result;
        char *id;

        cli(f, &result, "session", "new", "--cwd", cwd);
        assert_int_equal(result.exit_code, 0);
        id = strndup(result.stdout_text, strcspn(result.stdout_text, "\n"));
        test_process_result_clear(&result);
        return id;
}

/*
 * Every subcommand that loads the config, as a list of argument vectors.
 * `%c` stands for the config path (--config), `%s` for a session id, `%m`
 * for a marker file the command would create if it ran.
 */
static const char *const config_readers[][12] = {
        { "policy", "resolve", "--config", "%c" },
        { "policy", "resolve", "--json", "--config", "%c" },
        { "policy", "context", "--session", "%s", "--config", "%c" },
        { "session", "list", "--config", "%c" },
        { "session", "show", "%s", "--config", "%c" },
        { "run", "--config", "%c", "--", "touch", "%m" },
        { "run", "--mode", "workspace-write", "--backend", "landlock", "--config", "%c", "--", "touch", "%m" },
        { "confine", "--mode", "workspace-write", "--config", "%c", "--", "touch", "%m" },
        { "probe", "--config", "%c" },
};

/* Runs every config reader with `config`; each must exit 2 with `expected` on stderr and run nothing. */
static void expect_every_reader_refuses(fixture *f, const char *config, const char *expected)
{
        char *session = new_session(f, f->directory), *marker = test_path_join(f->directory, "marker");

        for (size_t i = 0; i < sizeof(config_readers) / sizeof(config_readers[0]); i++) {
                const char *arguments[13] = { NULL };
                test_process_result result;

                for (size_t j = 0; config_readers[i][j]; j++) {
                        const char *argument = config_readers[i][j];

                        arguments[j] = strcmp(argument, "%c") == 0   ? config
                                       : strcmp(argument, "%s") == 0 ? session
                                       : strcmp(argument, "%m") == 0 ? marker
                                                                     : argument;
                }
                cli_argv(f, arguments, &result);
                if (result.exit_code != 2 || !test_contains(result.stderr_text, expected))
                        fail_msg("dsh-sandbox %s %s: exit %d, stderr \"%s\"; expected exit 2 and \"%s\"",
                                 arguments[0], arguments[1], result.exit_code, result.stderr_text, expected);
                assert_string_equal(result.stdout_text, "");
                assert_false(test_path_exists(marker));
                test_process_result_clear(&result);
        }
        free(marker);
        free(session);
}

static void test_backends_checked_at_load(void **state)
{
        fixture *f = *state;
        static const char *const cases[][2] = {
                { "{\"backends\":[\"nosuch\"]}", "unknown backend \"nosuch\" (known: bwrap, landlock)" },
                { "{\"backends\":[]}", "the backend list is empty" },
                { "{\"backends\":[\"landlock\",\"landlock\"]}", "backend \"landlock\" is listed twice" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *expected = NULL;

                test_write_file(f->config, cases[i][0]);
                assert_true(asprintf(&expected, "dsh-sandbox: config %s: key \"backends\": %s\n", f->config,
                                     cases[i][1]) > 0);
                expect_every_reader_refuses(f, f->config, expected);
                free(expected);
        }
}

static void test_missing_config_named(void **state)
{
        fixture *f = *state;
        char *expected = NULL;

        assert_true(asprintf(&expected, "dsh-sandbox: config %s: cannot open: No such file or directory\n",
                             f->config) > 0);
        expect_every_reader_refuses(f, f->config, expected);
        free(expected);
}

/* A FIFO at the named config path, and at the default one: refused at once by every reader. */
static void test_fifo_config_refused(void **state)
{
        fixture *f = *state;
        char *expected = NULL, *directory = NULL, *default_path = NULL;
        test_process_result result;

        assert_int_equal(mkfifo(f->config, 0644), 0);
        assert_true(asprintf(&expected, "dsh-sandbox: config %s: not a regular file\n", f->config) > 0);
        expect_every_reader_refuses(f, f->config, expected);
        free(expected);

        assert_true(asprintf(&directory, "%s/config-home/dsh-sandbox", f->directory) > 0);
        assert_true(asprintf(&default_path, "%s/config.json", directory) > 0);
        assert_int_equal(make_path(directory), 0);
        assert_int_equal(mkfifo(default_path, 0644), 0);
        cli(f, &result, "policy", "resolve");
        assert_int_equal(result.exit_code, 2);
        assert_true(test_contains(result.stderr_text, default_path));
        assert_true(test_contains(result.stderr_text, "not a regular file"));
        test_process_result_clear(&result);
        free(default_path);
        free(directory);
}

/* Finds the one verdict file the auto chain persisted in the cache home; NULL when none. */
static char *verdict_file(fixture *f)
{
        char *directory = NULL, *found = NULL;
        struct dirent *entry;
        DIR *listing;

        assert_true(asprintf(&directory, "%s/cache-home/dsh-sandbox", f->directory) > 0);
        listing = opendir(directory);
        while (listing && (entry = readdir(listing)))
                if (strncmp(entry->d_name, "verdict-", 8) == 0 && strlen(entry->d_name) > 13 &&
                    strcmp(entry->d_name + strlen(entry->d_name) - 5, ".json") == 0)
                        found = test_path_join(directory, entry->d_name);
        if (listing)
                closedir(listing);
        free(directory);
        return found;
}

/* A FIFO where the verdict cache lives is ignored (as if absent): the call probes and runs. */
static void test_fifo_verdict_cache_ignored(void **state)
{
        fixture *f = *state;
        char *verdict, *written = test_path_join(f->directory, "written"), *command = NULL;
        test_process_result result;

        cli(f, &result, "run", "--", "true");
        if (result.exit_code == 125) {
                printf("# SKIP: no backend is usable here: %s", result.stderr_text);
                test_process_result_clear(&result);
                skip();
        }
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        verdict = verdict_file(f);
        if (!verdict)
                fail_msg("the auto chain persisted no verdict under %s/cache-home", f->directory);
        assert_int_equal(unlink(verdict), 0);
        assert_int_equal(mkfifo(verdict, 0600), 0);

        assert_true(asprintf(&command, "echo x > '%s'", written) > 0);
        cli(f, &result, "run", "--mode", "workspace-write", "--root", f->directory, "--", "sh", "-c", command);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(written));
        test_process_result_clear(&result);
        free(command);
        free(written);
        free(verdict);
}

/* A FIFO named like a session log: `session list` reports it and lists the rest; `show` refuses it. */
static void test_fifo_session_log_reported(void **state)
{
        fixture *f = *state;
        char *good = new_session(f, f->directory), *fifo = test_path_join(f->state, "fifo.jsonl");
        char *listed = NULL;
        test_process_result result;

        assert_int_equal(mkfifo(fifo, 0600), 0);
        cli(f, &result, "session", "list");
        assert_int_equal(result.exit_code, 1);
        assert_true(asprintf(&listed, "%s\tread-only\t%s\n", good, f->directory) > 0);
        assert_true(test_contains(result.stdout_text, listed));
        assert_true(test_contains(result.stderr_text, "fifo.jsonl is not a regular file"));
        test_process_result_clear(&result);
        cli(f, &result, "session", "show", "fifo");
        assert_int_equal(result.exit_code, 1);
        assert_true(test_contains(result.stderr_text, "fifo.jsonl is not a regular file"));
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);
        cli(f, &result, "run", "--session", "fifo", "--", "true");
        assert_int_equal(result.exit_code, 125);
        test_process_result_clear(&result);
        free(listed);
        free(fifo);
        free(good);
}

/* ------------------------------------------------------------ UTF-8 -- */

/* The command exits 2 with nothing on stdout and `expected` on its one stderr line. */
static void expect_refused(test_process_result *result, const char *expected)
{
        if (result->exit_code != 2 || !test_contains(result->stderr_text, expected))
                fail_msg("exit %d, stderr \"%s\"; expected exit 2 and \"%s\"", result->exit_code, result->stderr_text,
                         expected);
        assert_string_equal(result->stdout_text, "");
        assert_int_equal(strchr(result->stderr_text, '\n') - result->stderr_text + 1,
                         (long) strlen(result->stderr_text));
        test_process_result_clear(result);
}

/* `rm -rf "junk\xff" /` must never be printed as `rm -rf /`. */
static void test_confine_refuses_argv_not_utf8(void **state)
{
        fixture *f = *state;
        test_process_result result;

        cli(f, &result, "confine", "--root", f->directory, "--", "rm", "-rf", "junk\xff", "/");
        expect_refused(&result, "confine: argv[2] is not valid UTF-8 (byte 0xff at offset 4), and a JSON string "
                                "cannot carry it");
        cli(f, &result, "confine", "--backend", "landlock", "--root", f->directory, "--", "\xc0\xaf");
        expect_refused(&result, "confine: argv[0] is not valid UTF-8 (byte 0xc0 at offset 0)");
}

static void test_roots_not_utf8_refused(void **state)
{
        fixture *f = *state;
        char *odd = test_path_join(f->directory, "d\xff"), *ordinary = test_path_join(f->directory, "d");
        test_process_result result;

        assert_int_equal(mkdir(odd, 0755), 0);
        assert_int_equal(mkdir(ordinary, 0755), 0);
        for (const char *const *backend = (const char *const[]) { "bwrap", "landlock", NULL }; *backend; backend++) {
                cli(f, &result, "confine", "--backend", *backend, "--mode", "workspace-write", "--root", odd, "--",
                    "true");
                expect_refused(&result, "confine: the workspace root is not valid UTF-8");
                cli(f, &result, "confine", "--backend", *backend, "--mode", "workspace-write", "--root", ordinary,
                    "--allow-write", odd, "--", "true");
                expect_refused(&result, "confine: additional writable root 0 is not valid UTF-8");
        }
        cli(f, &result, "policy", "resolve", "--json", "--root", odd);
        expect_refused(&result, "policy resolve: the workspace root is not valid UTF-8 (byte 0xff at offset");
        /* workspace-write: under the default read-only, --allow-write would add its warning line. */
        cli(f, &result, "policy", "resolve", "--json", "--mode", "workspace-write", "--root", ordinary,
            "--allow-write", ordinary, "--allow-write", odd);
        expect_refused(&result, "policy resolve: additional writable root 1 is not valid UTF-8");
        /* Text output carries any bytes: only JSON is refused. */
        cli(f, &result, "policy", "resolve", "--root", odd);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        free(ordinary);
        free(odd);
}

/* A path the confined argv names that is not the caller's argv or root (here a protected config
 * directory under the workspace) is caught by the last check before printing. */
static void test_confined_argv_not_utf8_refused(void **state)
{
        fixture *f = *state;
        char *saved = f->environment[1];
        test_process_result result;

        assert_true(asprintf(&f->environment[1], "XDG_CONFIG_HOME=%s/conf\xff", f->directory) > 0);
        cli(f, &result, "confine", "--backend", "bwrap", "--mode", "workspace-write", "--root", f->directory, "--",
            "true");
        expect_refused(&result, "is not valid UTF-8");
        free(f->environment[1]);
        f->environment[1] = saved;
}

static void test_session_paths_not_utf8_refused(void **state)
{
        fixture *f = *state;
        char *odd = test_path_join(f->directory, "d\xff"), *id, *saved = f->environment[0];
        test_process_result result;

        assert_int_equal(mkdir(odd, 0755), 0);
        cli(f, &result, "session", "new", "--cwd", odd);
        expect_refused(&result, "not valid UTF-8 (byte 0xff at offset");
        cli(f, &result, "session", "list");
        assert_int_equal(result.exit_code, 0);
        assert_string_equal(result.stdout_text, "");
        test_process_result_clear(&result);

        /* A state directory JSON cannot name: `session show --json` says so instead of "out of memory". */
        assert_true(asprintf(&f->environment[0], "DSH_SANDBOX_STATE_DIR=%s/state\xff", f->directory) > 0);
        id = new_session(f, f->directory);
        cli(f, &result, "session", "show", id, "--json");
        expect_refused(&result, "session show: the session log path is not valid UTF-8");
        cli(f, &result, "session", "show", id);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        free(f->environment[0]);
        f->environment[0] = saved;
        free(id);

        /* An event of a type replay ignores is only syntax-checked; one jansson cannot load is named. */
        id = new_session(f, f->directory);
        {
                char *name = NULL, *path, *log, *appended = NULL;

                assert_true(asprintf(&name, "%s.jsonl", id) > 0);
                path = test_path_join(f->state, name);
                log = test_read_file(path);
                assert_true(asprintf(&appended, "%s{\"type\":\"user/message\",\"seq\":1,\"data\":{\"t\":\"\xff\"}}\n",
                                     log) > 0);
                test_write_file(path, appended);
                cli(f, &result, "session", "show", id, "--json");
                assert_int_equal(result.exit_code, 1);
                assert_string_equal(result.stdout_text, "");
                assert_true(test_contains(result.stderr_text, "line 2 is not valid UTF-8 JSON"));
                test_process_result_clear(&result);
                free(appended);
                free(log);
                free(path);
                free(name);
        }
        free(id);
        free(odd);
}

static void test_probe_json_not_utf8_refused(void **state)
{
        fixture *f = *state;
        test_process_result result;

        f->environment[4] = strdup("DSH_SANDBOX_BWRAP=/nonexistent/bwrap\xff");
        cli(f, &result, "probe", "--json");
        expect_refused(&result, "probe: backend bwrap's");
        free(f->environment[4]);
        f->environment[4] = NULL;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_backends_checked_at_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_config_named, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_config_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_verdict_cache_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_session_log_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_confine_refuses_argv_not_utf8, setup, teardown),
                cmocka_unit_test_setup_teardown(test_roots_not_utf8_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_confined_argv_not_utf8_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_paths_not_utf8_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_probe_json_not_utf8_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
