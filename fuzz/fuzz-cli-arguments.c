/* SPDX-License-Identifier: MIT */
/*
 * The CLI's shared argument parsers over arbitrary command lines (the input's
 * NUL-separated pieces are the arguments after the subcommand's name):
 * cli_parse_policy_and_command(), as `run` and `confine` use it, and
 * cli_policy_option_parse() in the loop `probe` and `policy` run.  Beyond
 * memory errors and UB it checks what their callers rely on: the result is
 * one of the documented ones, the command follows a `--`, every value stored
 * is a non-empty piece of argv, and the loop always moves forward.
 */
#include <string.h>

#include "cli.h"
#include "fuzz-support.h"
#include "policy-options.h"

static void check_value(char *const *argv, const char *value)
{
        FUZZ_CHECK(!value || (value[0] != '\0' && fuzz_argv_contains(argv, value)));
}

static void check_options(char *const *argv, const cli_policy_options *options)
{
        check_value(argv, options->mode);
        check_value(argv, options->root);
        check_value(argv, options->session);
        check_value(argv, options->config_path);
        check_value(argv, options->backend);
        FUZZ_CHECK(!options->backend || strcmp(options->backend, "auto") == 0 ||
                   strcmp(options->backend, "bwrap") == 0 || strcmp(options->backend, "landlock") == 0);
        for (char **root = options->allow_write; root && *root; root++)
                FUZZ_CHECK((*root)[0] != '\0');
}

static void parse_policy_and_command(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        char **command = NULL;
        int result = cli_parse_policy_and_command(argc, argv, "", &options, &command);

        if (result == 0) {
                FUZZ_CHECK(command > argv + 1 && command < argv + argc && *command);
                FUZZ_CHECK(strcmp(command[-1], "--") == 0);
        } else {
                FUZZ_CHECK(result == -1 || result == CLI_EXIT_USAGE);
        }
        check_options(argv, &options);
        cli_policy_options_clear(&options);
}

/* The loop of `policy resolve` and `probe`: policy options and --json, nothing else. */
static void parse_policy_options(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int result = 0;

        for (int index = 1; index < argc && result == 0;) {
                int before = index;

                if (strcmp(argv[index], "--json") == 0) {
                        index++;
                        continue;
                }
                result = cli_policy_option_parse(argc, argv, &index, &options);
                FUZZ_CHECK(result == 0 || result == 1 || result == CLI_EXIT_USAGE);
                FUZZ_CHECK(index <= argc);
                if (result == 1) {
                        FUZZ_CHECK(index > before);
                        result = 0;
                } else if (result == 0) {
                        FUZZ_CHECK(index == before);
                        break;
                }
        }
        check_options(argv, &options);
        cli_policy_options_clear(&options);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int argc;
        char **argv = fuzz_argv_new("run", data, size, &argc);

        parse_policy_and_command(argc, argv);
        parse_policy_options(argc, argv);
        fuzz_argv_free(argv);
        return 0;
}
