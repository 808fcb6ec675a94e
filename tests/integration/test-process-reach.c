/* SPDX-License-Identifier: MIT */
/*
 * What a command confined by Landlock can reach beyond files, on each of the
 * three Landlock paths (the library's in-process spawn, `dsh-sandbox run`'s
 * in-place exec, the `landlock-run` launcher):
 *  - capabilities: every set empty, the securebits locked, so that root
 *    inside cannot use a privilege (checked with a harmless one: raising its
 *    own priority) and an exec cannot regain one; a failure of any step of
 *    the drop refuses the command;
 *  - Landlock scopes (ABI 6): no signal to a process outside the sandbox, no
 *    connection to its abstract unix sockets; signals inside the sandbox and
 *    into it (the user's Ctrl-C) still arrive;
 *  - the probe report names the scopes in force and those the ABI lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "core/landlock.h"
#include "dsh-sandbox/provider.h"
#include "test-landlock.h"
#include "test-support.h"

typedef enum confined_path {
        PATH_SPAWN,      /* dsh_provider_spawn(): the restriction applied in the cloned child */
        PATH_RUN,        /* dsh-sandbox run --backend landlock: spawned, run stands in for it */
        PATH_LAUNCHER,   /* landlock-run --ro / --rw /dev/null -- ... */
} confined_path;

static const char *const path_names[] = { "library spawn", "dsh-sandbox run", "landlock-run" };
#define PATH_COUNT 3

static char *scratch;     /* a fresh directory per test, outside every grant */
static char *workspace;   /* scratch/ws: the policy's root (writable under workspace-write) */
static char *home;        /* scratch/home: HOME and the XDG directories of the CLI */

static int setup(void **state)
{
        (void) state;
        scratch = test_make_directory(NULL);
        workspace = test_path_join(scratch, "ws");
        home = test_path_join(scratch, "home");
        assert_int_equal(mkdir(workspace, 0755), 0);
        assert_int_equal(mkdir(home, 0755), 0);
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        free(workspace);
        free(home);
        test_remove_tree(scratch);
        scratch = workspace = home = NULL;
        return 0;
}

static void skip_without_scopes(void)
{
        int abi = dsh_landlock_abi();

        TEST_REQUIRE_LANDLOCK();
        if (abi < DSH_LANDLOCK_SCOPE_ABI) {
                printf("# SKIP: Landlock ABI %d has no scopes (ABI 6); the probe test covers the report\n", abi);
                skip();
        }
}

static const char *reach_probe(void)
{
        const char *path = getenv("REACH_PROBE_BIN");

        if (!path)
                fail_msg("REACH_PROBE_BIN is not set; run the tests through meson");
        return path;
}

static bool holds_capability(int capability)
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];

        assert_int_equal(syscall(SYS_capget, &header, data), 0);
        return data[CAP_TO_INDEX(capability)].effective & CAP_TO_MASK(capability);
}

/* ------------------------------------------------- confined processes -- */

typedef struct confined_process {
        confined_path path;
        pid_t pid;
        dsh_child *child;    /* PATH_SPAWN */
        int stdout_fd;       /* read end of the command's stdout */
} confined_process;

/* A provider whose sole backend is Landlock, or NULL (out of memory).  No cmocka: usable in forked children. */
static dsh_provider *landlock_provider(void)
{
        const char *backends[] = { "landlock", NULL };
        dsh_provider *provider = dsh_provider_new();

        if (provider && dsh_provider_set_backends(provider, backends, NULL) < 0) {
                dsh_provider_free(provider);
                return NULL;
        }
        return provider;
}

/*
 * Spawns `argv` through the library under `mode` rooted at the workspace, with
 * stdin from /dev/null and stdout to `stdout_fd` (-1: inherited).  Returns
 * dsh_provider_spawn()'s result.  No cmocka: usable in forked children.
 */
static int spawn_argv(dsh_mode mode, char *const *argv, int stdout_fd, dsh_child **child, dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_provider *provider = landlock_provider();
        dsh_policy policy = DSH_POLICY_INIT;
        int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int result = -ENOMEM;

        policy.mode = mode;
        policy.workspace_root = strdup(workspace);
        options.stdin_fd = null_fd;
        options.stdout_fd = stdout_fd;
        if (provider && policy.workspace_root && null_fd >= 0)
                result = dsh_provider_spawn(provider, argv, &policy, &options, child, error);
        if (null_fd >= 0)
                close(null_fd);
        dsh_policy_clear(&policy);
        dsh_provider_free(provider);
        return result;
}

/* The CLI runs with HOME and the XDG directories in the scratch home: nothing of the real user's is read or written. */
static void use_scratch_home(void)
{
        char *cache = test_path_join(home, ".cache"), *config = test_path_join(home, ".config");
        char *state = test_path_join(home, ".local-state");

        setenv("HOME", home, 1);
        setenv("XDG_CACHE_HOME", cache, 1);
        setenv("XDG_CONFIG_HOME", config, 1);
        setenv("XDG_STATE_HOME", state, 1);
        unsetenv("DSH_SANDBOX_CONFIG");
        free(cache);
        free(config);
        free(state);
}

/* Fills `argv` with the CLI or launcher command line that runs `sh -c script` under `mode`. */
static void command_line(confined_path path, const char *mode, const char *script, const char *argv[16])
{
        size_t count = 0;

        if (path == PATH_RUN) {
                count = test_run_command_prefix(argv, count, "landlock", mode, workspace);
        } else {
                argv[count++] = test_landlock_run_path();
                argv[count++] = "--ro";
                argv[count++] = "/";
                argv[count++] = "--rw";
                argv[count++] = "/dev/null";
                if (strcmp(mode, "workspace-write") == 0) {
                        argv[count++] = "--rw";
                        argv[count++] = workspace;
                }
        }
        argv[count++] = "--";
        argv[count++] = "sh";
        argv[count++] = "-c";
        argv[count++] = script;
        argv[count] = NULL;
}

/* A hook run in the forked child before it spawns or execs (e.g. a seccomp filter); may be NULL. */
typedef void (*pre_start_fn)(const void *data);

/*
 * Starts `sh -c script` confined by `path` under `mode`, stdout to a pipe
 * (process->stdout_fd), stdin from /dev/null, stderr inherited.
 */
static void confined_start(confined_path path, const char *mode, const char *script, confined_process *process)
{
        int out[2], null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        const char *argv[16];

        assert_true(null_fd >= 0);
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        *process = (confined_process) { path, -1, NULL, out[0] };
        if (path == PATH_SPAWN) {
                const char *shell[] = { "sh", "-c", script, NULL };
                dsh_mode policy_mode = strcmp(mode, "workspace-write") == 0 ? DSH_MODE_WORKSPACE_WRITE
                                                                            : DSH_MODE_READ_ONLY;
                dsh_error error = DSH_ERROR_INIT;

                if (spawn_argv(policy_mode, (char *const *) shell, out[1], &process->child, &error) < 0)
                        fail_msg("spawn failed: %s", error.message);
                process->pid = dsh_child_pid(process->child);
        } else {
                command_line(path, mode, script, argv);
                process->pid = fork();
                assert_true(process->pid >= 0);
                if (process->pid == 0) {
                        dup2(null_fd, 0);
                        dup2(out[1], 1);
                        use_scratch_home();
                        execv(argv[0], (char *const *) argv);
                        _exit(127);
                }
        }
        close(out[1]);
        close(null_fd);
}

/* The next line of the command's stdout without its newline (caller frees), or NULL at EOF. */
static char *confined_read_line(confined_process *process)
{
        char *line = NULL;
        size_t size = 0;
        FILE *buffer = open_memstream(&line, &size);
        bool any = false;
        char byte;
        ssize_t length;

        assert_non_null(buffer);
        while ((length = read(process->stdout_fd, &byte, 1)) != 0) {
                if (length < 0 && errno == EINTR)
                        continue;
                if (length < 0 || byte == '\n') {
                        any = any || length > 0;
                        break;
                }
                any = true;
                fputc(byte, buffer);
        }
        fclose(buffer);
        if (!any) {
                free(line);
                return NULL;
        }
        return line;
}

/* Reads the rest of stdout into *rest (may be NULL), reaps the command, returns its exit code (128+N). */
/* Waits for the command; returns its stdout (the caller frees it) and its exit code in `*exit_code`. */
static char *confined_finish(confined_process *process, int *exit_code)
{
        char *text = test_read_fd(process->stdout_fd);
        int status = 0;

        close(process->stdout_fd);
        if (process->path == PATH_SPAWN) {
                assert_int_equal(dsh_child_wait(process->child, &status), 0);
                dsh_child_free(process->child);
        } else {
                while (waitpid(process->pid, &status, 0) < 0)
                        assert_int_equal(errno, EINTR);
        }
        *exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        return text;
}

/* Runs `script` read-only through `path`; returns its stdout (caller frees), asserting exit 0. */
static char *run_confined(confined_path path, const char *script)
{
        confined_process process;
        char *output;
        int exit_code = -1;

        confined_start(path, "read-only", script, &process);
        output = confined_finish(&process, &exit_code);
        if (exit_code != 0)
                fail_msg("%s: `%s` exited %d (stdout: %s)", path_names[path], script, exit_code, output);
        return output;
}

/* ------------------------------------------------------- capabilities -- */

/* The hex value of `name:` in /proc/self/status text. */
static unsigned long long status_field(const char *status, const char *name)
{
        char key[32];
        const char *line;

        snprintf(key, sizeof(key), "%s:", name);
        line = strstr(status, key);
        if (!line)
                fail_msg("no %s line in: %s", name, status);
        return strtoull(line + strlen(key), NULL, 16);
}

#define LOCKED_SECUREBITS (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | \
                           SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
                           SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/*
 * Every capability set of the confined command is empty.  The bounding set
 * and the securebits can only be changed by a caller holding CAP_SETPCAP
 * (root): for anyone else they are left as they were, and no_new_privs keeps
 * an exec from using the bounding set anyway.
 */
static void test_capabilities_dropped(void **state)
{
        bool privileged = holds_capability(CAP_SETPCAP);
        char *script = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        /* Lowering one's niceness needs CAP_SYS_NICE: harmless to try, and proof of the privilege if it works. */
        assert_true(asprintf(&script, "grep ^Cap /proc/self/status; echo securebits=$('%s' securebits); "
                                      "echo nice=$(nice -n -5 nice 2>/dev/null)", reach_probe()) > 0);
        for (int path = 0; path < PATH_COUNT; path++) {
                char *output = run_confined((confined_path) path, script);
                const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapAmb", privileged ? "CapBnd" : NULL };
                int securebits = -1, niceness = -100;

                for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]) && sets[i]; i++)
                        if (status_field(output, sets[i]) != 0)
                                fail_msg("%s: %s is %llx, not empty", path_names[path], sets[i],
                                         status_field(output, sets[i]));
                assert_non_null(strstr(output, "\nsecurebits="));
                assert_non_null(strstr(output, "\nnice="));
                securebits = atoi(strstr(output, "\nsecurebits=") + strlen("\nsecurebits="));
                niceness = atoi(strstr(output, "\nnice=") + strlen("\nnice="));
                if (privileged && (securebits & LOCKED_SECUREBITS) != LOCKED_SECUREBITS)
                        fail_msg("%s: securebits %#x, not locked (%#x)", path_names[path], (unsigned) securebits,
                                 (unsigned) LOCKED_SECUREBITS);
                if (niceness < getpriority(PRIO_PROCESS, 0))
                        fail_msg("%s: the confined command raised its priority to %d", path_names[path], niceness);
                free(output);
        }
        free(script);
}

/*
 * A process holding CAP_SETPCAP only in its permitted set (not effective)
 * still gets an empty bounding set: the drop raises it first.
 */
static int spawn_with_setpcap_only_permitted(void)
{
        static const char *const argv[] = { "cat", "/proc/self/status", NULL };
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];
        dsh_child *child = NULL;
        char output[16384];
        size_t used = 0;
        ssize_t length;
        int out[2], status = 0;

        if (syscall(SYS_capget, &header, data) < 0)
                return 90;
        data[CAP_TO_INDEX(CAP_SETPCAP)].effective &= ~CAP_TO_MASK(CAP_SETPCAP);
        if (syscall(SYS_capset, &header, data) < 0 || holds_capability(CAP_SETPCAP))
                return 91;
        if (pipe2(out, O_CLOEXEC) < 0 || spawn_argv(DSH_MODE_READ_ONLY, (char *const *) argv, out[1], &child, NULL) < 0)
                return 92;
        close(out[1]);
        while (used < sizeof(output) - 1 && (length = read(out[0], output + used, sizeof(output) - 1 - used)) > 0)
                used += (size_t) length;
        output[used] = '\0';
        if (dsh_child_wait(child, &status) < 0 || status != 0)
                return 93;
        dsh_child_free(child);
        if (!strstr(output, "CapBnd:\t0000000000000000") || !strstr(output, "CapEff:\t0000000000000000") ||
            !strstr(output, "CapPrm:\t0000000000000000"))
                return 94;
        return 0;
}

static void test_setpcap_raised_from_permitted(void **state)
{
        int status = 0;
        pid_t pid;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        if (!holds_capability(CAP_SETPCAP)) {
                printf("# SKIP: the test process holds no CAP_SETPCAP to set aside\n");
                skip();
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(spawn_with_setpcap_only_permitted());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * An ordinary user cannot touch the bounding set or the securebits; the
 * command must still run, with an ambient capability it was handed cleared.
 * Needs root to become `nobody` (setpriv).
 */
static void test_unprivileged_caller(void **state)
{
        static const char *const setpriv[] = { "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                               "--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service",
                                               "env", NULL };
        const char *launcher[] = { test_landlock_run_path(), "--ro", "/", "--", "cat", "/proc/self/status", NULL };
        const char *cli[] = { test_dsh_sandbox_path(), "run", "--backend", "landlock", "--mode", "read-only",
                              "--root", "/", "--", "cat", "/proc/self/status", NULL };
        const char *const *commands[] = { launcher, cli };
        const char *const environment[] = { "HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent/config",
                                             "XDG_STATE_HOME=/nonexistent/state", "XDG_CACHE_HOME=/nonexistent/cache",
                                             NULL };

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
                printf("# SKIP: becoming nobody needs root and setpriv (util-linux)\n");
                skip();
        }
        for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
                const char *argv[32];
                test_process_result result;
                size_t count = 0;

                for (size_t i = 0; setpriv[i]; i++)
                        argv[count++] = setpriv[i];
                for (size_t i = 0; environment[i]; i++)
                        argv[count++] = environment[i];
                for (size_t i = 0; commands[c][i]; i++)
                        argv[count++] = commands[c][i];
                argv[count] = NULL;
                test_run(argv, NULL, &result);
                if (result.exit_code != 0)
                        fail_msg("%s as nobody: exit %d: %s", commands[c][0], result.exit_code, result.stderr_text);
                assert_true(test_contains(result.stdout_text, "Uid:\t65534"));
                assert_int_equal(status_field(result.stdout_text, "CapAmb"), 0);
                assert_int_equal(status_field(result.stdout_text, "CapInh"), 0);
                assert_int_equal(status_field(result.stdout_text, "CapPrm"), 0);
                assert_int_equal(status_field(result.stdout_text, "CapEff"), 0);
                test_process_result_clear(&result);
        }
}

/* ------------------------------------------------ a step that fails -- */

struct refused_step {
        const char *name;
        int prctl_option;   /* the prctl option refused, or -1: capset() itself */
        bool privileged;    /* only root (CAP_SETPCAP) takes this step */
};

static const struct refused_step refused_steps[] = {
        { "clearing the ambient set", PR_CAP_AMBIENT, false },
        { "dropping the bounding set", PR_CAPBSET_DROP, true },
        { "locking the securebits", PR_SET_SECUREBITS, true },
        { "capset", -1, false },
};

/* In a forked child: from now on the step fails with EPERM, as a hostile LSM or seccomp profile could make it. */
static void refuse_step(const void *data)
{
        const struct refused_step *step = data;
        scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
        int result;

        if (!filter)
                _exit(80);
        if (step->prctl_option < 0)
                result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(capset), 0);
        else
                result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, (scmp_datum_t) step->prctl_option));
        if (result < 0 || seccomp_load(filter) < 0)
                _exit(81);
        seccomp_release(filter);
}

/* Library spawn in a forked child with the step refused: SANDBOX_UNAVAILABLE, nothing spawned. */
static int spawn_with_refused_step(const struct refused_step *step, const char *marker)
{
        const char *argv[] = { "touch", marker, NULL };
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;

        refuse_step(step);
        if (spawn_argv(DSH_MODE_WORKSPACE_WRITE, (char *const *) argv, -1, &child, &error) == 0)
                return 91;
        if (error.code != DSH_ERROR_SANDBOX_UNAVAILABLE || !strstr(error.message, "cannot apply the sandbox"))
                return 92;
        return 0;
}

/* The CLI or the launcher exec'd in a forked child with the step refused; returns its exit code, stderr in *text. */
static int exec_with_refused_step(confined_path path, const struct refused_step *step, const char *script,
                                  char **text)
{
        int errors[2], status = 0;
        const char *argv[16];
        char chunk[512];
        size_t size = 0;
        FILE *buffer = open_memstream(text, &size);
        ssize_t length;
        pid_t pid;

        assert_non_null(buffer);
        command_line(path, "workspace-write", script, argv);
        assert_int_equal(pipe2(errors, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(errors[1], 2);
                use_scratch_home();
                refuse_step(step);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        close(errors[1]);
        while ((length = read(errors[0], chunk, sizeof(chunk))) > 0 || (length < 0 && errno == EINTR))
                if (length > 0)
                        fwrite(chunk, 1, (size_t) length, buffer);
        fclose(buffer);
        close(errors[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Any step of the capability drop that fails refuses the command: it never
 * runs (checked on disk: it would have created a file in its writable root),
 * the spawn reports SANDBOX_UNAVAILABLE, the CLI and the launcher exit 125.
 */
static void test_failed_step_fails_closed(void **state)
{
        bool privileged = holds_capability(CAP_SETPCAP);
        char *marker = test_path_join(workspace, "ran");
        char *script = NULL;

        (void) state;
        TEST_REQUIRE_LANDLOCK();
        assert_true(asprintf(&script, "touch '%s'", marker) > 0);
        for (size_t i = 0; i < sizeof(refused_steps) / sizeof(refused_steps[0]); i++) {
                const struct refused_step *step = &refused_steps[i];
                char *stderr_text = NULL;
                int status = 0, exit_code;
                pid_t pid;

                if (step->privileged && !privileged) {
                        printf("# %s: not taken without CAP_SETPCAP, nothing to refuse\n", step->name);
                        continue;
                }
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0)
                        _exit(spawn_with_refused_step(step, marker));
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        fail_msg("library spawn, %s refused: status %#x", step->name, status);
                assert_false(test_path_exists(marker));

                exit_code = exec_with_refused_step(PATH_LAUNCHER, step, script, &stderr_text);
                assert_int_equal(exit_code, 125);
                assert_string_equal(stderr_text,
                                    "landlock-run: landlock ruleset error: cannot drop capabilities: "
                                    "Operation not permitted\n");
                assert_false(test_path_exists(marker));
                free(stderr_text);

                exit_code = exec_with_refused_step(PATH_RUN, step, script, &stderr_text);
                if (exit_code != 125)
                        fail_msg("dsh-sandbox run, %s refused: exit %d: %s", step->name, exit_code, stderr_text);
                assert_true(test_contains(stderr_text, "SANDBOX_UNAVAILABLE"));
                assert_false(test_path_exists(marker));
                free(stderr_text);
        }
        free(script);
        free(marker);
}

/* ------------------------------------------------------------- scopes -- */

static pid_t start_sleeper(void)
{
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                execlp("sleep", "sleep", "1000", (char *) NULL);
                _exit(127);
        }
        return pid;
}

static void stop_sleeper(pid_t pid)
{
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* A process outside the sandbox cannot be signalled from inside: EPERM, and it is still alive afterwards. */
static void test_signal_outside_refused(void **state)
{
        (void) state;
        skip_without_scopes();
        for (int path = 0; path < PATH_COUNT; path++) {
                pid_t sleeper = start_sleeper();
                char *script = NULL, *output;

                assert_true(asprintf(&script, "'%s' signal %d %d", reach_probe(), (int) sleeper, SIGTERM) > 0);
                output = run_confined((confined_path) path, script);
                if (strcmp(output, "EPERM\n") != 0)
                        fail_msg("%s: signal to a process outside: %s", path_names[path], output);
                assert_int_equal(waitpid(sleeper, NULL, WNOHANG), 0);   /* not dead, not even a zombie */
                stop_sleeper(sleeper);
                free(output);
                free(script);
        }
}

/* Inside the sandbox, signals work: a shell still kills its own background job. */
static void test_signal_own_children(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        for (int path = 0; path < PATH_COUNT; path++) {
                char *output = run_confined((confined_path) path, "sleep 1000 & kill $!; wait $! 2>/dev/null; echo $?");

                if (strcmp(output, "143\n") != 0)
                        fail_msg("%s: killing its own child: %s", path_names[path], output);
                free(output);
        }
}

/*
 * Ctrl-C still reaches the command: a signal sent from outside the sandbox
 * into it arrives, its trap runs and its own status comes back.
 */
static void test_signal_from_outside_arrives(void **state)
{
        (void) state;
        TEST_REQUIRE_LANDLOCK();
        /*
         * A SIGINT ignored when this test started (a script's background job,
         * nohup) stays ignored for every path's command, and a non-interactive
         * shell cannot trap what it was started ignoring: the trap would be
         * silently lost and the sleep would hold stdout open forever.
         */
        signal(SIGINT, SIG_DFL);
        for (int path = 0; path < PATH_COUNT; path++) {
                confined_process process;
                char *line, *rest = NULL;
                int exit_code = -1;

                /* SIGKILL for the helper: one that has not exec'd sleep yet would lose a SIGTERM to the trap
                 * handler it inherited from the shell, and outlive the test. */
                confined_start((confined_path) path, "read-only",
                               "trap 'kill -KILL $!; echo trapped; exit 3' INT; sleep 1000 & echo ready; wait", &process);
                line = confined_read_line(&process);
                assert_non_null(line);
                assert_string_equal(line, "ready");
                assert_int_equal(kill(process.pid, SIGINT), 0);
                rest = confined_finish(&process, &exit_code);
                assert_int_equal(exit_code, 3);
                assert_string_equal(rest, "trapped\n");
                free(line);
                free(rest);
        }
}

/* A listening abstract unix socket named "\0name" in the test process; returns its fd. */
static int listen_abstract(const char *name)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        memcpy(address.sun_path + 1, name, strlen(name));
        assert_int_equal(bind(fd, (struct sockaddr *) &address,
                              (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))), 0);
        assert_int_equal(listen(fd, 8), 0);
        return fd;
}

/*
 * An abstract socket bound outside the sandbox cannot be connected to from
 * inside, and since the supervisor performs every connect (it is outside
 * every domain, so Landlock's scope cannot apply to it) one bound inside is
 * refused too: EACCES both, refused rather than scoped (docs/security.md).
 */
static void test_abstract_socket_outside_refused(void **state)
{
        char name[64], *script = NULL;
        int listener;

        (void) state;
        skip_without_scopes();
        snprintf(name, sizeof(name), "dsh-sandbox-test-%d", (int) getpid());
        listener = listen_abstract(name);
        assert_true(asprintf(&script, "'%s' connect-abstract %s; '%s' own-abstract", reach_probe(), name,
                             reach_probe()) > 0);
        for (int path = 0; path < PATH_COUNT; path++) {
                char *output = run_confined((confined_path) path, script);

                if (strcmp(output, "EACCES\nEACCES\n") != 0)
                        fail_msg("%s: abstract sockets outside / inside: %s", path_names[path], output);
                free(output);
        }
        close(listener);
        free(script);
}

/* ------------------------------------------------------- probe report -- */

static void assert_strv(char *const *actual, const char *const *expected)
{
        size_t count = 0;

        for (; expected[count]; count++) {
                assert_non_null(actual);
                assert_non_null(actual[count]);
                assert_string_equal(actual[count], expected[count]);
        }
        if (actual)
                assert_null(actual[count]);
}

/* The report names the scopes in force on this ABI and those it lacks, without changing the enforcement. */
static void test_probe_reports_scopes(void **state)
{
        static const char *const all[] = { "abstract-unix-socket", "signal", NULL };
        static const char *const none[] = { NULL };
        dsh_probe_report report = DSH_PROBE_REPORT_INIT;
        dsh_provider *provider = landlock_provider();
        int abi = dsh_landlock_abi();

        (void) state;
        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), NULL), 0);
        /* Protected subpaths make Landlock partial on their own (test-protected-subpaths.c): off here. */
        assert_int_equal(dsh_provider_set_protected_subpaths(provider, NULL, false, NULL), 0);
        assert_int_equal(dsh_provider_probe(provider, &report, NULL), 0);
        assert_int_equal(report.landlock_abi, abi);
        assert_strv(report.landlock_scopes, abi >= DSH_LANDLOCK_SCOPE_ABI ? all : none);
        assert_strv(report.landlock_scopes_missing, abi >= DSH_LANDLOCK_SCOPE_ABI ? none : all);
        for (size_t i = 0; i < report.backend_count; i++)
                if (strcmp(report.backends[i].name, "landlock") == 0 && report.backends[i].usable)
                        assert_int_equal(report.backends[i].enforcement, dsh_landlock_enforcement(abi));
        dsh_probe_report_clear(&report);
        dsh_provider_free(provider);
}

/* On a kernel without Landlock (simulated), both scopes are reported missing, in text and JSON. */
static void test_probe_reports_missing_scopes(void **state)
{
        const char *json[] = { getenv("NO_LANDLOCK_EXEC_BIN"), test_dsh_sandbox_path(), "probe", "--json",
                               "--backend", "landlock", NULL };
        const char *text[] = { getenv("NO_LANDLOCK_EXEC_BIN"), test_dsh_sandbox_path(), "probe", "--backend",
                               "landlock", NULL };
        char *cache = NULL, *config = NULL;
        const char *environment[3] = { NULL, NULL, NULL };
        test_process_result result;

        (void) state;
        assert_non_null(json[0]);
        assert_true(asprintf(&cache, "XDG_CACHE_HOME=%s/cache", home) > 0);
        assert_true(asprintf(&config, "XDG_CONFIG_HOME=%s/config", home) > 0);
        environment[0] = cache;
        environment[1] = config;
        test_run(json, environment, &result);
        assert_true(test_contains(result.stdout_text, "\"landlockScopes\":[],"
                                                      "\"landlockScopesMissing\":[\"abstract-unix-socket\",\"signal\"]"));
        test_process_result_clear(&result);
        test_run(text, environment, &result);
        assert_true(test_contains(result.stdout_text, "\nlandlock scopes none (this kernel's Landlock ABI cannot "
                                                      "scope: abstract-unix-socket, signal)\n"));
        test_process_result_clear(&result);
        free(cache);
        free(config);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_capabilities_dropped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_setpcap_raised_from_permitted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unprivileged_caller, setup, teardown),
                cmocka_unit_test_setup_teardown(test_failed_step_fails_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signal_outside_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signal_own_children, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signal_from_outside_arrives, setup, teardown),
                cmocka_unit_test_setup_teardown(test_abstract_socket_outside_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_probe_reports_scopes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_probe_reports_missing_scopes, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
