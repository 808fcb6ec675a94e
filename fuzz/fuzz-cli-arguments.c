/* SPDX-License-Identifier: MIT */
/*
 * The CLI's argument parser (cli/options.c) over arbitrary command lines
 * (the input's NUL-separated pieces are the arguments after the
 * subcommand's name), in each shape the subcommands use it:
 * cli_parse_policy_and_command() as `run` and `confine` call it; every
 * policy option plus --json with no operand, as `probe` and `policy
 * resolve`; only --session and --config, as `policy context`; and operands
 * between the options, as `session show`; and the shape of `fs rm` and `fs
 * edit` (operands anywhere, --root without its short form, whose letter is
 * --recursive's, texts that may be empty).  Beyond memory errors and UB it
 * checks what the callers rely on: the result is one of the documented
 * ones; every value stored is a non-empty piece of argv; an option the
 * shape does not take is never stored; the command starts inside argv, and
 * a command that looks like an option follows a `--`; every operand handed
 * over is an argv element.
 */
#include <string.h>

#include "cli.h"
#include "fuzz-support.h"
#include "options.h"

static void check_value(char *const *argv, const char *value)
{
        FUZZ_CHECK(!value || (value[0] != '\0' && fuzz_argv_contains(argv, value)));
}

static void check_options(char *const *argv, const cli_policy_options *options, unsigned taken)
{
        check_value(argv, options->mode);
        check_value(argv, options->root);
        check_value(argv, options->session);
        check_value(argv, options->config_path);
        check_value(argv, options->backend);
        FUZZ_CHECK(!options->backend || strcmp(options->backend, "auto") == 0 ||
                   strcmp(options->backend, "bwrap") == 0 || strcmp(options->backend, "landlock") == 0);
        for (char **root = options->allow_write; root && *root; root++)   /* copies */
                FUZZ_CHECK((*root)[0] != '\0');
        FUZZ_CHECK((taken & CLI_POLICY_MODE) || !options->mode);
        FUZZ_CHECK((taken & CLI_POLICY_ROOT) || !options->root);
        FUZZ_CHECK((taken & CLI_POLICY_ALLOW_WRITE) || !options->allow_write);
        FUZZ_CHECK((taken & CLI_POLICY_SESSION) || !options->session);
        FUZZ_CHECK((taken & CLI_POLICY_BACKEND) || !options->backend);
        FUZZ_CHECK((taken & CLI_POLICY_CONFIG) || !options->config_path);
        /* The network: each entry one the library takes, whatever ended the parse. */
        FUZZ_CHECK((taken & CLI_POLICY_NETWORK) || !options->network_given);
        check_value(argv, options->network_word);
        FUZZ_CHECK(!options->network_word || strcmp(options->network_word, "on") == 0 ||
                   strcmp(options->network_word, "off") == 0);
        for (char **host = options->network.allow_hosts; host && *host; host++)
                FUZZ_CHECK(dsh_network_pattern_check(*host, NULL) == 0);
        for (size_t i = 0; i < options->network.allow_local_port_count; i++)
                FUZZ_CHECK(options->network.allow_local_ports[i] != 0);
        FUZZ_CHECK(!options->network.dns_upstream || dsh_network_upstream_check(options->network.dns_upstream) == 0);
}

/* After a parse that succeeded: the network's mode is what its flags select, and the refused pairs never pass. */
static void check_network_mode(const cli_policy_options *options)
{
        const dsh_network_policy *network = &options->network;
        bool hosts = dsh_strv_length(network->allow_hosts) > 0;

        if (!options->network_given)
                return;
        FUZZ_CHECK(hosts == (network->mode == DSH_NETWORK_ALLOW_LIST));
        FUZZ_CHECK(!(hosts && options->network_word));
        FUZZ_CHECK(!network->dns_upstream || hosts);
        FUZZ_CHECK(network->mode != DSH_NETWORK_ON || network->allow_local_port_count == 0);
}

static void parse_policy_and_command(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        char **command = NULL;
        int result = cli_parse_policy_and_command(argc, argv, "", &options, &command);

        if (result == 0) {
                FUZZ_CHECK(command > argv && command < argv + argc && *command);
                /* getopt_long stops at a word that is not an option; one that looks like one came after `--`. */
                if ((*command)[0] == '-' && (*command)[1] != '\0')
                        FUZZ_CHECK(strcmp(command[-1], "--") == 0);
                check_network_mode(&options);
        } else {
                FUZZ_CHECK(result == CLI_PARSE_DONE || result == CLI_EXIT_USAGE);
        }
        check_options(argv, &options, CLI_POLICY_ALL);
        cli_policy_options_clear(&options);
}

struct handed_over {
        char *const *argv;
        int json;
        int operands;
};

/* Every operand is an element of argv itself, never a piece of one; --json comes without a value. */
static int hand_over(int key, const char *value, void *data)
{
        struct handed_over *handed = data;

        if (key == CLI_OPTION_OPERAND) {
                int found = 0;

                for (char *const *argument = handed->argv; *argument; argument++)
                        found |= *argument == value;
                FUZZ_CHECK(found);
                handed->operands++;
        } else {
                FUZZ_CHECK(key == CLI_OPTION_JSON && !value);
                handed->json++;
        }
        return 0;
}

/* The shapes of `probe`/`policy resolve`, `policy context` and `session show`. */
static void parse_line(int argc, char **argv, unsigned taken, const struct option *own, int operands_anywhere)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        struct handed_over handed = { argv, 0, 0 };
        const cli_command_line line = {
                .name = "fuzz",
                .help = "",
                .policy_options = taken,
                .own_options = own,
                .own_option = hand_over,
                .data = &handed,
                .operands_anywhere = operands_anywhere,
        };
        int operands = -1;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0) {
                FUZZ_CHECK(operands >= 1 && operands <= argc);
                FUZZ_CHECK(!operands_anywhere || operands == argc);
                if (operands < argc && argv[operands][0] == '-' && argv[operands][1] != '\0')
                        FUZZ_CHECK(strcmp(argv[operands - 1], "--") == 0);
        } else {
                FUZZ_CHECK(result == CLI_PARSE_DONE || result == CLI_EXIT_USAGE);
        }
        FUZZ_CHECK(own || handed.json == 0);
        FUZZ_CHECK(operands_anywhere || handed.operands == 0);
        check_options(argv, &options, taken);
        cli_policy_options_clear(&options);
}

enum { FUZZ_OPTION_OLD = CLI_OPTION_OWN, FUZZ_OPTION_NEW };

struct fs_handed {
        char *const *argv;
        int recursive;
};

/* `fs`: -r is --recursive (never --root), texts may be empty but are pieces of argv, operands are argv elements. */
static int hand_over_fs(int key, const char *value, void *data)
{
        struct fs_handed *handed = data;

        if (key == CLI_OPTION_OPERAND) {
                int found = 0;

                for (char *const *argument = handed->argv; *argument; argument++)
                        found |= *argument == value;
                FUZZ_CHECK(found);
        } else if (key == 'r') {
                FUZZ_CHECK(!value);
                handed->recursive++;
        } else if (key == FUZZ_OPTION_OLD || key == FUZZ_OPTION_NEW) {
                FUZZ_CHECK(value && fuzz_argv_contains(handed->argv, value));
        } else {
                FUZZ_CHECK(key == CLI_OPTION_JSON && !value);
        }
        return 0;
}

static void parse_fs_line(int argc, char **argv)
{
        static const struct option own[] = {
                { "recursive", no_argument, NULL, 'r' },
                { "old", required_argument, NULL, FUZZ_OPTION_OLD },
                { "new", required_argument, NULL, FUZZ_OPTION_NEW },
                { "json", no_argument, NULL, CLI_OPTION_JSON },
                { NULL, 0, NULL, 0 },
        };
        const unsigned taken = CLI_POLICY_ALL & ~CLI_POLICY_BACKEND;
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        struct fs_handed handed = { argv, 0 };
        const cli_command_line line = {
                .name = "fs rm",
                .help = "",
                .policy_options = taken,
                .own_options = own,
                .own_option = hand_over_fs,
                .data = &handed,
                .operands_anywhere = 1,
                .own_values_may_be_empty = 1,
                .policy_long_only = CLI_POLICY_ROOT,
        };
        int operands = -1;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        FUZZ_CHECK(result == 0 || result == CLI_PARSE_DONE || result == CLI_EXIT_USAGE);
        FUZZ_CHECK(result != 0 || operands == argc);
        /* --root only by its long name: some argument spells it out. */
        if (options.root) {
                int spelled = 0;

                for (char *const *argument = argv; *argument; argument++)
                        spelled |= strncmp(*argument, "--root", 6) == 0;
                FUZZ_CHECK(spelled);
        }
        check_options(argv, &options, taken);
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
        parse_line(argc, argv, CLI_POLICY_ALL, cli_json_option, 0);
        parse_line(argc, argv, CLI_POLICY_SESSION | CLI_POLICY_CONFIG, NULL, 0);
        parse_line(argc, argv, CLI_POLICY_CONFIG, cli_json_option, 1);
        parse_fs_line(argc, argv);
        fuzz_argv_free(argv);
        return 0;
}
