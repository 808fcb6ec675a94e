/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox bash [policy] [--timeout MS] [--sandbox-permissions MODE]
 * [--additional-write DIR]... [--additional-host HOST]... [--justification
 * TEXT] [--approval-command CMD] [--json] [--] COMMAND`: the
 * bash tool (dsh-sandbox/bash-tool.h) on the command line.  The human form
 * shows the command's output as it comes, then one line per denial (a few
 * at most) and the markers on stderr, and exits with the command's status;
 * --json prints one tool-result object.
 * Approval of an escalation: --approval-command, else the controlling
 * terminal (a yes/no prompt, default no), else none (refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "remote-cli.h"

static const char bash_help[] =
        "Usage: dsh-sandbox bash [policy options] [--timeout MS] [--json]\n"
        "                        [--sandbox-permissions MODE] [--additional-write DIR]...\n"
        "                        [--additional-host HOST]... [--justification TEXT]\n"
        "                        [--approval-command CMD] [--approval-timeout MS] [--output-limit BYTES]\n"
        "                        [--cwd DIR] [--] COMMAND\n"
        "Runs `bash -c COMMAND` confined, as an agent's bash tool, and says what happened: the command\n"
        "failed on its own, the sandbox denied it a file write (\"[sandbox: file access denied ...]\"),\n"
        "or the sandbox runner failed and the command never ran.  A denial is what the sandbox\n"
        "recorded, never a line the command printed.  The output is shown as it comes; then, on\n"
        "stderr, one \"dsh-sandbox: denied: ...\" line per denial (at most 3) naming the path or\n"
        "host and the narrowest grant, and the markers.  stdin is /dev/null, and the command\n"
        "has no terminal.  When it ends, whatever is left of its process group is killed.\n"
        "It starts in the workspace root (the session's cwd with --session), unlike `run`, which\n"
        "keeps the caller's cwd.\n\n"
        "      --cwd DIR          start in DIR instead (a relative DIR is taken against the root);\n"
        "                         it must be a directory; it grants nothing\n"
        "      --timeout MS       kill the command's process group after MS milliseconds\n"
        "      --sandbox-permissions MODE  retry this call once under a wider MODE, if approved\n"
        "      --additional-write DIR      for this call only, also make DIR writable, if approved\n"
        "                         (repeatable; workspace-write, the call's or the requested mode)\n"
        "      --additional-host HOST      for this call only, also allow HOST[:PORT], if approved\n"
        "                         (repeatable; under --network off or an allow-list)\n"
        "      --justification TEXT        why (one sentence, shown to the user who approves)\n"
        "      --approval-command CMD      approve through CMD (run as /bin/sh -c CMD, the request\n"
        "                         as JSON on its stdin and in DSH_SANDBOX_ESCALATION_*): exit 0\n"
        "                         allows this call once; else the controlling terminal is asked\n"
        "      --approval-timeout MS       the approval's bound (default 300000)\n"
        "      --output-limit BYTES        bytes of each stream kept for --json (default 262144)\n"
        "      --json             print one tool-result object instead\n"
        "SIGINT, SIGTERM, SIGHUP and SIGQUIT go on to the command's process group: the call is\n"
        "cancelled (what is left of the group is killed 2 s later).\n"
        "Exit status: the command's own; 128+N if killed by signal N; 124 when it timed out;\n"
        "128+N when cancelled by signal N; 125 if the sandbox runner failed (it never ran);\n"
        "126/127 if bash could not be executed; 1 when an escalation was not approved (it never\n"
        "ran); 2 for a usage error or an invalid escalation.  With --json: 0 once the object is\n"
        "printed, and the statuses above only for what prevents one.\n\n";

enum {
        OPTION_TIMEOUT = CLI_OPTION_OWN,
        OPTION_SANDBOX_PERMISSIONS,
        OPTION_APPROVAL_COMMAND,
        OPTION_APPROVAL_TIMEOUT,
        OPTION_OUTPUT_LIMIT,
        OPTION_CWD,
        OPTION_ADDITIONAL_WRITE,
        OPTION_ADDITIONAL_HOST,
        /* Free text: the library judges an empty justification, with its own message. */
        OPTION_JUSTIFICATION = CLI_OPTION_OWN_TEXT,
};

#define TIMEOUT_MAX_MS INT_MAX
#define OUTPUT_LIMIT_MAX (1024L * 1024 * 1024)

struct bash_options {
        long timeout_ms;
        const char *sandbox_permissions;
        const char *justification;
        const char *approval_command;
        long approval_timeout_ms;
        long output_limit;
        bool json;
        const char *cwd;
        char **additional_write;        /* --additional-write, in order; NULL: none */
        char **additional_hosts;        /* --additional-host, in order; NULL: none */
};

/* Whether the call asks for an escalation: then it needs an approval channel. */
static bool asks_escalation(const struct bash_options *options)
{
        return options->sandbox_permissions || options->additional_write || options->additional_hosts;
}

static int store_bash_option(int key, const char *value, void *data)
{
        struct bash_options *options = data;

        switch (key) {
        case OPTION_TIMEOUT:
                return cli_parse_positive("bash", "--timeout", value, TIMEOUT_MAX_MS, &options->timeout_ms);
        case OPTION_APPROVAL_TIMEOUT:
                return cli_parse_positive("bash", "--approval-timeout", value, TIMEOUT_MAX_MS,
                                          &options->approval_timeout_ms);
        case OPTION_OUTPUT_LIMIT:
                return cli_parse_positive("bash", "--output-limit", value, OUTPUT_LIMIT_MAX, &options->output_limit);
        case OPTION_SANDBOX_PERMISSIONS:
                options->sandbox_permissions = value;
                return 0;
        case OPTION_JUSTIFICATION:
                options->justification = value;
                return 0;
        case OPTION_APPROVAL_COMMAND:
                options->approval_command = value;
                return 0;
        case OPTION_CWD:
                options->cwd = value;
                return 0;
        case OPTION_ADDITIONAL_WRITE:
                return dsh_strv_append(&options->additional_write, value) < 0 ? cli_usage_error("out of memory") : 0;
        case OPTION_ADDITIONAL_HOST:
                return dsh_strv_append(&options->additional_hosts, value) < 0 ? cli_usage_error("out of memory") : 0;
        case CLI_OPTION_JSON:
                options->json = true;
                return 0;
        default:
                return 0;
        }
}

/* ------------------------------------------------------------ signals -- */

/*
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT cancel the call: the library passes the
 * signal on to the command's process group (the command has no terminal, so
 * the terminal's Ctrl-C reaches only this process) and kills what is left
 * of it after a grace.  A signal ignored when this process started (nohup)
 * stays ignored.  The handler only writes to the cancellation's pipe and
 * sets a flag (async-signal-safe).  SIGPIPE is ignored: a reader of our
 * output that goes away is passed on to the command as its own EPIPE, and
 * must not kill this process and orphan the command.
 */
static const int cancelling_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static dsh_bash_cancellation *signal_cancellation;
static volatile sig_atomic_t first_signal;

static void cancel_on_signal(int signal_number)
{
        if (!first_signal)
                first_signal = signal_number;
        dsh_bash_cancel(signal_cancellation, signal_number);
}

static void catch_cancelling_signals(dsh_bash_cancellation *cancellation)
{
        struct sigaction action = { 0 };

        signal_cancellation = cancellation;
        action.sa_handler = cancel_on_signal;
        action.sa_flags = SA_RESTART;   /* poll() still wakes with EINTR: the terminal prompt notices */
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof(cancelling_signals) / sizeof(cancelling_signals[0]); i++) {
                struct sigaction previous;

                if (sigaction(cancelling_signals[i], NULL, &previous) == 0 && previous.sa_handler != SIG_IGN)
                        sigaction(cancelling_signals[i], &action, NULL);
        }
        signal(SIGPIPE, SIG_IGN);
}

/* ------------------------------------------------- the terminal prompt -- */

struct terminal_approval {
        int fd;             /* the controlling terminal, read-write */
        long timeout_ms;
};

/* The length of the valid UTF-8 character at `bytes` (a lead byte above 0x7f), or 0 when there is none. */
static size_t character_length(const unsigned char *bytes)
{
        size_t length = bytes[0] >= 0xf0 ? 4 : bytes[0] >= 0xe0 ? 3 : 2;

        for (size_t i = 1; i < length; i++)
                if (bytes[i] == '\0')
                        return 0;
        return dsh_text_is_utf8((const char *) bytes, length, NULL) ? length : 0;
}

/* The code point of a valid character of `length` bytes. */
static unsigned code_point(const unsigned char *bytes, size_t length)
{
        unsigned code = bytes[0] & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07);

        for (size_t i = 1; i < length; i++)
                code = (code << 6) | (bytes[i] & 0x3f);
        return code;
}

/* Characters a terminal acts on or that reorder what is shown: C1 controls, bidirectional marks and overrides. */
static bool is_hidden(unsigned code)
{
        return (code >= 0x80 && code <= 0x9f) || code == 0x061c || code == 0x200e || code == 0x200f ||
               (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/*
 * `text` for the prompt, so that nothing in it passes for prompt text:
 * control characters, bytes that are not UTF-8 and hidden characters are
 * shown by number (\x1b, \u202e), and each line after the first starts with
 * `continuation`, indented under the first.
 */
static void append_escaped(FILE *out, const char *text, const char *continuation)
{
        const unsigned char *byte = (const unsigned char *) text;

        while (*byte) {
                size_t length = *byte >= 0x80 ? character_length(byte) : 1;

                if (*byte == '\n')
                        fprintf(out, "\n%s", continuation);
                else if (*byte == '\t')
                        fputs("\\t", out);
                else if (*byte < 0x20 || *byte == 0x7f || length == 0)
                        fprintf(out, "\\x%02x", *byte);
                else if (length > 1 && is_hidden(code_point(byte, length)))
                        fprintf(out, "\\u%04x", code_point(byte, length));
                else
                        fwrite(byte, 1, length, out);
                byte += length ? length : 1;
        }
}

static long long monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Reads one answer line within the bound; false on Ctrl-C (a cancellation), the bound, or EOF. */
static bool read_answer(int fd, long timeout_ms, char *answer, size_t size)
{
        long long deadline = monotonic_ms() + timeout_ms;
        size_t used = 0;

        for (;;) {
                long long left = deadline - monotonic_ms();
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                int ready = left > 0 ? poll(&poll_fd, 1, left > INT_MAX ? INT_MAX : (int) left) : 0;
                ssize_t length;
                char byte;

                if (first_signal)
                        return false;
                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready <= 0)
                        return false;
                length = read(fd, &byte, 1);
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        return false;
                if (byte == '\n')
                        break;
                if (used + 1 < size)
                        answer[used++] = byte;
        }
        answer[used] = '\0';
        return true;
}

/*
 * The yes/no prompt on the controlling terminal: the command, the modes and
 * the justification, shown so that neither can pass for prompt text; the
 * answer defaults to no (an empty line, EOF, Ctrl-C, the bound).  Input
 * typed before the question is discarded, so that no keystroke meant for
 * something else answers it.
 */
static int approve_on_terminal(const dsh_bash_escalation *escalation, void *data, dsh_error *error)
{
        const struct terminal_approval *terminal = data;
        char *prompt = NULL, answer[64] = "";
        size_t prompt_size = 0;
        FILE *out = open_memstream(&prompt, &prompt_size);
        bool answered;

        (void) error;
        if (!out)
                return -ENOMEM;
        fprintf(out, "dsh-sandbox: a command asks to run once with wider access.\n  command:        ");
        append_escaped(out, escalation->command, "                  ");
        fprintf(out, "\n  justification:  ");
        append_escaped(out, escalation->justification, "                  ");
        fprintf(out, "\n  mode:           %s (now %s)", dsh_mode_name(escalation->requested_mode),
                dsh_mode_name(escalation->current_mode));
        /* Exactly what is granted besides the mode, one entry a line. */
        for (char *const *root = escalation->additional_write; root && *root; root++) {
                fprintf(out, "\n  writable root:  ");
                append_escaped(out, *root, "                  ");
        }
        for (char *const *host = escalation->additional_hosts; host && *host; host++) {
                fprintf(out, "\n  allowed host:   ");
                append_escaped(out, *host, "                  ");
        }
        fprintf(out, "\nAllow this command once with this? [y/N] ");
        if (fclose(out) != 0) {
                free(prompt);
                return -ENOMEM;
        }
        tcflush(terminal->fd, TCIFLUSH);
        for (size_t written = 0; written < prompt_size;) {
                ssize_t length = write(terminal->fd, prompt + written, prompt_size - written);

                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0) {
                        int saved_errno = length < 0 ? errno : EIO;

                        free(prompt);
                        return -saved_errno;
                }
                written += (size_t) length;
        }
        free(prompt);
        answered = read_answer(terminal->fd, terminal->timeout_ms, answer, sizeof(answer));
        if (!answered)
                (void) !write(terminal->fd, "\n", 1);
        return answered && (strcasecmp(answer, "y") == 0 || strcasecmp(answer, "yes") == 0) ? 1 : 0;
}

/* ------------------------------------------------------------ output -- */

/* The human form's live view: what the command writes, as it comes, and whether a line is left open. */
struct live_output {
        bool line_open;     /* the last byte shown was not a newline: a marker must start a line of its own */
};

static int show_output(int stream, const char *data, size_t length, void *user_data)
{
        struct live_output *live = user_data;
        int result = cli_write_all(stream == 1 ? STDOUT_FILENO : STDERR_FILENO, data, length);

        if (result == 0 && length > 0)
                live->line_open = data[length - 1] != '\n';
        return result;
}

/* The most denial lines the human form shows: a few, then a count (--json has them all). */
#define DENIAL_LINES_MAX 3

/* One line per denial, at most DENIAL_LINES_MAX, then how many more there were. */
static void print_denials(const dsh_denials *denials)
{
        unsigned long more = denials->dropped;

        for (size_t i = 0; i < denials->count; i++) {
                char *line;

                if (i >= DENIAL_LINES_MAX) {
                        more++;
                        continue;
                }
                line = dsh_denial_describe(&denials->items[i]);
                cli_print_message("denied: %s", line ? line : "(out of memory)");
                free(line);
        }
        if (more > 0)
                cli_print_message("... and %lu more denial%s", more, more == 1 ? "" : "s");
}

/* The human form after the output: what the tool says, the denials, the markers, the warnings; returns the exit status. */
static int finish_human(const dsh_bash_result *result, const struct live_output *live)
{
        if (live->line_open)
                fputc('\n', stderr);
        switch (result->kind) {
        case DSH_BASH_RUNNER_FAILED:
                cli_print_error(&result->error);
                break;
        case DSH_BASH_TIMED_OUT:
        case DSH_BASH_CANCELLED:
        case DSH_BASH_REJECTED:
                cli_print_message("%s", result->message);
                break;
        case DSH_BASH_DENIED:
                /* A held-back file the command tried to change: the message names it. */
                if (result->message)
                        cli_print_message("%s", result->message);
                break;
        case DSH_BASH_COMPLETED:
                break;
        }
        print_denials(&result->denials);
        for (char **marker = result->markers; marker && *marker; marker++)
                fprintf(stderr, "%s\n", *marker);
        for (char **warning = result->warnings; warning && *warning; warning++)
                cli_print_message("warning: %s", *warning);
        switch (result->kind) {
        case DSH_BASH_RUNNER_FAILED:
                return CLI_EXIT_SANDBOX;
        case DSH_BASH_TIMED_OUT:
                return 124;   /* as timeout(1) */
        case DSH_BASH_CANCELLED:
                return 128 + (first_signal ? first_signal : SIGTERM);
        case DSH_BASH_REJECTED:
                return CLI_EXIT_FAILURE;
        case DSH_BASH_COMPLETED:
        case DSH_BASH_DENIED:
                break;
        }
        if (result->signal > 0)
                return 128 + result->signal;
        return result->exit_code >= 0 ? result->exit_code : CLI_EXIT_SANDBOX;
}

/* ------------------------------------------------------------- the run -- */

/*
 * The approval channel: the harness's command when given, else the
 * controlling terminal when there is one (opened only for an escalation),
 * else none — the library then refuses the escalation with its message.
 */
static void choose_approval(const struct bash_options *options, dsh_bash_request *request,
                            dsh_bash_approval_command *command, struct terminal_approval *terminal)
{
        long timeout_ms = options->approval_timeout_ms ? options->approval_timeout_ms
                                                       : DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS;

        if (!asks_escalation(options))
                return;
        if (options->approval_command) {
                *command = (dsh_bash_approval_command) { options->approval_command, timeout_ms, STDERR_FILENO };
                request->approve = dsh_bash_approve_with_command;
                request->approve_data = command;
                return;
        }
        terminal->fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        terminal->timeout_ms = timeout_ms;
        if (terminal->fd < 0)
                return;
        request->approve = approve_on_terminal;
        request->approve_data = terminal;
}

/* The result, as --json or as the human form after the live output; returns the exit status. */
static int present_result(const struct bash_options *options, const dsh_bash_result *result,
                          const struct live_output *live)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int encoded;

        if (!options->json)
                return finish_human(result, live);
        encoded = dsh_json_encode_bash_result(result, &text, &error);
        return cli_print_json(encoded, text, &error, CLI_EXIT_FAILURE);
}

/*
 * `bash --remote`: the tool runs on the remote host, where the command's
 * dialect and runner are (docs/remote.md); its result comes back and is
 * shown here exactly as a local one.  An escalation is the user's to
 * approve here, never the remote's: the harness approves and passes the
 * approved mode with --mode, so --sandbox-permissions has no place here.
 */
static int run_remote_bash(const cli_policy_options *policy_options, const struct bash_options *options,
                           const char *command)
{
        dsh_remote_bash_options bash = DSH_REMOTE_BASH_OPTIONS_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        struct live_output live = { false };
        int passed_signal = 0, status;

        if (options->cwd)
                return cli_usage_error("bash: --cwd cannot be used with --remote: the command starts in the "
                                       "remote's workspace root");
        if (options->additional_write || options->additional_hosts)
                return cli_usage_error("bash: %s cannot be used with --remote: approve the grant here and pass "
                                       "it as %s",
                                       options->additional_write ? "--additional-write" : "--additional-host",
                                       options->additional_write ? "--allow-write" : "--allow-host");
        if (options->sandbox_permissions || options->approval_command)
                return cli_usage_error("bash: %s cannot be used with --remote: approve the escalation here and "
                                       "pass the approved mode with --mode",
                                       options->sandbox_permissions ? "--sandbox-permissions" : "--approval-command");
        bash.timeout_ms = options->timeout_ms;
        bash.output_limit = (size_t) options->output_limit;
        if (!options->json) {
                bash.on_output = show_output;
                bash.output_data = &live;
        }
        status = cli_remote_bash(policy_options, command, &bash, &result, &passed_signal);
        if (status == 0) {
                first_signal = passed_signal;
                status = present_result(options, &result, &live);
        }
        dsh_bash_result_clear(&result);
        return status;
}

static int run_bash(dsh_runtime *runtime, const dsh_policy *policy, const struct bash_options *options,
                    const char *command)
{
        dsh_bash_request request = DSH_BASH_REQUEST_INIT;
        dsh_bash_result result = DSH_BASH_RESULT_INIT;
        dsh_bash_approval_command approval_command;
        struct terminal_approval terminal = { -1, 0 };
        struct live_output live = { false };
        dsh_bash_cancellation *cancellation = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int status;

        if (dsh_bash_cancellation_new(&cancellation, &error) < 0)
                return cli_library_error(&error, CLI_EXIT_SANDBOX);
        catch_cancelling_signals(cancellation);
        request.command = command;
        request.policy = policy;
        request.timeout_ms = options->timeout_ms;
        request.output_limit = (size_t) options->output_limit;
        request.sandbox_permissions = options->sandbox_permissions;
        request.justification = options->justification;
        request.cwd = options->cwd;
        request.additional_write = options->additional_write;
        request.additional_hosts = options->additional_hosts;
        request.cancellation = cancellation;
        if (!options->json) {
                request.on_output = show_output;
                request.output_data = &live;
        }
        choose_approval(options, &request, &approval_command, &terminal);
        if (dsh_bash_run(runtime, &request, &result, &error) < 0) {
                cli_print_error(&error);
                status = cli_exit_status_for_error(&error);
                dsh_error_clear(&error);
        } else {
                if (!options->json && result.kind == DSH_BASH_REJECTED && !request.approve)
                        cli_print_message("warning: there is no terminal to ask and no --approval-command");
                status = present_result(options, &result, &live);
        }
        dsh_bash_result_clear(&result);
        if (terminal.fd >= 0)
                close(terminal.fd);
        /* The handlers stay: a late signal still only writes to a pipe, which stays open until exit. */
        return status;
}

int cli_command_bash(int argc, char **argv)
{
        static const struct option own_options[] = {
                { "timeout", required_argument, NULL, OPTION_TIMEOUT },
                { "sandbox-permissions", required_argument, NULL, OPTION_SANDBOX_PERMISSIONS },
                { "justification", required_argument, NULL, OPTION_JUSTIFICATION },
                { "approval-command", required_argument, NULL, OPTION_APPROVAL_COMMAND },
                { "approval-timeout", required_argument, NULL, OPTION_APPROVAL_TIMEOUT },
                { "output-limit", required_argument, NULL, OPTION_OUTPUT_LIMIT },
                { "cwd", required_argument, NULL, OPTION_CWD },
                { "additional-write", required_argument, NULL, OPTION_ADDITIONAL_WRITE },
                { "additional-host", required_argument, NULL, OPTION_ADDITIONAL_HOST },
                { "json", no_argument, NULL, CLI_OPTION_JSON },
                { NULL, 0, NULL, 0 },
        };
        struct bash_options options = { 0, NULL, NULL, NULL, 0, 0, false, NULL, NULL, NULL };
        const cli_command_line line = {
                .name = "bash",
                .help = bash_help,
                .policy_options = CLI_POLICY_ALL | CLI_POLICY_REMOTE,
                .own_options = own_options,
                .own_option = store_bash_option,
                .data = &options,
        };
        cli_policy_options policy_options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        int operands = argc, result;

        result = cli_options_parse(&line, argc, argv, &policy_options, &operands);
        if (result == 0 && operands >= argc)
                result = cli_usage_error("bash: missing COMMAND");
        if (result == 0 && argc - operands > 1)
                result = cli_usage_error("bash: COMMAND is one argument (quote it), not %d: \"%s\" follows it",
                                         argc - operands, argv[operands + 1]);
        if (result == 0 && options.approval_timeout_ms && !options.approval_command && !asks_escalation(&options))
                cli_print_message("warning: --approval-timeout has no effect without --sandbox-permissions");
        if (result == 0 && policy_options.remote) {
                result = run_remote_bash(&policy_options, &options, argv[operands]);
                cli_policy_options_clear(&policy_options);
                dsh_strv_free(options.additional_write);
                dsh_strv_free(options.additional_hosts);
                return result;
        }
        if (result == 0)
                result = cli_policy_resolve(&policy_options, &runtime, &policy);
        if (result == 0)
                cli_policy_options_warn_without_effect(&policy_options, policy.mode);
        if (result == 0)
                result = run_bash(runtime, &policy, &options, argv[operands]);
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&policy_options);
        dsh_strv_free(options.additional_write);
        dsh_strv_free(options.additional_hosts);
        return cli_command_status(result);
}
