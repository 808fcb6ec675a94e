/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor (docs/supervisor.md) on the real kernel, judged on
 * disk: every system call form that changes metadata, on a file inside the
 * workspace (made) and outside (refused, unchanged), through `dsh-sandbox
 * run`, the landlock-run launcher and dsh_provider_spawn(); races against
 * the path and against the tree; threads with a fs or fd table of their
 * own; a command's own listener; the supervisor's death; hosts that forbid
 * what it needs; the tools a build runs; and the stand-in's exit contract.
 * The operation table shared with the other backends is the escape matrix.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fs.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/landlock.h"
#include "dsh-sandbox/provider.h"
#include "test-landlock.h"
#include "test-support.h"

/* The group the probe's chown forms give a file: the test joins it, so that a chown to it needs no capability. */
#define PROBE_GROUP 4242

typedef enum front_end {
        FRONT_END_RUN,        /* dsh-sandbox run --backend landlock --mode workspace-write */
        FRONT_END_LAUNCHER,   /* landlock-run with the contract's workspace-write grants */
        FRONT_END_LIBRARY,    /* dsh_provider_spawn() with Landlock as the sole backend */
        FRONT_END_COUNT,
} front_end;

static const char *const front_end_names[FRONT_END_COUNT] = {
        [FRONT_END_RUN] = "dsh-sandbox run",
        [FRONT_END_LAUNCHER] = "landlock-run",
        [FRONT_END_LIBRARY] = "dsh_provider_spawn",
};

struct scratch {
        char *root;
        char *workspace;
        char *outside;
        char *config;
        char *cache;
};

static struct scratch scratch;

/* A program the front end runs under (refuse-exec RULE: a host that refuses something), or none. */
static const char *wrapper[2];

static const char *probe_path(void)
{
        const char *path = getenv("METADATA_PROBE_BIN");

        if (!path || !path[0])
                fail_msg("METADATA_PROBE_BIN is not set; run the tests through meson");
        return path;
}

static int setup(void **state)
{
        (void) state;
        scratch.root = test_make_directory(NULL);
        scratch.workspace = test_path_join(scratch.root, "w");
        scratch.outside = test_path_join(scratch.root, "o");   /* same length as "w": the flip race needs it */
        scratch.config = test_path_join(scratch.root, "config.json");
        scratch.cache = test_path_join(scratch.root, "cache");
        assert_int_equal(mkdir(scratch.workspace, 0755), 0);
        assert_int_equal(mkdir(scratch.outside, 0755), 0);
        test_write_file(scratch.config, "{}");
        setenv("DSH_SANDBOX_CONFIG", scratch.config, 1);
        setenv("XDG_CACHE_HOME", scratch.cache, 1);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        wrapper[0] = wrapper[1] = NULL;
        free(scratch.workspace);
        free(scratch.outside);
        free(scratch.config);
        free(scratch.cache);
        test_remove_tree(scratch.root);
        memset(&scratch, 0, sizeof(scratch));
        return 0;
}

/* ------------------------------------------------------------ running -- */

/* The front end's argv before the command, into `argv`; returns the count. */
static size_t front_end_argv(front_end front, const char **argv)
{
        size_t count = 0;

        for (size_t i = 0; i < 2 && wrapper[i]; i++)
                argv[count++] = wrapper[i];
        if (front == FRONT_END_RUN) {
                count = test_run_command_prefix(argv, count, "landlock", "workspace-write", scratch.workspace);
        } else {
                argv[count++] = test_landlock_run_path();
                argv[count++] = "--ro";
                argv[count++] = "/";
                argv[count++] = "--rw";
                argv[count++] = "/dev/null";
                argv[count++] = "--rw";
                argv[count++] = "/tmp";
                argv[count++] = "--rw";
                argv[count++] = scratch.workspace;
        }
        argv[count++] = "--";
        return count;
}

static dsh_provider *landlock_provider(void)
{
        const char *const sole[] = { "landlock", NULL };
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();

        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, sole, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        return provider;
}

/* The library's spawn in this very process (its supervisor is a thread of this process), stdout captured. */
static void run_library(const char *const *command, test_process_result *result)
{
        dsh_provider *provider = landlock_provider();
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_child *child = NULL;
        int output[2], wait_status = 0;

        memset(result, 0, sizeof(*result));
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = strdup(scratch.workspace);
        assert_int_equal(pipe2(output, O_CLOEXEC), 0);
        options.stdout_fd = output[1];
        if (dsh_provider_spawn(provider, (char *const *) command, &policy, &options, &child, &error) < 0)
                fail_msg("spawn: %s", error.message);
        close(output[1]);
        result->stdout_text = test_read_fd(output[0]);
        close(output[0]);
        assert_int_equal(dsh_child_wait(child, &wait_status), 0);
        result->signaled = WIFSIGNALED(wait_status);
        result->exit_code = WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
        result->stderr_text = strdup("");
        for (const char *const *warning = dsh_child_warnings(child); *warning; warning++) {
                char *joined = NULL;

                assert_true(asprintf(&joined, "%swarning: %s\n", result->stderr_text, *warning) > 0);
                free(result->stderr_text);
                result->stderr_text = joined;
        }
        dsh_child_free(child);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
}

/* Runs `command` (NULL-terminated) confined under workspace-write through `front`. */
static void run_confined(front_end front, const char *const *command, test_process_result *result)
{
        const char *argv[48];
        size_t count;

        if (front == FRONT_END_LIBRARY) {
                run_library(command, result);
                return;
        }
        count = front_end_argv(front, argv);
        for (size_t i = 0; command[i]; i++)
                argv[count++] = command[i];
        argv[count] = NULL;
        test_run_bounded(argv, NULL, 120, result);
}

/* The value printed for `name` ("name=VALUE" lines); NULL when absent.  Caller frees. */
static char *reported(const char *text, const char *name)
{
        size_t length = strlen(name);

        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                if (strncmp(line, name, length) == 0 && line[length] == '=')
                        return strndup(line + length + 1, strcspn(line + length + 1, "\n"));
        return NULL;
}

static void assert_reported(const test_process_result *result, const char *name, const char *expected)
{
        char *value = reported(result->stdout_text, name);

        if (!value || strcmp(value, expected) != 0)
                fail_msg("%s: expected %s, got %s (stdout: %s; stderr: %s)", name, expected, value ? value : "nothing",
                         result->stdout_text, result->stderr_text);
        free(value);
}

/* ---------------------------------------------------------------- disk -- */

/* Everything a metadata call could change, in one line; caller frees. */
static char *describe(const char *path)
{
        struct stat status;
        char *text = NULL, names[1024];
        size_t size = 0;
        ssize_t length;
        FILE *out;
        int fd, flags = 0;

        if (lstat(path, &status) < 0)
                return strdup("absent");
        out = open_memstream(&text, &size);
        assert_non_null(out);
        fprintf(out, "mode=%04o uid=%u gid=%u mtime=%lld.%09ld ctime=%lld.%09ld", (unsigned) (status.st_mode & 07777),
                (unsigned) status.st_uid, (unsigned) status.st_gid, (long long) status.st_mtim.tv_sec,
                status.st_mtim.tv_nsec, (long long) status.st_ctim.tv_sec, status.st_ctim.tv_nsec);
        length = llistxattr(path, names, sizeof(names));
        for (ssize_t at = 0; length > 0 && at < length; at += (ssize_t) strlen(names + at) + 1)
                fprintf(out, " xattr:%s", names + at);
        fd = S_ISREG(status.st_mode) ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0)
                fprintf(out, " flags=%x", flags);
        if (fd >= 0)
                close(fd);
        fclose(out);
        return text;
}

static void make_file(const char *path)
{
        test_write_file(path, "original\n");
        assert_int_equal(chmod(path, 0644), 0);
        (void) setxattr(path, "user.existing", "x", 1, 0);
}

/* ------------------------------------------------------------ variants -- */

/* The forms the probe knows (`metadata-probe names`), NULL-terminated.  Caller frees with the strings. */
static char **variant_names(void)
{
        const char *argv[] = { probe_path(), "names", NULL };
        test_process_result result;
        char **names = calloc(64, sizeof(char *));
        size_t count = 0;

        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        for (char *line = strtok(result.stdout_text, "\n"); line && count < 63; line = strtok(NULL, "\n"))
                names[count++] = strdup(line);
        test_process_result_clear(&result);
        return names;
}

/* Forms this host cannot judge: chown needs root to join the group; flags need a filesystem that keeps them. */
static const char *variant_needs(const char *name, const char *inside_errno)
{
        if (strstr(name, "chown") && geteuid() != 0)
                return "the chown forms need root to join the probe's group";
        if ((strstr(name, "setflags") || strstr(name, "fssetxattr") || strstr(name, "file_setattr")) &&
            (strcmp(inside_errno, "ENOTTY") == 0 || strcmp(inside_errno, "EOPNOTSUPP") == 0 ||
             strcmp(inside_errno, "ENOSYS") == 0))
                return "the scratch filesystem keeps no inode flags (or the kernel lacks the call)";
        return NULL;
}

/*
 * Every metadata system call form, through `front`: on a file in the
 * workspace it is performed (the call succeeds and the file changes on
 * disk), on a file outside it is refused with EACCES and nothing changes.
 */
static void check_variants(front_end front)
{
        char *inside = test_path_join(scratch.workspace, "variants");
        char *outside = test_path_join(scratch.outside, "variants");
        const char *command[] = { probe_path(), "variants", inside, outside, NULL };
        char **names = variant_names();
        char *before_in[64] = { NULL }, *before_out[64] = { NULL };
        test_process_result result;
        size_t failures = 0;

        assert_int_equal(mkdir(inside, 0755), 0);
        assert_int_equal(mkdir(outside, 0755), 0);
        for (size_t i = 0; names[i]; i++) {
                char *in = test_path_join(inside, names[i]), *out = test_path_join(outside, names[i]);

                make_file(in);
                make_file(out);
                before_in[i] = describe(in);
                before_out[i] = describe(out);
                free(in);
                free(out);
        }
        run_confined(front, command, &result);
        for (size_t i = 0; names[i]; i++) {
                char label[160], *in_errno, *out_errno, *in = test_path_join(inside, names[i]);
                char *out = test_path_join(outside, names[i]);
                char *after_in = describe(in), *after_out = describe(out);
                const char *skip;

                snprintf(label, sizeof(label), "inside:%s", names[i]);
                in_errno = reported(result.stdout_text, label);
                snprintf(label, sizeof(label), "outside:%s", names[i]);
                out_errno = reported(result.stdout_text, label);
                skip = variant_needs(names[i], in_errno ? in_errno : "");
                if (skip) {
                        printf("# SKIP %s: %s\n", names[i], skip);
                } else if (!in_errno || strcmp(in_errno, "0") != 0 || strcmp(before_in[i], after_in) == 0) {
                        printf("# MISMATCH %s | %s | inside: expected made, got errno=%s, %s -> %s\n",
                               front_end_names[front], names[i], in_errno ? in_errno : "?", before_in[i], after_in);
                        failures++;
                }
                if (!skip &&
                    (!out_errno || strcmp(out_errno, "EACCES") != 0 || strcmp(before_out[i], after_out) != 0)) {
                        printf("# MISMATCH %s | %s | outside: expected refused (EACCES), got errno=%s, %s -> %s\n",
                               front_end_names[front], names[i], out_errno ? out_errno : "?", before_out[i], after_out);
                        failures++;
                }
                free(in_errno);
                free(out_errno);
                free(after_in);
                free(after_out);
                free(in);
                free(out);
                free(before_in[i]);
                free(before_out[i]);
                free(names[i]);
        }
        free(names);
        if (failures)
                fail_msg("%zu metadata forms did not hold through %s (each is a # MISMATCH line); stderr: %s", failures,
                         front_end_names[front], result.stderr_text);
        test_process_result_clear(&result);
        free(inside);
        free(outside);
}

static void test_every_form_through_run(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_variants(FRONT_END_RUN);
}

static void test_every_form_through_the_launcher(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_variants(FRONT_END_LAUNCHER);
}

static void test_every_form_through_the_library(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_variants(FRONT_END_LIBRARY);
}

/* ---------------------------------------------------------------- races -- */

/* "calls=N allowed=A refused=R other=O ..." from the probe: each count. */
static void race_tally(const char *text, long *allowed, long *refused, long *other)
{
        const char *line = text ? strstr(text, "calls=") : NULL;

        if (!line || sscanf(line, "calls=%*d allowed=%ld refused=%ld other=%ld", allowed, refused, other) != 3)
                fail_msg("the race did not report: %s", text ? text : "(nothing)");
}

/*
 * One thread flips the path buffer between the workspace's file and the
 * outside one (the two paths differ in one byte) while another chmods it in
 * a loop: the supervisor copies the path once and acts on what it opened,
 * so the outside file never changes, whichever copy each call saw.
 */
static void check_flip_race(front_end front, long iterations)
{
        char *inside = test_path_join(scratch.workspace, "f");
        char *outside = test_path_join(scratch.outside, "f");
        char count[32], *before, *after;
        const char *command[] = { probe_path(), "flip", count, inside, outside, NULL };
        test_process_result result;
        long allowed = 0, refused = 0, other = 0;

        snprintf(count, sizeof(count), "%ld", iterations);
        make_file(inside);
        make_file(outside);
        before = describe(outside);
        run_confined(front, command, &result);
        after = describe(outside);
        race_tally(result.stdout_text, &allowed, &refused, &other);
        printf("# %s: %ld chmods: %ld made in the workspace, %ld refused outside, %ld other\n", front_end_names[front],
               iterations, allowed, refused, other);
        assert_string_equal(before, after);
        assert_int_equal(other, 0);
        /* Both sides of the race were taken, or it proved nothing. */
        assert_true(allowed > 0);
        assert_true(refused > 0);
        free(before);
        free(after);
        free(inside);
        free(outside);
        test_process_result_clear(&result);
}

static void test_path_flip_race(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        check_flip_race(FRONT_END_RUN, 200000);
        check_flip_race(FRONT_END_LAUNCHER, 50000);
}

/*
 * In the workspace, "d" (a directory holding f) and "s" (a symlink to the
 * outside directory, which holds f too) are exchanged in a loop while
 * another thread chmods d/f: the outside f never changes.
 */
static void test_directory_symlink_swap_race(void **state)
{
        char *directory = test_path_join(scratch.workspace, "d");
        char *inside = test_path_join(directory, "f");
        char *link = test_path_join(scratch.workspace, "s");
        char *outside = test_path_join(scratch.outside, "f");
        char *script = NULL, *before, *after;
        const char *command[] = { "sh", "-c", NULL, NULL };
        test_process_result result;
        long allowed = 0, refused = 0, other = 0;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(mkdir(directory, 0755), 0);
        make_file(inside);
        make_file(outside);
        assert_int_equal(symlink(scratch.outside, link), 0);
        before = describe(outside);
        assert_true(asprintf(&script, "cd '%s' && exec '%s' swap 100000 d s f", scratch.workspace, probe_path()) > 0);
        command[2] = script;
        run_confined(FRONT_END_RUN, command, &result);
        after = describe(outside);
        race_tally(result.stdout_text, &allowed, &refused, &other);
        printf("# swap: %ld made in the workspace, %ld refused outside, %ld other\n", allowed, refused, other);
        assert_string_equal(before, after);
        assert_true(allowed > 0);
        assert_true(refused > 0);
        free(before);
        free(after);
        free(script);
        free(directory);
        free(inside);
        free(link);
        free(outside);
        test_process_result_clear(&result);
}

/* ------------------------------------------------- per-thread fs and fds -- */

/*
 * One probe run each way: `into_workspace` must make the workspace's file
 * 0600 with `call`; `out_of_it` must be refused (EACCES) and change neither
 * the outside file nor, instead of it, the workspace's.
 */
static void check_resolved_both_ways(const char *call, const char *const *into_workspace,
                                     const char *const *out_of_it, const char *inside, const char *outside)
{
        char *outside_before, *inside_before, *outside_after, *inside_after;
        test_process_result result;
        struct stat status;

        make_file(inside);
        make_file(outside);
        outside_before = describe(outside);
        run_confined(FRONT_END_RUN, into_workspace, &result);
        assert_reported(&result, call, "0");
        assert_int_equal(stat(inside, &status), 0);
        assert_int_equal(status.st_mode & 07777, 0600);
        test_process_result_clear(&result);
        assert_int_equal(chmod(inside, 0644), 0);
        inside_before = describe(inside);
        run_confined(FRONT_END_RUN, out_of_it, &result);
        assert_reported(&result, call, "EACCES");
        outside_after = describe(outside);
        inside_after = describe(inside);
        assert_string_equal(outside_before, outside_after);
        assert_string_equal(inside_before, inside_after);
        test_process_result_clear(&result);
        free(outside_before);
        free(inside_before);
        free(outside_after);
        free(inside_after);
}

/* A thread that unshared its fs is resolved against its own cwd, both ways. */
static void test_thread_with_its_own_cwd(void **state)
{
        char *inside = test_path_join(scratch.workspace, "f");
        char *outside = test_path_join(scratch.outside, "f");
        /* The process's cwd is on one side, the thread's on the other; the path is relative. */
        const char *into_workspace[] = { probe_path(), "thread-cwd", scratch.outside, scratch.workspace, "f", "600",
                                         NULL };
        const char *out_of_it[] = { probe_path(), "thread-cwd", scratch.workspace, scratch.outside, "f", "600", NULL };

        (void) state;
        if (test_landlock_works())
                check_resolved_both_ways("chmod", into_workspace, out_of_it, inside, outside);
        free(inside);
        free(outside);
}

/* A thread that unshared its fd table is resolved against its own descriptors, both ways. */
static void test_thread_with_its_own_fd_table(void **state)
{
        char *inside = test_path_join(scratch.workspace, "f");
        char *outside = test_path_join(scratch.outside, "f");
        const char *into_workspace[] = { probe_path(), "thread-fd", outside, inside, "600", NULL };
        const char *out_of_it[] = { probe_path(), "thread-fd", inside, outside, "600", NULL };

        (void) state;
        if (test_landlock_works())
                check_resolved_both_ways("fchmod", into_workspace, out_of_it, inside, outside);
        free(inside);
        free(outside);
}

/* ------------------------------------------------------------ listeners -- */

/* The command cannot install a listener of its own (it would answer its own calls): EBUSY. */
static void test_nested_listener_is_busy(void **state)
{
        const char *command[] = { probe_path(), "nested-listener", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (front_end front = 0; front < FRONT_END_COUNT; front++) {
                run_confined(front, command, &result);
                assert_reported(&result, "listener", "EBUSY");
                test_process_result_clear(&result);
        }
}

/*
 * A call under another dsh-sandbox fails closed: nothing runs, and the reason says why.  The outer
 * filter refuses openat2 (its mode is behind a pointer), so the inner call stops at its roots, before
 * its listener's EBUSY (which tests/reach/test_supervisor.py meets under a listener that is not ours).
 */
static void test_run_under_a_supervisor_is_refused(void **state)
{
        char *marker = test_path_join(scratch.workspace, "ran");
        const char *command[] = { test_dsh_sandbox_path(), "run", "--backend", "landlock", "--mode", "workspace-write",
                                  "--root", scratch.workspace, "--", "touch", marker, NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        run_confined(FRONT_END_RUN, command, &result);
        assert_int_equal(result.exit_code, 125);
        assert_true(test_contains(result.stderr_text, "SANDBOX_UNAVAILABLE"));
        assert_true(test_contains(result.stderr_text, "it already runs under a sandbox's seccomp filter"));
        assert_false(test_path_exists(marker));
        test_process_result_clear(&result);
        free(marker);
}

/*
 * The supervisor dies first (the process hosting it is killed): the
 * command lives on, and its next chmod fails (ENOSYS) with nothing changed.
 */
static void test_supervisor_death_fails_closed(void **state)
{
        char *file = test_path_join(scratch.workspace, "f");
        int to_command[2], from_command[2], status = 0;
        char line[256];
        ssize_t length;
        struct stat after;
        pid_t host;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_file(file);
        /* The command outlives its host: it is reparented here, to be reaped. */
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
        assert_int_equal(pipe2(to_command, O_CLOEXEC), 0);
        assert_int_equal(pipe2(from_command, O_CLOEXEC), 0);
        host = fork();
        assert_true(host >= 0);
        if (host == 0) {
                const char *command[] = { probe_path(), "chmod-twice", file, NULL };
                dsh_provider *provider = landlock_provider();
                dsh_policy policy = DSH_POLICY_INIT;
                dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
                dsh_error error = DSH_ERROR_INIT;
                dsh_child *child = NULL;
                int wait_status;

                policy.mode = DSH_MODE_WORKSPACE_WRITE;
                policy.workspace_root = strdup(scratch.workspace);
                options.stdin_fd = to_command[0];
                options.stdout_fd = from_command[1];
                if (dsh_provider_spawn(provider, (char *const *) command, &policy, &options, &child, &error) < 0)
                        _exit(125);
                dsh_child_wait(child, &wait_status);  /* killed here, long before */
                _exit(0);
        }
        close(to_command[0]);
        close(from_command[1]);
        length = read(from_command[0], line, sizeof(line) - 1);
        assert_true(length > 0);
        line[length] = '\0';
        assert_true(test_contains(line, "first=0"));
        assert_int_equal(kill(host, SIGKILL), 0);
        assert_int_equal(waitpid(host, &status, 0), host);
        assert_int_equal(write(to_command[1], "go\n", 3), 3);
        length = read(from_command[0], line, sizeof(line) - 1);
        assert_true(length > 0);
        line[length] = '\0';
        assert_true(test_contains(line, "second=ENOSYS"));
        assert_int_equal(stat(file, &after), 0);
        assert_int_equal(after.st_mode & 07777, 0600);   /* the first chmod, not the second */
        close(to_command[1]);
        close(from_command[0]);
        while (waitpid(-1, &status, 0) > 0 || errno == EINTR)
                ;
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
        free(file);
}

/* ------------------------------------------------- what it cannot read -- */

/* A command that made itself non-dumpable: its call is refused (EACCES), unchanged, and the caller is told. */
static void test_non_dumpable_command_is_refused_with_a_reason(void **state)
{
        char *file = test_path_join(scratch.workspace, "f");
        const char *command[] = { probe_path(), "non-dumpable", file, NULL };
        test_process_result result;
        char *before, *after;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        make_file(file);
        before = describe(file);
        for (front_end front = 0; front < FRONT_END_COUNT; front++) {
                if (front == FRONT_END_LAUNCHER)
                        continue;  /* the launcher keeps the contract's stderr: no warning line of its own */
                run_confined(front, command, &result);
                assert_reported(&result, "chmod", "EACCES");
                if (!test_contains(result.stderr_text, "warning: the metadata supervisor refused 1 metadata call"))
                        fail_msg("%s gave no reason: %s", front_end_names[front], result.stderr_text);
                after = describe(file);
                assert_string_equal(before, after);
                free(after);
                test_process_result_clear(&result);
        }
        free(before);
        free(file);
}

static const char *refuse_exec_path(void)
{
        const char *path = getenv("REFUSE_EXEC_BIN");

        if (!path || !path[0])
                fail_msg("REFUSE_EXEC_BIN is not set; run the tests through meson");
        return path;
}

/* Where process_vm_readv() is refused, workspace-write under Landlock is refused, saying why; read-only runs. */
static void test_host_without_process_vm_readv_is_refused(void **state)
{
        char *marker = test_path_join(scratch.workspace, "ran");
        const char *workspace_write[] = { refuse_exec_path(), "process_vm_readv", test_dsh_sandbox_path(), "run",
                                          "--backend", "landlock", "--mode", "workspace-write", "--root",
                                          scratch.workspace, "--", "touch", marker, NULL };
        const char *read_only[] = { refuse_exec_path(), "process_vm_readv", test_dsh_sandbox_path(), "run",
                                    "--backend", "landlock", "--mode", "read-only", "--", "true", NULL };
        const char *probe[] = { refuse_exec_path(), "process_vm_readv", test_dsh_sandbox_path(), "probe", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_run(workspace_write, NULL, &result);
        assert_int_equal(result.exit_code, 125);
        assert_true(test_contains(result.stderr_text, "process_vm_readv() is refused on this host"));
        assert_false(test_path_exists(marker));
        test_process_result_clear(&result);
        test_run(read_only, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        test_process_result_clear(&result);
        /* probe says so before any call: a partial reason of the Landlock backend. */
        test_run(probe, NULL, &result);
        assert_int_equal(result.exit_code, 0);
        assert_true(test_contains(result.stdout_text, "partial: process_vm_readv() is refused on this host"));
        test_process_result_clear(&result);
        free(marker);
}

/*
 * Where pidfd_getfd() is refused (a container's profile), or pidfd_open()
 * has no PIDFD_THREAD (a kernel before 6.9), the command's descriptors are
 * reached through /proc/<tid>/fd: every form still holds, a thread with its
 * own fd table included.
 */
static void test_descriptors_through_proc(void **state)
{
        static const char *const rules[] = { "pidfd_getfd", "pidfd-thread" };
        char *inside = test_path_join(scratch.workspace, "f");
        char *outside = test_path_join(scratch.outside, "f");

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (size_t r = 0; r < 2; r++) {
                char *variants = test_path_join(scratch.workspace, "variants");
                char *outside_variants = test_path_join(scratch.outside, "variants");

                wrapper[0] = refuse_exec_path();
                wrapper[1] = rules[r];
                printf("# every form where %s is refused\n", rules[r]);
                check_variants(FRONT_END_RUN);
                wrapper[0] = wrapper[1] = NULL;
                test_remove_tree(variants);
                test_remove_tree(outside_variants);
        }
        for (size_t r = 0; r < 2; r++) {
                const char *thread_fd[] = { refuse_exec_path(), rules[r], test_dsh_sandbox_path(), "run", "--backend",
                                            "landlock", "--mode", "workspace-write", "--root", scratch.workspace,
                                            "--", probe_path(), "thread-fd", inside, outside, "600", NULL };
                const char *fchmod_inside[] = { refuse_exec_path(), rules[r], test_dsh_sandbox_path(), "run",
                                                "--backend", "landlock", "--mode", "workspace-write", "--root",
                                                scratch.workspace, "--", probe_path(), "thread-fd", outside, inside,
                                                "600", NULL };
                test_process_result result;
                char *before;
                struct stat status;

                make_file(inside);
                make_file(outside);
                before = describe(outside);
                test_run(thread_fd, NULL, &result);
                assert_reported(&result, "fchmod", "EACCES");
                {
                        char *after = describe(outside);

                        assert_string_equal(before, after);
                        free(after);
                }
                test_process_result_clear(&result);
                test_run(fchmod_inside, NULL, &result);
                assert_reported(&result, "fchmod", "0");
                assert_int_equal(stat(inside, &status), 0);
                assert_int_equal(status.st_mode & 07777, 0600);
                test_process_result_clear(&result);
                free(before);
        }
        free(inside);
        free(outside);
}

/* ----------------------------------------------------- what stays open -- */

/*
 * A metadata call by a name inside a protected subpath is refused: a refusal of that name only, not
 * a protection (a hard link or a rename reaches the same inode; docs/supervisor.md).
 */
static void test_protected_subpaths_refuse_metadata_by_name(void **state)
{
        char *git = test_path_join(scratch.workspace, ".git");
        char *hooks = test_path_join(git, "hooks");
        char *hook = test_path_join(hooks, "pre-commit");
        char *config = test_path_join(git, "config");
        char *file = test_path_join(scratch.workspace, "f");
        char *script = NULL, *hook_before, *config_before;
        const char *command[] = { "sh", "-c", NULL, NULL };
        test_process_result result;
        struct stat status;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_int_equal(mkdir(git, 0755), 0);
        assert_int_equal(mkdir(hooks, 0755), 0);
        make_file(hook);
        make_file(config);
        make_file(file);
        hook_before = describe(hook);
        config_before = describe(config);
        assert_true(asprintf(&script, "chmod 755 '%s'; echo hook=$?; chmod 600 '%s'; echo config=$?; "
                                      "chmod 600 '%s'; echo file=$?",
                             hook, config, file) > 0);
        command[2] = script;
        run_confined(FRONT_END_RUN, command, &result);
        assert_reported(&result, "hook", "1");
        assert_reported(&result, "config", "1");
        assert_reported(&result, "file", "0");
        {
                char *hook_after = describe(hook), *config_after = describe(config);

                assert_string_equal(hook_before, hook_after);
                assert_string_equal(config_before, config_after);
                free(hook_after);
                free(config_after);
        }
        assert_int_equal(stat(file, &status), 0);
        assert_int_equal(status.st_mode & 07777, 0600);
        test_process_result_clear(&result);
        free(script);
        free(hook_before);
        free(config_before);
        free(git);
        free(hooks);
        free(hook);
        free(config);
        free(file);
}

/* ------------------------------------------------- what keeps working -- */

static mode_t mode_of(const char *directory, const char *name)
{
        char *path = test_path_join(directory, name);
        struct stat status;

        if (lstat(path, &status) < 0)
                fail_msg("%s is missing", path);
        free(path);
        return status.st_mode & 07777;
}

static long long mtime_of(const char *directory, const char *name)
{
        char *path = test_path_join(directory, name);
        struct stat status;

        if (lstat(path, &status) < 0)
                fail_msg("%s is missing", path);
        free(path);
        return (long long) status.st_mtime;
}

/*
 * What a build does to the workspace: chmod +x, touch, cp -p, tar with
 * modes and times, git checkout, make, install -m.  Each leaves its mark on
 * disk, checked here one by one.
 */
static void test_workspace_tools_keep_working(void **state)
{
        static const char script[] =
                "set -e\n"
                "printf '#!/bin/sh\\necho hi\\n' > tool.sh && chmod +x tool.sh && ./tool.sh > tool.out\n"
                "touch -d '2001-02-03 04:05:06 UTC' stamped\n"
                "printf x > source && chmod 0640 source && touch -d '2002-01-01 UTC' source && cp -p source copied\n"
                "mkdir tree && printf a > tree/a && chmod 0604 tree/a && touch -d '2003-01-01 UTC' tree/a\n"
                "tar cf tree.tar tree && rm -rf tree && tar xpf tree.tar\n"
                "git init -q repo && cd repo && git config user.email t@e && git config user.name t\n"
                "printf 'one\\n' > file && chmod 0755 file && git add file && git commit -q -m one\n"
                "printf 'two\\n' > file && chmod 0644 file && git commit -q -am two\n"
                "git checkout -q HEAD~1 -- file && cd ..\n"
                "printf 'built: source\\n\\tcp source built && chmod 0700 built\\n' > Makefile && make -s\n"
                "install -m 0750 source installed\n"
                "echo done=0\n";
        const char *command[] = { "sh", "-c", NULL, NULL };
        char *shell = NULL, *repository;
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        if (access("/usr/bin/git", X_OK) < 0 || access("/usr/bin/make", X_OK) < 0) {
                printf("# SKIP: git and make are needed to try them\n");
                skip();
        }
        assert_true(asprintf(&shell, "cd '%s' && %s", scratch.workspace, script) > 0);
        command[2] = shell;
        for (front_end front = 0; front < FRONT_END_COUNT; front++) {
                run_confined(front, command, &result);
                if (!test_contains(result.stdout_text, "done=0"))
                        fail_msg("%s: the tools failed: %s", front_end_names[front], result.stderr_text);
                assert_int_equal(mode_of(scratch.workspace, "tool.sh") & 0111, 0111);
                assert_int_equal(mtime_of(scratch.workspace, "stamped"), 981173106);
                assert_int_equal(mode_of(scratch.workspace, "copied"), 0640);
                assert_int_equal(mtime_of(scratch.workspace, "copied"), 1009843200);
                assert_int_equal(mode_of(scratch.workspace, "tree/a"), 0604);
                assert_int_equal(mtime_of(scratch.workspace, "tree/a"), 1041379200);
                repository = test_path_join(scratch.workspace, "repo");
                assert_int_equal(mode_of(repository, "file"), 0755);
                free(repository);
                assert_int_equal(mode_of(scratch.workspace, "built"), 0700);
                assert_int_equal(mode_of(scratch.workspace, "installed"), 0750);
                test_process_result_clear(&result);
                {
                        const char *clean[] = { "sh", "-c", NULL, NULL };
                        char *command_line = NULL;

                        assert_true(asprintf(&command_line, "cd '%s' && rm -rf ./* ./.[!.]*", scratch.workspace) > 0);
                        clean[2] = command_line;
                        test_run(clean, NULL, &result);
                        test_process_result_clear(&result);
                        free(command_line);
                }
        }
        free(shell);
}

/* ----------------------------------------------------- standing in -- */

/* Waits for `pid` and returns waitpid()'s status. */
static int wait_status_of(pid_t pid)
{
        int status = 0;

        while (waitpid(pid, &status, 0) < 0)
                assert_int_equal(errno, EINTR);
        return status;
}

static pid_t start(front_end front, const char *const *command, int output_fd)
{
        const char *argv[48];
        size_t count = front_end_argv(front, argv);
        pid_t pid;

        for (size_t i = 0; command[i]; i++)
                argv[count++] = command[i];
        argv[count] = NULL;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                setpgid(0, 0);
                signal(SIGTERM, SIG_DFL);
                if (output_fd >= 0)
                        dup2(output_fd, 1);
                execv(argv[0], (char *const *) argv);
                _exit(255);
        }
        return pid;
}

/*
 * Under workspace-write the command runs as a child of run (or of the
 * launcher), which ends the way it ends: its exit status, its own 125, and
 * a death by signal seen as such, not as an exit status.
 */
static void test_stand_in_ends_like_the_command(void **state)
{
        static const front_end fronts[] = { FRONT_END_RUN, FRONT_END_LAUNCHER };

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (size_t f = 0; f < 2; f++) {
                const char *exit_seven[] = { "sh", "-c", "exit 7", NULL };
                const char *exit_125[] = { "sh", "-c", "exit 125", NULL };
                const char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
                int status;

                status = wait_status_of(start(fronts[f], exit_seven, -1));
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
                status = wait_status_of(start(fronts[f], exit_125, -1));
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 125);
                status = wait_status_of(start(fronts[f], killed, -1));
                if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
                        fail_msg("%s: a command killed by SIGTERM ended with status %#x", front_end_names[fronts[f]],
                                 status);
        }
}

/* A SIGKILL to run or the launcher, which cannot be passed on, still ends the command (it dies with them). */
static void test_sigkill_to_the_stand_in_ends_the_command(void **state)
{
        static const front_end fronts[] = { FRONT_END_RUN, FRONT_END_LAUNCHER };

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (size_t f = 0; f < 2; f++) {
                const char *sleeper[] = { "sleep", "1000", NULL };
                struct pollfd ready;
                char byte;
                int output[2];
                pid_t pid;

                assert_int_equal(pipe2(output, O_CLOEXEC), 0);
                pid = start(fronts[f], sleeper, output[1]);
                close(output[1]);
                usleep(200 * 1000);  /* no readiness signal from sleep: give it time to exec (the check below waits) */
                assert_int_equal(kill(pid, SIGKILL), 0);
                wait_status_of(pid);
                /* The sleep holds the pipe: its end of file means it is gone. */
                ready = (struct pollfd) { output[0], POLLIN, 0 };
                if (poll(&ready, 1, 10000) <= 0 || read(output[0], &byte, 1) != 0)
                        fail_msg("%s: the command outlived a SIGKILL to it", front_end_names[fronts[f]]);
                close(output[0]);
        }
}

/* The launcher's contract holds with the supervisor: exec failure is its line and 125. */
static void test_launcher_contract_with_a_writable_directory(void **state)
{
        const char *argv[] = { test_landlock_run_path(), "--ro", "/", "--rw", scratch.workspace, "--",
                               "dsh-sandbox-no-such-program", NULL };
        test_process_result result;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        test_run(argv, NULL, &result);
        assert_int_equal(result.exit_code, 125);
        assert_string_equal(result.stderr_text, "landlock-run: exec failed: No such file or directory\n");
        test_process_result_clear(&result);
}

/* The library leaves nothing behind: once the child is waited for, its supervisor thread is gone. */
static void test_library_leaves_no_thread_behind(void **state)
{
        const char *command[] = { "true", NULL };
        test_process_result result;
        char *before, *after;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        before = test_read_file("/proc/self/stat");
        run_library(command, &result);
        after = test_read_file("/proc/self/stat");
        /* Field 20 of /proc/self/stat is the thread count. */
        {
                long threads_before = 0, threads_after = 0;
                const char *fields_before = strrchr(before, ')'), *fields_after = strrchr(after, ')');

                assert_int_equal(sscanf(fields_before + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                                                           "%*d %*d %*d %ld",
                                        &threads_before), 1);
                assert_int_equal(sscanf(fields_after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                                                          "%*d %*d %*d %ld",
                                        &threads_after), 1);
                assert_int_equal(threads_before, threads_after);
        }
        free(before);
        free(after);
        test_process_result_clear(&result);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_every_form_through_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_every_form_through_the_launcher, setup, teardown),
                cmocka_unit_test_setup_teardown(test_every_form_through_the_library, setup, teardown),
                cmocka_unit_test_setup_teardown(test_path_flip_race, setup, teardown),
                cmocka_unit_test_setup_teardown(test_directory_symlink_swap_race, setup, teardown),
                cmocka_unit_test_setup_teardown(test_thread_with_its_own_cwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_thread_with_its_own_fd_table, setup, teardown),
                cmocka_unit_test_setup_teardown(test_nested_listener_is_busy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_under_a_supervisor_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_supervisor_death_fails_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_non_dumpable_command_is_refused_with_a_reason, setup, teardown),
                cmocka_unit_test_setup_teardown(test_host_without_process_vm_readv_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_descriptors_through_proc, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected_subpaths_refuse_metadata_by_name, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workspace_tools_keep_working, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stand_in_ends_like_the_command, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sigkill_to_the_stand_in_ends_the_command, setup, teardown),
                cmocka_unit_test_setup_teardown(test_launcher_contract_with_a_writable_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_library_leaves_no_thread_behind, setup, teardown),
        };

        /* The chown forms give files this group: joined here, inherited by every run (and its supervisor). */
        if (geteuid() == 0) {
                const gid_t groups[] = { getegid(), PROBE_GROUP };

                setgroups(2, groups);
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
