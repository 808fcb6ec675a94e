/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox session new|mode|show|list`: durable sessions in the state
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
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "options.h"
#include "session-cli.h"

static const char session_help[] =
        "Usage: dsh-sandbox session COMMAND ...\n"
        "Durable sessions: each session has an immutable workspace root (its cwd) and a mode\n"
        "that only `session mode` changes; both survive restarts.\n\n"
        "Commands:\n"
        "  new [--cwd DIR] [--parent ID]   create a session, print its id\n"
        "  mode ID MODE                    switch the session's mode (appends one sandbox/mode event)\n"
        "  show ID [--json]                header, events and effective mode\n"
        "  list                            ids, effective modes and cwds\n\n"
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
        "Usage: dsh-sandbox session list [--config FILE]\n"
        "Prints one line per session: id, effective mode and cwd, separated by tabs.\n"
        "  -c, --config FILE      config file (for the configured default mode)\n";

int cli_session_open(const char *id, int failure_status, dsh_session_store **store_out, dsh_session **session_out)
{
        dsh_error error = DSH_ERROR_INIT;

        *store_out = NULL;
        *session_out = NULL;
        if (dsh_session_store_open(NULL, store_out, &error) < 0)
                return cli_library_error(&error, failure_status);
        if (dsh_session_open(*store_out, id, session_out, &error) < 0) {
                dsh_session_store_free(*store_out);
                *store_out = NULL;
                return cli_library_error(&error, failure_status);
        }
        return 0;
}

enum { OPTION_CWD = CLI_OPTION_OWN, OPTION_PARENT };

static char *absolute_directory(const char *path)
{
        char cwd[PATH_MAX];
        char *absolute = NULL;

        if (path[0] == '/')
                return strdup(path);
        if (!getcwd(cwd, sizeof(cwd)) || asprintf(&absolute, "%s/%s", cwd, path) < 0)
                return NULL;
        return absolute;
}

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
        dsh_session_store *store = NULL, *parent_store = NULL;
        dsh_session *session = NULL, *parent = NULL;
        char *cwd = NULL;
        struct stat status;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result != 0)
                return result < 0 ? CLI_EXIT_SUCCESS : result;
        cwd = options.cwd ? absolute_directory(options.cwd) : getcwd(NULL, 0);
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
        if (options.parent_id)
                result = cli_session_open(options.parent_id, CLI_EXIT_FAILURE, &parent_store, &parent);
        if (result == 0 && dsh_session_store_open(NULL, &store, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0 && dsh_session_create(store, cwd, parent, &session, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0)
                printf("%s\n", dsh_session_id(session));
        dsh_session_free(session);
        dsh_session_free(parent);
        dsh_session_store_free(parent_store);
        dsh_session_store_free(store);
        free(cwd);
        return result;
}

static int command_mode(int argc, char **argv)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        json_t *data = NULL;
        char *data_text = NULL;
        dsh_mode mode;
        int result;

        const cli_command_line line = { .name = "session mode", .help = mode_help };
        int first = argc;

        result = cli_options_parse(&line, argc, argv, NULL, &first);
        if (result != 0)
                return result < 0 ? CLI_EXIT_SUCCESS : result;
        if (argc - first != 2)
                return cli_usage_error("session mode takes exactly ID and MODE");
        result = cli_session_open(argv[first], CLI_EXIT_FAILURE, &store, &session);
        if (result == 0 && dsh_mode_parse(argv[first + 1], &mode) == 0) {
                if (dsh_session_set_mode(session, mode, NULL, &error) < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
        } else if (result == 0) {
                /* Not a mode: the library's invariant refuses it with its exact message. */
                data = json_pack("{s:s}", "mode", argv[first + 1]);
                data_text = data ? json_dumps(data, JSON_COMPACT) : NULL;
                if (dsh_session_append(session, "sandbox/mode", data_text, NULL, &error) < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
                else
                        result = CLI_EXIT_FAILURE;  /* unreachable: the invariant refuses it */
        }
        json_decref(data);
        free(data_text);
        dsh_session_free(session);
        dsh_session_store_free(store);
        return result;
}

/* The effective mode without an explicit one: the session's override, else the config's. */
static const char *effective_mode_name(const dsh_session *session, const dsh_config *config)
{
        dsh_mode mode = config->mode;

        dsh_session_override(session, &mode);
        return dsh_mode_name(mode);
}

struct show_output {
        bool json;
        json_t *header;
        json_t *events;
        uint64_t unprintable_line;   /* a line replay accepted that jansson cannot load (0: none) */
};

static int show_event(const dsh_session_event *event, void *userdata)
{
        struct show_output *output = userdata;
        json_t *value;

        if (!output->json) {
                if (event->seq == 0)
                        printf("header: %s\n", event->line);
                else
                        printf("event %" PRIu64 " %s: %s\n", event->seq, event->type, event->line);
                return 0;
        }
        /* Replay only checks the syntax of events it ignores, not their UTF-8: jansson may refuse one. */
        value = json_loadb(event->line, event->line_length, JSON_ALLOW_NUL, NULL);
        if (!value) {
                output->unprintable_line = event->line_number;
                return 1;
        }
        if (event->seq == 0) {
                output->header = value;
                return 0;
        }
        return json_array_append_new(output->events, value) < 0 ? 1 : 0;
}

/* `session show`'s own options and its one operand, which may come before or after them. */
struct show_arguments {
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
                        return cli_usage_error("session show: unknown argument \"%s\"", value);
                arguments->id = value;
        }
        return 0;
}

static int command_show(int argc, char **argv)
{
        struct show_output output = { false, NULL, NULL, 0 };
        struct show_arguments arguments = { NULL, false };
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
        dsh_config config = { 0 };
        dsh_error error = DSH_ERROR_INIT;
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        dsh_mode override;
        int operands = argc, walk;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result != 0)
                return result < 0 ? CLI_EXIT_SUCCESS : result;
        if (!arguments.id)
                return cli_usage_error("session show requires a session ID");
        output.json = arguments.json;
        result = cli_config_load(options.config_path, CLI_EXIT_FAILURE, &config);
        if (result == 0)
                result = cli_session_open(arguments.id, CLI_EXIT_FAILURE, &store, &session);
        if (result == 0 && output.json)
                result = cli_require_utf8(dsh_session_path(session), "session show: the session log path");
        if (result == 0) {
                output.events = json_array();
                walk = dsh_session_foreach_event(session, show_event, &output, &error);
                if (walk < 0)
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
                else if (output.unprintable_line)
                        result = (cli_print_message("session show: session log %s: line %" PRIu64 " is not valid "
                                                    "UTF-8 JSON, so --json cannot print it",
                                                    dsh_session_path(session), output.unprintable_line),
                                  CLI_EXIT_FAILURE);
                else if (walk > 0 || !output.events)
                        result = (cli_print_message("session show: out of memory"), CLI_EXIT_FAILURE);
        }
        if (result == 0 && output.json) {
                json_t *shown = json_pack("{s:O, s:O, s:s, s:s}", "header", output.header, "events", output.events,
                                          "effectiveMode", effective_mode_name(session, &config), "path",
                                          dsh_session_path(session));

                if (shown && dsh_session_override(session, &override))
                        json_object_set_new(shown, "override", json_string(dsh_mode_name(override)));
                if (!shown || json_dumpf(shown, stdout, JSON_COMPACT) < 0)
                        result = (cli_print_message("session show: out of memory"), CLI_EXIT_FAILURE);
                else
                        putchar('\n');
                json_decref(shown);
        } else if (result == 0) {
                bool has_override = dsh_session_override(session, &override);

                printf("effective mode: %s (%s)\n", effective_mode_name(session, &config),
                       has_override ? "session override" : "configured default");
        }
        json_decref(output.header);
        json_decref(output.events);
        dsh_session_free(session);
        dsh_session_store_free(store);
        dsh_config_clear(&config);
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
        dsh_config config = { 0 };
        dsh_error error = DSH_ERROR_INIT;
        dsh_session_store *store = NULL;
        char **ids = NULL;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result != 0)
                return result < 0 ? CLI_EXIT_SUCCESS : result;
        /* The option is parsed here; the JSON listing itself belongs to the JSON codec's work (not built yet). */
        if (json)
                return cli_usage_error("session list: --json is not available in this build");
        result = cli_config_load(options.config_path, CLI_EXIT_FAILURE, &config);
        if (result == 0 && dsh_session_store_open(NULL, &store, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        if (result == 0 && dsh_session_store_list(store, &ids, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        /* A session that does not load is reported and skipped; the others are still listed. */
        for (char **id = ids; id && *id; id++) {
                dsh_session *session = NULL;

                if (dsh_session_open(store, *id, &session, &error) < 0) {
                        result = cli_library_error(&error, CLI_EXIT_FAILURE);
                        continue;
                }
                printf("%s\t%s\t%s\n", *id, effective_mode_name(session, &config), dsh_session_cwd(session, NULL));
                dsh_session_free(session);
        }
        dsh_strv_free(ids);
        dsh_session_store_free(store);
        dsh_config_clear(&config);
        return result;
}

int cli_command_session(int argc, char **argv)
{
        const cli_command_line line = { .name = "session", .help = session_help };
        int first = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &first);

        if (result != 0)
                return result < 0 ? CLI_EXIT_SUCCESS : result;
        if (first >= argc)
                return cli_usage_error("session requires a command: new, mode, show or list");
        if (strcmp(argv[first], "new") == 0)
                return command_new(argc - first, argv + first);
        if (strcmp(argv[first], "mode") == 0)
                return command_mode(argc - first, argv + first);
        if (strcmp(argv[first], "show") == 0)
                return command_show(argc - first, argv + first);
        if (strcmp(argv[first], "list") == 0)
                return command_list(argc - first, argv + first);
        return cli_usage_error("unknown session command \"%s\"", argv[first]);
}
