/* SPDX-License-Identifier: MIT */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guard-fixture.h"
#include "test-support.h"

char *guard_fixture_path(const char *directory, const char *name)
{
        return test_path_join(directory, name);
}

static void make_directory(const char *path)
{
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", path, strerror(errno));
}

static void set_environment(const char *name, const char *scratch, const char *below)
{
        char *value = NULL;

        assert_true(asprintf(&value, "%s/%s", scratch, below) > 0);
        make_directory(value);
        assert_int_equal(setenv(name, value, 1), 0);
        free(value);
}

dsh_runtime *guard_fixture_runtime(const guard_fixture *fixture, const char *backend, const char *state_directory)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        char *state = state_directory ? NULL : guard_fixture_path(fixture->scratch, "state");

        options.backend = backend;
        options.launcher_directory = fixture->launchers;
        options.state_directory = state_directory ? state_directory : state;
        options.use_verdict_cache = false;
        if (dsh_runtime_new(&options, &runtime, &error) < 0)
                fail_msg("dsh_runtime_new: %s", error.message);
        free(state);
        return runtime;
}

void guard_fixture_setup(guard_fixture *fixture)
{
        const char *landlock_run = test_landlock_run_path();
        char *file, *tree, *deep, *secret;

        memset(fixture, 0, sizeof(*fixture));
        fixture->scratch = test_make_directory(NULL);
        set_environment("HOME", fixture->scratch, "home");
        set_environment("XDG_CONFIG_HOME", fixture->scratch, "config");
        set_environment("XDG_STATE_HOME", fixture->scratch, "state-home");
        set_environment("XDG_CACHE_HOME", fixture->scratch, "cache");
        unsetenv("DSH_SANDBOX_CONFIG");
        unsetenv("DSH_SANDBOX_STATE_DIR");
        fixture->workspace = guard_fixture_path(fixture->scratch, "ws");
        fixture->outside = guard_fixture_path(fixture->scratch, "outside");
        fixture->extra = guard_fixture_path(fixture->scratch, "extra");
        make_directory(fixture->workspace);
        make_directory(fixture->outside);
        make_directory(fixture->extra);
        file = guard_fixture_path(fixture->workspace, "file");
        tree = guard_fixture_path(fixture->workspace, "tree");
        deep = guard_fixture_path(fixture->workspace, "tree/a");
        secret = guard_fixture_path(fixture->outside, "secret");
        test_write_file(file, "old\n");
        make_directory(tree);
        make_directory(deep);
        free(deep);
        deep = guard_fixture_path(fixture->workspace, "tree/a/b");
        test_write_file(deep, "b\n");
        test_write_file(secret, "original\n");
        fixture->launchers = strndup(landlock_run, (size_t) (strrchr(landlock_run, '/') - landlock_run));
        fixture->runtime = guard_fixture_runtime(fixture, NULL, NULL);
        free(secret);
        free(deep);
        free(tree);
        free(file);
}

void guard_fixture_teardown(guard_fixture *fixture)
{
        dsh_runtime_free(fixture->runtime);
        free(fixture->launchers);
        free(fixture->extra);
        free(fixture->outside);
        free(fixture->workspace);
        test_remove_tree(fixture->scratch);
        memset(fixture, 0, sizeof(*fixture));
}

void guard_fixture_policy(const guard_fixture *fixture, dsh_runtime *runtime, dsh_mode mode, dsh_policy *policy)
{
        char *extra[] = { fixture->extra, NULL };
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_error error = DSH_ERROR_INIT;

        request.has_mode = true;
        request.mode = mode;
        request.workspace_root = fixture->workspace;
        request.additional_writable_roots = extra;
        *policy = (dsh_policy) DSH_POLICY_INIT;
        if (dsh_runtime_resolve(runtime, &request, policy, &error) < 0)
                fail_msg("dsh_runtime_resolve: %s", error.message);
}

dsh_file_guard *guard_fixture_guard(const guard_fixture *fixture, dsh_mode mode)
{
        dsh_policy policy;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;

        guard_fixture_policy(fixture, fixture->runtime, mode, &policy);
        if (dsh_file_guard_new(fixture->runtime, &policy, &guard, &error) < 0)
                fail_msg("dsh_file_guard_new: %s", error.message);
        dsh_policy_clear(&policy);
        return guard;
}

/* ------------------------------------------------------------ snapshots -- */

static FILE *snapshot_stream;
static size_t snapshot_prefix;
static char **snapshot_lines;
static size_t snapshot_count;

static int snapshot_entry(const char *path, const struct stat *status, int type, struct FTW *where)
{
        char *line = NULL, *content = NULL;
        char target[4096];
        ssize_t length;

        (void) type;
        (void) where;
        if (S_ISREG(status->st_mode))
                content = test_read_file(path);
        if (S_ISLNK(status->st_mode) && (length = readlink(path, target, sizeof(target) - 1)) >= 0)
                target[length] = '\0';
        else
                target[0] = '\0';
        assert_true(asprintf(&line, "%s %c %04o %s%s", path + snapshot_prefix,
                             S_ISDIR(status->st_mode) ? 'd' : S_ISLNK(status->st_mode) ? 'l' : S_ISREG(status->st_mode) ? 'f' : '?',
                             (unsigned) (status->st_mode & 07777), content ? content : "", target) > 0);
        free(content);
        snapshot_lines = realloc(snapshot_lines, (snapshot_count + 1) * sizeof(char *));
        assert_non_null(snapshot_lines);
        snapshot_lines[snapshot_count++] = line;
        return 0;
}

static int compare_lines(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

char *guard_fixture_snapshot(const char *directory)
{
        char *text = NULL;
        size_t size = 0;

        snapshot_prefix = strlen(directory);
        snapshot_lines = NULL;
        snapshot_count = 0;
        if (nftw(directory, snapshot_entry, 16, FTW_PHYS) < 0)
                return strdup("(missing)");
        qsort(snapshot_lines, snapshot_count, sizeof(char *), compare_lines);
        snapshot_stream = open_memstream(&text, &size);
        assert_non_null(snapshot_stream);
        for (size_t i = 0; i < snapshot_count; i++) {
                fprintf(snapshot_stream, "%s\n", snapshot_lines[i]);
                free(snapshot_lines[i]);
        }
        free(snapshot_lines);
        snapshot_lines = NULL;
        fclose(snapshot_stream);
        return text;
}

/* ---------------------------------------------------------- expectations -- */

void guard_fixture_expect_denied(int result, dsh_error *error, const char *path, dsh_mode mode)
{
        char *expected = NULL;

        assert_true(asprintf(&expected, "cannot write \"%s\": file access denied under %s mode", path,
                             dsh_mode_name(mode)) > 0);
        if (result != -EACCES || error->code != DSH_ERROR_FS_SANDBOX_DENIED || !error->message ||
            strcmp(error->message, expected) != 0)
                fail_msg("expected FS_SANDBOX_DENIED \"%s\", got %d: %s %s", expected, result,
                         dsh_error_code_name(error->code) ? dsh_error_code_name(error->code) : "(no code)",
                         error->message ? error->message : "(no message)");
        free(expected);
        dsh_error_clear(error);
}

void guard_fixture_expect_code(int result, dsh_error *error, dsh_error_code code)
{
        if (result >= 0 || error->code != code)
                fail_msg("expected %s, got %d: %s %s", dsh_error_code_name(code) ? dsh_error_code_name(code) : "a code",
                         result, dsh_error_code_name(error->code) ? dsh_error_code_name(error->code) : "(no code)",
                         error->message ? error->message : "(no message)");
        dsh_error_clear(error);
}
