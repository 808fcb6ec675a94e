/* SPDX-License-Identifier: MIT */
/*
 * Signals reach the confined command.  `run` under bwrap passes SIGINT,
 * SIGTERM and SIGHUP — sent to it alone or, as the terminal does, to its
 * whole process group — on to the sandbox's process group: the command's
 * trap runs and its own status comes back, and a command without a trap
 * dies of the signal and `run` exits 128+N.  The same cases under Landlock
 * (run stands in for the command in both modes) and under an operator's runner command (a
 * runner in run's own process group) show that all behave alike.  Then:
 * a signal ignored on entry stays ignored, Ctrl-Z stops the sandboxed
 * command and SIGCONT continues it, SIGKILL to `run` leaves nothing of the
 * sandbox running, nor does SIGINT or SIGTERM as the sandbox starts, and
 * the library's process-group facts (a runner that names a process that is
 * not its child is never believed).
 *
 * No timing assertions: each case waits (within a generous bound) for a
 * file the command writes once its trap is installed, then signals.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/landlock.h"
#include "dsh-sandbox/provider.h"
#include "test-support.h"

/*
 * The trap is installed before the ready file ($1) appears; the trap ends the helper it started, with
 * SIGKILL: the helper may not have exec'd sleep yet (on a loaded machine), and until then it still
 * has the shell's trap handler, which would take a SIGTERM and lose it at the exec, leaving the
 * helper running for 1000 s after the test.
 */
#define TRAPPED_SCRIPT                                                                                         \
        "trap 'kill -KILL $helper 2>/dev/null; exit 3' INT TERM HUP; sleep 1000 >/dev/null 2>&1 & helper=$!; "  \
        ": > \"$1\"; wait"
#define UNTRAPPED_SCRIPT ": > \"$1\"; exec sleep 1000"

/* "runner-command" here: `env` as the operator's runner (it execs the command in place, in run's group). */
#define RUNNER_COMMAND_CONFIG "{\"runnerCommand\": [\"env\"], \"runnerFailureSignatures\": [\"env: \"]}"

static bool backend_works(const char *backend)
{
        if (strcmp(backend, "runner-command") == 0)
                return true;
        if (strcmp(backend, "bwrap") == 0)
                return test_bwrap_works();
        if (dsh_landlock_abi() < DSH_LANDLOCK_MINIMUM_ABI) {
                printf("# this kernel does not enforce Landlock ABI >= 3\n");
                return false;
        }
        return true;
}

struct scratch {
        char *root;
        char *workspace;   /* the command's writable root */
        char *cache;       /* the verdict cache, ours alone */
        char *config;      /* an empty config, so the user's never leaks in */
        char *ready;       /* written by the command once its trap is installed */
};

static void scratch_create(struct scratch *scratch)
{
        scratch->root = test_make_directory(NULL);
        scratch->workspace = test_path_join(scratch->root, "workspace");
        scratch->cache = test_path_join(scratch->root, "cache");
        scratch->config = test_path_join(scratch->root, "config.json");
        scratch->ready = test_path_join(scratch->workspace, "ready");
        assert_int_equal(mkdir(scratch->workspace, 0755), 0);
        test_write_file(scratch->config, "{}");
}

static void scratch_destroy(struct scratch *scratch)
{
        free(scratch->workspace);
        free(scratch->cache);
        free(scratch->config);
        free(scratch->ready);
        test_remove_tree(scratch->root);
}

/*
 * Starts `dsh-sandbox run --backend BACKEND` on `sh -c SCRIPT sh READY`, as a
 * shell starts a job: in a process group of its own (so a signal to the
 * group is what the terminal sends), with the signals at their defaults
 * (or SIGHUP ignored, as under nohup).  stdout and stderr go to `output_fd`
 * (-1: /dev/null).
 */
static pid_t start_run(const struct scratch *scratch, const char *backend, const char *script, int output_fd,
                       bool ignore_hangup)
{
        static const int defaults[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT };
        bool runner_command = strcmp(backend, "runner-command") == 0;
        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend", runner_command ? "auto" : backend,
                               "--mode", "workspace-write",
                               "--root", scratch->workspace, "--", "sh", "-c", script, "sh", scratch->ready, NULL };
        pid_t pid;

        if (runner_command)
                test_write_file(scratch->config, RUNNER_COMMAND_CONFIG);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int null_fd = open("/dev/null", O_RDWR);
                sigset_t none;

                setpgid(0, 0);
                for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
                        signal(defaults[i], SIG_DFL);
                if (ignore_hangup)
                        signal(SIGHUP, SIG_IGN);
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                dup2(null_fd, 0);
                dup2(output_fd >= 0 ? output_fd : null_fd, 1);
                dup2(output_fd >= 0 ? output_fd : null_fd, 2);
                setenv("XDG_CACHE_HOME", scratch->cache, 1);
                setenv("DSH_SANDBOX_CONFIG", scratch->config, 1);
                execv(argv[0], (char *const *) argv);
                _exit(255);
        }
        return pid;
}

/* Waits for `pid` and returns its exit status, or 128+N for signal N. */
static int wait_exit_code(pid_t pid)
{
        int status = 0;

        while (waitpid(pid, &status, 0) < 0)
                assert_int_equal(errno, EINTR);
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* Starts the run, waits until the command is ready, signals it (or its group), returns the run's exit status. */
static int signal_run(const char *backend, const char *script, int signal_number, bool to_group,
                      bool ignore_hangup)
{
        struct scratch scratch;
        pid_t pid;
        int exit_code;

        scratch_create(&scratch);
        pid = start_run(&scratch, backend, script, -1, ignore_hangup);
        if (!test_wait_for_file(scratch.ready)) {
                kill(pid, SIGKILL);
                wait_exit_code(pid);
                fail_msg("%s: the command never became ready", backend);
        }
        assert_int_equal(kill(to_group ? -pid : pid, signal_number), 0);
        if (ignore_hangup)
                assert_int_equal(kill(pid, SIGTERM), 0);  /* the ignored SIGHUP changed nothing: TERM ends it */
        exit_code = wait_exit_code(pid);
        scratch_destroy(&scratch);
        return exit_code;
}

static const char *const backends[] = { "bwrap", "landlock", "runner-command" };
static const int signals[] = { SIGINT, SIGTERM, SIGHUP };

/* The command's trap runs and its own status (3) comes back, whoever sent the signal. */
static void test_trap_runs_and_its_status_returns(void **state)
{
        (void) state;
        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
                if (!backend_works(backends[b]))
                        continue;
                for (size_t s = 0; s < 3; s++)
                        for (int to_group = 0; to_group < 2; to_group++) {
                                int exit_code = signal_run(backends[b], TRAPPED_SCRIPT, signals[s], to_group, false);

                                if (exit_code != 3)
                                        fail_msg("%s, %s to the %s: run exited %d, not the trap's 3", backends[b],
                                                 strsignal(signals[s]), to_group ? "group" : "process", exit_code);
                        }
        }
}

/* A command without a trap dies of the signal: run exits 128+N. */
static void test_untrapped_command_dies_of_the_signal(void **state)
{
        (void) state;
        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
                if (!backend_works(backends[b]))
                        continue;
                for (size_t s = 0; s < 3; s++) {
                        int exit_code = signal_run(backends[b], UNTRAPPED_SCRIPT, signals[s], false, false);

                        if (exit_code != 128 + signals[s])
                                fail_msg("%s, %s: run exited %d, not %d", backends[b], strsignal(signals[s]),
                                         exit_code, 128 + signals[s]);
                }
        }
}

/*
 * Ctrl-C typed at a real terminal: the kernel signals run's foreground
 * process group (the pty below is run's controlling terminal).  The
 * command's trap runs once and its status comes back; under bwrap nothing
 * but run could have received the signal.
 */
static void test_terminal_interrupt_reaches_the_trap(void **state)
{
        (void) state;
        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
                struct scratch scratch;
                int terminal = -1, exit_code;
                pid_t pid;

                if (!backend_works(backends[b]))
                        continue;
                scratch_create(&scratch);
                if (strcmp(backends[b], "runner-command") == 0)
                        test_write_file(scratch.config, RUNNER_COMMAND_CONFIG);
                pid = forkpty(&terminal, NULL, NULL, NULL);
                assert_true(pid >= 0);
                if (pid == 0) {
                        const char *argv[] = { test_dsh_sandbox_path(), "run", "--backend",
                                               strcmp(backends[b], "runner-command") == 0 ? "auto" : backends[b],
                                               "--mode", "workspace-write", "--root", scratch.workspace, "--", "sh",
                                               "-c", TRAPPED_SCRIPT, "sh", scratch.ready, NULL };

                        signal(SIGINT, SIG_DFL);
                        setenv("XDG_CACHE_HOME", scratch.cache, 1);
                        setenv("DSH_SANDBOX_CONFIG", scratch.config, 1);
                        execv(argv[0], (char *const *) argv);
                        _exit(255);
                }
                if (!test_wait_for_file(scratch.ready)) {
                        kill(pid, SIGKILL);
                        wait_exit_code(pid);
                        fail_msg("%s: the command never became ready", backends[b]);
                }
                assert_int_equal(write(terminal, "\x03", 1), 1);   /* VINTR */
                exit_code = wait_exit_code(pid);
                close(terminal);
                if (exit_code != 3)
                        fail_msg("%s, Ctrl-C at the terminal: run exited %d, not the trap's 3", backends[b],
                                 exit_code);
                scratch_destroy(&scratch);
        }
}

/* nohup's promise holds: a SIGHUP ignored when run started is ignored by the command too. */
static void test_ignored_hangup_stays_ignored(void **state)
{
        (void) state;
        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
                int exit_code;

                if (!backend_works(backends[b]))
                        continue;
                exit_code = signal_run(backends[b], UNTRAPPED_SCRIPT, SIGHUP, false, true);
                if (exit_code != 128 + SIGTERM)
                        fail_msg("%s: run exited %d: the ignored SIGHUP reached the command", backends[b], exit_code);
        }
}

/* The state letter of the process whose command line is `sleep DURATION`, or 0 when there is none. */
struct state_search {
        const char *duration;
        char state;
};

static bool note_state(const char *pid, char *command_line, ssize_t length, void *data)
{
        struct state_search *search = data;
        char stat_line[512];
        const char *fields;

        if (strcmp(command_line, "sleep") != 0 || strlen(command_line) + 1 >= (size_t) length ||
            strcmp(command_line + strlen(command_line) + 1, search->duration) != 0)
                return true;
        if (test_read_proc_file(pid, "stat", stat_line, sizeof(stat_line)) <= 0)
                return true;
        fields = strrchr(stat_line, ')');
        if (fields && fields[1] == ' ')
                search->state = fields[2];
        return search->state == 0;
}

static char sleep_state(const char *duration)
{
        struct state_search search = { duration, 0 };

        test_each_process(note_state, &search);
        return search.state;
}

/* Polls until the sandboxed `sleep DURATION` is (or is no longer) stopped. */
static bool wait_for_sleep_stopped(const char *duration, bool stopped)
{
        for (long waited = 0; waited < TEST_WAIT_BOUND_MS; waited += TEST_POLL_STEP_MS) {
                char state = sleep_state(duration);

                if (state && (state == 'T') == stopped)
                        return true;
                test_sleep_ms(TEST_POLL_STEP_MS);
        }
        return false;
}

/* Ctrl-Z stops the sandboxed command with run, SIGCONT continues both, and the command still answers SIGTERM. */
static void test_job_control_stops_the_command(void **state)
{
        struct scratch scratch;
        char duration[32], *script = NULL;
        int status = 0;
        pid_t pid;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        /* A duration no other process uses, to find this command's sleep among all processes. */
        snprintf(duration, sizeof(duration), "%d.5", 100000 + (int) getpid());
        assert_true(asprintf(&script,
                             "trap 'kill $helper 2>/dev/null; exit 3' TERM; sleep %s & helper=$!; "
                             /* Ready only once the sleep has exec'd: a child stopped before exec is not found by name. */
                             "until tr '\\0' ' ' < /proc/$helper/cmdline | grep -q '^sleep'; do :; done; "
                             ": > \"$1\"; wait",
                             duration) > 0);
        scratch_create(&scratch);
        pid = start_run(&scratch, "bwrap", script, -1, false);
        assert_true(test_wait_for_file(scratch.ready));
        assert_int_equal(kill(pid, SIGTSTP), 0);
        while (waitpid(pid, &status, WUNTRACED) < 0)
                assert_int_equal(errno, EINTR);
        assert_true(WIFSTOPPED(status));
        if (!wait_for_sleep_stopped(duration, true)) {
                kill(pid, SIGKILL);
                wait_exit_code(pid);
                fail_msg("run stopped, but the command it runs did not");
        }
        assert_int_equal(kill(pid, SIGCONT), 0);
        assert_true(wait_for_sleep_stopped(duration, false));
        assert_int_equal(kill(pid, SIGTERM), 0);
        assert_int_equal(wait_exit_code(pid), 3);
        free(script);
        scratch_destroy(&scratch);
}

/*
 * Every sandboxed process holds `output` (its stdout and stderr): its end of
 * file means they are all gone.  Waits for it within the bound; closes it.
 */
static void assert_sandbox_gone(int output, const char *what)
{
        char buffer[256];
        ssize_t length;

        for (;;) {
                struct pollfd ready = { output, POLLIN, 0 };

                if (poll(&ready, 1, TEST_WAIT_BOUND_MS) <= 0)
                        fail_msg("a sandboxed process outlived %s", what);
                length = read(output, buffer, sizeof(buffer));
                if (length == 0)
                        break;
                assert_true(length > 0 || errno == EINTR);
        }
        close(output);
}

/* SIGKILL cannot be passed on, but it leaves nothing behind: --die-with-parent takes the whole sandbox. */
static void test_sigkill_takes_the_sandbox_with_it(void **state)
{
        struct scratch scratch;
        int output[2];
        pid_t pid;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        scratch_create(&scratch);
        assert_int_equal(pipe2(output, O_CLOEXEC), 0);
        pid = start_run(&scratch, "bwrap", "sleep 1000 & : > \"$1\"; wait", output[1], false);
        close(output[1]);
        assert_true(test_wait_for_file(scratch.ready));
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(wait_exit_code(pid), 128 + SIGKILL);
        assert_sandbox_gone(output[0], "run's SIGKILL");
        scratch_destroy(&scratch);
}

/* Waits until `run` has started its runner (bwrap, a child of its own), or has exited; no pause between looks. */
static void wait_for_runner(pid_t run)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) run, (int) run);
        for (long long looks = 0;; looks++) {
                char *children = test_read_file(path);
                bool started = children && children[0] >= '0' && children[0] <= '9';
                siginfo_t info = { 0 };

                free(children);
                if (started)
                        return;
                if (waitid(P_PID, (id_t) run, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == run)
                        return;
                if (looks > 1000LL * TEST_WAIT_BOUND_MS)
                        fail_msg("run started no runner");
                if (looks % 1000 == 999)
                        test_sleep_ms(1);   /* a slow host: look on, without spinning for ever */
        }
}

/*
 * Sends `signal_number` to run once, as soon as its bwrap exists, and
 * returns run's status.  Once: a signal that landed while the sandbox's init
 * alone held the command's group (the init drops what it has no handler
 * for) would be lost, and run would still be running at the bound.
 */
static int signal_run_at_start(const struct scratch *scratch, int output, int signal_number)
{
        pid_t run = start_run(scratch, "bwrap", "echo $$ > \"$1\"; exec sleep 1000", output, false);
        int status = 0;
        long waited = 0;

        wait_for_runner(run);
        kill(run, signal_number);
        while (waitpid(run, &status, WNOHANG) == 0) {
                if (waited >= TEST_WAIT_BOUND_MS) {
                        kill(run, SIGKILL);
                        waitpid(run, &status, 0);
                        fail_msg("run, %s at its start: still running after the bound", strsignal(signal_number));
                }
                test_sleep_ms(TEST_POLL_STEP_MS);
                waited += TEST_POLL_STEP_MS;
        }
        return status;
}

/*
 * SIGINT or SIGTERM to run in the sandbox's first moments, 20 times.  The
 * sandbox's init makes the command's group and asks to die with bwrap only
 * some moments after it exists; a signal that then reached bwrap alone left
 * the init — and the command it went on to exec, which writes its pid into
 * the workspace — running for ever.  Now the sandbox ends: run dies of the
 * signal (the command never ran: not a runner failure, 125) or exits 128+N
 * (the command died of it), and nothing of the sandbox is left.
 */
static void test_signal_at_start_leaves_nothing_behind(void **state)
{
        static const int early_signals[] = { SIGINT, SIGTERM };

        (void) state;
        TEST_REQUIRE_BWRAP();
        for (int i = 0; i < 20; i++) {
                int signal_number = early_signals[i % 2], output[2], status;
                struct scratch scratch;

                scratch_create(&scratch);
                assert_int_equal(pipe2(output, O_CLOEXEC), 0);
                status = signal_run_at_start(&scratch, output[1], signal_number);
                close(output[1]);
                if (!(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) &&
                    !(WIFEXITED(status) && WEXITSTATUS(status) == 128 + signal_number))
                        fail_msg("run, %s at its start: status %#x, neither that signal nor exit %d",
                                 strsignal(signal_number), (unsigned) status, 128 + signal_number);
                assert_sandbox_gone(output[0], strsignal(signal_number));
                scratch_destroy(&scratch);
        }
}

/* ------------------------------------------------------------ library -- */

static dsh_provider *sole_backend_provider(const char *backend, const char *bwrap)
{
        const char *names[] = { backend, NULL };
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();

        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_backends(provider, names, &error), 0);
        if (bwrap)
                assert_int_equal(dsh_provider_set_bwrap_path(provider, bwrap, &error), 0);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        return provider;
}

static void spawn_trapped(dsh_provider *provider, const struct scratch *scratch, bool new_process_group,
                          dsh_child **child)
{
        const char *argv[] = { "sh", "-c", TRAPPED_SCRIPT, "sh", scratch->ready, NULL };
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;

        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = scratch->workspace;
        options.new_process_group = new_process_group;
        if (dsh_provider_spawn(provider, (char *const *) argv, &policy, &options, child, &error) < 0)
                fail_msg("spawn failed: %s", error.message);
}

static int wait_child(dsh_child *child)
{
        int status = 0;

        assert_int_equal(dsh_child_wait(child, &status), 0);
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/*
 * Under bwrap the runner leads its own group even when the caller did not
 * ask for one (the terminal's Ctrl-C must not reach it), and process_group
 * names the sandbox's: a session and group of its own, where a signal
 * reaches the command's trap.
 */
static void test_bwrap_child_names_the_sandbox_group(void **state)
{
        struct scratch scratch;
        dsh_child *child = NULL;
        dsh_provider *provider;

        (void) state;
        if (!test_bwrap_works()) {
                skip();
                return;
        }
        scratch_create(&scratch);
        provider = sole_backend_provider("bwrap", NULL);
        spawn_trapped(provider, &scratch, false, &child);
        assert_int_equal(getpgid(dsh_child_pid(child)), dsh_child_pid(child));
        assert_true(dsh_child_process_group(child) > 1);
        assert_int_not_equal(dsh_child_process_group(child), dsh_child_pid(child));
        assert_true(test_wait_for_file(scratch.ready));
        /* Once the command runs, the init has made its session (the record comes before that). */
        assert_int_equal(getsid(dsh_child_process_group(child)), dsh_child_process_group(child));
        assert_int_equal(kill(-dsh_child_process_group(child), SIGTERM), 0);
        assert_int_equal(wait_child(child), 3);
        dsh_child_free(child);
        dsh_provider_free(provider);
        scratch_destroy(&scratch);
}

/*
 * Under Landlock the child is the call's stand-in and the command its child
 * (docs/backends.md, "Landlock: nothing outlives its call"): the command leads
 * a group when asked to, which the stand-in is not in; else no group is
 * named and both share the caller's.  Either way a signal sent to the child
 * by pid reaches the command, and one sent to the group named reaches it too.
 */
static void test_landlock_child_leads_its_group_when_asked(void **state)
{
        struct scratch scratch;
        dsh_provider *provider;

        (void) state;
        if (!backend_works("landlock")) {
                skip();
                return;
        }
        scratch_create(&scratch);
        provider = sole_backend_provider("landlock", NULL);
        for (int asked = 0; asked < 2; asked++) {
                dsh_child *child = NULL;

                unlink(scratch.ready);
                spawn_trapped(provider, &scratch, asked, &child);
                assert_int_equal(getpgid(dsh_child_pid(child)), getpgid(0));
                if (asked) {
                        pid_t group = dsh_child_process_group(child);

                        assert_true(group > 1);
                        assert_int_not_equal(group, dsh_child_pid(child));
                        assert_int_equal(getpgid(group), group);   /* the command leads it */
                } else {
                        assert_int_equal(dsh_child_process_group(child), 0);
                }
                assert_true(test_wait_for_file(scratch.ready));
                assert_int_equal(kill(dsh_child_pid(child), SIGTERM), 0);
                assert_int_equal(wait_child(child), 3);
                dsh_child_free(child);
                /* The same through the group. */
                if (!asked)
                        continue;
                unlink(scratch.ready);
                spawn_trapped(provider, &scratch, asked, &child);
                assert_true(test_wait_for_file(scratch.ready));
                assert_int_equal(kill(-dsh_child_process_group(child), SIGTERM), 0);
                assert_int_equal(wait_child(child), 3);
                dsh_child_free(child);
        }
        dsh_provider_free(provider);
        scratch_destroy(&scratch);
}

/*
 * A runner's status record names the sandbox's init; a runner that names a
 * process that is not its child (pid 1, which kill(-1, ...) would turn into
 * every process; this test's own pid, whose group is the caller's) is not
 * believed: the group named is the runner's own, which it leads.
 */
static void test_runner_cannot_aim_signals_elsewhere(void **state)
{
        static const char *const claims[] = { "1", "$PPID" };
        struct scratch scratch;

        (void) state;
        scratch_create(&scratch);
        for (size_t i = 0; i < 2; i++) {
                char *fake = test_path_join(scratch.root, "bwrap-claims");
                char *text = NULL;
                dsh_child *child = NULL;
                dsh_provider *provider;

                assert_true(asprintf(&text,
                                     "#!/bin/sh\n"
                                     "fd=''\n"
                                     "while [ $# -gt 0 ]; do\n"
                                     "  case \"$1\" in\n"
                                     "    --json-status-fd) fd=$2; shift 2;;\n"
                                     "    --) shift; break;;\n"
                                     "    *) shift;;\n"
                                     "  esac\n"
                                     "done\n"
                                     "eval \"echo '{ \\\"child-pid\\\": '%s' }' >&$fd\"\n"
                                     "exec \"$@\"\n",
                                     claims[i]) > 0);
                test_write_file(fake, text);
                assert_int_equal(chmod(fake, 0755), 0);
                unlink(scratch.ready);
                provider = sole_backend_provider("bwrap", fake);
                spawn_trapped(provider, &scratch, false, &child);
                assert_int_equal(dsh_child_process_group(child), dsh_child_pid(child));
                assert_true(test_wait_for_file(scratch.ready));
                assert_int_equal(kill(dsh_child_pid(child), SIGTERM), 0);
                assert_int_equal(wait_child(child), 3);
                dsh_child_free(child);
                dsh_provider_free(provider);
                free(text);
                free(fake);
        }
        scratch_destroy(&scratch);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_trap_runs_and_its_status_returns),
                cmocka_unit_test(test_untrapped_command_dies_of_the_signal),
                cmocka_unit_test(test_terminal_interrupt_reaches_the_trap),
                cmocka_unit_test(test_ignored_hangup_stays_ignored),
                cmocka_unit_test(test_job_control_stops_the_command),
                cmocka_unit_test(test_sigkill_takes_the_sandbox_with_it),
                cmocka_unit_test(test_signal_at_start_leaves_nothing_behind),
                cmocka_unit_test(test_bwrap_child_names_the_sandbox_group),
                cmocka_unit_test(test_landlock_child_leads_its_group_when_asked),
                cmocka_unit_test(test_runner_cannot_aim_signals_elsewhere),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
