/* SPDX-License-Identifier: MIT */
/*
 * The local provider on the real kernel with the real bwrap: bwrap's private
 * PID namespace, the chain falling through to Landlock when bwrap cannot
 * start, the operator's runner command, failing closed when nothing works,
 * bwrap runner failures attributed as such, the stale-cache recovery, and the
 * `confine` / `probe` output.  Which writes each backend allows in each mode
 * is the escape matrix's (test-escape-matrix.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/landlock.h"
#include "dsh-sandbox/provider.h"
#include "test-support.h"

#define UNAVAILABLE_PREFIX                                                                                    \
        "dsh-sandbox: SANDBOX_UNAVAILABLE: sandbox mode \"workspace-write\" is requested but no sandbox "      \
        "backend is usable on this host; refusing to run the command unconfined. Install bubblewrap or run a " \
        "Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL "         \
        "restricted-token runner can start (Windows) \xe2\x80\x94 otherwise switch the consumer to "            \
        "danger-full-access."

/* A fake `bwrap` that fails the way bwrap does when namespaces are blocked. */
static char *write_failing_bwrap(const char *directory)
{
        char *path = test_path_join(directory, "bwrap");

        test_write_file(path, "#!/bin/sh\n"
                              "echo 'bwrap: No permissions to creating new namespace, likely because the kernel "
                              "does not allow non-privileged user namespaces.' >&2\n"
                              "exit 1\n");
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

/* A fake `bwrap` that reports a sandbox on --json-status-fd, then fails before exec (like a mount error). */
static char *write_late_failing_bwrap(const char *directory)
{
        char *path = test_path_join(directory, "bwrap-late");

        test_write_file(path, "#!/bin/sh\n"
                              "fd=''\n"
                              "while [ $# -gt 0 ]; do\n"
                              "  if [ \"$1\" = --json-status-fd ]; then fd=$2; fi\n"
                              "  shift\n"
                              "done\n"
                              "[ -n \"$fd\" ] && eval \"echo '{ \\\"child-pid\\\": 4242 }' >&$fd\"\n"
                              "echo 'bwrap: Can'\\''t mount proc on /newroot/proc: Operation not permitted' >&2\n"
                              "exit 1\n");
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

/*
 * A `bwrap` that starts fine and confines nothing: it skips to `--` and execs the command.
 * bash, not sh: dash cannot redirect to the status fd once it is above 9.
 */
static char *write_passthrough_bwrap(const char *directory)
{
        char *path = test_path_join(directory, "bwrap-passthrough");

        test_write_file(path, "#!/bin/bash\n"
                              "fd=''\n"
                              "while [ $# -gt 0 ]; do\n"
                              "  case \"$1\" in\n"
                              "    --json-status-fd) fd=$2; shift 2;;\n"
                              "    --) shift; break;;\n"
                              "    *) shift;;\n"
                              "  esac\n"
                              "done\n"
                              "[ -n \"$fd\" ] && eval \"echo '{ \\\"child-pid\\\": 1 }' >&$fd\"\n"
                              "exec \"$@\"\n");
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

/* A `bwrap` that works while `switch_file` exists and fails once it is gone. */
static char *write_switchable_bwrap(const char *directory, const char *switch_file)
{
        char *path = test_path_join(directory, "bwrap-switch");
        char *script = NULL;

        assert_true(asprintf(&script,
                             "#!/bin/sh\n"
                             "[ -e '%s' ] && exec /usr/bin/bwrap \"$@\"\n"
                             "echo 'bwrap: setting up uid map: Permission denied' >&2\n"
                             "exit 1\n",
                             switch_file) > 0);
        test_write_file(path, script);
        free(script);
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

/*
 * A `bwrap` that stalls (10 s) before it reports a sandbox, then leaves
 * `marker` behind and runs the real bwrap; its --version answers at once
 * unless `stall_version`.
 */
static char *write_stalling_bwrap(const char *directory, const char *marker, bool stall_version)
{
        char *path = test_path_join(directory, stall_version ? "bwrap-stalls-always" : "bwrap-stalls");
        char *script = NULL;

        assert_true(asprintf(&script,
                             "#!/bin/sh\n"
                             "%s"
                             "sleep 10\n"
                             ": > '%s'\n"
                             "exec /usr/bin/bwrap \"$@\"\n",
                             stall_version ? "" : "[ \"$1\" = --version ] && exec /usr/bin/bwrap --version\n",
                             marker) > 0);
        test_write_file(path, script);
        free(script);
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

/*
 * A wrapper that runs its arguments with fds limited to `limit` (what
 * `ulimit -n` sets), the inherited ones above stdio closed first so that
 * the limit alone decides how many are left.
 */
static char *write_fd_limited_wrapper(const char *directory, int limit)
{
        char *path = test_path_join(directory, "fd-limited");
        char *script = NULL;

        assert_true(asprintf(&script,
                             "#!/bin/sh\n"
                             "for fd in 3 4 5 6 7 8 9; do eval \"exec $fd>&-\"; done\n"
                             "ulimit -n %d\n"
                             "exec \"$@\"\n",
                             limit) > 0);
        test_write_file(path, script);
        free(script);
        assert_int_equal(chmod(path, 0755), 0);
        return path;
}

static char *env_assignment(const char *name, const char *value)
{
        char *assignment = NULL;

        assert_true(asprintf(&assignment, "%s=%s", name, value) > 0);
        return assignment;
}

/*
 * Runs `dsh-sandbox ARGS...` with its own verdict cache (`cache`), an optional
 * bwrap override and an optional config file.
 */
static void run_tool(const char *const *arguments, const char *cache, const char *bwrap, const char *config,
                     const char *wrapper, test_process_result *result)
{
        const char *argv[32];
        char *environment[4] = { NULL, NULL, NULL, NULL };
        char *empty_config = test_path_join(cache, "empty-config.json");
        size_t count = 0, variables = 0;

        if (wrapper)
                argv[count++] = wrapper;
        argv[count++] = test_dsh_sandbox_path();
        for (; *arguments; arguments++)
                argv[count++] = *arguments;
        argv[count] = NULL;
        environment[variables++] = env_assignment("XDG_CACHE_HOME", cache);
        /* A config of our own, so that the user's never leaks into a test. */
        test_write_file(empty_config, "{}");
        environment[variables++] = env_assignment("DSH_SANDBOX_CONFIG", config ? config : empty_config);
        if (bwrap)
                environment[variables++] = env_assignment("DSH_SANDBOX_BWRAP", bwrap);
        test_run(argv, (const char *const *) environment, result);
        /* putenv() keeps the strings in the child only; the parent may free them. */
        for (size_t i = 0; i < variables; i++)
                free(environment[i]);
        free(empty_config);
}

static void test_bwrap_private_pid_namespace(void **state)
{
        char *cache = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *target = test_path_join(workspace, "via-proc");
        char *script = NULL;
        test_process_result result;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        /* Our shell is a low pid of its own namespace; /proc/1 is bwrap's init, not the host's. */
        assert_true(asprintf(&script, "echo $$; ls /proc | grep -c '^[0-9]'; echo data > /proc/1/root%s", target) >
                    0);
        {
                const char *arguments[] = { "run", "--backend", "bwrap", "--mode", "read-only", "--root", workspace,
                                            "--", "sh", "-c", script, NULL };

                run_tool(arguments, cache, NULL, NULL, NULL, &result);
        }
        assert_non_null(result.stdout_text);
        assert_true(atoi(result.stdout_text) < 10);
        assert_true(atoi(strchr(result.stdout_text, '\n') + 1) < 10);
        assert_false(test_path_exists(target));
        /* bwrap's init lies outside the command's own Landlock domain (EACCES); without one, its root is read-only. */
        assert_true(test_contains(result.stderr_text, dsh_landlock_abi() >= 2 ? "Permission denied"
                                                                                : "Read-only file system"));
        test_process_result_clear(&result);
        free(script);
        free(target);
        test_remove_tree(workspace);
        test_remove_tree(cache);
}

static json_t *parse_confine_output(const char *text)
{
        json_error_t error;
        json_t *root = json_loads(text ? text : "", 0, &error);

        if (!root)
                fail_msg("confine printed invalid JSON (%s): %s", error.text, text);
        return root;
}

static void assert_string_array(json_t *value, bool non_empty)
{
        size_t index;
        json_t *item;

        assert_true(json_is_array(value));
        if (non_empty)
                assert_true(json_array_size(value) > 0);
        json_array_foreach(value, index, item) {
                assert_true(json_is_string(item));
                assert_true(json_string_length(item) > 0);
        }
}

/* The schema of docs/cli.md: exactly these keys, these types, optional keys omitted when empty. */
static void validate_confine_schema(json_t *root, const char *const *command)
{
        const char *key;
        json_t *value, *rules, *rule, *argv;
        size_t index, argc, command_length = 0;

        assert_true(json_is_object(root));
        json_object_foreach(root, key, value) {
                if (strcmp(key, "argv") != 0 && strcmp(key, "enforcement") != 0 &&
                    strcmp(key, "denialSignatures") != 0 && strcmp(key, "runnerFailureRules") != 0 &&
                    strcmp(key, "backend") != 0 && strcmp(key, "partialReasons") != 0 &&
                    strcmp(key, "network") != 0 && strcmp(key, "masked") != 0 &&
                    strcmp(key, "environmentRemoved") != 0)
                        fail_msg("unexpected key \"%s\"", key);
        }
        /* The secrets held back (docs/secrets.md): left out when none. */
        if (json_object_get(root, "masked"))
                assert_string_array(json_object_get(root, "masked"), true);
        /* The network policy the argv holds: confine never claims the allow-list (it cannot hold it). */
        assert_true(json_is_string(json_object_get(root, "network")));
        assert_true(strcmp(json_string_value(json_object_get(root, "network")), "on") == 0 ||
                    strcmp(json_string_value(json_object_get(root, "network")), "off") == 0);
        if (json_object_get(root, "partialReasons"))
                assert_string_array(json_object_get(root, "partialReasons"), true);
        argv = json_object_get(root, "argv");
        assert_string_array(argv, true);
        while (command[command_length])
                command_length++;
        argc = json_array_size(argv);
        assert_true(argc > command_length + 1);
        /* Runner, profile, separator, then the caller's argv unchanged. */
        assert_string_equal(json_string_value(json_array_get(argv, argc - command_length - 1)), "--");
        for (size_t i = 0; i < command_length; i++)
                assert_string_equal(json_string_value(json_array_get(argv, argc - command_length + i)), command[i]);
        value = json_object_get(root, "enforcement");
        assert_true(json_is_string(value));
        assert_true(strcmp(json_string_value(value), "full") == 0 || strcmp(json_string_value(value), "partial") == 0);
        assert_non_null(json_object_get(root, "denialSignatures"));
        assert_string_array(json_object_get(root, "denialSignatures"), false);
        rules = json_object_get(root, "runnerFailureRules");
        assert_true(json_is_array(rules));
        json_array_foreach(rules, index, rule) {
                json_t *codes = json_object_get(rule, "allowedExitCodes");
                json_t *lines = json_object_get(rule, "informationalLines");
                size_t code_index;
                json_t *code;

                json_object_foreach(rule, key, value)
                        if (strcmp(key, "allowedExitCodes") != 0 && strcmp(key, "fatalSignatures") != 0 &&
                            strcmp(key, "informationalLines") != 0)
                                fail_msg("unexpected rule key \"%s\"", key);
                assert_string_array(json_object_get(rule, "fatalSignatures"), true);
                if (codes) {
                        assert_true(json_is_array(codes) && json_array_size(codes) > 0);
                        json_array_foreach(codes, code_index, code)
                                assert_true(json_is_integer(code) && json_integer_value(code) != 0);
                }
                if (lines)
                        assert_string_array(lines, true);
        }
        value = json_object_get(root, "backend");
        assert_true(!value || (json_is_string(value) && json_string_length(value) > 0));
}

static void test_confine_json(void **state)
{
        static const char *const command[] = { "bash", "-c", "echo \"quoted\" \\ back", NULL };
        static const char *const backends[] = { "bwrap", "landlock" };
        char *cache = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);

        (void) state;
        for (size_t i = 0; i < 2; i++) {
                const char *arguments[] = { "confine", "--backend", backends[i], "--mode", "workspace-write", "--root",
                                            workspace, "--", command[0], command[1], command[2], NULL };
                test_process_result result;
                json_t *root, *rule;

                if (i == 0 && !test_bwrap_works())
                        continue;
                run_tool(arguments, cache, NULL, NULL, NULL, &result);
                assert_int_equal(result.exit_code, 0);
                root = parse_confine_output(result.stdout_text);
                validate_confine_schema(root, command);
                assert_string_equal(json_string_value(json_object_get(root, "backend")), backends[i]);
                rule = json_array_get(json_object_get(root, "runnerFailureRules"), 0);
                if (i == 0) {
                        assert_string_equal(json_string_value(json_array_get(json_object_get(root, "denialSignatures"), 0)),
                                            "read-only file system");
                        /* An argv the caller spawns has no metadata supervisor: metadata refused, and said so. */
                        assert_string_equal(json_string_value(json_object_get(root, "enforcement")), "partial");
                        assert_true(test_contains(json_string_value(json_array_get(json_object_get(root,
                                                                                                   "partialReasons"),
                                                                                   0)),
                                                  "no metadata supervisor"));
                        assert_string_equal(json_string_value(json_array_get(json_object_get(rule, "fatalSignatures"), 0)),
                                            "bwrap: ");
                        assert_null(json_object_get(rule, "allowedExitCodes"));
                        assert_null(json_object_get(rule, "informationalLines"));
                } else {
                        assert_string_equal(json_string_value(json_array_get(json_object_get(root, "denialSignatures"), 0)),
                                            "permission denied");
                        assert_int_equal(json_integer_value(json_array_get(json_object_get(rule, "allowedExitCodes"), 0)),
                                         125);
                }
                json_decref(root);
                test_process_result_clear(&result);
        }
        test_remove_tree(workspace);
        test_remove_tree(cache);
}

/* bwrap cannot start: the chain (auto) falls through to Landlock; probe says why bwrap is out. */
static void test_chain_falls_through_to_landlock(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *target = test_path_join(workspace, "written");
        char *script = NULL;
        test_process_result result;
        json_t *root;

        (void) state;
        assert_true(asprintf(&script, "echo data > '%s'", target) > 0);
        {
                const char *arguments[] = { "run", "--mode", "workspace-write", "--root", workspace, "--", "sh", "-c",
                                            script, NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        assert_true(test_path_exists(target));
        test_process_result_clear(&result);
        {
                const char *arguments[] = { "confine", "--mode", "read-only", "--", "true", NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        root = parse_confine_output(result.stdout_text);
        assert_string_equal(json_string_value(json_object_get(root, "backend")), "landlock");
        json_decref(root);
        test_process_result_clear(&result);
        {
                const char *arguments[] = { "probe", "--json", NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        root = parse_confine_output(result.stdout_text);
        assert_string_equal(json_string_value(json_object_get(root, "selected")), "landlock");
        {
                json_t *bwrap = json_array_get(json_object_get(root, "backends"), 0);

                assert_string_equal(json_string_value(json_object_get(bwrap, "name")), "bwrap");
                assert_false(json_is_true(json_object_get(bwrap, "usable")));
                if (!test_contains(json_string_value(json_object_get(bwrap, "reason")), "user namespaces are blocked"))
                        fail_msg("probe reason: %s", json_string_value(json_object_get(bwrap, "reason")));
        }
        json_decref(root);
        test_process_result_clear(&result);
        free(script);
        free(target);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/* The operator's runner command: no probe (a broken bwrap is never tried), its argv prefix, full. */
static void test_runner_command(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *config_path = test_path_join(bin, "config.json");
        char *target = test_path_join(workspace, "written");
        char *config = NULL, *script = NULL;
        test_process_result result;
        json_t *root, *argv;

        (void) state;
        assert_true(asprintf(&config,
                             "{\"runnerCommand\": [\"%s\", \"--ro\", \"/\", \"--rw\", \"/dev/null\", \"--\"],"
                             " \"runnerFailureSignatures\": [\"landlock-run: \"]}",
                             test_landlock_run_path()) > 0);
        test_write_file(config_path, config);
        {
                const char *arguments[] = { "confine", "--mode", "workspace-write", "--root", workspace, "--", "id",
                                            NULL };

                run_tool(arguments, cache, fake, config_path, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        root = parse_confine_output(result.stdout_text);
        assert_string_equal(json_string_value(json_object_get(root, "backend")), "runner-command");
        assert_string_equal(json_string_value(json_object_get(root, "enforcement")), "full");
        argv = json_object_get(root, "argv");
        assert_string_equal(json_string_value(json_array_get(argv, 0)), test_landlock_run_path());
        assert_string_equal(json_string_value(json_array_get(argv, 6)), "id");
        assert_string_equal(json_string_value(json_array_get(
                                    json_object_get(json_array_get(json_object_get(root, "runnerFailureRules"), 0),
                                                    "fatalSignatures"),
                                    0)),
                            "landlock-run: ");
        json_decref(root);
        test_process_result_clear(&result);
        /* The runner's own (read-only) grants decide: the write is denied on disk. */
        assert_true(asprintf(&script, "echo data > '%s'", target) > 0);
        {
                const char *arguments[] = { "run", "--mode", "workspace-write", "--root", workspace, "--", "sh", "-c",
                                            script, NULL };

                run_tool(arguments, cache, fake, config_path, NULL, &result);
        }
        assert_int_not_equal(result.exit_code, 0);
        assert_false(test_path_exists(target));
        assert_true(test_contains(result.stderr_text, "Permission denied"));
        test_process_result_clear(&result);
        free(script);
        free(config);
        free(target);
        free(config_path);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

static void test_runner_command_validation(void **state)
{
        char *const command[] = { (char *) "/bin/runner", NULL };
        char *const empty[] = { NULL };
        char *const multi_line[] = { (char *) "a\nb", NULL };
        char *const good[] = { (char *) "runner: ", NULL };
        dsh_provider *provider = dsh_provider_new();
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_true(dsh_provider_set_runner_command(provider, NULL, good, &error) < 0);
        assert_string_equal(error.message, "sandbox-local: runnerFailureSignatures requires runnerCommand");
        assert_true(dsh_provider_set_runner_command(provider, command, empty, &error) < 0);
        assert_string_equal(error.message,
                            "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry");
        assert_true(dsh_provider_set_runner_command(provider, command, NULL, &error) < 0);
        assert_true(dsh_provider_set_runner_command(provider, command, multi_line, &error) < 0);
        assert_string_equal(error.message,
                            "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings");
        assert_true(dsh_provider_set_probe_timeout_ms(provider, 0, &error) < 0);
        assert_string_equal(error.message, "sandbox-local: probeTimeoutMs must be a positive finite number");
        assert_int_equal(dsh_provider_set_runner_command(provider, command, good, &error), 0);
        dsh_error_clear(&error);
        dsh_provider_free(provider);
}

/* Neither bwrap nor Landlock: SANDBOX_UNAVAILABLE with the exact message, 125, nothing run. */
static void test_fails_closed_without_any_backend(void **state)
{
        const char *wrapper = getenv("NO_LANDLOCK_EXEC_BIN");
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *target = test_path_join(workspace, "written");
        char *script = NULL;
        test_process_result result;

        (void) state;
        assert_non_null(wrapper);
        assert_true(asprintf(&script, "echo data > '%s'", target) > 0);
        for (int sole = 0; sole < 2; sole++) {
                const char *auto_arguments[] = { "run", "--mode", "workspace-write", "--root", workspace, "--", "sh",
                                                 "-c", script, NULL };
                const char *confine_arguments[] = { "confine", "--mode", "workspace-write", "--root", workspace,
                                                    "--backend", "landlock", "--", "true", NULL };

                run_tool(sole ? confine_arguments : auto_arguments, cache, fake, NULL, wrapper, &result);
                assert_int_equal(result.exit_code, 125);
                assert_false(test_path_exists(target));
                if (strncmp(result.stderr_text, UNAVAILABLE_PREFIX, strlen(UNAVAILABLE_PREFIX)) != 0)
                        fail_msg("unexpected message: %s", result.stderr_text);
                assert_true(result.stdout_text == NULL || result.stdout_text[0] == '\0');
                test_process_result_clear(&result);
        }
        free(script);
        free(target);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

static dsh_policy workspace_policy(const char *workspace)
{
        dsh_policy policy = DSH_POLICY_INIT;

        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup(workspace);
        return policy;
}

/* bwrap failing before its sandbox exists: spawn reports SANDBOX_UNAVAILABLE with bwrap's own line. */
static void test_spawn_runner_failure_before_sandbox(void **state)
{
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *const argv[] = { (char *) "true", NULL };
        const char *const sole[] = { "bwrap", NULL };
        dsh_policy policy = workspace_policy(workspace);
        dsh_provider *provider = dsh_provider_new();
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        assert_int_equal(dsh_provider_set_bwrap_path(provider, fake, &error), 0);
        assert_true(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        if (!test_contains(error.message, " Runner failure: ") ||
            !test_contains(error.message, "bwrap: No permissions to creating new namespace"))
                fail_msg("message: %s", error.message);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
}

/* bwrap failing after its sandbox exists but before exec: a runner failure at wait, not the command's status. */
static void test_spawn_runner_failure_before_exec(void **state)
{
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_late_failing_bwrap(bin);
        char *const argv[] = { (char *) "true", NULL };
        const char *const sole[] = { "bwrap", NULL };
        dsh_policy policy = workspace_policy(workspace);
        dsh_provider *provider = dsh_provider_new();
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int wait_status = 0;

        (void) state;
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        assert_int_equal(dsh_provider_set_bwrap_path(provider, fake, &error), 0);
        assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error), 0);
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        assert_true(dsh_child_runner_failed(child));
        assert_false(dsh_child_command_started(child));
        assert_true(dsh_child_runner_error(child, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_true(test_contains(error.message, " Runner failure: bwrap exited with status 1 before it executed"));
        dsh_child_free(child);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
}

/* A provider with `backend` alone in its chain (selected without a probe), bwrap at `bwrap_path`. */
static dsh_provider *sole_backend_provider(const char *backend, const char *bwrap_path)
{
        const char *const sole[] = { backend, NULL };
        dsh_provider *provider = dsh_provider_new();
        dsh_error error = DSH_ERROR_INIT;

        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        assert_int_equal(dsh_provider_set_bwrap_path(provider, bwrap_path, &error), 0);
        return provider;
}

/*
 * Exec-or-spawn is decided before anything is prepared: a backend that
 * cannot exec in place for the mode (bwrap always; Landlock always too,
 * whose supervisor needs a parent that stays) answers
 * -EOPNOTSUPP with the error untouched, no scratch made and no root looked
 * at — a workspace that does not exist is not reported, the spawn that
 * follows prepares it once and reports it.
 */
static void test_exec_answers_before_preparing(void **state)
{
        const char *const backends[] = { "bwrap", "landlock" };
        char *directory = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *missing = test_path_join(directory, "no-such-workspace");
        char *scratch = test_path_join(directory, "scratch");
        char *const argv[] = { (char *) "true", NULL };

        (void) state;
        for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
                dsh_policy policy = workspace_policy(i == 0 ? missing : directory);
                dsh_provider *provider = sole_backend_provider(backends[i], fake);
                dsh_error error = DSH_ERROR_INIT;
                dsh_child *child = NULL;

                assert_int_equal(dsh_provider_set_scratch_dir(provider, scratch, &error), 0);
                assert_int_equal(dsh_provider_exec(provider, argv, &policy, NULL, NULL, &error), -EOPNOTSUPP);
                assert_int_equal(error.code, DSH_ERROR_NONE);
                assert_null(error.message);
                if (test_path_exists(scratch))
                        fail_msg("%s: exec made the scratch before it answered -EOPNOTSUPP", backends[i]);
                if (i == 0) {
                        /* The spawn is where the policy is prepared: the missing workspace is named there. */
                        assert_true(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error) < 0);
                        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_ROOT);
                        assert_null(child);
                }
                dsh_error_clear(&error);
                dsh_policy_clear(&policy);
                dsh_provider_free(provider);
        }
        free(scratch);
        free(missing);
        free(fake);
        test_remove_tree(bin);
        test_remove_tree(directory);
}

/*
 * The provider's failures carry only the errnos provider.h documents: a
 * runner that exits before its sandbox exists is SANDBOX_UNAVAILABLE and
 * -ENOSYS (never the backend's private -ECHILD), with or without an error
 * to fill; bad input is -EINVAL.
 */
static void test_failures_return_documented_errnos(void **state)
{
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *const argv[] = { (char *) "true", NULL };
        char *const empty[] = { NULL };
        dsh_policy policy = workspace_policy(workspace);
        dsh_provider *provider = sole_backend_provider("bwrap", fake);
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error), -ENOSYS);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_int_equal(error.errno_value, ENOSYS);
        assert_null(child);
        dsh_error_clear(&error);
        assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, NULL), -ENOSYS);
        assert_null(child);
        assert_int_equal(dsh_provider_spawn(provider, empty, &policy, NULL, &child, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        assert_int_equal(dsh_provider_confine(provider, empty, &policy, &confined, NULL), -EINVAL);
        assert_int_equal(dsh_provider_exec(provider, empty, &policy, NULL, NULL, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        free(fake);
        test_remove_tree(workspace);
        test_remove_tree(bin);
}

/*
 * Privilege does not undo the sandbox: a command run as root that remounts
 * "/" read-write, mounts over the target, or makes a device node still cannot
 * write outside.  (bwrap keeps root's capabilities unless told to drop them.)
 */
static void test_root_cannot_remount_its_way_out(void **state)
{
        static const char *const backends[] = { "bwrap", "landlock" };
        static const char *const modes[] = { "read-only", "workspace-write" };
        char *cache = test_make_directory(NULL);
        char *outside = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *target = test_path_join(outside, "escaped");
        char *script = NULL;

        (void) state;
        if (geteuid() != 0)
                printf("# not root: the capability escape cannot be attempted, checking the plain write only\n");
        assert_true(asprintf(&script,
                             "mount -o remount,rw / 2>/dev/null; mount -o remount,rw '%s' 2>/dev/null; "
                             "mknod /dev/dsh-disk b 8 0 2>/dev/null; echo x > '%s'; "
                             "grep CapEff /proc/self/status",
                             outside, target) > 0);
        for (size_t b = 0; b < 2; b++) {
                if (b == 0 && !test_bwrap_works())
                        continue;
                for (size_t m = 0; m < 2; m++) {
                        const char *arguments[] = { "run", "--backend", backends[b], "--mode", modes[m], "--root",
                                                    workspace, "--", "sh", "-c", script, NULL };
                        test_process_result result;

                        run_tool(arguments, cache, NULL, NULL, NULL, &result);
                        if (test_path_exists(target))
                                fail_msg("%s/%s: wrote outside after remounting (%s)", backends[b], modes[m],
                                         result.stdout_text);
                        if (b == 0)
                                assert_true(test_contains(result.stdout_text, "CapEff:\t0000000000000000"));
                        test_process_result_clear(&result);
                }
        }
        free(script);
        free(target);
        test_remove_tree(workspace);
        test_remove_tree(outside);
        test_remove_tree(cache);
}

/* The probe proves confinement: a runner that starts but confines nothing is not selected. */
static void test_probe_rejects_a_runner_that_does_not_confine(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *outside = test_make_directory(NULL);
        char *fake = write_passthrough_bwrap(bin);
        char *target = test_path_join(outside, "escaped");
        char *script = NULL;
        test_process_result result;

        (void) state;
        assert_true(asprintf(&script, "echo x > '%s'", target) > 0);
        {
                const char *arguments[] = { "run", "--mode", "read-only", "--root", workspace, "--", "sh", "-c",
                                            script, NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_false(test_path_exists(target));
        assert_true(test_contains(result.stderr_text, "Permission denied"));   /* Landlock's dialect: it ran there */
        test_process_result_clear(&result);
        {
                const char *arguments[] = { "probe", NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_true(test_contains(result.stdout_text, "could still write outside its policy"));
        assert_true(test_contains(result.stdout_text, "auto selects    landlock"));
        test_process_result_clear(&result);
        free(script);
        free(target);
        free(fake);
        test_remove_tree(outside);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/* `run` stays as bwrap's parent: a bwrap failure before exec is 125, the command's own status is its own. */
static void test_run_attributes_bwrap_outcomes(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *late = write_late_failing_bwrap(bin);
        char *target = test_path_join(workspace, "written");
        char *script = NULL;
        test_process_result result;

        (void) state;
        if (!test_bwrap_works())
                skip();
        assert_true(asprintf(&script, "echo data > '%s'", target) > 0);
        {
                const char *arguments[] = { "run", "--backend", "bwrap", "--mode", "workspace-write", "--root",
                                            workspace, "--", "sh", "-c", script, NULL };

                run_tool(arguments, cache, late, NULL, NULL, &result);
                assert_int_equal(result.exit_code, 125);
                assert_true(test_contains(result.stderr_text, UNAVAILABLE_PREFIX " Runner failure: "));
                assert_false(test_path_exists(target));
                test_process_result_clear(&result);
        }
        {
                const char *arguments[] = { "run", "--backend", "bwrap", "--", "sh", "-c", "exit 3", NULL };

                run_tool(arguments, cache, NULL, NULL, NULL, &result);
                assert_int_equal(result.exit_code, 3);
                assert_false(test_contains(result.stderr_text, "dsh-sandbox:"));
                test_process_result_clear(&result);
        }
        {
                const char *arguments[] = { "run", "--backend", "bwrap", "--", "sh", "-c", "kill -9 $$", NULL };

                run_tool(arguments, cache, NULL, NULL, NULL, &result);
                assert_int_equal(result.exit_code, 137);
                test_process_result_clear(&result);
        }
        free(script);
        free(target);
        free(late);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/* The real bwrap: the command ran (exit-code record), its own failure status stays its own. */
static void test_spawn_command_status_is_its_own(void **state)
{
        char *workspace = test_make_directory(NULL);
        char *const argv[] = { (char *) "sh", (char *) "-c", (char *) "exit 3", NULL };
        const char *const sole[] = { "bwrap", NULL };
        dsh_policy policy = workspace_policy(workspace);
        dsh_provider *provider = dsh_provider_new();
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int wait_status = 0;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error), 0);
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 3);
        assert_true(dsh_child_command_started(child));
        assert_false(dsh_child_runner_failed(child));
        assert_int_equal(dsh_child_runner_error(child, &error), 0);
        assert_string_equal(dsh_child_facts(child)->backend, "bwrap");
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        test_remove_tree(workspace);
}

/* A persisted verdict for a runner that stopped working: spawn probes again and never runs unconfined. */
static void test_stale_cache_falls_back_to_probing(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *workspace = test_make_directory(NULL);
        char *switch_file = test_path_join(bin, "works");
        char *fake = NULL;
        char *target = test_path_join(workspace, "written");
        char *script = NULL;
        char *argv[] = { (char *) "sh", (char *) "-c", NULL, NULL };
        dsh_policy policy = workspace_policy(workspace);
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider;
        int wait_status = 0;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        test_write_file(switch_file, "");
        fake = write_switchable_bwrap(bin, switch_file);
        assert_true(asprintf(&script, "echo data > '%s'", target) > 0);
        argv[2] = script;
        for (int round = 0; round < 2; round++) {
                provider = dsh_provider_new();
                assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        assert_int_equal(dsh_provider_set_bwrap_path(provider, fake, &error), 0);
                assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
                assert_int_equal(dsh_provider_set_verdict_cache_dir(provider, cache, &error), 0);
                assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error), 0);
                assert_int_equal(dsh_child_wait(child, &wait_status), 0);
                assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
                assert_true(test_path_exists(target));
                /* Round 0 probes and persists bwrap; round 1 reads that verdict, bwrap fails, Landlock runs it. */
                assert_string_equal(dsh_child_facts(child)->backend, round == 0 ? "bwrap" : "landlock");
                dsh_child_free(child);
                dsh_provider_free(provider);
                unlink(target);
                unlink(switch_file);
        }
        dsh_policy_clear(&policy);
        free(script);
        free(target);
        free(fake);
        free(switch_file);
        test_remove_tree(workspace);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/* The backend the persisted verdict in `cache` names (caller frees), or NULL when nothing is persisted. */
static char *persisted_selection(const char *cache)
{
        char *directory = test_path_join(cache, "dsh-sandbox");
        DIR *entries = opendir(directory);
        char *selected = NULL;
        struct dirent *entry;

        while (entries && (entry = readdir(entries))) {
                char *path;
                json_t *root;

                if (strncmp(entry->d_name, "verdict-", 8) != 0)
                        continue;
                path = test_path_join(directory, entry->d_name);
                root = json_load_file(path, 0, NULL);
                assert_non_null(root);
                assert_null(selected);  /* one chain, one entry */
                selected = strdup(json_string_value(json_object_get(root, "selected")));
                json_decref(root);
                free(path);
        }
        if (entries)
                closedir(entries);
        free(directory);
        return selected;
}

/*
 * The probe keeps its deadline: with probeTimeoutMs 300, a bwrap that stalls
 * 10 s before its status record (or before its version, too) is killed at
 * the deadline — the marker it would leave after its stall never appears —
 * and reported unusable for that reason; a verdict that rests on a timeout
 * is not persisted, by `probe` or by `run`.
 */
static void test_probe_keeps_its_deadline(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *config = test_path_join(bin, "config.json");
        char *marker = test_path_join(bin, "stall-ended");

        (void) state;
        test_write_file(config, "{\"probeTimeoutMs\": 300}");
        for (int stall_version = 0; stall_version < 2; stall_version++) {
                char *fake = write_stalling_bwrap(bin, marker, stall_version);
                test_process_result result;
                json_t *root, *bwrap;

                {
                        const char *arguments[] = { "probe", "--json", NULL };

                        run_tool(arguments, cache, fake, config, NULL, &result);
                }
                assert_false(test_path_exists(marker));
                assert_int_equal(result.exit_code, 0);
                root = parse_confine_output(result.stdout_text);
                bwrap = json_array_get(json_object_get(root, "backends"), 0);
                assert_string_equal(json_string_value(json_object_get(bwrap, "name")), "bwrap");
                assert_false(json_is_true(json_object_get(bwrap, "usable")));
                if (!test_contains(json_string_value(json_object_get(bwrap, "reason")), "did not finish within 300 ms"))
                        fail_msg("probe reason: %s", json_string_value(json_object_get(bwrap, "reason")));
                json_decref(root);
                test_process_result_clear(&result);
                assert_null(persisted_selection(cache));
                {
                        const char *arguments[] = { "run", "--mode", "read-only", "--", "true", NULL };

                        run_tool(arguments, cache, fake, config, NULL, &result);
                }
                assert_false(test_path_exists(marker));
                assert_int_equal(result.exit_code, 0);   /* Landlock ran it */
                assert_null(persisted_selection(cache));
                test_process_result_clear(&result);
                free(fake);
        }
        free(marker);
        free(config);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/*
 * A resource fault is not a verdict: with fds limited as by `ulimit -n 8`
 * (or the highest limit above it at which bwrap still runs short here),
 * bwrap runs short ("Too many open files") and Landlock is selected where it
 * needs fewer fds — for that call only: nothing is persisted, by `probe` or
 * by `run`, and the next plain call probes again and selects (and persists)
 * bwrap.
 */
static void test_transient_failure_is_not_persisted(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *wrapper = NULL;
        bool landlock_works = false;
        char *selected;
        test_process_result result;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        /*
         * The highest limit at which bwrap still runs short: Landlock works
         * there on hosts where it needs fewer fds than bwrap; where it needs
         * as many (its supervisor's socketpair, eventfd and listener, under
         * both modes since connect is supervised), both run short, and the
         * call is refused (125) — a resource fault all the same.
         */
        for (int limit = 8; !landlock_works && limit <= 16; limit++) {
                const char *arguments[] = { "probe", "--json", NULL };
                char *candidate = write_fd_limited_wrapper(bin, limit);
                json_t *root, *bwrap;
                const char *chosen, *reason;

                run_tool(arguments, cache, NULL, NULL, candidate, &result);
                root = parse_confine_output(result.stdout_text);
                chosen = json_string_value(json_object_get(root, "selected"));
                bwrap = json_array_get(json_object_get(root, "backends"), 0);
                reason = json_string_value(json_object_get(bwrap, "reason"));
                if (!json_is_true(json_object_get(bwrap, "usable")) && reason &&
                    strstr(reason, "Too many open files")) {
                        free(wrapper);
                        wrapper = candidate;
                        landlock_works = chosen && strcmp(chosen, "landlock") == 0;
                        printf("# with %d fds: %s; %s\n", limit, reason, landlock_works ? "landlock selected" : "landlock short too");
                        /* Whatever this probe saw, it rested on a resource fault: nothing persisted. */
                        assert_null(persisted_selection(cache));
                } else {
                        free(candidate);
                        limit = chosen ? 16 : limit;   /* bwrap itself works: no higher limit will fail it */
                }
                json_decref(root);
                test_process_result_clear(&result);
        }
        test_remove_tree(cache);
        cache = test_make_directory(NULL);  /* a probe that found bwrap working persisted its verdict */
        /* The short probes above were each checked; a run needs a limit at which Landlock works and bwrap not. */
        if (!wrapper || !landlock_works) {
                printf("# SKIP: no fd limit makes bwrap run short while Landlock works on this host (Landlock's "
                       "supervisor needs as many fds as bwrap here): only the probes were checked\n");
                free(wrapper);
                test_remove_tree(bin);
                test_remove_tree(cache);
                skip();
                return;
        }
        {
                const char *arguments[] = { "run", "--", "true", NULL };

                run_tool(arguments, cache, NULL, NULL, wrapper, &result);
        }
        /*
         * Landlock ran it — or the run, which needs a few fds more than the
         * probe (the stand-in's pipe, the supervisor's socketpair; more
         * under a sanitizer), ran short as well: a resource fault all the
         * same.  Either way nothing may be persisted.
         */
        if (result.exit_code != 0)
                printf("# the run ran short of fds too (exit %d): a resource fault, checked for persistence only\n",
                       result.exit_code);
        test_process_result_clear(&result);
        assert_null(persisted_selection(cache));
        {
                const char *arguments[] = { "run", "--", "true", NULL };

                run_tool(arguments, cache, NULL, NULL, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        selected = persisted_selection(cache);
        assert_non_null(selected);
        assert_string_equal(selected, "bwrap");
        free(selected);
        free(wrapper);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

/* A deterministic failure is a verdict: bwrap blocked from creating namespaces, Landlock is persisted. */
static void test_deterministic_failure_is_persisted(void **state)
{
        char *cache = test_make_directory(NULL);
        char *bin = test_make_directory(NULL);
        char *fake = write_failing_bwrap(bin);
        char *selected;
        test_process_result result;

        (void) state;
        {
                const char *arguments[] = { "run", "--", "true", NULL };

                run_tool(arguments, cache, fake, NULL, NULL, &result);
        }
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        selected = persisted_selection(cache);
        assert_non_null(selected);
        assert_string_equal(selected, "landlock");
        free(selected);
        free(fake);
        test_remove_tree(bin);
        test_remove_tree(cache);
}

static void test_help(void **state)
{
        static const char *const commands[] = { "confine", "probe" };
        char *cache = test_make_directory(NULL);

        (void) state;
        for (size_t i = 0; i < 2; i++) {
                const char *arguments[] = { commands[i], "--help", NULL };
                test_process_result result;

                run_tool(arguments, cache, NULL, NULL, NULL, &result);
                assert_int_equal(result.exit_code, 0);
                assert_true(test_contains(result.stdout_text, "Usage: dsh-sandbox"));
                test_process_result_clear(&result);
        }
        test_remove_tree(cache);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bwrap_private_pid_namespace),
                cmocka_unit_test(test_confine_json),
                cmocka_unit_test(test_chain_falls_through_to_landlock),
                cmocka_unit_test(test_runner_command),
                cmocka_unit_test(test_runner_command_validation),
                cmocka_unit_test(test_fails_closed_without_any_backend),
                cmocka_unit_test(test_spawn_runner_failure_before_sandbox),
                cmocka_unit_test(test_spawn_runner_failure_before_exec),
                cmocka_unit_test(test_exec_answers_before_preparing),
                cmocka_unit_test(test_failures_return_documented_errnos),
                cmocka_unit_test(test_spawn_command_status_is_its_own),
                cmocka_unit_test(test_run_attributes_bwrap_outcomes),
                cmocka_unit_test(test_root_cannot_remount_its_way_out),
                cmocka_unit_test(test_probe_rejects_a_runner_that_does_not_confine),
                cmocka_unit_test(test_stale_cache_falls_back_to_probing),
                cmocka_unit_test(test_probe_keeps_its_deadline),
                cmocka_unit_test(test_transient_failure_is_not_persisted),
                cmocka_unit_test(test_deterministic_failure_is_persisted),
                cmocka_unit_test(test_help),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
