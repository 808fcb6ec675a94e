/* SPDX-License-Identifier: MIT */
/*
 * The bash tool (dsh-sandbox/bash-tool.h, docs/bash-tool.md): validation and
 * escalation, and the attribution of what happened to a run
 * (bash-execution.c runs the command, bash-capture.c keeps its output).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bash/bash-escalation.h"
#include "bash/bash-execution.h"
#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/denial.h"
#include "base/error.h"
#include "base/json-core.h"
#include "provider/call-network.h"
#include "provider/process.h"
#include "base/path-fd.h"

/* The exact texts (docs/bash-tool.md); "%s" is a mode. */
#define MARKER_DENIED "[sandbox: file access denied under %s mode]"
#define MARKER_ESCALATION                                                                                     \
        "[sandbox: escalation available \xe2\x80\x94 retry this exact command once with sandbox_permissions " \
        "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
#define MARKER_RUNNER_FAILED                                                                                  \
        "[sandbox: the sandbox runner itself failed under %s mode \xe2\x80\x94 the command did not run; this " \
        "is a sandbox problem, not a command failure]"
#define STAYS_DENIED "it stays denied, so stop and explain instead of working around it"
/* "%s" is dsh_bash_grant_describe()'s: the quoted mode (the seeds' text), and any extra roots and hosts. */
#define REJECTED_TEXT "the user rejected escalating this command to %s; " STAYS_DENIED
#define NO_CHANNEL_TEXT                                                                                       \
        "escalating this command to %s needs the user's approval, and there is no approval channel to ask " \
        "the user; " STAYS_DENIED

const char *dsh_bash_kind_name(dsh_bash_kind kind)
{
        switch (kind) {
        case DSH_BASH_COMPLETED:
                return "completed";
        case DSH_BASH_DENIED:
                return "denied";
        case DSH_BASH_RUNNER_FAILED:
                return "runner-failed";
        case DSH_BASH_TIMED_OUT:
                return "timed-out";
        case DSH_BASH_CANCELLED:
                return "cancelled";
        case DSH_BASH_REJECTED:
                return "rejected";
        }
        return "invalid";
}

/* --------------------------------------------------------- the result -- */

static int result_set_message(dsh_bash_result *result, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int result_set_message(dsh_bash_result *result, const char *format, ...)
{
        va_list arguments;
        char *message = NULL;
        int length;

        va_start(arguments, format);
        length = vasprintf(&message, format, arguments);
        va_end(arguments);
        if (length < 0)
                return -ENOMEM;
        free(result->message);
        result->message = message;
        return 0;
}

/* Appends the runner-failure or the denial marker for the call's mode. */
static int result_add_marker(dsh_bash_result *result, bool runner_failed)
{
        dsh_autofree char *marker = NULL;
        int length = runner_failed ? asprintf(&marker, MARKER_RUNNER_FAILED, dsh_mode_name(result->sandbox.mode))
                                   : asprintf(&marker, MARKER_DENIED, dsh_mode_name(result->sandbox.mode));

        if (length < 0) {
                marker = NULL;
                return -ENOMEM;
        }
        return dsh_strv_append(&result->markers, marker);
}

static int result_add_runner_marker(dsh_bash_result *result)
{
        return result_add_marker(result, true);
}

/*
 * Whether a one-call approval short of running the command unconfined could
 * lift one of the call's denials: a record whose grant is an extra root, an
 * allowed host, or workspace-write for a read-only call.  The hint is never
 * given for the others:
 *   - a grant "none" (the sandbox's own files, a masked credential, a
 *     metadata address) and the configured ones (a unix socket, a local
 *     port: the user's settings, not a call's approval);
 *   - danger-full-access alone (a new name in /, a protected subpath such as
 *     .git/config or .vscode): a hostile script can provoke such a denial on
 *     purpose — a real record, no forgery — and the hint would send the
 *     model to ask the user to run that very script unconfined "because
 *     the sandbox denied it".  The record and its grant still say what
 *     would allow it, and the message tells the model to ask the user;
 *   - records past the bound: their grants are unknown, and a flood of
 *     refusals is exactly what such a script would send first.
 */
static bool denials_have_grant(const dsh_denials *denials)
{
        for (size_t i = 0; i < denials->count; i++)
                switch (denials->items[i].grant.kind) {
                case DSH_GRANT_WRITABLE_ROOT:
                case DSH_GRANT_ALLOWED_HOST:
                        return true;
                case DSH_GRANT_MODE:
                        if (denials->items[i].grant.mode != DSH_MODE_DANGER_FULL_ACCESS)
                                return true;
                        break;
                case DSH_GRANT_NONE:
                case DSH_GRANT_UNIX_SOCKET:
                case DSH_GRANT_LOCAL_PORT:
                        break;
                }
        return false;
}

/* The denial, and the way out where a wider mode exists and some record has a grant. */
static int result_add_denial_markers(dsh_bash_result *result)
{
        int appended = result_add_marker(result, false);

        if (appended == 0 && result->sandbox.mode != DSH_MODE_DANGER_FULL_ACCESS &&
            denials_have_grant(&result->denials))
                appended = dsh_strv_append(&result->markers, MARKER_ESCALATION);
        return appended;
}

static int result_add_warning(dsh_bash_result *result, const char *warning)
{
        return dsh_strv_append(&result->warnings, warning);
}

/* The child's refusal records, moved into the result (the child goes with the run). */
static void result_take_refused_writes(dsh_bash_result *result, dsh_child *child)
{
        result->refused_write_count = dsh_child_take_refusals(child, &result->refused_writes,
                                                              &result->refused_writes_dropped);
        result->refused_connection_count = dsh_child_take_network_refusals(child, &result->refused_connections,
                                                                           &result->refused_connections_dropped);
}

void dsh_bash_result_clear(dsh_bash_result *result)
{
        if (!result)
                return;
        dsh_write_refusals_free(result->refused_writes, result->refused_write_count);
        dsh_refused_connections_free(result->refused_connections, result->refused_connection_count);
        dsh_denials_clear(&result->denials);
        free(result->standard_output.text);
        free(result->standard_error.text);
        free(result->sandbox.backend);
        dsh_strv_free(result->markers);
        free(result->message);
        dsh_error_clear(&result->error);
        dsh_strv_free(result->warnings);
        *result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
}

/* A result before anything ran: empty output, the lists allocated (the header promises never NULL). */
static int result_start(dsh_bash_result *result, dsh_mode mode)
{
        *result = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        result->sandbox.mode = mode;
        result->markers = calloc(1, sizeof(char *));
        result->warnings = calloc(1, sizeof(char *));
        result->standard_output.text = strdup("");
        result->standard_error.text = strdup("");
        if (!result->markers || !result->warnings || !result->standard_output.text || !result->standard_error.text)
                return -ENOMEM;
        return 0;
}

/*
 * The sandbox runner failed (or could not be spawned): the command never ran,
 * and no status is the command's.  `runner_error` (moved into the result)
 * says why; the marker tells the model this is not the command's failure,
 * so that it never "fixes" it by dropping the sandbox.
 */
static int result_runner_failed(dsh_bash_result *result, dsh_error *runner_error)
{
        result->kind = DSH_BASH_RUNNER_FAILED;
        result->sandbox.runner_failed = true;
        result->exit_code = -1;
        result->signal = 0;
        result->error = *runner_error;
        *runner_error = (dsh_error) DSH_ERROR_INIT;
        return result_add_runner_marker(result);
}

static int result_cancelled_before_start(dsh_bash_result *result)
{
        result->kind = DSH_BASH_CANCELLED;
        result->cancelled = true;
        return result_set_message(result, "cancelled before the command started: it did not run");
}

/* ----------------------------------------------------------- validation -- */

/* True when `text` has something besides blanks. */
static bool has_content(const char *text)
{
        return text[strspn(text, " \t\n\r\v\f")] != '\0';
}

/* The request's own checks before its escalation's (bash-escalation.c), in the order of docs/bash-tool.md. */
static int validate_request(const dsh_bash_request *request, dsh_error *error)
{
        if (!request || !request->policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the bash tool needs a resolved policy");
        if (!request->command || !has_content(request->command))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command is empty");
        return 0;
}

/*
 * The directory the command starts in, opened once: `request->cwd`
 * (absolute, or relative to the workspace root), else the workspace root.
 * Returns the O_PATH fd, or a negative errno with `error` set (a request
 * error: nothing runs).
 *
 * The spawn enters this fd (dsh_spawn_options.cwd_fd), never the name
 * again, so a symlink swapped in after this check changes nothing about
 * where the command starts.  A symlink on the way now is followed as a
 * shell's `cd` follows it: the cwd is where the command starts, not a
 * grant — outside the root it is only read (read-only, or a write the
 * sandbox denies as it would from any cwd), and under workspace-write it
 * adds nothing to what is writable: the backends judge every path by the
 * writable roots, whatever the cwd.  A /proc magic link is refused: it
 * could name a directory of another process's mount namespace.
 */
static int open_working_directory(const dsh_bash_request *request, const dsh_policy *policy, dsh_error *error)
{
        dsh_autofree char *joined = NULL;
        const char *path = request->cwd;
        const char *root = policy->workspace_root;
        int fd;

        if (path && !*path)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "cwd is empty");
        if (!path || path[0] != '/') {
                if (!root || root[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "the command's cwd needs the policy's workspace root, and it has none");
                if (path && asprintf(&joined, "%s/%s", strcmp(root, "/") == 0 ? "" : root, path) < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                path = joined ? joined : root;
        }
        fd = dsh_openat2(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_MAGICLINKS);
        if (fd >= 0)
                return fd;
        if (fd == -ENOENT)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "cwd \"%s\" does not exist", path);
        if (fd == -ENOTDIR)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "cwd \"%s\" is not a directory", path);
        if (fd == -ELOOP)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "cwd \"%s\" passes through a /proc magic link or too many symlinks", path);
        if (fd == -ENOMEM)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "cwd \"%s\" cannot be opened: %s", path,
                             strerror(-fd));
}

int dsh_bash_check_cwd(const dsh_policy *policy, const char *cwd, dsh_error *error)
{
        const dsh_bash_request request = { .policy = policy, .cwd = cwd };
        int fd;

        if (!policy)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the bash tool needs a resolved policy");
        fd = open_working_directory(&request, policy, error);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int dsh_bash_check_request(const dsh_bash_request *request, dsh_error *error)
{
        dsh_bash_grant grant = DSH_BASH_GRANT_INIT;
        int result = validate_request(request, error), fd;

        if (result == 0)
                result = dsh_bash_grant_check(request, request->policy, &grant, error);
        dsh_bash_grant_clear(&grant);
        if (result < 0)
                return result;
        fd = open_working_directory(request, request->policy, error);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

/*
 * Asks the approval channel about one call with `grant`: exactly what would
 * be granted.  Returns 0 with *approved set (a channel that could not ask
 * leaves a warning and counts as a no), or -ENOMEM.
 */
static int ask_approval(const dsh_bash_request *request, const dsh_policy *policy, const dsh_bash_grant *grant,
                        dsh_bash_result *result, bool *approved)
{
        const dsh_bash_escalation escalation = dsh_bash_grant_escalation(grant, request, policy);
        dsh_error channel_error = DSH_ERROR_INIT;
        int answer;

        *approved = false;
        if (!request->approve)
                return 0;
        answer = request->approve(&escalation, request->approve_data, &channel_error);
        if (answer < 0) {
                dsh_autofree char *warning = NULL;
                int appended = -ENOMEM;

                if (asprintf(&warning, "the approval channel could not ask the user: %s",
                             channel_error.message ? channel_error.message : strerror(-answer)) < 0)
                        warning = NULL;
                else
                        appended = result_add_warning(result, warning);
                if (appended < 0) {
                        dsh_error_clear(&channel_error);
                        return -ENOMEM;
                }
        }
        dsh_error_clear(&channel_error);
        *approved = answer == 1;
        return 0;
}

/* `wait_status` as the result's exit code and signal. */
static void result_set_status(dsh_bash_result *result, int wait_status)
{
        result->exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
        result->signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
}

/*
 * The runner failed, as its status channel proved: the command never ran,
 * so every line on stderr is the runner's, and the first fatal one (by the
 * backend's rules) names the failure better than the channel's bare "exited
 * with status N".  The channel decides whether; the text only says which.
 */
static void name_runner_failure(const dsh_bash_execution *run, dsh_error *runner_error)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);
        dsh_autofree char *head = dsh_capture_head_text(&run->captures[DSH_BASH_STREAM_ERR]);
        dsh_autofree char *line = NULL;
        int exit_code = WIFEXITED(run->wait_status) ? WEXITSTATUS(run->wait_status) : 128;

        if (head && dsh_runner_failed(facts->runner_failure_rules, facts->runner_failure_rule_count, exit_code, head,
                                      &line) &&
            line)
                dsh_error_set_unavailable(runner_error, dsh_child_mode(run->child), line);
}

#define HELD_BACK_TEXT                                                                                        \
        "the sandbox holds back %s: the change was refused, whatever the exit status says (it runs code "      \
        "outside the sandbox later: git's hooks and config at the user's next git command, the agent's "        \
        "launch config at its next start, a startup file at the next shell); only danger-full-access, which "   \
        "runs the whole command unconfined, would allow the change, so ask the user instead of retrying"
#define UNCONFINED_ONLY_TEXT                                                                                  \
        "only danger-full-access, which runs the whole command unconfined, would allow what was denied (the "  \
        "denials name it), so ask the user instead of retrying"
#define MOVED_ASIDE_TEXT                                                                                      \
        "the command created a path the sandbox keeps absent (the warnings name it: the agent's launch "       \
        "config, a startup file or git's commondir, which run code outside the sandbox later); it was moved "  \
        "aside once the command was gone; to create it, ask the user"

static bool is_held_back(const dsh_denial *denial)
{
        return denial->path && denial->rule && strcmp(denial->rule, "protected-subpath") == 0 &&
               denial->source != DSH_DENIAL_SOURCE_CLEANUP;
}

/* The paths of the held-back records, each once, quoted and joined with ", " (`\xNN` for a byte not UTF-8). */
static char *held_back_paths(const dsh_denials *denials)
{
        char *text = NULL;
        size_t size = 0, named = 0;
        FILE *out = open_memstream(&text, &size);
        bool failed = !out;

        for (size_t i = 0; !failed && i < denials->count; i++) {
                bool seen = false;
                dsh_autofree char *escaped = NULL;

                if (!is_held_back(&denials->items[i]))
                        continue;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = is_held_back(&denials->items[j]) &&
                               strcmp(denials->items[j].path, denials->items[i].path) == 0;
                if (seen)
                        continue;
                escaped = dsh_json_utf8_escaped(denials->items[i].path);
                failed = !escaped || fprintf(out, "%s\"%s\"", named++ ? ", " : "", escaped) < 0;
        }
        if (out && fclose(out) != 0)
                failed = true;
        if (failed || named == 0) {
                free(text);
                return NULL;
        }
        return text;
}

/* Some record is lifted by danger-full-access alone, and none by anything narrower. */
static bool unconfined_only(const dsh_denials *denials)
{
        for (size_t i = 0; i < denials->count; i++)
                if (denials->items[i].grant.kind == DSH_GRANT_MODE &&
                    denials->items[i].grant.mode == DSH_MODE_DANGER_FULL_ACCESS)
                        return !denials_have_grant(denials);
        return false;
}

static bool has_cleanup_record(const dsh_denials *denials)
{
        for (size_t i = 0; i < denials->count; i++)
                if (denials->items[i].source == DSH_DENIAL_SOURCE_CLEANUP)
                        return true;
        return false;
}

/*
 * The message of a denial for the model, from the records alone: a change
 * refused to a held-back file (a protected-subpath record: .git/config,
 * .git/hooks, the agent's launch config) names its paths — the change did not
 * happen whatever the exit status says (git branch --set-upstream-to exits
 * 0) — and a path the sandbox keeps absent, moved aside after the command (a
 * cleanup record), says so.  Returns 0 or -ENOMEM.
 */
static int result_set_denial_message(dsh_bash_result *result)
{
        dsh_autofree char *paths = NULL;
        bool any_held_back = false;

        for (size_t i = 0; i < result->denials.count && !any_held_back; i++)
                any_held_back = is_held_back(&result->denials.items[i]);
        if (any_held_back) {
                paths = held_back_paths(&result->denials);
                return paths ? result_set_message(result, HELD_BACK_TEXT, paths) : -ENOMEM;
        }
        if (has_cleanup_record(&result->denials))
                return result_set_message(result, "%s", MOVED_ASIDE_TEXT);
        if (unconfined_only(&result->denials))
                return result_set_message(result, "%s", UNCONFINED_ONLY_TEXT);
        return 0;
}

/*
 * The call's denials, as the enforcing layers recorded them: `sandbox.denied`,
 * the markers and the message follow from the records alone, never from
 * text the command printed (a command can print any line; it cannot add a
 * record).  A record is evidence whatever the exit status — 0 (a tool that
 * ignores the failure), 1, a signal death (a command killed after the
 * refusal was still refused): docs/bash-tool.md, "Attribution".  A call the
 * tool ended (timed out, cancelled) keeps its own message.  Returns 0 or
 * -ENOMEM.
 */
static int result_note_denials(dsh_bash_result *result, bool with_message)
{
        int appended;

        if (result->denials.count == 0 && result->denials.dropped == 0)
                return 0;
        result->sandbox.denied = true;
        appended = result_add_denial_markers(result);
        return appended == 0 && with_message ? result_set_denial_message(result) : appended;
}

/*
 * What happened, in the order of docs/bash-tool.md: cancellation, the
 * timeout, the runner's failure (out of band; by its rules over stderr only
 * where the backend has no channel), denial (a record), the ordinary result.
 * Returns 0, or a negative errno with `error` set when bash itself could
 * not be executed (the command never ran, and it is not the sandbox's doing).
 */
static int attribute(dsh_bash_execution *run, dsh_bash_result *result, dsh_error *error)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);
        dsh_error runner_error = DSH_ERROR_INIT;
        int exit_code = WIFEXITED(run->wait_status) ? WEXITSTATUS(run->wait_status) : -1;
        int result_code;

        result_set_status(result, run->wait_status);
        result->timed_out = run->timed_out;
        result->cancelled = run->cancelled;
        if (run->cancelled) {
                result->kind = DSH_BASH_CANCELLED;
                result_code = result_set_message(result, "cancelled: SIG%s went to the command's process group%s",
                                                 sigabbrev_np(run->cancel_signal) ? sigabbrev_np(run->cancel_signal)
                                                                                  : "?",
                                                 run->killed ? ", and SIGKILL to what was left of it" : "");
                return result_code == 0 ? result_note_denials(result, false) : result_code;
        }
        if (run->timed_out) {
                result->kind = DSH_BASH_TIMED_OUT;
                result_code = result_set_message(result, "the command did not finish within %ld ms: its process "
                                                         "group was killed",
                                                 run->request->timeout_ms);
                return result_code == 0 ? result_note_denials(result, false) : result_code;
        }
        result_code = dsh_child_runner_error(run->child, &runner_error);
        if (result_code < 0 && dsh_child_runner_failed(run->child)) {
                name_runner_failure(run, &runner_error);
                result_code = result_runner_failed(result, &runner_error);
                dsh_error_clear(&runner_error);
                return result_code;
        }
        if (result_code < 0) {
                /* bash could not be executed inside the sandbox: out of band, so not a guess. */
                *error = runner_error;
                return result_code;
        }
        /* No channel says the command ran (an operator's runner command): its rules over stderr, as upstream. */
        if (!dsh_child_command_started(run->child)) {
                dsh_autofree char *head = dsh_capture_head_text(&run->captures[DSH_BASH_STREAM_ERR]);
                dsh_autofree char *line = NULL;

                if (!head)
                        return -ENOMEM;
                if (exit_code > 0 && dsh_runner_failed(facts->runner_failure_rules, facts->runner_failure_rule_count,
                                                       exit_code, head, &line)) {
                        dsh_error_set_unavailable(&runner_error, result->sandbox.mode,
                                                  line ? line : "the runner failed before exec");
                        result_code = result_runner_failed(result, &runner_error);
                        dsh_error_clear(&runner_error);
                        return result_code;
                }
        }
        result->kind = result->denials.count || result->denials.dropped ? DSH_BASH_DENIED : DSH_BASH_COMPLETED;
        return result_note_denials(result, true);
}

/*
 * The child's facts, warnings, refusal records and typed denials, the
 * streams as kept, and what the drain left behind.  The denials are read
 * first: dsh_child_denials() converts the child's records, which the
 * refusal lists then take.  Returns 0, or a negative errno with `error` set.
 */
static int collect_facts(dsh_runtime *runtime, dsh_bash_execution *run, const dsh_policy *policy,
                         dsh_bash_result *result, dsh_error *error)
{
        const dsh_confined_argv *facts = dsh_child_facts(run->child);
        int converted = dsh_child_denials(runtime, policy, run->child, &result->denials, error);

        if (converted < 0)
                return converted;
        free(result->standard_output.text);
        free(result->standard_error.text);
        result->standard_output.text = NULL;
        result->standard_error.text = NULL;
        if (dsh_capture_finish(&run->captures[DSH_BASH_STREAM_OUT], &result->standard_output) < 0 ||
            dsh_capture_finish(&run->captures[DSH_BASH_STREAM_ERR], &result->standard_error) < 0)
                return -ENOMEM;
        if (facts->backend) {
                result->sandbox.backend = strdup(facts->backend);
                if (!result->sandbox.backend)
                        return -ENOMEM;
        }
        result->sandbox.confined = policy->mode != DSH_MODE_DANGER_FULL_ACCESS;
        result->sandbox.enforcement = facts->enforcement;
        for (const char *const *warning = dsh_child_warnings(run->child); *warning; warning++)
                if (result_add_warning(result, *warning) < 0)
                        return -ENOMEM;
        result_take_refused_writes(result, run->child);
        if (run->drain_cut &&
            result_add_warning(result, "a process that left the command's process group (setsid) still held its "
                                       "output when the command ended: the output was not read further, and that "
                                       "process was not ended") < 0)
                return -ENOMEM;
        return 0;
}

/*
 * The session keeps the call's denials (dsh_runtime_record_denials(); docs/sessions.md,
 * "Denials"); a store that cannot is a warning of the result, not a failure: the call ran.
 */
static int record_session_denials(dsh_runtime *runtime, const dsh_policy *policy, dsh_bash_result *result)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *warning = NULL;

        if (dsh_runtime_record_denials(runtime, policy, "bash", &result->denials, &error) == 0)
                return 0;
        if (asprintf(&warning, "the session could not keep this call's denials: %s",
                     error.message ? error.message : "unknown error") < 0)
                warning = NULL;
        dsh_error_clear(&error);
        return warning ? result_add_warning(result, warning) : -ENOMEM;
}

/*
 * Runs the command and says what happened.  The runner that could not be
 * spawned (SANDBOX_UNAVAILABLE from the provider) is a result, a runner
 * failure, the command never ran; any other refusal is the caller's error.
 */
static int run_and_attribute(dsh_runtime *runtime, const dsh_bash_request *request, const dsh_policy *policy,
                             int cwd_fd, dsh_bash_result *outcome, dsh_error *error)
{
        dsh_bash_execution run;
        dsh_error run_error = DSH_ERROR_INIT;
        int result = dsh_bash_execute(runtime, request, policy, cwd_fd, &run, &run_error);

        if (result < 0 && !run.child && dsh_bash_cancellation_requested(request->cancellation)) {
                dsh_error_clear(&run_error);
                result = result_cancelled_before_start(outcome);
        } else if (result < 0 && !run.child && run_error.code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                result = result_runner_failed(outcome, &run_error);
        } else if (result < 0) {
                *error = run_error;
                run_error = (dsh_error) DSH_ERROR_INIT;
        } else {
                result = collect_facts(runtime, &run, policy, outcome, error);
                if (result == 0)
                        result = attribute(&run, outcome, error);
        }
        dsh_error_clear(&run_error);
        dsh_bash_execution_clear(&run);
        return result;
}

/* ------------------------------------------------------------ the call -- */

/* Not approved (or no channel to ask): nothing runs, and the message names what was asked. */
static int result_rejected(dsh_bash_result *result, const dsh_bash_grant *grant, bool had_channel)
{
        dsh_autofree char *asked = dsh_bash_grant_describe(grant);

        result->kind = DSH_BASH_REJECTED;
        if (!asked)
                return -ENOMEM;
        return had_channel ? result_set_message(result, REJECTED_TEXT, asked)
                           : result_set_message(result, NO_CHANNEL_TEXT, asked);
}

int dsh_bash_run(dsh_runtime *runtime, const dsh_bash_request *request, dsh_bash_result *result_out,
                 dsh_error *error)
{
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_bash_grant grant = DSH_BASH_GRANT_INIT;
        bool approved = false;
        dsh_autoclose int cwd_fd = -1;
        int result;

        if (!error)
                error = &local_error;
        *result_out = (dsh_bash_result) DSH_BASH_RESULT_INIT;
        result = validate_request(request, error);
        if (result == 0 && dsh_policy_copy(&policy, request->policy) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result == 0)
                result = dsh_bash_grant_check(request, &policy, &grant, error);
        /* A cwd that is not a directory is the request's error: nothing is asked, nothing runs. */
        if (result == 0) {
                cwd_fd = open_working_directory(request, &policy, error);
                result = cwd_fd < 0 ? cwd_fd : 0;
        }
        if (result == 0 && result_start(result_out, policy.mode) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result < 0)
                goto out;
        if (dsh_bash_cancellation_requested(request->cancellation)) {
                result = result_cancelled_before_start(result_out);
                goto out;
        }
        /* The same mode and nothing else needs no approval: the call simply runs. */
        if (grant.needs_approval) {
                result = ask_approval(request, &policy, &grant, result_out, &approved);
                if (result == 0 && dsh_bash_cancellation_requested(request->cancellation)) {
                        result = result_cancelled_before_start(result_out);
                        goto out;
                }
                if (result == 0 && !approved) {
                        result = result_rejected(result_out, &grant, request->approve != NULL);
                        goto out;
                }
                /* Granted for this call only: the policy copy changes, nothing that outlives the call does. */
                if (result == 0)
                        result = dsh_bash_grant_apply(&grant, &policy);
                result_out->sandbox.mode = policy.mode;
        }
        if (result == 0)
                result = run_and_attribute(runtime, request, &policy, cwd_fd, result_out, error);
        if (result == 0)
                result = record_session_denials(runtime, request->policy, result_out);
out:
        if (result == -ENOMEM && error->code == DSH_ERROR_NONE)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result < 0)
                dsh_bash_result_clear(result_out);
        dsh_bash_grant_clear(&grant);
        dsh_policy_clear(&policy);
        dsh_error_clear(&local_error);
        return result < 0 ? result : 0;
}
