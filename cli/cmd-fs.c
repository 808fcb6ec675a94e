/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox fs write|edit|mkdir|rm|mv|read`: the file guard
 * (dsh-sandbox/file-guard.h) on the command line, under the policy `run`
 * would confine a command with.  Relative paths are taken from the
 * workspace root (the session's cwd with --session), where `dsh-sandbox
 * bash` starts its commands: `fs write notes.txt` and `bash 'cat
 * notes.txt'` name one file wherever they are typed.  Exit status: 0; 1 when the operation
 * fails (one error line, and with --json the error object on stdout, a
 * refusal's with its record as `denial`, which the session named keeps too);
 * 2 for a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/json.h"

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "runtime-cli.h"

#define POLICY_HELP                                                                                              \
        "Policy options (the policy `run` would confine a command with):\n"                                     \
        "  -m, --mode MODE        read-only, workspace-write or danger-full-access (explicit, approved)\n"     \
        "  -r, --root DIR         workspace root (default: the session's cwd, else the config's\n"             \
        "                         workspaceRoot, else the current directory; `fs rm`: --root only)\n"        \
        "  -w, --allow-write DIR  an extra writable root (repeatable): an existing directory, not a symlink\n" \
        "  -s, --session ID       resolve mode and root through the session store\n"                           \
        "  -c, --config FILE      config file (default $DSH_SANDBOX_CONFIG, else\n"                              \
        "                         $XDG_CONFIG_HOME/dsh-sandbox/config.json if present)\n"                       \
        "      --json             print the result (or the error) as one JSON object per PATH\n"                \
        "  -h, --help             print this help\n"                                                            \
        "Options may come before or after the paths; `--` ends them.  Exit status: 0; 1 when the\n"            \
        "operation fails (FS_SANDBOX_DENIED: the policy does not allow it); 2 for a usage error.\n"

static const char fs_help[] =
        "Usage: dsh-sandbox fs COMMAND [policy options] [options] PATH...\n"
        "File operations under the same policy as confined commands: what a command run with\n"
        "`dsh-sandbox run` could not change, these refuse with FS_SANDBOX_DENIED.  Relative paths\n"
        "are taken from the workspace root, where `dsh-sandbox bash` starts its commands.\n\n"
        "Commands:\n"
        "  write [--create-only] PATH               write stdin to PATH, atomically; missing parent\n"
        "                                           directories are made\n"
        "  edit --old TEXT --new TEXT [--all] PATH  replace TEXT, which must occur exactly once (--all:\n"
        "                                           every occurrence)\n"
        "  mkdir [-p] PATH...                       create directories (-p: parents too; existing is fine)\n"
        "  rm [-r] PATH...                          remove files, symlinks, empty directories (-r: trees)\n"
        "  mv [--no-replace] SOURCE DESTINATION     rename SOURCE to DESTINATION (rename(2): DESTINATION\n"
        "                                           is the new name, an existing file there is replaced)\n"
        "  read [--offset N] [--length N] PATH      print the file (at most fileReadLimitBytes, 16 MiB by\n"
        "                                           default), or the range asked\n\n"
        "Run 'dsh-sandbox fs COMMAND --help' for a command's options.\n";

enum {
        OPTION_CREATE_ONLY = CLI_OPTION_OWN,
        OPTION_OLD,
        OPTION_NEW,
        OPTION_ALL,
        OPTION_NO_REPLACE,
        OPTION_OFFSET,
        OPTION_LENGTH,
};

struct fs_command;

struct fs_options {
        const struct fs_command *command;
        bool json;
        bool create_only, all, parents, recursive, no_replace;
        const char *old_text, *new_text;
        bool range;                     /* read: --offset or --length was given */
        unsigned long long offset;
        long length;                    /* 0: up to the read limit */
        char **operands;        /* owned */
};

struct fs_command {
        const char *name;
        const char *help;
        const struct option *options;
        size_t minimum_operands, maximum_operands;   /* 0 maximum: any number */
        const char *operands_usage;
        /* Runs the operation on operands[index...]; returns 0 or a negative errno with `error` set. */
        int (*run)(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                   dsh_file_result *result, dsh_error *error);
        size_t paths_per_run;
};

/* ---------------------------------------------------------- operations -- */

/* A system error of the tool's own (the library's are set by the library). */
static int system_error(dsh_error *error, int errno_value, const char *what)
{
        dsh_error_clear(error);
        error->code = DSH_ERROR_SYSTEM;
        error->errno_value = errno_value;
        if (asprintf(&error->message, "%s: %s", what, strerror(errno_value)) < 0)
                error->message = NULL;
        return -errno_value;
}

/* Stdin, whole: what `fs write` writes. */
static int read_standard_input(char **content_out, size_t *length_out, dsh_error *error)
{
        size_t capacity = 65536, length = 0;
        char *content = malloc(capacity);

        for (;;) {
                ssize_t got;

                if (!content)
                        return system_error(error, ENOMEM, "cannot read the content from stdin");
                if (length == capacity) {
                        char *larger = realloc(content, capacity * 2);

                        if (!larger)
                                free(content);
                        content = larger;
                        capacity *= 2;
                        continue;
                }
                got = read(STDIN_FILENO, content + length, capacity - length);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        int saved = errno;

                        free(content);
                        return system_error(error, saved, "cannot read the content from stdin");
                }
                if (got == 0)
                        break;
                length += (size_t) got;
        }
        *content_out = content;
        *length_out = length;
        return 0;
}

static int run_write(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                     dsh_file_result *result, dsh_error *error)
{
        char *content = NULL;
        size_t length = 0;
        int outcome = read_standard_input(&content, &length, error);

        if (outcome == 0)
                outcome = dsh_file_guard_write(guard, paths[0], content, length,
                                               options->create_only ? DSH_FILE_WRITE_CREATE_ONLY : 0, result, error);
        free(content);
        return outcome;
}

static int run_edit(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                    dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_edit(guard, paths[0], options->old_text, options->new_text,
                                   options->all ? DSH_FILE_EDIT_ALL : 0, result, error);
}

static int run_mkdir(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                     dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_mkdir(guard, paths[0], options->parents ? DSH_FILE_MKDIR_PARENTS : 0, result, error);
}

static int run_remove(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                      dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_remove(guard, paths[0], options->recursive ? DSH_FILE_REMOVE_RECURSIVE : 0, result,
                                     error);
}

static int run_move(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                    dsh_file_result *result, dsh_error *error)
{
        return dsh_file_guard_move(guard, paths[0], paths[1], options->no_replace ? DSH_FILE_MOVE_NO_REPLACE : 0,
                                   result, error);
}

static int run_read(dsh_file_guard *guard, const struct fs_options *options, const char *const *paths,
                    dsh_file_result *result, dsh_error *error)
{
        if (!options->range)
                return dsh_file_guard_read(guard, paths[0], result, error);
        return dsh_file_guard_read_range(guard, paths[0], options->offset, (size_t) options->length, result, error);
}

/* ------------------------------------------------------------ commands -- */

static const struct option write_options[] = {
        { "create-only", no_argument, NULL, OPTION_CREATE_ONLY },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct option edit_options[] = {
        { "old", required_argument, NULL, OPTION_OLD },
        { "new", required_argument, NULL, OPTION_NEW },
        { "all", no_argument, NULL, OPTION_ALL },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct option mkdir_options[] = {
        { "parents", no_argument, NULL, 'p' },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct option rm_options[] = {
        { "recursive", no_argument, NULL, 'r' },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct option mv_options[] = {
        { "no-replace", no_argument, NULL, OPTION_NO_REPLACE },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct option read_options[] = {
        { "offset", required_argument, NULL, OPTION_OFFSET },
        { "length", required_argument, NULL, OPTION_LENGTH },
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

static const struct fs_command commands[] = {
        { "write",
          "Usage: dsh-sandbox fs write [policy options] [--create-only] [--json] PATH\n"
          "Writes stdin to PATH atomically (a new file in PATH's directory, synced, renamed over PATH),\n"
          "making missing parent directories.  An existing file keeps its permissions.\n"
          "      --create-only      never replace: fail with FS_ALREADY_EXISTS when PATH exists\n",
          write_options, 1, 1, "PATH", run_write, 1 },
        { "edit",
          "Usage: dsh-sandbox fs edit [policy options] --old TEXT --new TEXT [--all] [--json] PATH\n"
          "Replaces TEXT in PATH, atomically.  TEXT must occur exactly once (FS_TEXT_NOT_FOUND,\n"
          "FS_TEXT_NOT_UNIQUE otherwise), or with --all at least once.\n"
          "      --old TEXT         the text to replace (non-empty)\n"
          "      --new TEXT         its replacement (may be empty)\n"
          "      --all              replace every occurrence\n",
          edit_options, 1, 1, "PATH", run_edit, 1 },
        { "mkdir",
          "Usage: dsh-sandbox fs mkdir [policy options] [-p] [--json] PATH...\n"
          "Creates each directory, in order; stops at the first failure.\n"
          "  -p, --parents          make missing parents too, and accept an existing directory\n",
          mkdir_options, 1, 0, "PATH...", run_mkdir, 1 },
        { "rm",
          "Usage: dsh-sandbox fs rm [policy options] [-r] [--json] PATH...\n"
          "Removes each file, symlink (never its target) or empty directory, in order; stops at the\n"
          "first failure.  A tree holding a protected path is refused before anything is removed.\n"
          "  -r, --recursive        remove directories and everything beneath them (no symlink is\n"
          "                         followed, no other mount entered)\n",
          rm_options, 1, 0, "PATH...", run_remove, 1 },
        { "mv",
          "Usage: dsh-sandbox fs mv [policy options] [--no-replace] [--json] SOURCE DESTINATION\n"
          "Renames SOURCE to DESTINATION (both beneath writable roots, on one filesystem).\n"
          "DESTINATION is the new name itself; an existing file or empty directory there is replaced.\n"
          "      --no-replace       fail with FS_ALREADY_EXISTS when DESTINATION exists\n",
          mv_options, 2, 2, "SOURCE DESTINATION", run_move, 2 },
        { "read",
          "Usage: dsh-sandbox fs read [policy options] [--offset N] [--length N] [--json] PATH\n"
          "Prints the file, resolved as the other commands resolve paths (reads are not restricted).\n"
          "A file larger than the read limit (config fileReadLimitBytes, 16 MiB by default) is refused\n"
          "with FS_TOO_LARGE: read it by ranges.  With --json, a file that is not UTF-8 cannot be\n"
          "printed (exit 2).\n"
          "      --offset N         start at byte N (default 0)\n"
          "      --length N         print at most N bytes, from 1 to the read limit (default: the limit)\n",
          read_options, 1, 1, "PATH", run_read, 1 },
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

/* --offset: a whole number of bytes, 0 included, digits only. */
static int parse_offset(const char *value, unsigned long long *offset_out)
{
        char *end = NULL;

        errno = 0;
        *offset_out = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
        if (!end || *end != '\0' || errno != 0 || *offset_out > (unsigned long long) INT64_MAX)
                return cli_usage_error("fs read: --offset expects a whole number of bytes, not \"%s\"", value);
        return 0;
}

static int store_fs_option(int key, const char *value, void *data)
{
        struct fs_options *options = data;

        switch (key) {
        case CLI_OPTION_OPERAND:
                if (dsh_strv_append(&options->operands, value) < 0)
                        return cli_usage_error("out of memory");
                return 0;
        case CLI_OPTION_JSON:
                options->json = true;
                return 0;
        case OPTION_CREATE_ONLY:
                options->create_only = true;
                return 0;
        case OPTION_OLD:
                options->old_text = value;
                return 0;
        case OPTION_NEW:
                options->new_text = value;
                return 0;
        case OPTION_ALL:
                options->all = true;
                return 0;
        case OPTION_NO_REPLACE:
                options->no_replace = true;
                return 0;
        case OPTION_OFFSET:
                options->range = true;
                return parse_offset(value, &options->offset);
        case OPTION_LENGTH:
                options->range = true;
                return cli_parse_positive("fs read", "--length", value, 1L << 30, &options->length);
        case 'p':
                options->parents = true;
                return 0;
        case 'r':
                options->recursive = true;
                return 0;
        default:
                return 0;
        }
}

/* The operands a command needs, each a non-empty path. */
static int check_operands(const struct fs_options *options)
{
        const struct fs_command *command = options->command;
        size_t count = dsh_strv_length(options->operands);

        if (count < command->minimum_operands || (command->maximum_operands && count > command->maximum_operands))
                return cli_usage_error("fs %s takes %s", command->name, command->operands_usage);
        for (size_t i = 0; i < count; i++)
                if (!options->operands[i][0])
                        return cli_usage_error("fs %s: path %zu is empty", command->name, i + 1);
        if (command->run == run_edit && !options->old_text)
                return cli_usage_error("fs edit requires --old TEXT");
        if (command->run == run_edit && !options->new_text)
                return cli_usage_error("fs edit requires --new TEXT");
        if (command->run == run_edit && !options->old_text[0])
                return cli_usage_error("fs edit: --old must not be empty");
        return 0;
}

/* What the operation did: with --json its result object, else the content for `read` and nothing for the rest. */
static int print_result(const struct fs_options *options, const dsh_file_result *result)
{
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        if (options->json) {
                int encoded = dsh_json_encode_file_result(result, &text, &error);

                return cli_print_json(encoded, text, &error, CLI_EXIT_FAILURE);
        }
        if (result->operation == DSH_FILE_READ &&
            (fwrite(result->content, 1, result->bytes, stdout) != result->bytes || fflush(stdout) != 0))
                return CLI_EXIT_FAILURE;
        return CLI_EXIT_SUCCESS;
}

/*
 * The error object, and for a refusal with its record a `denial` member
 * beside the error's own (docs/file-guard.md): {"code","message","errno"?,
 * "denial"?}.  NULL when it cannot be encoded.
 */
static char *failure_json(const dsh_error *error, const dsh_denial *denial)
{
        char *error_text = NULL, *denial_text = NULL, *text = NULL;
        json_t *object = NULL, *record = NULL;

        if (dsh_json_encode_error(error, &error_text, NULL) < 0)
                return NULL;
        if (!denial || dsh_json_encode_denial(denial, &denial_text, NULL) < 0)
                return error_text;
        object = json_loads(error_text, 0, NULL);
        record = json_loads(denial_text, 0, NULL);
        if (object && record && json_object_set(object, "denial", record) == 0)
                text = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(object);
        json_decref(record);
        free(denial_text);
        if (!text)
                return error_text;
        free(error_text);
        return text;
}

/* The error line on stderr, and with --json the error object on stdout as well: exit 1. */
static int print_failure(const struct fs_options *options, dsh_error *error, const dsh_denial *denial)
{
        char *text = NULL;

        cli_print_error(error);
        if (options->json && (text = failure_json(error, denial)))
                printf("%s\n", text);
        free(text);
        dsh_error_clear(error);
        return CLI_EXIT_FAILURE;
}

/*
 * After a refusal (FS_SANDBOX_DENIED): the guard's record of it, kept in the
 * session the policy names (surface "fs", as `session denials` lists it).
 * Returns true with `denial` filled.  A session that cannot keep it is a
 * warning: the refusal itself is what the caller is told.
 */
static bool take_denial(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard, dsh_denial *denial)
{
        dsh_denials kept = DSH_DENIALS_INIT;
        dsh_error error = DSH_ERROR_INIT;
        int taken = dsh_file_guard_take_denial(runtime, guard, denial, &error);

        if (taken < 0)
                cli_print_message("warning: the refusal's record cannot be read: %s",
                                  error.message ? error.message : "unknown error");
        dsh_error_clear(&error);
        if (taken <= 0)
                return false;
        kept.items = denial;
        kept.count = 1;
        if (dsh_runtime_record_denials(runtime, policy, "fs", &kept, &error) < 0)
                cli_print_message("warning: the session could not keep this denial: %s",
                                  error.message ? error.message : "unknown error");
        dsh_error_clear(&error);
        return true;
}

/* A failed operation: its error, and a refusal's record with it. */
static int report_failure(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard *guard,
                          const struct fs_options *options, dsh_error *error)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        bool denied = error->code == DSH_ERROR_FS_SANDBOX_DENIED && take_denial(runtime, policy, guard, &denial);
        int status = print_failure(options, error, denied ? &denial : NULL);

        dsh_denial_clear(&denial);
        return status;
}

/* Runs the command over its operands, in order, under one guard; stops at the first failure. */
static int run_command(dsh_runtime *runtime, const dsh_policy *policy, const struct fs_options *options)
{
        const struct fs_command *command = options->command;
        size_t count = dsh_strv_length(options->operands);
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        int status = CLI_EXIT_SUCCESS;

        if (dsh_file_guard_new(runtime, policy, &guard, &error) < 0)
                return print_failure(options, &error, NULL);
        for (size_t i = 0; status == CLI_EXIT_SUCCESS && i < count; i += command->paths_per_run) {
                /* Relative paths as the guard takes them: from the workspace root, where bash starts too. */
                const char *paths[2] = { options->operands[i], command->paths_per_run > 1 ? options->operands[i + 1]
                                                                                          : NULL };
                dsh_file_result result = DSH_FILE_RESULT_INIT;

                if (command->run(guard, options, paths, &result, &error) < 0)
                        status = report_failure(runtime, policy, guard, options, &error);
                else
                        status = print_result(options, &result);
                dsh_file_result_clear(&result);
        }
        dsh_file_guard_free(guard);
        return status;
}

static int run_subcommand(const struct fs_command *command, int argc, char **argv)
{
        cli_policy_options policy_options = CLI_POLICY_OPTIONS_INIT;
        struct fs_options options = { .command = command };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_runtime *runtime = NULL;
        char help[4096];
        char name[32];
        const cli_command_line line = {
                .name = name,
                .help = help,
                /* No backend runs anything here: --backend would be an option without effect. */
                .policy_options =
                        CLI_POLICY_ALL & ~(CLI_POLICY_BACKEND | CLI_POLICY_ALLOW_UNIX_SOCKET | CLI_POLICY_NETWORK |
                                           CLI_POLICY_SECRETS),
                .own_options = command->options,
                .own_option = store_fs_option,
                .data = &options,
                .operands_anywhere = true,
                .own_values_may_be_empty = true,
                /* `fs rm -r` is --recursive, as rm(1) has it. */
                .policy_long_only = command->run == run_remove ? CLI_POLICY_ROOT : 0,
        };
        int operands = argc;
        int result;

        snprintf(name, sizeof(name), "fs %s", command->name);
        snprintf(help, sizeof(help), "%s%s", command->help, POLICY_HELP);
        result = cli_options_parse(&line, argc, argv, &policy_options, &operands);
        if (result == 0)
                result = check_operands(&options);
        if (result == 0) {
                result = cli_policy_resolve(&policy_options, &runtime, &policy);
                /* Nothing is confined here: a policy that cannot be resolved is this command's failure, 1. */
                if (result == CLI_EXIT_SANDBOX)
                        result = CLI_EXIT_FAILURE;
        }
        if (result == 0) {
                cli_policy_options_warn_without_effect(&policy_options, policy.mode);
                result = run_command(runtime, &policy, &options);
        }
        dsh_policy_clear(&policy);
        dsh_runtime_free(runtime);
        dsh_strv_free(options.operands);
        cli_policy_options_clear(&policy_options);
        return cli_command_status(result);
}

int cli_command_fs(int argc, char **argv)
{
        const cli_command_line line = { .name = "fs", .help = fs_help };
        int first = argc;
        int result = cli_options_parse(&line, argc, argv, NULL, &first);

        if (result != 0)
                return cli_command_status(result);
        if (first >= argc)
                return cli_usage_error("fs requires a command: write, edit, mkdir, rm, mv or read");
        for (size_t i = 0; i < COMMAND_COUNT; i++)
                if (strcmp(argv[first], commands[i].name) == 0)
                        return run_subcommand(&commands[i], argc - first, argv + first);
        return cli_usage_error("unknown fs command \"%s\"", argv[first]);
}
