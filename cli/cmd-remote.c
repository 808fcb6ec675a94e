/* SPDX-License-Identifier: MIT */
/*
 * `--remote DEST` on run, confine and probe, and `dsh-sandbox remote-helper`,
 * the internal subcommand ssh runs on the remote host (docs/remote.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/json.h"
#include "dsh-sandbox/remote.h"

#include "cli.h"
#include "options.h"
#include "remote-cli.h"
#include "runtime-cli.h"

/* One remote call's setting: this host's runtime (for its config), the target and the request. */
struct remote_context {
        dsh_runtime *runtime;
        dsh_remote_target target;
        dsh_remote_request request;
        dsh_error error;
};

#define REMOTE_CONTEXT_INIT { NULL, DSH_REMOTE_TARGET_INIT, DSH_REMOTE_REQUEST_INIT, DSH_ERROR_INIT }

/*
 * The local config gives the transport (sshCommand, remoteProgram); the
 * policy options go to the remote as typed: --root and --allow-write are
 * the remote's paths, resolved there, never here.  --session is refused:
 * a session is this host's state (its log, its cwd), and the remote has
 * none of it.  Returns 0, or an exit status after printing the error; the
 * caller ends the context with remote_finish() either way.
 */
static int remote_setup(const cli_policy_options *options, struct remote_context *context)
{
        dsh_runtime_options runtime_options;
        dsh_policy_request local_request;
        const dsh_config *config;
        int result;

        if (options->session)
                return cli_usage_error("--session cannot be used with --remote: a session is this host's state; "
                                       "give the remote's --mode and --root instead");
        result = cli_policy_request(options, &local_request);
        if (result != 0)
                return result;
        cli_policy_runtime_options(options, &runtime_options);
        runtime_options.backend = NULL;   /* --backend is the remote's to apply */
        runtime_options.use_verdict_cache = false;
        result = cli_runtime_new(&runtime_options, CLI_EXIT_SANDBOX, &context->runtime);
        if (result != 0)
                return result;
        config = dsh_runtime_config(context->runtime);
        context->target = (dsh_remote_target) { options->remote, config->ssh_command, config->remote_program };
        /* The network goes as typed, like the mode; without a flag the remote's own config decides it. */
        context->request = (dsh_remote_request) { local_request.has_mode, local_request.mode, options->root,
                                                  options->allow_write, options->backend,
                                                  options->network_given ? &options->network : NULL,
                                                  options->mask, options->allow_env };
        return 0;
}

/*
 * Ends the context: `called` is what the library call returned (or 0 when
 * none was made).  A failed call's error is printed, with 126/127 when the
 * remote could not execute the program, else 125: nothing ran.  Returns
 * `status` otherwise.
 */
static int remote_finish(struct remote_context *context, int called, int status)
{
        dsh_runtime_free(context->runtime);
        if (called >= 0)
                return status;
        status = context->error.code == DSH_ERROR_EXEC_FAILED ? cli_exit_status_for_error(&context->error)
                                                              : CLI_EXIT_SANDBOX;
        cli_print_error(&context->error);
        dsh_error_clear(&context->error);
        return status;
}

int cli_remote_confine(const cli_policy_options *options, char **command)
{
        struct remote_context context = REMOTE_CONTEXT_INIT;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        char *text = NULL;
        int result = remote_setup(options, &context), called = 0;

        /* Refused here as `confine` refuses it (2): an explicit danger-full-access needs no remote to say so. */
        if (result == 0 && context.request.has_mode && !dsh_mode_is_confined(context.request.mode))
                result = cli_usage_error("confine: mode \"%s\" needs no confinement; spawn the argv as it is",
                                         dsh_mode_name(context.request.mode));
        if (result == 0)
                called = dsh_remote_confine(&context.target, &context.request, command, &facts, &context.error);
        if (result == 0 && called == 0) {
                int encoded = dsh_json_encode_confined_argv(&facts, &text, &context.error);

                result = cli_print_json(encoded, text, &context.error, CLI_EXIT_SANDBOX);
        }
        dsh_confined_argv_clear(&facts);
        return remote_finish(&context, called, result);
}

int cli_remote_probe(const cli_policy_options *options)
{
        struct remote_context context = REMOTE_CONTEXT_INIT;
        bool selected = false;
        char *text = NULL;
        int result = remote_setup(options, &context), called = 0;

        if (result == 0)
                called = dsh_remote_probe(&context.target, &context.request, &text, &selected, &context.error);
        if (result == 0 && called == 0) {
                result = cli_print_json(0, text, &context.error, CLI_EXIT_FAILURE);
                if (result == CLI_EXIT_SUCCESS && !selected)
                        result = CLI_EXIT_SANDBOX;
        }
        return remote_finish(&context, called, result);
}

/*
 * Signals for the remote command.  Without a terminal, ssh passes no
 * signal on, so this process does: the signals a command is usually told
 * to stop or reload with — from the terminal (ssh runs in a process group
 * of its own, so Ctrl-C reaches only this process) or from kill alike —
 * are written, one byte each, to a pipe the library reads and sends on as
 * signal frames; the helper signals the command's process group.  The
 * handler only writes to a non-blocking pipe (async-signal-safe; errno kept).
 */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static volatile sig_atomic_t signal_pipe_write_end = -1;
static volatile sig_atomic_t first_passed_signal;

static void pass_signal_on(int signal_number)
{
        int saved_errno = errno;
        unsigned char number = (unsigned char) signal_number;

        if (!first_passed_signal)
                first_passed_signal = signal_number;
        if (signal_pipe_write_end >= 0 && write(signal_pipe_write_end, &number, 1) < 0) {
                /* A full pipe: 4096 signals not yet sent; this one is lost like a merged pending signal. */
        }
        errno = saved_errno;
}

static void set_forwarding(void (*handler)(int))
{
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++) {
                struct sigaction action = { 0 }, previous;

                /* A signal ignored when this process started (nohup) stays ignored. */
                if (sigaction(forwarded_signals[i], NULL, &previous) < 0 || previous.sa_handler == SIG_IGN)
                        continue;
                action.sa_handler = handler;
                action.sa_flags = SA_RESTART;
                sigemptyset(&action.sa_mask);
                sigaction(forwarded_signals[i], &action, NULL);
        }
}

/* From here until forwarding_end(), the signals above are written to `signal_pipe`.  Returns 0 or an exit status. */
static int forwarding_begin(int signal_pipe[2])
{
        if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                cli_print_message("cannot make a pipe: %s", strerror(errno));
                return CLI_EXIT_SANDBOX;
        }
        /* A local reader that goes away must not kill this process before the remote command's end is known. */
        signal(SIGPIPE, SIG_IGN);
        signal_pipe_write_end = signal_pipe[1];
        set_forwarding(pass_signal_on);
        fflush(NULL);
        return 0;
}

static void forwarding_end(int signal_pipe[2])
{
        set_forwarding(SIG_DFL);
        signal_pipe_write_end = -1;
        close(signal_pipe[0]);
        close(signal_pipe[1]);
}

int cli_remote_run(const cli_policy_options *options, char **program)
{
        struct remote_context context = REMOTE_CONTEXT_INIT;
        int signal_pipe[2] = { -1, -1 }, wait_status = 0, called = 0;
        int result = remote_setup(options, &context);

        if (result == 0)
                result = forwarding_begin(signal_pipe);
        if (result == 0) {
                const dsh_remote_stdio stdio = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, signal_pipe[0] };

                called = dsh_remote_run(&context.target, &context.request, program, &stdio, &wait_status,
                                        &context.error);
                forwarding_end(signal_pipe);
        }
        result = remote_finish(&context, called, result);
        return result == 0 && called == 0 ? dsh_end_like_child(wait_status) : result;
}

int cli_remote_bash(const cli_policy_options *options, const char *command, const dsh_remote_bash_options *bash,
                    dsh_bash_result *result_out, int *first_signal)
{
        struct remote_context context = REMOTE_CONTEXT_INIT;
        dsh_remote_bash_options call_options = *bash;
        int signal_pipe[2] = { -1, -1 }, called = 0;
        int result = remote_setup(options, &context);

        if (result == 0)
                result = forwarding_begin(signal_pipe);
        if (result == 0) {
                call_options.signal_fd = signal_pipe[0];
                called = dsh_remote_bash(&context.target, &context.request, command, &call_options, result_out,
                                         &context.error);
                forwarding_end(signal_pipe);
                *first_signal = first_passed_signal;
        }
        return remote_finish(&context, called, result);
}

static const char remote_helper_help[] =
        "Usage: dsh-sandbox remote-helper\n"
        "Internal: what `--remote` runs on the remote host through ssh.  Serves one call, speaking\n"
        "dsh-sandbox's frame protocol on stdin and stdout (docs/remote.md); not for people.\n";

int cli_command_remote_helper(int argc, char **argv)
{
        const cli_command_line line = { .name = "remote-helper", .help = remote_helper_help };
        int result = cli_options_parse_without_operands(&line, argc, argv);

        if (result != 0)
                return cli_command_status(result);
        signal(SIGPIPE, SIG_IGN);   /* the caller or its command may go away; the spawn restores the default */
        return dsh_remote_serve(NULL, STDIN_FILENO, STDOUT_FILENO) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_SUCCESS;
}

static const char remote_service_help[] =
        "Usage: dsh-sandbox remote-service\n"
        "Internal: what `--remote` starts once per destination on the remote host, over the shared\n"
        "connection.  Serves many calls on a private unix socket until its ssh session ends\n"
        "(docs/remote.md); not for people.\n";

int cli_command_remote_service(int argc, char **argv)
{
        const cli_command_line line = { .name = "remote-service", .help = remote_service_help };
        int result = cli_options_parse_without_operands(&line, argc, argv);

        if (result != 0)
                return cli_command_status(result);
        signal(SIGPIPE, SIG_IGN);   /* a call's peer may go away; the spawn restores the default */
        return dsh_remote_service(NULL, STDOUT_FILENO) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_SUCCESS;
}
