/* SPDX-License-Identifier: MIT */
/*
 * The bwrap backend's probe: a confined `true` through the argv spawn()
 * uses, and when it fails, the diagnosis in words a user can act on, with
 * whether the failure is a fact about the host or a moment that may pass
 * (backend.h, dsh_backend_report.transient).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/bwrap-probe.h"
#include "core/landlock.h"
#include "provider/bwrap-supervisor.h"
#include "provider/bwrap-trust.h"
#include "provider/process.h"
#include "base/error.h"
#include "shield/protections.h"
#include "provider/spawn.h"

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
        const char *line = text ? strstr(text, DSH_BWRAP_FATAL_SIGNATURE) : NULL;

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
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
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
        if (dsh_collect_bounded(pid, pid, output[0], deadline_ms, &text, &wait_status) < 0 || !text)
                return NULL;
        version = strrchr(text, ' ');
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !version)
                return NULL;
        return strndup(version + 1, strcspn(version + 1, "\n"));
}

/* What the command's /tmp is, per mode (docs/backends.md, "Temp areas and caches"). */
static void add_temp_area_notes(const dsh_provider *provider, dsh_backend_report *report)
{
        (void) dsh_strv_append(&report->notes, "read-only: /tmp is a private tmpfs, empty at each call; TMPDIR=/tmp");
        (void) dsh_strv_append(&report->notes,
                               provider->scratch_dir
                                       ? "workspace-write: /tmp is the session's scratch, kept across its calls and "
                                         "private to it; package-manager caches go to the session's scratch; "
                                         "TMPDIR=/tmp"
                                       : "workspace-write: /tmp is a private tmpfs, empty at each call; TMPDIR=/tmp");
}

/* Known before any call: workspace-write needs the metadata supervisor, which this host may not allow. */
static void add_supervisor_reason(dsh_backend_report *report)
{
        const char *problem = NULL;
        char *sentence = NULL;

        if (dsh_metadata_supervisor_check_host(&problem) == 0)
                return;
        report->enforcement = DSH_ENFORCEMENT_PARTIAL;
        if (asprintf(&sentence, "%s; %s", problem, DSH_BWRAP_SUPERVISOR_UNAVAILABLE_CONSEQUENCE) >= 0)
                (void) dsh_strv_append(&report->partial_reasons, sentence);
        free(sentence);
}

/*
 * Functional: a read-only confined `true` through the same argv spawn()
 * uses (so a bwrap too old for --json-status-fd is found here, not later).
 * The version query and the run share one deadline (the caller's, when it
 * already started one for the whole probe).
 */
void dsh_bwrap_probe(dsh_provider *provider, dsh_backend_report *report)
{
        char *const argv[] = { (char *) "true", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        dsh_autofree char *line = NULL;
        bool started = dsh_provider_begin_probe(provider);
        int exit_code = 0;

        dsh_autofree char *exec_helper =
                dsh_protections_launcher_path(&provider->protections, DSH_BWRAP_EXEC_HELPER_NAME);

        report->runner_path = dsh_bwrap_find(provider, &report->reason);
        if (!report->runner_path)
                goto out;  /* not installed, or not where it can be trusted: a fact until someone installs it */
        if (!exec_helper || access(exec_helper, X_OK) < 0) {
                if (asprintf(&report->reason, "the dsh-sandbox-exec helper %s is not executable: %s",
                             exec_helper ? exec_helper : "(no launcher directory)", strerror(errno)) < 0)
                        report->reason = NULL;
                goto out;
        }
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
                add_supervisor_reason(report);
                if (dsh_landlock_abi() < 2) {
                        report->enforcement = DSH_ENFORCEMENT_PARTIAL;
                        (void) dsh_strv_append(&report->partial_reasons, DSH_BWRAP_NO_DOMAIN_REASON);
                }
                add_temp_area_notes(provider, report);
                goto out;
        }
        line = first_runner_line(stderr_text);
        report->reason = explain_failure(line, exit_code, exit_code < 0, provider->probe_timeout_ms,
                                         &report->transient);
out:
        dsh_error_clear(&error);
        dsh_provider_end_probe(provider, started);
}
