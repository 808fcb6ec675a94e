/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox session new|mode|show|list|denials`: durable sessions in the state
 * directory ($DSH_SANDBOX_STATE_DIR, else $XDG_STATE_HOME/dsh-sandbox, else
 * ~/.local/state/dsh-sandbox).  Exit status: 0, 1 on failure, 2 for usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "runtime-cli.h"

static const char session_help[] =
        "Usage: dsh-sandbox session COMMAND ...\n"
        "Durable sessions: each session has an immutable workspace root (its cwd) and a mode\n"
        "that only `session mode` changes; both survive restarts.\n\n"
        "Commands:\n"
        "  new [--cwd DIR] [--parent ID]   create a session, print its id\n"
        "  mode ID MODE                    switch the session's mode (appends one sandbox/mode event)\n"
        "  show ID [--json]                header, events and effective mode\n"
        "  list [--json]                   ids, effective modes and cwds\n"
        "  denials ID [--json]             the denials the session's calls met, oldest first\n\n"
        "Sessions live in $DSH_SANDBOX_STATE_DIR, else $XDG_STATE_HOME/dsh-sandbox, else\n"
        "~/.local/state/dsh-sandbox.  Exit status: 0; 1 on failure; 2 for a usage error.\n";

static const char new_help[] =
        "Usage: dsh-sandbox session new [--cwd DIR] [--parent ID]\n"
        "Creates a session and prints its id.\n"
        "  --cwd DIR      the session's workspace root (default: the current directory)\n"
        "  --parent ID    delegate from session ID: the child is stamped with the parent's mode\n"
        "                 override, if it has one\n";

static const char mode_help[] =
        "Usage: dsh-sandbox session mode ID MODE\n"
        "Switches session ID to MODE (read-only, workspace-write or danger-full-access) by\n"
        "appending exactly one sandbox/mode event.  The switch survives restarts.\n";

static const char show_help[] =
        "Usage: dsh-sandbox session show ID [--json] [--config FILE]\n"
        "Prints the session's header, its events and its effective mode (the session's override,\n"
        "else the configured default).  --json prints\n"
        "{\"header\":{...},\"events\":[...],\"override\":MODE,\"effectiveMode\":MODE,\"path\":...}.\n"
        "Options may come before or after ID.\n"
        "      --json             print one JSON object instead of text\n"
        "  -c, --config FILE      config file (for the configured default mode)\n";

static const char list_help[] =
        "Usage: dsh-sandbox session list [--json] [--config FILE]\n"
        "Prints one line per session: id, effective mode and cwd, separated by tabs.  --json prints\n"
        "one array instead, [{\"id\":...,\"cwd\":...,\"effectiveMode\":MODE,\"override\":MODE},...]\n"
        "(override only when the session has one).  A session that does not load is reported on\n"
        "stderr and left out; the others are still listed, and the exit status is 1.\n"
        "      --json             print one JSON array instead of text\n"
        "  -c, --config FILE      config file (for the configured default mode)\n";

static const char denials_help[] =
        "Usage: dsh-sandbox session denials ID [--json] [--config FILE]\n"
        "Prints the denials the session's calls met (bash, fs, serve, mcp), oldest first, one line\n"
        "each: time (UTC), surface and the denial with its grant, separated by tabs; then how many\n"
        "older ones were dropped, when some were (a session keeps the newest 1024).  --json prints\n"
        "{\"sessionId\":ID,\"denials\":[{...,\"at\":MS,\"surface\":\"bash\"},...],\"dropped\":N}\n"
        "(dropped only when some were).  Options may come before or after ID.\n"
        "      --json             print one JSON object instead of text\n"
        "  -c, --config FILE      config file\n";

/* The runtime of one session command: its store, and the config a --config names (else the default). */
static int session_runtime(const char *config_path, dsh_runtime **runtime_out)
{
        dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;

        cli_runtime_options_set_config(&options, config_path);
        return cli_runtime_new(&options, CLI_EXIT_FAILURE, runtime_out);
}


enum { OPTION_CWD = CLI_OPTION_OWN, OPTION_PARENT };

struct new_options {
        const char *cwd;
        const char *parent_id;
};

static int store_new_option(int key, const char *value, void *data)
{
        struct new_options *options = data;

        if (key == OPTION_CWD)
                options->cwd = value;
        else if (key == OPTION_PARENT)
                options->parent_id = value;
        return 0;
}

static int command_new(int argc, char **argv)
{
        static const struct option new_options[] = {
                { "cwd", required_argument, NULL, OPTION_CWD },
                { "parent", required_argument, NULL, OPTION_PARENT },
                { NULL, 0, NULL, 0 },
        };
        struct new_options options = { NULL, NULL };
        const cli_command_line line = {
                .name = "session new",
                .help = new_help,
                .own_options = new_options,
                .own_option = store_new_option,
                .data = &options,
        };
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_session_store *store = NULL;
        dsh_session *session = NULL, *parent = NULL;
        char *cwd = NULL;
        struct stat status;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result != 0)
                return cli_command_status(result);
        cwd = options.cwd ? cli_path_from_cwd(options.cwd) : getcwd(NULL, 0);
        if (!cwd) {
                cli_print_message("session new: cannot determine the cwd: %s", strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        /* The library records any absolute path (canonicalized); the tool refuses a typo that names nothing. */
        if (stat(cwd, &status) < 0 || !S_ISDIR(status.st_mode)) {
                cli_print_message("session new: --cwd \"%s\" is not a directory", cwd);
                free(cwd);
                return CLI_EXIT_FAILURE;
        }
        result = session_runtime(NULL, &runtime);
        if (result == 0 && options.parent_id)
                result = cli_session_open(runtime, options.parent_id, CLI_EXIT_FAILURE, &parent);
        if (result == 0 && dsh_runtime_session_store(runtime, &store, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0 && dsh_session_create(store, cwd, parent, &session, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0)
                printf("%s\n", dsh_session_id(session));
        dsh_session_free(session);
        dsh_session_free(parent);
        dsh_runtime_free(runtime);
        free(cwd);
        return result;
}

static int command_mode(int argc, char **argv)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_session *session = NULL;
        char *data_text = NULL;
        dsh_mode mode;
        int result;

        const cli_command_line line = { .name = "session mode", .help = mode_help };
        int first = argc;

        result = cli_options_parse(&line, argc, argv, NULL, &first);
        if (result != 0)
                return cli_command_status(result);
        if (argc - first != 2)
                return cli_usage_error("session mode takes exactly ID and MODE");
        result = session_runtime(NULL, &runtime);
        if (result == 0)
                result = cli_session_open(runtime, argv[first], CLI_EXIT_FAILURE, &session);
        if (result == 0 && dsh_mode_parse(argv[first + 1], &mode) == 0) {
                if (dsh_session_set_mode(session, mode, NULL, &error) < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
        } else if (result == 0) {
                /* Not a mode: the library's invariant refuses it with its exact message. */
                if (dsh_json_encode_mode_event_data(argv[first + 1], &data_text, &error) < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
                else if (dsh_session_append(session, "sandbox/mode", data_text, NULL, &error) < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
                else
                        result = CLI_EXIT_FAILURE;  /* unreachable: the invariant refuses it */
        }
        free(data_text);
        dsh_session_free(session);
        dsh_runtime_free(runtime);
        return result;
}

/* The effective mode without an explicit one: the session's override, else the config's. */
static const char *effective_mode_name(const dsh_session *session, const dsh_config *config)
{
        dsh_mode mode = config->mode;

        dsh_session_override(session, &mode);
        return dsh_mode_name(mode);
}

static int print_event(const dsh_session_event *event, void *userdata)
{
        (void) userdata;
        if (event->seq == 0)
                printf("header: %s\n", event->line);
        else
                printf("event %" PRIu64 " %s: %s\n", event->seq, event->type, event->line);
        return 0;
}

static int print_session_json(dsh_session *session, const dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        /* Named as the user knows it; the codec checks every member again. */
        int result = cli_require_utf8(dsh_session_path(session), "session show: the session log path");

        if (result != 0)
                return result;
        if (dsh_json_encode_session(session, config->mode, &text, &error) < 0)
                return cli_library_error(&error, CLI_EXIT_FAILURE);
        return cli_print_json(0, text, &error, CLI_EXIT_FAILURE);
}

static int print_session_text(dsh_session *session, const dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_mode override;
        bool has_override;

        if (dsh_session_foreach_event(session, print_event, NULL, &error) < 0)
                return cli_library_error(&error, CLI_EXIT_FAILURE);
        has_override = dsh_session_override(session, &override);
        printf("effective mode: %s (%s)\n", effective_mode_name(session, config),
               has_override ? "session override" : "configured default");
        return 0;
}

struct show_arguments {
        const char *command;            /* "session show", "session denials" */
        const char *id;
        bool json;
};

static int store_show_argument(int key, const char *value, void *data)
{
        struct show_arguments *arguments = data;

        if (key == CLI_OPTION_JSON) {
                arguments->json = true;
        } else if (key == CLI_OPTION_OPERAND) {
                if (arguments->id)
                        return cli_usage_error("%s: unknown argument \"%s\"", arguments->command, value);
                arguments->id = value;
        }
        return 0;
}

static int command_show(int argc, char **argv)
{
        struct show_arguments arguments = { "session show", NULL, false };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        const cli_command_line line = {
                .name = "session show",
                .help = show_help,
                .policy_options = CLI_POLICY_CONFIG,
                .own_options = cli_json_option,
                .own_option = store_show_argument,
                .data = &arguments,
                .operands_anywhere = true,
        };
        dsh_runtime *runtime = NULL;
        dsh_session *session = NULL;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result != 0) {
                cli_policy_options_clear(&options);
                return cli_command_status(result);
        }
        if (!arguments.id) {
                cli_policy_options_clear(&options);
                return cli_usage_error("session show requires a session ID");
        }
        result = session_runtime(options.config_path, &runtime);
        if (result == 0)
                result = cli_session_open(runtime, arguments.id, CLI_EXIT_FAILURE, &session);
        if (result == 0)
                result = arguments.json ? print_session_json(session, dsh_runtime_config(runtime))
                                        : print_session_text(session, dsh_runtime_config(runtime));
        dsh_session_free(session);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return result;
}

/* A session that does not load is reported and skipped; the others are still listed, and the exit status says so. */
static void report_skipped(const char *id, const dsh_error *error, void *data)
{
        int *status = data;

        (void) id;
        cli_print_error(error);
        *status = error->code == DSH_ERROR_INVALID_INPUT ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

static int print_list_json(dsh_session_store *store, const dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int skipped_status = 0, printed;

        if (dsh_json_encode_session_list(store, config->mode, report_skipped, &skipped_status, &text, &error) < 0)
                return cli_library_error(&error, CLI_EXIT_FAILURE);
        printed = cli_print_json(0, text, &error, CLI_EXIT_FAILURE);
        return printed != 0 ? printed : skipped_status;
}

static int print_list_text(dsh_session_store *store, const dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        char **ids = NULL;
        int result = 0;

        if (dsh_session_store_list(store, &ids, &error) < 0)
                return cli_library_error(&error, CLI_EXIT_FAILURE);
        for (char **id = ids; id && *id; id++) {
                dsh_session *session = NULL;

                if (dsh_session_open(store, *id, &session, &error) < 0) {
                        report_skipped(*id, &error, &result);
                        dsh_error_clear(&error);
                        continue;
                }
                printf("%s\t%s\t%s\n", *id, effective_mode_name(session, config), dsh_session_cwd(session, NULL));
                dsh_session_free(session);
        }
        dsh_strv_free(ids);
        return result;
}

static int command_list(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        bool json = false;
        const cli_command_line line = {
                .name = "session list",
                .help = list_help,
                .policy_options = CLI_POLICY_CONFIG,
                .own_options = cli_json_option,
                .own_option = cli_store_json_option,
                .data = &json,
        };
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        dsh_session_store *store = NULL;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result != 0) {
                cli_policy_options_clear(&options);
                return cli_command_status(result);
        }
        result = session_runtime(options.config_path, &runtime);
        if (result == 0 && dsh_runtime_session_store(runtime, &store, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0)
                result = json ? print_list_json(store, dsh_runtime_config(runtime))
                              : print_list_text(store, dsh_runtime_config(runtime));
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return result;
}

/* "2026-01-02T03:04:05.678Z" */
static void format_time(long long at_ms, char *text, size_t size)
{
        time_t seconds = (time_t) (at_ms / 1000);
        struct tm utc;

        if (!gmtime_r(&seconds, &utc) || strftime(text, size, "%Y-%m-%dT%H:%M:%S", &utc) == 0)
                snprintf(text, size, "%lld", at_ms);
        else
                snprintf(text + strlen(text), size - strlen(text), ".%03dZ", (int) (at_ms % 1000));
}

static int print_denials_text(const dsh_session_denials *denials)
{
        for (size_t i = 0; i < denials->count; i++) {
                char *line = dsh_denial_describe(&denials->items[i].denial);
                char at[64];

                if (!line) {
                        fprintf(stderr, "dsh-sandbox: session denials: out of memory\n");
                        return CLI_EXIT_FAILURE;
                }
                format_time(denials->items[i].at_ms, at, sizeof(at));
                printf("%s\t%s\t%s\n", at, denials->items[i].surface, line);
                free(line);
        }
        if (denials->dropped > 0)
                printf("%llu older denial%s dropped\n", denials->dropped, denials->dropped == 1 ? "" : "s");
        return fflush(stdout) == 0 ? 0 : CLI_EXIT_FAILURE;
}

static int print_denials_json(const char *id, const dsh_session_denials *denials)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;
        int encoded = dsh_json_encode_session_denials(id, denials, &text, &error);

        return cli_print_json(encoded, text, &error, CLI_EXIT_FAILURE);
}

static int command_denials(int argc, char **argv)
{
        struct show_arguments arguments = { "session denials", NULL, false };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        const cli_command_line line = {
                .name = "session denials",
                .help = denials_help,
                .policy_options = CLI_POLICY_CONFIG,
                .own_options = cli_json_option,
                .own_option = store_show_argument,
                .data = &arguments,
                .operands_anywhere = true,
        };
        dsh_session_denials denials = DSH_SESSION_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_runtime *runtime = NULL;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0 && !arguments.id)
                result = cli_usage_error("session denials requires a session ID");
        if (result == 0 && !dsh_session_id_is_valid(arguments.id))
                result = cli_usage_error("invalid session id \"%s\" (expected [A-Za-z0-9._-], not starting with '.')",
                                         arguments.id);
        if (result != 0) {
                cli_policy_options_clear(&options);
                return cli_command_status(result);
        }
        result = session_runtime(options.config_path, &runtime);
        if (result == 0 && dsh_runtime_session_denials(runtime, arguments.id, &denials, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0)
                result = arguments.json ? print_denials_json(arguments.id, &denials) : print_denials_text(&denials);
        dsh_session_denials_clear(&denials);
        dsh_runtime_free(runtime);
        cli_policy_options_clear(&options);
        return result;
}

int cli_command_session(int argc, char **argv)
{
        const cli_command_line line = { .name = "session", .help = session_help };
        int first = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &first);

        if (result != 0)
                return cli_command_status(result);
        if (first >= argc)
                return cli_usage_error("session requires a command: new, mode, show, list or denials");
        if (strcmp(argv[first], "new") == 0)
                return command_new(argc - first, argv + first);
        if (strcmp(argv[first], "mode") == 0)
                return command_mode(argc - first, argv + first);
        if (strcmp(argv[first], "show") == 0)
                return command_show(argc - first, argv + first);
        if (strcmp(argv[first], "list") == 0)
                return command_list(argc - first, argv + first);
        if (strcmp(argv[first], "denials") == 0)
                return command_denials(argc - first, argv + first);
        return cli_usage_error("unknown session command \"%s\"", argv[first]);
}
