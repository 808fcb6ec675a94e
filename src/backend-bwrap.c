/* SPDX-License-Identifier: MIT */
/*
 * The bwrap (bubblewrap) backend.
 *
 * Profile (SYSTEM.md §3, the upstream one, then what we add):
 *   bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent
 *         --new-session --cap-drop ALL [--tmpfs /tmp --bind WS WS [--bind ROOT ROOT]...]
 *         [--json-status-fd N] -- ARGV...
 *
 * Every host path is visible read-only; workspace-write rebinds the workspace
 * and each extra root read-write and gives the command a private tmpfs on
 * /tmp (its temp area: writable, but nothing written there reaches the host).
 * A denied write fails with EROFS, bwrap's dialect "read-only file system".
 *
 * Beyond the upstream profile, each for a stated reason:
 *   --new-session   the command gets no controlling terminal, so it cannot
 *                   push keystrokes into the user's shell with TIOCSTI (a
 *                   command typed that way would run after ours, unconfined);
 *   --json-status-fd (spawn only) bwrap reports out of band whether the
 *                   command was exec'd at all: a failure before exec is a
 *                   runner failure, never the command's own exit status, and
 *                   a confined child cannot forge that channel (bwrap closes
 *                   it before exec);
 *   fds             dsh_provider_spawn() closes every fd above 2 before
 *                   exec'ing bwrap (bwrap itself passes inherited fds through
 *                   to the command: a writable fd would let it write a file
 *                   the policy denies).
 * The private PID namespace with its own /proc (upstream) means /proc/1/root
 * and /proc/PID/cwd name only sandboxed processes: no path back to a host
 * process's writable view.
 *   --cap-drop ALL  started by root, bwrap keeps the caller's capabilities
 *                   for the command: with CAP_SYS_ADMIN it could simply
 *                   `mount -o remount,rw /` and write anywhere, with
 *                   CAP_MKNOD create a disk's device node in the private
 *                   /dev and write it raw.  Dropping them all is what makes
 *                   the read-only binds hold for root (the usual case in a
 *                   container).
 *
 * The bwrap binary is never taken from a place the confined command (or a
 * checked-out repository) could have written: see dsh_bwrap_find().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "path.h"
#include "spawn.h"

#define BWRAP_TEMP_AREA "/tmp"
#define BWRAP_FATAL_SIGNATURE "bwrap: "
#define BWRAP_DENIAL_SIGNATURE "read-only file system"

/* Where a distribution installs bwrap, in order of preference.  Root-owned
 * system directories: an unprivileged command cannot plant a binary there. */
static const char *const trusted_bwrap_paths[] = {
        "/usr/bin/bwrap",
        "/usr/local/bin/bwrap",
        "/bin/bwrap",
        NULL,
};

/* Owned by root and writable by nobody else: what no confined command can replace. */
static bool owned_by_root_only(const struct stat *status)
{
        return status->st_uid == 0 && !(status->st_mode & (S_IWGRP | S_IWOTH));
}

static bool ancestors_owned_by_root_only(const char *canonical)
{
        char directory[PATH_MAX];
        struct stat status;
        char *slash;

        if (strlen(canonical) >= sizeof(directory))
                return false;
        strcpy(directory, canonical);
        while ((slash = strrchr(directory, '/'))) {
                if (slash == directory)
                        return stat("/", &status) == 0 && owned_by_root_only(&status);
                *slash = '\0';
                if (stat(directory, &status) < 0 || !owned_by_root_only(&status))
                        return false;
        }
        return false;
}

/*
 * The runner must be a file that no confined command could have written:
 * the canonical binary and every directory above it are owned by root and
 * writable by root alone (so /tmp, ~/.local/bin or a checkout never
 * qualify).  Otherwise a workspace-write call covering that directory could
 * replace it, and the next call — read-only or not — would run the
 * replacement unconfined.  Returns the canonical path, or NULL.
 */
char *dsh_bwrap_trusted_binary(const char *path)
{
        char *canonical = realpath(path, NULL);
        struct stat status;

        if (!canonical)
                return NULL;
        if (stat(canonical, &status) == 0 && S_ISREG(status.st_mode) && owned_by_root_only(&status) &&
            access(canonical, X_OK) == 0 && ancestors_owned_by_root_only(canonical))
                return canonical;
        free(canonical);
        return NULL;
}

/* bwrap in one PATH entry, when that entry is absolute and the binary trusted. */
static char *bwrap_in_path_entry(const char *entry, size_t length)
{
        char candidate[PATH_MAX];

        if (length == 0 || entry[0] != '/' || length + sizeof("/bwrap") > sizeof(candidate))
                return NULL;
        memcpy(candidate, entry, length);
        memcpy(candidate + length, "/bwrap", sizeof("/bwrap"));
        return dsh_bwrap_trusted_binary(candidate);
}

char *dsh_bwrap_find(const dsh_provider *provider, char **reason)
{
        const char *search = getenv("PATH");

        *reason = NULL;
        if (provider->bwrap_path) {
                /* Named explicitly by the caller (the harness's own environment): its word is taken. */
                if (access(provider->bwrap_path, X_OK) == 0)
                        return strdup(provider->bwrap_path);
                if (asprintf(reason, "the configured bwrap %s is not executable: %s", provider->bwrap_path,
                             strerror(errno)) < 0)
                        *reason = NULL;
                return NULL;
        }
        for (const char *const *path = trusted_bwrap_paths; *path; path++) {
                char *found = dsh_bwrap_trusted_binary(*path);

                if (found)
                        return found;
        }
        while (search && *search) {
                const char *end = strchrnul(search, ':');
                char *found = bwrap_in_path_entry(search, (size_t) (end - search));

                if (found)
                        return found;
                search = *end ? end + 1 : end;
        }
        *reason = strdup("bubblewrap is not installed where it can be trusted (no root-owned bwrap in /usr/bin, "
                         "/usr/local/bin, /bin or PATH): install the bubblewrap package, or name the binary with "
                         "$DSH_SANDBOX_BWRAP");
        return NULL;
}

/*
 * Per call, in depth: even a trusted bwrap must not lie inside what this call
 * may write (a root user can make /usr a workspace), or the command of this
 * call could replace the runner of the next.
 */
static int check_runner_outside_policy(const char *bwrap, const dsh_policy *policy, dsh_error *error)
{
        char detail[PATH_MAX + 128];
        bool inside;

        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return 0;  /* read-only writes nothing: no root can be planted by this call */
        inside = dsh_path_is_beneath(bwrap, BWRAP_TEMP_AREA) || dsh_path_is_beneath(bwrap, policy->workspace_root);
        for (char **root = policy->additional_writable_roots; !inside && root && *root; root++)
                inside = dsh_path_is_beneath(bwrap, *root);
        if (!inside)
                return 0;
        snprintf(detail, sizeof(detail), "refusing the bwrap at %s: it lies inside a root this call may write",
                 bwrap);
        return dsh_error_set_unavailable(error, policy->mode, detail);
}

/*
 * The profile, up to and including "--"; `status_fd` >= 0 adds --json-status-fd.
 * `shielded` paths (beneath the writable binds) are bound read-only last, so
 * they cover what the writable binds exposed.
 */
static int append_profile(char ***argv, const char *bwrap, const dsh_policy *policy, char *const *shielded,
                          int status_fd)
{
        static const char *const fixed[] = {
                "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL", NULL,
        };
        char number[16];

        if (dsh_strv_append(argv, bwrap) < 0)
                return -ENOMEM;
        for (const char *const *word = fixed; *word; word++)
                if (dsh_strv_append(argv, *word) < 0)
                        return -ENOMEM;
        if (policy->mode == DSH_MODE_WORKSPACE_WRITE) {
                /* The tmpfs first: a workspace beneath /tmp is then bound on top of it, not hidden by it. */
                if (dsh_strv_append(argv, "--tmpfs") < 0 || dsh_strv_append(argv, BWRAP_TEMP_AREA) < 0 ||
                    dsh_strv_append(argv, "--bind") < 0 || dsh_strv_append(argv, policy->workspace_root) < 0 ||
                    dsh_strv_append(argv, policy->workspace_root) < 0)
                        return -ENOMEM;
                for (char **root = policy->additional_writable_roots; root && *root; root++)
                        if (dsh_strv_append(argv, "--bind") < 0 || dsh_strv_append(argv, *root) < 0 ||
                            dsh_strv_append(argv, *root) < 0)
                                return -ENOMEM;
                for (char *const *path = shielded; path && *path; path++)
                        if (dsh_strv_append(argv, "--ro-bind") < 0 || dsh_strv_append(argv, *path) < 0 ||
                            dsh_strv_append(argv, *path) < 0)
                                return -ENOMEM;
        }
        if (status_fd >= 0) {
                snprintf(number, sizeof(number), "%d", status_fd);
                if (dsh_strv_append(argv, "--json-status-fd") < 0 || dsh_strv_append(argv, number) < 0)
                        return -ENOMEM;
        }
        return dsh_strv_append(argv, "--");
}

static int build_argv(char ***argv, const char *bwrap, const dsh_policy *policy, char *const *shielded,
                      int status_fd, char *const *command)
{
        int result = append_profile(argv, bwrap, policy, shielded, status_fd);

        for (; result == 0 && *command; command++)
                result = dsh_strv_append(argv, *command);
        return result;
}

static int set_dialect(dsh_confined_argv *out)
{
        static const char *const fatal[] = { BWRAP_FATAL_SIGNATURE, NULL };

        out->enforcement = DSH_ENFORCEMENT_FULL;
        if (dsh_strv_append(&out->denial_signatures, BWRAP_DENIAL_SIGNATURE) < 0)
                return -ENOMEM;
        out->backend = strdup("bwrap");
        if (!out->backend)
                return -ENOMEM;
        return dsh_confined_argv_add_rule(out, NULL, 0, fatal, NULL);
}

/* Resolves the runner for one call: the trusted lookup, then the per-call check. */
static char *runner_for_call(dsh_provider *provider, const dsh_policy *policy, dsh_error *error)
{
        char *reason = NULL;
        char *bwrap = dsh_bwrap_find(provider, &reason);

        if (!bwrap) {
                dsh_error_set_unavailable(error, policy->mode, reason ? reason : "bwrap cannot be found");
                free(reason);
                return NULL;
        }
        if (!provider->bwrap_path && check_runner_outside_policy(bwrap, policy, error) < 0) {
                free(bwrap);
                return NULL;
        }
        return bwrap;
}

/*
 * The sandbox's own files beneath this call's writable binds (see
 * dsh_provider_set_protected_paths): each must exist to be bound read-only
 * over, so a missing one is created now, as an empty private directory —
 * otherwise the command could create it, and its contents, itself.
 */
static int shield_protected_paths(dsh_provider *provider, const dsh_policy *policy, char ***shielded,
                                  dsh_error *error)
{
        int result = dsh_provider_shielded_paths(provider, policy, NULL, shielded, error);

        for (char **path = *shielded; result == 0 && path && *path; path++) {
                if (access(*path, F_OK) == 0)
                        continue;
                result = dsh_path_make_directories(*path, 0700);
                if (result < 0) {
                        dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, -result,
                                      "cannot create \"%s\" to protect it from the command: %s", *path,
                                      strerror(-result));
                        dsh_strv_free(*shielded);
                        *shielded = NULL;
                }
        }
        return result;
}

static int bwrap_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                         dsh_confined_argv *out, dsh_error *error)
{
        dsh_autofree char *bwrap = runner_for_call(provider, policy, error);
        char **shielded = NULL;
        int result;

        if (!bwrap)
                return -ENOSYS;
        result = shield_protected_paths(provider, policy, &shielded, error);
        if (result < 0)
                return result;
        result = build_argv(&out->argv, bwrap, policy, shielded, -1, argv);
        dsh_strv_free(shielded);
        if (result < 0 || set_dialect(out) < 0) {
                dsh_confined_argv_clear(out);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        return 0;
}

/* ------------------------------------------------------------- diagnosis -- */

static bool sysctl_equals(const char *path, const char *value)
{
        char buffer[32] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t length;

        if (fd < 0)
                return false;
        length = read(fd, buffer, sizeof(buffer) - 1);
        close(fd);
        if (length <= 0)
                return false;
        buffer[length] = '\0';
        buffer[strcspn(buffer, "\n")] = '\0';
        return strcmp(buffer, value) == 0;
}

/* Names the host knob that blocks user namespaces, when one visibly does. */
static const char *userns_blocker(void)
{
        if (sysctl_equals("/proc/sys/kernel/unprivileged_userns_clone", "0"))
                return "the sysctl kernel.unprivileged_userns_clone is 0";
        if (sysctl_equals("/proc/sys/user/max_user_namespaces", "0"))
                return "the sysctl user.max_user_namespaces is 0";
        if (sysctl_equals("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"))
                return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns "
                       "is 1; give bwrap an AppArmor profile that allows userns)";
        return NULL;
}

static char *first_runner_line(const char *text)
{
        const char *line = text ? strstr(text, BWRAP_FATAL_SIGNATURE) : NULL;

        if (!line && text && text[0])
                line = text;
        if (!line)
                return NULL;
        return strndup(line, strcspn(line, "\n"));
}

static bool contains_text(const char *haystack, const char *needle)
{
        return haystack && strcasestr(haystack, needle) != NULL;
}

/* bwrap's words for a shortage of fds, memory, processes or namespaces: a bad moment that may pass. */
static bool names_resource_shortage(const char *line)
{
        static const int shortages[] = { EMFILE, ENFILE, ENOMEM, EAGAIN, ENOSPC };

        for (size_t i = 0; i < sizeof(shortages) / sizeof(shortages[0]); i++)
                if (contains_text(line, strerror(shortages[i])))
                        return true;
        return false;
}

static bool names_namespace_failure(const char *line)
{
        return contains_text(line, "namespace") || contains_text(line, "uid map") || contains_text(line, "uid_map") ||
               contains_text(line, "setgroups");
}

/*
 * Turns a failed confined `true` into words a user can act on.  `line` is
 * bwrap's own stderr line (may be NULL).  `*transient` says whether the
 * failure may not recur: only the failures recognised below as facts about
 * the host (namespaces blocked, /proc masked, bwrap too old) are not; a
 * timeout, a resource shortage or anything unrecognised is.  A namespace
 * limit of 0 set by a host knob is a fact, even though the kernel says
 * "No space left on device" for it.  Returns a new string.
 */
static char *explain_failure(const char *line, int exit_code, bool timed_out, long timeout_ms, bool *transient)
{
        const char *blocker = userns_blocker();
        bool namespaces = names_namespace_failure(line);
        char *reason = NULL;
        int length;

        *transient = true;
        if (timed_out) {
                length = asprintf(&reason, "a bwrap probe did not finish within %ld ms (probeTimeoutMs)", timeout_ms);
        } else if (names_resource_shortage(line) && !(namespaces && blocker)) {
                length = asprintf(&reason, "bwrap ran short of a resource while it set up the sandbox; this may pass "
                                           "(bwrap said: %s)",
                                  line);
        } else if (namespaces) {
                *transient = false;
                length = asprintf(&reason,
                                  "bwrap cannot create its namespaces: user namespaces are blocked on this host "
                                  "(%s) (bwrap said: %s)",
                                  blocker ? blocker
                                          : "by the user.max_user_namespaces or kernel.unprivileged_userns_clone "
                                            "sysctl, an AppArmor userns restriction, or a container's seccomp "
                                            "profile",
                                  line);
        } else if (contains_text(line, "proc")) {
                *transient = false;
                length = asprintf(&reason,
                                  "bwrap cannot mount a private /proc, as inside a container that masks /proc "
                                  "(bwrap said: %s)",
                                  line);
        } else if (contains_text(line, "unknown option")) {
                *transient = false;
                length = asprintf(&reason, "this bwrap is too old (0.3.2 or newer is needed for --json-status-fd) "
                                           "(bwrap said: %s)",
                                  line);
        } else if (line) {
                length = asprintf(&reason, "a confined `true` failed under bwrap with status %d (bwrap said: %s)",
                                  exit_code, line);
        } else {
                length = asprintf(&reason, "a confined `true` failed under bwrap with status %d and no message",
                                  exit_code);
        }
        return length < 0 ? NULL : reason;
}

/* "bubblewrap 0.8.0" -> "0.8.0"; NULL when it cannot be learned before `deadline_ms`. */
static char *bwrap_version(const char *bwrap, long long deadline_ms)
{
        char *const argv[] = { (char *) bwrap, (char *) "--version", NULL };
        dsh_exec_plan plan = { argv, -1, false, -1 };
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure;
        dsh_autofree char *text = NULL;
        int output[2], wait_status = 0;
        const char *version;
        pid_t pid;

        if (pipe2(output, O_CLOEXEC) < 0)
                return NULL;
        options.stdout_fd = output[1];
        options.stderr_fd = output[1];
        options.new_process_group = true;  /* the deadline takes whatever it started, too */
        pid = dsh_spawn_exec_plan(&plan, &options, &failure);
        close(output[1]);
        if (pid < 0) {
                close(output[0]);
                return NULL;
        }
        if (dsh_collect_bounded(pid, true, output[0], deadline_ms, &text, &wait_status) < 0 || !text)
                return NULL;
        version = strrchr(text, ' ');
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !version)
                return NULL;
        return strndup(version + 1, strcspn(version + 1, "\n"));
}

/*
 * Functional: a read-only confined `true` through the same argv spawn()
 * uses (so a bwrap too old for --json-status-fd is found here, not later).
 * The version query and the run share one deadline (the caller's, when it
 * already started one for the whole probe).
 */
static void bwrap_probe(dsh_provider *provider, dsh_backend_report *report)
{
        char *const argv[] = { (char *) "true", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        dsh_autofree char *line = NULL;
        bool started = dsh_provider_begin_probe(provider);
        int exit_code = 0;

        report->runner_path = dsh_bwrap_find(provider, &report->reason);
        if (!report->runner_path)
                goto out;  /* not installed, or not where it can be trusted: a fact until someone installs it */
        report->version = bwrap_version(report->runner_path, provider->probe_deadline_ms);
        policy.workspace_root = (char *) "/";
        if (dsh_provider_run_bounded(provider, &dsh_backend_bwrap, argv, &policy, &exit_code, &stderr_text,
                                     &error) < 0 &&
            error.code != DSH_ERROR_SANDBOX_UNAVAILABLE) {
                /* Our side could not run it (no pipe, no fd, no memory): says nothing about bwrap. */
                report->transient = true;
                report->reason = strdup(error.message ? error.message : "bwrap cannot be started");
                goto out;
        }
        if (exit_code == 0) {
                report->usable = true;
                report->enforcement = DSH_ENFORCEMENT_FULL;
                goto out;
        }
        line = first_runner_line(stderr_text);
        report->reason = explain_failure(line, exit_code, exit_code < 0, provider->probe_timeout_ms,
                                         &report->transient);
out:
        dsh_error_clear(&error);
        dsh_provider_end_probe(provider, started);
}

/* ----------------------------------------------------------------- spawn -- */

/*
 * execvp() inside the sandbox sees the host's files (everything is bound),
 * except /tmp under workspace-write, which is a fresh tmpfs.  Resolving the
 * program here first lets a missing program be reported as such (127),
 * instead of as bwrap failing before exec.
 */
static int check_program(const char *program, const dsh_policy *policy, dsh_error *error)
{
        const char *search = getenv("PATH");
        char candidate[PATH_MAX];
        int found_errno = ENOENT;

        if (strchr(program, '/')) {
                if (access(program, X_OK) < 0)
                        return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, errno, "%s: %s", program, strerror(errno));
                if (policy->mode == DSH_MODE_WORKSPACE_WRITE && program[0] == '/' &&
                    dsh_path_is_beneath(program, BWRAP_TEMP_AREA) && !dsh_path_is_beneath(program, policy->workspace_root))
                        return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, ENOENT,
                                             "%s: %s (the bwrap sandbox has a private /tmp)", program,
                                             strerror(ENOENT));
                return 0;
        }
        if (!search)
                search = "/bin:/usr/bin";
        while (*search) {
                const char *end = strchrnul(search, ':');
                size_t length = (size_t) (end - search);

                if (snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int) length, search, length ? "/" : "",
                             program) < (int) sizeof(candidate)) {
                        if (access(candidate, X_OK) == 0)
                                return 0;
                        if (errno == EACCES)
                                found_errno = EACCES;
                }
                search = *end ? end + 1 : end;
        }
        return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, found_errno, "%s: %s", program, strerror(found_errno));
}

/* The number after "child-pid": in a status record, or 0. */
static pid_t parse_child_pid(const char *record)
{
        const char *field = strstr(record, "\"child-pid\"");
        char *end;
        long value;

        if (!field)
                return 0;
        field += strlen("\"child-pid\"");
        field += strspn(field, " \t\n");
        if (*field != ':')
                return 0;
        field++;
        field += strspn(field, " \t\n");
        errno = 0;
        value = strtol(field, &end, 10);
        if (errno || end == field || value <= 1 || value > INT_MAX)
                return 0;
        return (pid_t) value;
}

/*
 * Reads the first record bwrap writes on --json-status-fd: { "child-pid": N,
 * ... } once the sandbox's first process exists.  With a deadline
 * (dsh_monotonic_ms() time; 0: none) it waits no longer than that.  Returns
 * 1 when it came, with *child_pid = N (0 when not a plausible pid), 0 on EOF
 * without it (bwrap failed before creating the sandbox), -ETIMEDOUT when the
 * deadline passed first; sets *exec_seen when an "exit-code" record (written
 * only after an exec) was read along with it.
 */
static int read_first_record(int fd, long long deadline_ms, pid_t *child_pid, bool *exec_seen)
{
        char buffer[1024];
        size_t used = 0;
        ssize_t length;

        *exec_seen = false;
        *child_pid = 0;
        for (;;) {
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                int ready = poll(&poll_fd, 1, dsh_poll_timeout_ms(deadline_ms));

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready == 0)
                        return -ETIMEDOUT;
                if (ready < 0)
                        break;
                length = read(fd, buffer + used, sizeof(buffer) - 1 - used);
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        break;
                used += (size_t) length;
                buffer[used] = '\0';
                if (strchr(buffer, '\n') || used == sizeof(buffer) - 1)
                        break;
        }
        buffer[used] = '\0';
        *exec_seen = strstr(buffer, "\"exit-code\"") != NULL;
        if (!strstr(buffer, "\"child-pid\""))
                return 0;
        *child_pid = parse_child_pid(buffer);
        return 1;
}

/*
 * The process group signals for the command go to: bwrap's --new-session
 * makes the sandbox's init (pid 1 inside, `reported` outside) a session and
 * group leader, and the command runs in its group.  Taken only when
 * `reported` is a child of `runner`: whatever a runner writes (a fake that
 * says "child-pid": 1) must never aim signals at the caller's own group or
 * at every process (kill(-1, ...)).  Returns 0 when it cannot be confirmed.
 */
static pid_t sandbox_process_group(pid_t runner, pid_t reported)
{
        char path[64], stat_line[512];
        const char *fields;
        long parent = 0;
        ssize_t length;
        int fd;

        if (reported <= 1 || reported == runner)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) reported);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        length = read(fd, stat_line, sizeof(stat_line) - 1);
        close(fd);
        if (length <= 0)
                return 0;
        stat_line[length] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold anything, so the fields start after the last ')'. */
        fields = strrchr(stat_line, ')');
        if (!fields || sscanf(fields + 1, " %*c %ld", &parent) != 1)
                return 0;
        return parent == (long) runner ? reported : 0;
}

/* Why bwrap failed before exec: rerun the failing profile with stderr captured, for bwrap's own line. */
static char *diagnose(dsh_provider *provider, int exit_code)
{
        dsh_backend_report report = DSH_BACKEND_REPORT_INIT;
        char *reason;

        bwrap_probe(provider, &report);
        reason = report.reason;
        report.reason = NULL;
        dsh_backend_report_clear(&report);
        if (!reason && asprintf(&reason, "bwrap exited with status %d before it executed the command", exit_code) < 0)
                reason = NULL;
        return reason;
}

static int bwrap_spawn(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                       const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        dsh_autofree char *bwrap = runner_for_call(provider, policy, error);
        dsh_autoclose int status_read = -1;
        dsh_autoclose int status_write = -1;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_exec_plan plan = { NULL, -1, false, -1 };
        dsh_spawn_options runner_options = *options;
        dsh_spawn_failure failure;
        char **shielded = NULL;
        int status_pipe[2], wait_status = 0, result, record;
        pid_t pid, reported_pid;
        bool exec_seen;

        if (!bwrap)
                return -ENOSYS;
        result = check_program(argv[0], policy, error);
        if (result < 0)
                return result;
        result = shield_protected_paths(provider, policy, &shielded, error);
        if (result < 0)
                return result;
        result = dsh_pipe_above_stdio(status_pipe);
        if (result < 0) {
                int pipe_errno = -result;

                dsh_strv_free(shielded);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, pipe_errno, "cannot create the runner status pipe: %s",
                                     strerror(pipe_errno));
        }
        status_read = status_pipe[0];
        status_write = status_pipe[1];
        result = build_argv(&facts.argv, bwrap, policy, shielded, status_write, argv);
        dsh_strv_free(shielded);
        if (result < 0 || set_dialect(&facts) < 0) {
                dsh_confined_argv_clear(&facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        plan.argv = facts.argv;
        plan.keep_fd = status_write;
        /*
         * bwrap runs in a process group of its own, whatever the caller asked:
         * its sandbox is a session of its own (--new-session) that no terminal
         * signal reaches, while bwrap itself would die of the terminal's
         * Ctrl-C and take the sandbox with it (--die-with-parent) before the
         * command could handle the signal.  The caller passes signals on to
         * child->process_group instead.
         */
        runner_options.new_process_group = true;
        pid = dsh_spawn_exec_plan(&plan, &runner_options, &failure);
        close(dsh_take_fd(&status_write));
        if (pid < 0) {
                result = pid == -ECHILD ? dsh_spawn_failure_to_error(&failure, policy->mode, facts.argv[0], error)
                                        : dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid,
                                                        "cannot start bwrap: %s", strerror((int) -pid));
                dsh_confined_argv_clear(&facts);
                return result;
        }
        /* Inside a probe, its deadline holds here too: a runner that stalls before its record is killed. */
        record = read_first_record(status_read, provider->probe_deadline_ms, &reported_pid, &exec_seen);
        if (record < 0) {
                dsh_kill_and_reap(pid, true, NULL);
                dsh_confined_argv_clear(&facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ETIMEDOUT,
                                     "bwrap did not report its sandbox within %ld ms (probeTimeoutMs)",
                                     provider->probe_timeout_ms);
        }
        if (record == 0) {
                /* bwrap is gone before the sandbox existed: the command never ran. */
                dsh_autofree char *detail = NULL;

                while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
                        ;
                dsh_confined_argv_clear(&facts);
                /* Inside a probe the caller captures bwrap's stderr itself; diagnosing would recurse. */
                if (!provider->probing)
                        detail = diagnose(provider, WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
                return dsh_error_set_unavailable(error, policy->mode,
                                                 detail ? detail : "bwrap failed before it created the sandbox");
        }
        child->pid = pid;
        child->process_group = sandbox_process_group(pid, reported_pid);
        if (child->process_group == 0)
                child->process_group = pid;  /* unconfirmed: the runner's own group, which it leads */
        child->facts = facts;
        child->mode = policy->mode;
        child->command_started = exec_seen;
        child->runner_status_fd = dsh_take_fd(&status_read);
        return 0;
}

const dsh_backend_ops dsh_backend_bwrap = {
        .name = "bwrap",
        .probe = bwrap_probe,
        .confine = bwrap_confine,
        .spawn = bwrap_spawn,
        .exec = NULL,
        .probe_is_functional = true,
};
