/* SPDX-License-Identifier: MIT */
/*
 * The config loader: every key good and bad, the file-level failures, and
 * the rule that a failed load changes nothing.  A bad value is named by file
 * and key; a file that would block (a FIFO) is refused, never waited on.
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

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/provider.h"
#include "test-support.h"

/* Every blocking open in this file would hang the suite; an alarm turns that into a failure. */
#define LOAD_DEADLINE_SECONDS 10

typedef struct fixture {
        char *directory;
        char *path;             /* the config file the cases write */
        dsh_config config;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        dsh_error error = DSH_ERROR_INIT;

        f->directory = test_make_directory(NULL);
        f->path = test_path_join(f->directory, "config.json");
        assert_int_equal(dsh_config_init(&f->config, &error), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;

        dsh_config_clear(&f->config);
        free(f->path);
        test_remove_tree(f->directory);
        free(f);
        return 0;
}

/* Writes `json` (raw bytes) to the fixture's file and loads it over the defaults. */
static int load(fixture *f, const char *json, dsh_error *error)
{
        int result;

        test_write_file(f->path, json);
        dsh_config_clear(&f->config);
        assert_int_equal(dsh_config_init(&f->config, error), 0);
        alarm(LOAD_DEADLINE_SECONDS);
        result = dsh_config_load_file(&f->config, f->path, error);
        alarm(0);
        return result;
}

static void load_good(fixture *f, const char *json)
{
        dsh_error error = DSH_ERROR_INIT;

        if (load(f, json, &error) < 0)
                fail_msg("%s was refused: %s", json, error.message ? error.message : "(no message)");
}

/* The load fails, names the file and `key`, says `reason`, and leaves the defaults as they were. */
static void load_bad(fixture *f, const char *json, const char *key, const char *reason)
{
        dsh_error error = DSH_ERROR_INIT;
        char *prefix = NULL;

        assert_true(asprintf(&prefix, "config %s: key \"%s\": ", f->path, key) > 0);
        if (load(f, json, &error) == 0)
                fail_msg("%s was accepted", json);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_non_null(error.message);
        if (strncmp(error.message, prefix, strlen(prefix)) != 0 || !strstr(error.message, reason))
                fail_msg("%s: expected \"%s...%s\", got \"%s\"", json, prefix, reason, error.message);
        assert_int_equal(f->config.mode, DSH_MODE_READ_ONLY);
        assert_null(f->config.backends);
        assert_null(f->config.runner_command);
        assert_null(f->config.protected_subpaths);
        assert_false(f->config.protected_subpaths_set);
        assert_false(f->config.require_protected_subpaths);
        assert_int_equal(f->config.probe_timeout_ms, DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS);
        assert_int_equal(f->config.file_read_limit_bytes, DSH_CONFIG_DEFAULT_FILE_READ_LIMIT_BYTES);
        free(prefix);
        dsh_error_clear(&error);
}

/* A failure of the file as a whole: the message is "config <path>: <expected>". */
static void expect_file_error(fixture *f, const char *expected_after_path)
{
        dsh_error error = DSH_ERROR_INIT;
        char *expected = NULL;

        dsh_config_clear(&f->config);
        assert_int_equal(dsh_config_init(&f->config, &error), 0);
        alarm(LOAD_DEADLINE_SECONDS);
        assert_true(dsh_config_load_file(&f->config, f->path, &error) < 0);
        alarm(0);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        assert_true(asprintf(&expected, "config %s: %s", f->path, expected_after_path) > 0);
        if (!error.message || strncmp(error.message, expected, strlen(expected)) != 0)
                fail_msg("expected \"%s...\", got \"%s\"", expected, error.message ? error.message : "(null)");
        free(expected);
        dsh_error_clear(&error);
}

static void test_defaults(void **state)
{
        fixture *f = *state;
        char *cwd = getcwd(NULL, 0), *canonical = realpath(cwd, NULL);

        load_good(f, "{}");
        assert_int_equal(f->config.mode, DSH_MODE_READ_ONLY);
        assert_string_equal(f->config.workspace_root, canonical);
        assert_null(f->config.additional_writable_roots);
        assert_null(f->config.backends);
        assert_int_equal(f->config.probe_timeout_ms, DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS);
        assert_null(f->config.runner_command);
        assert_null(f->config.runner_failure_signatures);
        /* absent protectedSubpaths: "the default" (.git/hooks, .git/config), decided by the user of the config */
        assert_null(f->config.protected_subpaths);
        assert_false(f->config.protected_subpaths_set);
        assert_false(f->config.require_protected_subpaths);
        free(canonical);
        free(cwd);
}

static void test_mode(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"mode\":\"workspace-write\"}");
        assert_int_equal(f->config.mode, DSH_MODE_WORKSPACE_WRITE);
        load_good(f, "{\"mode\":\"danger-full-access\"}");
        assert_int_equal(f->config.mode, DSH_MODE_DANGER_FULL_ACCESS);
        load_good(f, "{\"mode\":\"read-only\"}");
        assert_int_equal(f->config.mode, DSH_MODE_READ_ONLY);
        load_bad(f, "{\"mode\":\"root\"}", "mode", "expected one of read-only, workspace-write, danger-full-access");
        load_bad(f, "{\"mode\":\"Read-Only\"}", "mode", "expected one of");
        load_bad(f, "{\"mode\":3}", "mode", "expected one of");
        load_bad(f, "{\"mode\":null}", "mode", "expected one of");
        /* A NUL must not let "read-only\0x" pass a C comparison as read-only. */
        load_bad(f, "{\"mode\":\"workspace-write\\u0000x\"}", "mode", "expected one of");
}

static void test_workspace_root(void **state)
{
        fixture *f = *state;
        char *real = test_path_join(f->directory, "real"), *link = test_path_join(f->directory, "link");
        char *json = NULL;

        assert_int_equal(mkdir(real, 0755), 0);
        assert_int_equal(symlink(real, link), 0);
        assert_true(asprintf(&json, "{\"workspaceRoot\":\"%s\"}", link) > 0);
        load_good(f, json);
        assert_string_equal(f->config.workspace_root, real);   /* canonical at load */
        free(json);
        /* A root that does not exist yet is kept as written; each call refuses it if it still does not. */
        load_good(f, "{\"workspaceRoot\":\"/nonexistent/dsh-sandbox/root\"}");
        assert_string_equal(f->config.workspace_root, "/nonexistent/dsh-sandbox/root");
        load_bad(f, "{\"workspaceRoot\":\"relative/dir\"}", "workspaceRoot", "expected an absolute path");
        load_bad(f, "{\"workspaceRoot\":\"\"}", "workspaceRoot", "expected an absolute path");
        load_bad(f, "{\"workspaceRoot\":5}", "workspaceRoot", "expected an absolute path");
        load_bad(f, "{\"workspaceRoot\":\"/a\\u0000b\"}", "workspaceRoot", "without NUL bytes");
        free(link);
        free(real);
}

static void test_additional_writable_roots(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"additionalWritableRoots\":[\"/a\",\"/b c\"]}");
        assert_int_equal(dsh_strv_length(f->config.additional_writable_roots), 2);
        assert_string_equal(f->config.additional_writable_roots[0], "/a");
        assert_string_equal(f->config.additional_writable_roots[1], "/b c");
        load_good(f, "{\"additionalWritableRoots\":[]}");
        assert_int_equal(dsh_strv_length(f->config.additional_writable_roots), 0);
        load_bad(f, "{\"additionalWritableRoots\":\"/a\"}", "additionalWritableRoots", "expected an array of strings");
        load_bad(f, "{\"additionalWritableRoots\":[1]}", "additionalWritableRoots", "entry 0 must be");
        load_bad(f, "{\"additionalWritableRoots\":[\"/a\",\"\"]}", "additionalWritableRoots", "entry 1 must be");
        load_bad(f, "{\"additionalWritableRoots\":[\"/a\\nb\"]}", "additionalWritableRoots", "single-line");
        load_bad(f, "{\"additionalWritableRoots\":[\"rel\"]}", "additionalWritableRoots",
                 "\"rel\" is not an absolute path");
}

static void test_backends(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"backends\":[\"landlock\",\"bwrap\"]}");
        assert_int_equal(dsh_strv_length(f->config.backends), 2);
        assert_string_equal(f->config.backends[0], "landlock");
        assert_string_equal(f->config.backends[1], "bwrap");
        load_good(f, "{\"backends\":[\"bwrap\"]}");
        assert_int_equal(dsh_strv_length(f->config.backends), 1);
        /* Checked here, at load, with the library's own list of backends: not first by `run`. */
        load_bad(f, "{\"backends\":[\"nosuch\"]}", "backends", "unknown backend \"nosuch\" (known: bwrap, landlock)");
        load_bad(f, "{\"backends\":[\"auto\"]}", "backends", "unknown backend \"auto\"");
        load_bad(f, "{\"backends\":[]}", "backends", "the backend list is empty");
        load_bad(f, "{\"backends\":[\"bwrap\",\"landlock\",\"bwrap\"]}", "backends",
                 "backend \"bwrap\" is listed twice");
        load_bad(f, "{\"backends\":\"bwrap\"}", "backends", "expected an array of strings");
        load_bad(f, "{\"backends\":[1]}", "backends", "entry 0 must be");
}

static void test_probe_timeout(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"probeTimeoutMs\":300}");
        assert_int_equal(f->config.probe_timeout_ms, 300);
        load_good(f, "{\"probeTimeoutMs\":1.5}");
        assert_int_equal(f->config.probe_timeout_ms, 2);
        for (const char *const *bad = (const char *const[]) { "0", "-1", "\"5\"", "1e300", "true", "null", NULL };
             *bad; bad++) {
                char *json = NULL;

                assert_true(asprintf(&json, "{\"probeTimeoutMs\":%s}", *bad) > 0);
                load_bad(f, json, "probeTimeoutMs", "sandbox-local: probeTimeoutMs must be a positive finite number");
                free(json);
        }
}

static void test_file_read_limit(void **state)
{
        fixture *f = *state;

        assert_int_equal(f->config.file_read_limit_bytes, DSH_CONFIG_DEFAULT_FILE_READ_LIMIT_BYTES);
        load_good(f, "{\"fileReadLimitBytes\":1}");
        assert_int_equal(f->config.file_read_limit_bytes, 1);
        load_good(f, "{\"fileReadLimitBytes\":1073741824}");
        assert_int_equal(f->config.file_read_limit_bytes, (size_t) 1 << 30);
        for (const char *const *bad = (const char *const[]) { "0", "-1", "1073741825", "1.5", "\"5\"", "null", NULL };
             *bad; bad++) {
                char *json = NULL;

                assert_true(asprintf(&json, "{\"fileReadLimitBytes\":%s}", *bad) > 0);
                load_bad(f, json, "fileReadLimitBytes", "expected a whole number of bytes from 1 to 1073741824");
                free(json);
        }
}

static void test_runner_command(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"runnerCommand\":[\"/usr/bin/runner\",\"--flag\"],\"runnerFailureSignatures\":[\"runner: \"]}");
        assert_int_equal(dsh_strv_length(f->config.runner_command), 2);
        assert_string_equal(f->config.runner_command[0], "/usr/bin/runner");
        assert_int_equal(dsh_strv_length(f->config.runner_failure_signatures), 1);
        assert_string_equal(f->config.runner_failure_signatures[0], "runner: ");
        /* The upstream texts, behind the file and the key. */
        load_bad(f, "{\"runnerFailureSignatures\":[\"x\"]}", "runnerFailureSignatures",
                 "sandbox-local: runnerFailureSignatures requires runnerCommand");
        load_bad(f, "{\"runnerFailureSignatures\":[]}", "runnerFailureSignatures",
                 "sandbox-local: runnerFailureSignatures requires runnerCommand");
        load_bad(f, "{\"runnerCommand\":[\"/r\"]}", "runnerCommand",
                 "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry");
        load_bad(f, "{\"runnerCommand\":[\"/r\"],\"runnerFailureSignatures\":[]}", "runnerCommand",
                 "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry");
        load_bad(f, "{\"runnerCommand\":[\"/r\"],\"runnerFailureSignatures\":[\"\"]}", "runnerFailureSignatures",
                 "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings");
        load_bad(f, "{\"runnerCommand\":[\"/r\"],\"runnerFailureSignatures\":[\"a\\nb\"]}", "runnerFailureSignatures",
                 "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings");
        load_bad(f, "{\"runnerCommand\":[\"/r\"],\"runnerFailureSignatures\":\"x\"}", "runnerFailureSignatures",
                 "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings");
        load_bad(f, "{\"runnerCommand\":[],\"runnerFailureSignatures\":[\"x\"]}", "runnerCommand",
                 "sandbox-local: runnerCommand must name a program");
        load_bad(f, "{\"runnerCommand\":[\"\"],\"runnerFailureSignatures\":[\"x\"]}", "runnerCommand",
                 "sandbox-local: runnerCommand entries must be non-empty strings");
        load_bad(f, "{\"runnerCommand\":\"/r\",\"runnerFailureSignatures\":[\"x\"]}", "runnerCommand",
                 "expected an array of strings");
        load_bad(f, "{\"runnerCommand\":[\"/r\",2],\"runnerFailureSignatures\":[\"x\"]}", "runnerCommand",
                 "entry 1 must be");
}

static void test_protected_subpaths(void **state)
{
        fixture *f = *state;
        static const char *const bad_paths[][2] = {
                { "\"/abs/path\"", "entry 0 (\"/abs/path\") must be relative" },
                { "\"../x\"", "entry 0 (\"../x\") must not contain \"..\"" },
                { "\"a/../b\"", "must not contain \"..\"" },
                { "\"a/..\"", "must not contain \"..\"" },
                { "\"a//b\"", "entry 0 (\"a//b\") must not contain an empty component" },
                { "\"a/\"", "must not contain an empty component" },
                { "\"./a\"", "must not contain \".\"" },
                { "\".\"", "must not contain \".\"" },
                { "\"\"", "entry 0 must be a non-empty single-line string" },
                { "\"a\\nb\"", "entry 0 must be a non-empty single-line string" },
                { "\"a\\u0000b\"", "entry 0 must be a non-empty single-line string" },
                { "1", "entry 0 must be a non-empty single-line string" },
        };

        load_good(f, "{\"protectedSubpaths\":[\".git/hooks\",\".git/config\",\"build/out dir\",\"..a/b..\"]}");
        assert_true(f->config.protected_subpaths_set);
        assert_int_equal(dsh_strv_length(f->config.protected_subpaths), 4);
        assert_string_equal(f->config.protected_subpaths[0], ".git/hooks");
        assert_string_equal(f->config.protected_subpaths[2], "build/out dir");
        assert_string_equal(f->config.protected_subpaths[3], "..a/b..");
        /* [] turns the feature off: set, and empty (not NULL, which means "the default"). */
        load_good(f, "{\"protectedSubpaths\":[]}");
        assert_true(f->config.protected_subpaths_set);
        assert_non_null(f->config.protected_subpaths);
        assert_int_equal(dsh_strv_length(f->config.protected_subpaths), 0);

        for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
                char *json = NULL;

                assert_true(asprintf(&json, "{\"protectedSubpaths\":[%s]}", bad_paths[i][0]) > 0);
                load_bad(f, json, "protectedSubpaths", bad_paths[i][1]);
                free(json);
        }
        load_bad(f, "{\"protectedSubpaths\":[\".git/hooks\",\"/etc\"]}", "protectedSubpaths", "entry 1");
        load_bad(f, "{\"protectedSubpaths\":\".git/hooks\"}", "protectedSubpaths", "expected an array of strings");
        load_bad(f, "{\"protectedSubpaths\":null}", "protectedSubpaths", "expected an array of strings");
}

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* {"add", "remove"}: the defaults changed, not replaced; a removal names a default or is refused. */
static void test_protected_subpath_changes(void **state)
{
        fixture *f = *state;
        size_t defaults = 0;

        while (dsh_provider_default_protected_subpaths()[defaults])
                defaults++;
        load_good(f, "{\"protectedSubpaths\":{\"add\":[\"secrets\",\"~/.ssh/config\"],\"remove\":[\".vscode\"]}}");
        assert_true(f->config.protected_subpaths_set);
        assert_int_equal(dsh_strv_length(f->config.protected_subpaths), defaults - 1 + 2);
        assert_true(strv_has(f->config.protected_subpaths, ".git/hooks"));
        assert_true(strv_has(f->config.protected_subpaths, ".mcp.json"));
        assert_true(strv_has(f->config.protected_subpaths, "~/.bashrc"));
        assert_true(strv_has(f->config.protected_subpaths, "secrets"));
        assert_true(strv_has(f->config.protected_subpaths, "~/.ssh/config"));
        assert_false(strv_has(f->config.protected_subpaths, ".vscode"));
        /* An empty object is the defaults; adding a default again does not list it twice. */
        load_good(f, "{\"protectedSubpaths\":{\"add\":[\".claude\"]}}");
        assert_int_equal(dsh_strv_length(f->config.protected_subpaths), defaults);
        load_good(f, "{\"protectedSubpaths\":{}}");
        assert_int_equal(dsh_strv_length(f->config.protected_subpaths), defaults);
        load_bad(f, "{\"protectedSubpaths\":{\"remove\":[\".claude\",\"build\"]}}", "protectedSubpaths.remove",
                 "entry 1 (\"build\") is not a default protected subpath");
        load_bad(f, "{\"protectedSubpaths\":{\"add\":[\"~/../etc\"]}}", "protectedSubpaths.add",
                 "entry 0 (\"~/../etc\") must not contain \"..\"");
        load_bad(f, "{\"protectedSubpaths\":{\"add\":[\"/etc\"]}}", "protectedSubpaths.add", "must be relative");
        load_bad(f, "{\"protectedSubpaths\":{\"add\":\"x\"}}", "protectedSubpaths.add", "expected an array");
        load_bad(f, "{\"protectedSubpaths\":{\"keep\":[]}}", "protectedSubpaths", "unknown member \"keep\"");
}

static void test_require_protected_subpaths(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"requireProtectedSubpaths\":true}");
        assert_true(f->config.require_protected_subpaths);
        load_good(f, "{\"requireProtectedSubpaths\":false}");
        assert_false(f->config.require_protected_subpaths);
        load_good(f, "{\"requireProtectedSubpaths\":true,\"protectedSubpaths\":[\"secrets\"]}");
        assert_true(f->config.require_protected_subpaths);
        assert_string_equal(f->config.protected_subpaths[0], "secrets");
        load_bad(f, "{\"requireProtectedSubpaths\":\"yes\"}", "requireProtectedSubpaths", "expected true or false");
        load_bad(f, "{\"requireProtectedSubpaths\":1}", "requireProtectedSubpaths", "expected true or false");
        load_bad(f, "{\"requireProtectedSubpaths\":null}", "requireProtectedSubpaths", "expected true or false");
}

/* network: "on", "off", or the allow-list object; every entry checked at load with the library's sentence. */
static void test_network(void **state)
{
        fixture *f = *state;

        load_good(f, "{}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_ON);
        load_good(f, "{\"network\":\"off\"}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_OFF);
        load_good(f, "{\"network\":\"on\"}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_ON);
        load_good(f, "{\"network\":{\"allowHosts\":[\"@npm\",\"*.example.com:443\"],\"allowLocalPorts\":[5432],"
                     "\"dnsUpstream\":\"[::1]:53\"}}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_string_equal(f->config.network.allow_hosts[0], "@npm");   /* expanded per call, by prepare */
        assert_string_equal(f->config.network.allow_hosts[1], "*.example.com:443");
        assert_int_equal(f->config.network.allow_local_port_count, 1);
        assert_int_equal(f->config.network.allow_local_ports[0], 5432);
        assert_string_equal(f->config.network.dns_upstream, "[::1]:53");
        /* Without hosts (empty or absent) the object is off with its local ports. */
        load_good(f, "{\"network\":{\"allowHosts\":[],\"allowLocalPorts\":[8080]}}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_OFF);
        assert_int_equal(f->config.network.allow_local_port_count, 1);
        load_good(f, "{\"network\":{}}");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_OFF);

        load_bad(f, "{\"network\":\"allow-list\"}", "network", "must be \"on\", \"off\" or");
        load_bad(f, "{\"network\":true}", "network", "must be \"on\", \"off\" or");
        load_bad(f, "{\"network\":\"off\\u0000x\"}", "network", "must be \"on\", \"off\" or");
        load_bad(f, "{\"network\":{\"allowHosts\":[\"*\"]}}", "network",
                 "\"allowHosts\"[0] \"*\": a pattern must name a domain (\"*\" alone allows everything)");
        load_bad(f, "{\"network\":{\"allowHosts\":[\"ok.example\",\"https://x.example/\"]}}", "network",
                 "\"allowHosts\"[1] \"https://x.example/\": a pattern names a host, not a URL");
        load_bad(f, "{\"network\":{\"allowHosts\":[\"*.com\"]}}", "network", "\"allowHosts\"[0] \"*.com\": ");
        load_bad(f, "{\"network\":{\"allowHosts\":[\"@nope\"]}}", "network", "unknown named set");
        load_bad(f, "{\"network\":{\"allowHosts\":[\"\"]}}", "network", "\"allowHosts\"[0]");
        load_bad(f, "{\"network\":{\"allowHosts\":\"a.example\"}}", "network", "\"allowHosts\" must be an array");
        load_bad(f, "{\"network\":{\"allowHost\":[\"a.example\"]}}", "network", "\"allowHost\" is an unknown key");
        load_bad(f, "{\"network\":{\"allowLocalPorts\":[0]}}", "network", "\"allowLocalPorts\"[0] must be a port");
        load_bad(f, "{\"network\":{\"allowLocalPorts\":[80,65536]}}", "network", "\"allowLocalPorts\"[1] must be");
        load_bad(f, "{\"network\":{\"allowLocalPorts\":[80.5]}}", "network", "\"allowLocalPorts\"[0] must be");
        load_bad(f, "{\"network\":{\"allowLocalPorts\":80}}", "network", "\"allowLocalPorts\" must be an array");
        load_bad(f, "{\"network\":{\"dnsUpstream\":\"1.1.1.1\"}}", "network", "\"dnsUpstream\" must be IPV4:PORT");
        load_bad(f, "{\"network\":{\"dnsUpstream\":\"dns.example:53\"}}", "network", "\"dnsUpstream\" must be");
        assert_int_equal(f->config.network.mode, DSH_NETWORK_ON);   /* a failed load left the default */
}

/* maskedPaths: absent = the defaults (NULL, not set), [] = none (set, empty); each entry checked with the library's reason. */
static void test_masked_paths(void **state)
{
        fixture *f = *state;

        load_good(f, "{}");
        assert_false(f->config.masked_paths_set);
        assert_null(f->config.masked_paths);
        assert_false(f->config.require_masks);
        load_good(f, "{\"maskedPaths\":[\".aws\",\"~/.ssh/id_*\",\"/srv/keys/*.pem\"],\"requireMasks\":true}");
        assert_true(f->config.masked_paths_set);
        assert_int_equal(dsh_strv_length(f->config.masked_paths), 3);
        assert_string_equal(f->config.masked_paths[1], "~/.ssh/id_*");
        assert_true(f->config.require_masks);
        load_good(f, "{\"maskedPaths\":[]}");
        assert_true(f->config.masked_paths_set);
        assert_non_null(f->config.masked_paths);
        assert_int_equal(dsh_strv_length(f->config.masked_paths), 0);

        load_bad(f, "{\"maskedPaths\":[\".aws\",\"a/../b\"]}", "maskedPaths", "\"a/../b\": an entry may not hold");
        load_bad(f, "{\"maskedPaths\":[\"*/x\"]}", "maskedPaths", "\"*/x\": a wildcard may only stand in the last");
        load_bad(f, "{\"maskedPaths\":[\"~\"]}", "maskedPaths", "\"~\": ");
        load_bad(f, "{\"maskedPaths\":[\"/\"]}", "maskedPaths", "\"/\": an entry may not mask");
        load_bad(f, "{\"maskedPaths\":[\"\"]}", "maskedPaths", "entry 0 must be a non-empty");
        load_bad(f, "{\"maskedPaths\":[\"a\\nb\"]}", "maskedPaths", "entry 0 must be a non-empty single-line");
        load_bad(f, "{\"maskedPaths\":\".aws\"}", "maskedPaths", "expected an array of strings");
        load_bad(f, "{\"requireMasks\":\"yes\"}", "requireMasks", "expected true or false");
        assert_false(f->config.masked_paths_set);
}

/* environment: {"deny": patterns, "allow": names}; deny absent = the defaults, [] = none; nothing else. */
static void test_environment(void **state)
{
        fixture *f = *state;

        load_good(f, "{\"environment\":{}}");
        assert_false(f->config.environment_deny_set);
        assert_null(f->config.environment_deny);
        assert_null(f->config.environment_allow);
        load_good(f, "{\"environment\":{\"allow\":[\"GITHUB_TOKEN\"]}}");
        assert_false(f->config.environment_deny_set);
        assert_string_equal(f->config.environment_allow[0], "GITHUB_TOKEN");
        load_good(f, "{\"environment\":{\"deny\":[\"*_TOKEN\",\"MY_VAR?\"],\"allow\":[]}}");
        assert_true(f->config.environment_deny_set);
        assert_int_equal(dsh_strv_length(f->config.environment_deny), 2);
        assert_int_equal(dsh_strv_length(f->config.environment_allow), 0);
        load_good(f, "{\"environment\":{\"deny\":[]}}");
        assert_true(f->config.environment_deny_set);
        assert_int_equal(dsh_strv_length(f->config.environment_deny), 0);

        load_bad(f, "{\"environment\":{\"allow\":[\"*_TOKEN\"]}}", "environment.allow",
                 "\"*_TOKEN\": a variable name may hold only");
        load_bad(f, "{\"environment\":{\"deny\":[\"A=B\"]}}", "environment.deny", "\"A=B\": a pattern may hold");
        load_bad(f, "{\"environment\":{\"deny\":\"*_TOKEN\"}}", "environment.deny", "expected an array");
        load_bad(f, "{\"environment\":{\"remove\":[]}}", "environment", "unknown member \"remove\"");
        load_bad(f, "{\"environment\":[\"*_TOKEN\"]}", "environment", "expected an object");
        assert_false(f->config.environment_deny_set);
}

static void test_unknown_key(void **state)
{
        fixture *f = *state;

        load_bad(f, "{\"mode\":\"workspace-write\",\"sandboxMode\":\"x\"}", "sandboxMode", "unknown key");
}

static void test_file_errors(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;

        /* Not "line -1: unable to open": what failed, and why. */
        free(f->path);
        f->path = test_path_join(f->directory, "missing.json");
        expect_file_error(f, "cannot open: No such file or directory");
        free(f->path);
        f->path = test_path_join(f->directory, "config.json");

        test_write_file(f->path, "[]");
        expect_file_error(f, "expected a JSON object");
        test_write_file(f->path, "{\"mode\":");
        expect_file_error(f, "line 1");
        test_write_file(f->path, "");
        expect_file_error(f, "line 1");
        test_write_file(f->path, "{\"mode\":\"read-only\",\"mode\":\"read-only\"}");
        expect_file_error(f, "line 1");
        /* Bytes that are not UTF-8: said so, not "out of memory". */
        test_write_file(f->path, "{\"mode\":\"read-\xffonly\"}");
        expect_file_error(f, "line 1");
        assert_true(load(f, "{\"mode\":\"read-\xffonly\"}", &error) < 0);
        assert_true(test_contains(error.message, "not valid UTF-8"));
        dsh_error_clear(&error);

        unlink(f->path);
        assert_int_equal(mkdir(f->path, 0755), 0);
        expect_file_error(f, "not a regular file");
        rmdir(f->path);
}

/* A FIFO at the config path (a confined command could plant one) is refused at once, never read. */
static void test_fifo_refused_without_blocking(void **state)
{
        fixture *f = *state;
        char *link = test_path_join(f->directory, "link.json"), *good = test_path_join(f->directory, "good.json");

        assert_int_equal(mkfifo(f->path, 0644), 0);
        expect_file_error(f, "not a regular file");
        /* A symlink to a real config is followed (dotfile managers link configs), a symlink to a FIFO is not read. */
        test_write_file(good, "{\"mode\":\"workspace-write\"}");
        assert_int_equal(symlink(good, link), 0);
        {
                dsh_error error = DSH_ERROR_INIT;

                assert_int_equal(dsh_config_load_file(&f->config, link, &error), 0);
                assert_int_equal(f->config.mode, DSH_MODE_WORKSPACE_WRITE);
        }
        unlink(link);
        assert_int_equal(symlink(f->path, link), 0);
        free(f->path);
        f->path = link;
        expect_file_error(f, "not a regular file");
        free(good);
}

/* A failed load leaves what an earlier load set. */
static void test_failure_changes_nothing(void **state)
{
        fixture *f = *state;
        dsh_error error = DSH_ERROR_INIT;

        load_good(f, "{\"mode\":\"workspace-write\",\"backends\":[\"landlock\"],\"protectedSubpaths\":[\"x\"]}");
        test_write_file(f->path, "{\"mode\":\"read-only\",\"backends\":[\"nosuch\"]}");
        assert_true(dsh_config_load_file(&f->config, f->path, &error) < 0);
        dsh_error_clear(&error);
        assert_int_equal(f->config.mode, DSH_MODE_WORKSPACE_WRITE);
        assert_string_equal(f->config.backends[0], "landlock");
        assert_string_equal(f->config.protected_subpaths[0], "x");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_network, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workspace_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_additional_writable_roots, setup, teardown),
                cmocka_unit_test_setup_teardown(test_backends, setup, teardown),
                cmocka_unit_test_setup_teardown(test_probe_timeout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_read_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_runner_command, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected_subpaths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected_subpath_changes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_require_protected_subpaths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_masked_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_key, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_refused_without_blocking, setup, teardown),
                cmocka_unit_test_setup_teardown(test_failure_changes_nothing, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
