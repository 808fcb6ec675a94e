/* SPDX-License-Identifier: MIT */
/* One getopt_long parser for every subcommand: the shared policy options' table plus each one's own. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"

#include "cli.h"
#include "options.h"

/* --version has no short form: -V and -v mean other things to other tools, and no script types it. */
enum {
        OPTION_VERSION = 0x100,
        OPTION_REMOTE,
        OPTION_ALLOW_UNIX_SOCKET,
        OPTION_NETWORK,
        OPTION_ALLOW_HOST,
        OPTION_ALLOW_LOCAL_PORT,
        OPTION_DNS_UPSTREAM,
        OPTION_MASK,
        OPTION_ALLOW_ENV,
};

/* The key of a shared option without its short form (cli_command_line.policy_long_only): its letter, tagged. */
#define LONG_ONLY_SHARED 0x1000

/* The one table of the shared options: every subcommand takes the ones its policy_options names. */
static const struct shared_option {
        unsigned bit;
        struct option option;
        const char *help;       /* its lines in a subcommand's --help */
} shared_options[] = {
        { CLI_POLICY_MODE, { "mode", required_argument, NULL, 'm' },
          "  -m, --mode MODE        read-only, workspace-write or danger-full-access (explicit, approved)\n" },
        { CLI_POLICY_ROOT, { "root", required_argument, NULL, 'r' },
          "  -r, --root DIR         workspace root (default: the session's cwd, else the config's\n"
          "                         workspaceRoot, else the current directory)\n" },
        { CLI_POLICY_ALLOW_WRITE, { "allow-write", required_argument, NULL, 'w' },
          "  -w, --allow-write DIR  an extra writable root (repeatable): an existing directory, not a symlink\n" },
        { CLI_POLICY_SESSION, { "session", required_argument, NULL, 's' },
          "  -s, --session ID       resolve mode and root through the session store\n" },
        { CLI_POLICY_BACKEND, { "backend", required_argument, NULL, 'b' },
          "  -b, --backend NAME     auto (default), bwrap or landlock\n" },
        { CLI_POLICY_CONFIG, { "config", required_argument, NULL, 'c' },
          "  -c, --config FILE      config file (default $DSH_SANDBOX_CONFIG, else\n"
          "                         $XDG_CONFIG_HOME/dsh-sandbox/config.json if present)\n" },
        { CLI_POLICY_ALLOW_UNIX_SOCKET, { "allow-unix-socket", required_argument, NULL, OPTION_ALLOW_UNIX_SOCKET },
          "      --allow-unix-socket PATH  a unix socket the command may connect to wherever it lies\n"
          "                         (repeatable; ssh-agent's, gpg-agent's): it must exist and be a socket\n" },
        { CLI_POLICY_NETWORK, { "network", required_argument, NULL, OPTION_NETWORK },
          "      --network on|off   on (the default): what the host reaches; off: nothing outside the\n"
          "                         sandbox, host loopback included (a server the command starts is reached)\n" },
        { CLI_POLICY_NETWORK, { "allow-host", required_argument, NULL, OPTION_ALLOW_HOST },
          "      --allow-host PATTERN  the allow-list (repeatable): host, *.domain, IP, [IPv6], each with an\n"
          "                         optional :port, or a named set (@npm, @pypi, @github, @gitlab, @crates,\n"
          "                         @go, @debian); nothing else is reached, DNS included\n" },
        { CLI_POLICY_NETWORK, { "allow-local-port", required_argument, NULL, OPTION_ALLOW_LOCAL_PORT },
          "      --allow-local-port PORT  a host loopback port the command may reach (repeatable); alone,\n"
          "                         the network is off but for those ports\n" },
        { CLI_POLICY_NETWORK, { "dns-upstream", required_argument, NULL, OPTION_DNS_UPSTREAM },
          "      --dns-upstream IP:PORT  the resolver asked for allowed names (default: the host's first\n"
          "                         nameserver); [IPv6]:PORT for IPv6\n" },
        { CLI_POLICY_SECRETS, { "mask", required_argument, NULL, OPTION_MASK },
          "      --mask ENTRY       a path the command may not read (repeatable), added to the config's\n"
          "                         maskedPaths: absolute, ~/PATH or PATH under each home; a wildcard in\n"
          "                         the last component (docs/secrets.md)\n" },
        { CLI_POLICY_SECRETS, { "allow-env", required_argument, NULL, OPTION_ALLOW_ENV },
          "      --allow-env NAME   an environment variable let through although a deny pattern matches\n"
          "                         it (repeatable; a name, no wildcard)\n" },
        { CLI_POLICY_REMOTE, { "remote", required_argument, NULL, OPTION_REMOTE },
          "      --remote DEST      on the host `ssh DEST` reaches, under its policy (its paths, its\n"
          "                         config; docs/remote.md)\n" },
};

static const struct option help_and_version[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPTION_VERSION },
};

const struct option cli_json_option[] = {
        { "json", no_argument, NULL, CLI_OPTION_JSON },
        { NULL, 0, NULL, 0 },
};

int cli_store_json_option(int key, const char *value, void *data)
{
        bool *json = data;

        (void) value;
        if (key == CLI_OPTION_JSON)
                *json = true;
        return 0;
}

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

void cli_print_version(void)
{
        printf("dsh-sandbox %s\n", DSH_SANDBOX_VERSION);
}

/* Appends `option` to the table, and its letter (with ':' when it takes a value) to the optstring. */
static void add_option(struct option *table, size_t *count, char *optstring, const struct option *option)
{
        table[(*count)++] = *option;
        if (option->val > 0 && option->val < 0x80 && option->val != CLI_OPTION_OPERAND) {
                size_t length = strlen(optstring);

                optstring[length++] = (char) option->val;
                if (option->has_arg == required_argument)
                        optstring[length++] = ':';
                optstring[length] = '\0';
        }
}

/*
 * The getopt_long table and optstring for `line`.  The optstring starts with
 * '+' (stop at the first operand, whatever POSIXLY_CORRECT says) or '-'
 * (hand every operand over in order, never permute), then ':' so that a
 * missing value is told apart from an unknown option.  Returns the table
 * (the caller frees it), or NULL when out of memory.
 */
static struct option *build_table(const cli_command_line *line, char **optstring_out)
{
        size_t own = 0, count = 0;
        struct option *table;
        char *optstring;

        for (const struct option *option = line->own_options; option && option->name; option++)
                own++;
        table = calloc(COUNT(shared_options) + COUNT(help_and_version) + own + 1, sizeof(*table));
        optstring = calloc(2 * (COUNT(shared_options) + COUNT(help_and_version) + own) + 3, 1);
        if (!table || !optstring) {
                free(table);
                free(optstring);
                return NULL;
        }
        optstring[0] = line->operands_anywhere ? '-' : '+';
        optstring[1] = ':';
        for (size_t i = 0; i < COUNT(shared_options); i++) {
                struct option option = shared_options[i].option;

                if (!(line->policy_options & shared_options[i].bit))
                        continue;
                if (line->policy_long_only & shared_options[i].bit)
                        option.val |= LONG_ONLY_SHARED;
                add_option(table, &count, optstring, &option);
        }
        for (size_t i = 0; i < COUNT(help_and_version); i++)
                add_option(table, &count, optstring, &help_and_version[i]);
        for (size_t i = 0; i < own; i++)
                add_option(table, &count, optstring, &line->own_options[i]);
        *optstring_out = optstring;
        return table;
}

/* A usage error that names the subcommand first: "run: --mode requires a value". */
__attribute__((format(printf, 2, 3))) static int line_usage_error(const cli_command_line *line, const char *format, ...)
{
        char message[512];
        va_list arguments;

        va_start(arguments, format);
        vsnprintf(message, sizeof(message), format, arguments);
        va_end(arguments);
        if (!line->name)
                return cli_usage_error("%s", message);
        return cli_usage_error("%s: %s", line->name, message);
}

/* The option as it was typed in argv[element]: "--name" (without any "=value") or "-x". */
static void typed_name(char *const *argv, int element, int key, char *buffer, size_t size)
{
        const char *argument = argv[element];

        if (strncmp(argument, "--", 2) == 0)
                snprintf(buffer, size, "%.*s", (int) strcspn(argument, "="), argument);
        else
                snprintf(buffer, size, "-%c", key);
}

static int store_backend(const char *value, cli_policy_options *policy)
{
        if (strcmp(value, "auto") != 0) {
                /* The library's own list decides which names exist. */
                const char *sole[] = { value, NULL };
                dsh_error error = DSH_ERROR_INIT;
                int result;

                if (dsh_provider_check_backends(sole, &error) < 0) {
                        result = cli_usage_error("--backend must be auto or a backend: %s",
                                                 error.message ? error.message : value);
                        dsh_error_clear(&error);
                        return result;
                }
        }
        policy->backend = value;
        return 0;
}

/*
 * An allow-listed socket, made absolute against the cwd: it must be a socket
 * now, so that a typo is a usage error rather than a connect refused later.
 */
static int store_allowed_unix_socket(const char *value, cli_policy_options *policy)
{
        char *absolute = cli_path_from_cwd(value);
        struct stat status;

        if (!absolute)
                return cli_usage_error("out of memory");
        if (stat(absolute, &status) < 0 || !S_ISSOCK(status.st_mode)) {
                int result = cli_usage_error("--allow-unix-socket: %s %s", absolute,
                                             errno == ENOENT ? "does not exist" : "is not a socket");

                free(absolute);
                return result;
        }
        if (dsh_strv_append(&policy->allow_unix_socket, absolute) < 0) {
                free(absolute);
                return cli_usage_error("out of memory");
        }
        free(absolute);
        return 0;
}

/* --mask and --allow-env: each entry judged as it is read, with the library's own sentence (exit 2 names it). */
static int store_secrets_entry(const char *option, const char *value, int (*check)(const char *, const char **),
                               char ***list)
{
        const char *reason = NULL;

        if (check(value, &reason) < 0)
                return cli_usage_error("%s \"%s\": %s", option, value, reason);
        if (dsh_strv_append(list, value) < 0)
                return cli_usage_error("out of memory");
        return 0;
}

static int check_allowed_environment_name(const char *name, const char **reason)
{
        return dsh_environment_pattern_check(name, false, reason);
}

/* --network: "on" or "off"; the allow-list is chosen by naming hosts. */
static int store_network_word(const char *value, cli_policy_options *policy)
{
        dsh_network_mode mode;

        if (dsh_network_mode_parse(value, &mode) < 0)
                return cli_usage_error("--network expects on or off, not \"%s\" (--allow-host selects the allow-list)",
                                       value);
        policy->network_word = value;
        policy->network_given = true;
        return 0;
}

/* Each entry judged as it is read, with the library's own sentence: exit 2 names the pattern, nothing runs. */
static int store_allowed_host(const char *value, cli_policy_options *policy)
{
        const char *reason = NULL;

        if (dsh_network_pattern_check(value, &reason) < 0)
                return cli_usage_error("--allow-host \"%s\": %s", value, reason);
        if (dsh_strv_append(&policy->network.allow_hosts, value) < 0)
                return cli_usage_error("out of memory");
        policy->network_given = true;
        return 0;
}

static int store_allowed_local_port(const char *value, cli_policy_options *policy)
{
        dsh_network_policy *network = &policy->network;
        unsigned short *grown;
        unsigned long port = 0;

        for (const char *digit = value; *digit && port <= 65535; digit++)
                port = *digit >= '0' && *digit <= '9' ? port * 10 + (unsigned long) (*digit - '0') : 65536;
        if (port < 1 || port > 65535)
                return cli_usage_error("--allow-local-port expects a port, a whole number from 1 to 65535, not \"%s\"",
                                       value);
        grown = realloc(network->allow_local_ports, (network->allow_local_port_count + 1) * sizeof(*grown));
        if (!grown)
                return cli_usage_error("out of memory");
        grown[network->allow_local_port_count++] = (unsigned short) port;
        network->allow_local_ports = grown;
        policy->network_given = true;
        return 0;
}

static int store_dns_upstream(const char *value, cli_policy_options *policy)
{
        char *copy;

        if (dsh_network_upstream_check(value) < 0)
                return cli_usage_error("--dns-upstream \"%s\": expected IPV4:PORT or [IPV6]:PORT (a resolver's "
                                       "address, not its name)",
                                       value);
        copy = strdup(value);
        if (!copy)
                return cli_usage_error("out of memory");
        free(policy->network.dns_upstream);
        policy->network.dns_upstream = copy;
        policy->network_given = true;
        return 0;
}

/*
 * The network options together, once all are read.  Each combination that
 * is refused would otherwise have to be read one way or the other, and
 * either reading surprises someone: hosts with --network off (which wins?),
 * local ports with --network on (on reaches every port already, so the
 * ports would read as a restriction not held), an upstream without hosts
 * (only the allow-list asks one).  --allow-local-port alone is off with
 * those ports.
 */
static int finish_network_options(cli_policy_options *policy)
{
        dsh_network_policy *network = &policy->network;
        bool hosts = dsh_strv_length(network->allow_hosts) > 0;

        if (!policy->network_given)
                return 0;
        if (hosts && policy->network_word)
                return cli_usage_error("--allow-host selects the allow-list; it cannot be combined with --network on|off");
        if (network->allow_local_port_count > 0 && policy->network_word && strcmp(policy->network_word, "on") == 0)
                return cli_usage_error("--allow-local-port limits the network to those ports; it cannot be combined "
                                       "with --network on");
        if (network->dns_upstream && !hosts)
                return cli_usage_error("--dns-upstream names the allow-list's resolver; it needs --allow-host");
        if (hosts)
                network->mode = DSH_NETWORK_ALLOW_LIST;
        else if (policy->network_word)
                dsh_network_mode_parse(policy->network_word, &network->mode);
        else
                network->mode = DSH_NETWORK_OFF;
        return 0;
}

/* Stores a shared option's value; returns 0, 1 when `key` is not one, or CLI_EXIT_USAGE after printing. */
static int store_policy_option(int key, const char *value, cli_policy_options *policy)
{
        switch (key) {
        case 'm':
                policy->mode = value;
                return 0;
        case 'r':
                policy->root = value;
                return 0;
        case 'w':
                if (dsh_strv_append(&policy->allow_write, value) < 0)
                        return cli_usage_error("out of memory");
                return 0;
        case 's':
                policy->session = value;
                return 0;
        case 'b':
                return store_backend(value, policy);
        case 'c':
                policy->config_path = value;
                return 0;
        case OPTION_REMOTE:
                policy->remote = value;
                return 0;
        case OPTION_ALLOW_UNIX_SOCKET:
                return store_allowed_unix_socket(value, policy);
        case OPTION_NETWORK:
                return store_network_word(value, policy);
        case OPTION_ALLOW_HOST:
                return store_allowed_host(value, policy);
        case OPTION_ALLOW_LOCAL_PORT:
                return store_allowed_local_port(value, policy);
        case OPTION_DNS_UPSTREAM:
                return store_dns_upstream(value, policy);
        case OPTION_MASK:
                return store_secrets_entry("--mask", value, dsh_mask_entry_check, &policy->mask);
        case OPTION_ALLOW_ENV:
                return store_secrets_entry("--allow-env", value, check_allowed_environment_name, &policy->allow_env);
        default:
                return 1;
        }
}

/* True when `typed` ("--mode", "-m") names a shared option, which this subcommand may not take. */
static bool is_shared_option(const char *typed)
{
        for (size_t i = 0; i < COUNT(shared_options); i++) {
                const struct option *option = &shared_options[i].option;

                if ((typed[1] == '-' && strcmp(typed + 2, option->name) == 0) ||
                    (typed[1] == option->val && typed[2] == '\0'))
                        return true;
        }
        return false;
}

/* What getopt_long refused ('?' or ':'), as one usage error naming the option as it was typed. */
static int refused_option(const cli_command_line *line, char *const *argv, int element, int key)
{
        char name[64];

        typed_name(argv, element, optopt, name, sizeof(name));
        if (key == ':')
                return line_usage_error(line, "%s requires a value", name);
        if (optopt != 0 && strncmp(argv[element], "--", 2) == 0 && strchr(argv[element], '='))
                return line_usage_error(line, "%s takes no value", name);
        if (is_shared_option(name))
                return line_usage_error(line, "%s does not apply here", name);
        return line_usage_error(line, "unknown option \"%s\"", name);
}

/*
 * getopt_long takes any unambiguous prefix of a long option; this parser
 * does not, so that adding an option never changes what an existing
 * command line means.
 */
static int check_spelt_out(const cli_command_line *line, char *const *argv, int element,
                           const struct option *option)
{
        const char *argument = argv[element];
        size_t typed = strcspn(argument + 2, "=");

        if (typed == strlen(option->name))
                return 0;
        return line_usage_error(line, "unknown option \"%.*s\" (options are not abbreviated: --%s)", (int) typed + 2,
                                argument, option->name);
}

/* True when `key` is the letter of a shared option that gave it up to the subcommand's own option. */
static bool gave_up_letter(const cli_command_line *line, int key)
{
        for (size_t i = 0; i < COUNT(shared_options); i++)
                if ((line->policy_options & line->policy_long_only & shared_options[i].bit) &&
                    shared_options[i].option.val == key)
                        return true;
        return false;
}

static void print_shared_options_help(unsigned taken)
{
        fputs("Policy options:\n", stdout);
        for (size_t i = 0; i < COUNT(shared_options); i++)
                if (taken & shared_options[i].bit)
                        fputs(shared_options[i].help, stdout);
        fputs("  -h, --help             print this help\n"
              "      --version          print the version\n"
              "Options end at the first operand (the program, for run and confine), or at `--`.\n",
              stdout);
}

/* One option getopt_long accepted: help, version, a shared one or the subcommand's own. */
static int handle_option(const cli_command_line *line, char *const *argv, int element, int key, const char *value,
                         cli_policy_options *policy)
{
        char name[64];
        int result;

        if (key & LONG_ONLY_SHARED)
                key &= ~LONG_ONLY_SHARED;
        else if (gave_up_letter(line, key))
                return line->own_option ? line->own_option(key, value, line->data) : 0;
        if (key == 'h') {
                fputs(line->help, stdout);
                /* The subcommands that confine or probe list the shared options they take, and only those;
                 * the others (fs, serve, session, policy context) spell theirs in their own help. */
                if (line->policy_options & CLI_POLICY_BACKEND)
                        print_shared_options_help(line->policy_options);
                return CLI_PARSE_DONE;
        }
        if (key == OPTION_VERSION) {
                cli_print_version();
                return CLI_PARSE_DONE;
        }
        /*
         * Every value names something (a mode, a directory, an id): an empty
         * one is always a mistake — unless it is text the subcommand judges
         * itself (key >= CLI_OPTION_OWN_TEXT, or a subcommand whose own
         * values may all be empty).
         */
        if (value && value[0] == '\0' && key != CLI_OPTION_OPERAND && key < CLI_OPTION_OWN_TEXT &&
            !(line->own_values_may_be_empty && key >= CLI_OPTION_OWN)) {
                typed_name(argv, element, key, name, sizeof(name));
                return line_usage_error(line, "%s requires a non-empty value", name);
        }
        if (policy) {
                result = store_policy_option(key, value, policy);
                if (result != 1)
                        return result;
        }
        if (line->own_option)
                return line->own_option(key, value, line->data);
        return 0;
}

int cli_options_parse(const cli_command_line *line, int argc, char **argv, cli_policy_options *policy, int *operands)
{
        char *optstring = NULL;
        struct option *table = build_table(line, &optstring);
        int result = 0;

        if (!table)
                return line_usage_error(line, "out of memory");
        if (line->policy_options == 0)
                policy = NULL;
        /* optind = 0 makes glibc start afresh: the parser runs more than once in a process (tests, fuzzing). */
        optind = 0;
        opterr = 0;
        while (result == 0) {
                /* The argv element getopt_long looks at next (optind moves past it only once it is used up). */
                int element = optind > 0 ? optind : 1;
                int long_index = -1;
                int key = getopt_long(argc, argv, optstring, table, &long_index);

                if (key == -1)
                        break;
                if (key == '?' || key == ':')
                        result = refused_option(line, argv, element, key);
                else if (long_index >= 0)
                        result = check_spelt_out(line, argv, element, &table[long_index]);
                if (result == 0)
                        result = handle_option(line, argv, element, key, optarg, policy);
        }
        if (result == 0 && line->operands_anywhere) {
                /* After `--`: operands only. */
                for (; optind < argc && result == 0; optind++)
                        if (line->own_option)
                                result = line->own_option(CLI_OPTION_OPERAND, argv[optind], line->data);
        }
        if (result == 0 && policy)
                result = finish_network_options(policy);
        if (result == 0)
                *operands = optind;
        free(table);
        free(optstring);
        return result;
}

int cli_parse_positive(const char *command, const char *option, const char *value, long maximum, long *out)
{
        char *end = NULL;
        long number;

        errno = 0;
        number = value[0] >= '0' && value[0] <= '9' ? strtol(value, &end, 10) : -1;
        if (number <= 0 || errno != 0 || !end || *end != '\0' || number > maximum)
                return cli_usage_error("%s: %s expects a whole number from 1 to %ld, not \"%s\"", command, option,
                                       maximum, value);
        *out = number;
        return 0;
}

int cli_command_status(int result)
{
        if (result == CLI_PARSE_DONE)
                return CLI_EXIT_SUCCESS;
        return result >= 0 && result <= 255 ? result : CLI_EXIT_FAILURE;
}

int cli_refuse_operands(const char *command, int argc, char **argv, int operands)
{
        if (operands < argc)
                return cli_usage_error("%s: unknown argument \"%s\"", command, argv[operands]);
        return 0;
}

int cli_options_parse_without_operands(const cli_command_line *line, int argc, char **argv)
{
        int operands = argc;
        int result = cli_options_parse(line, argc, argv, NULL, &operands);

        return result != 0 ? result : cli_refuse_operands(line->name, argc, argv, operands);
}

int cli_parse_policy_and_command(int argc, char **argv, const char *help, cli_policy_options *options,
                                 char ***command)
{
        const cli_command_line line = { .name = argv[0], .help = help,
                                        .policy_options = CLI_POLICY_ALL | CLI_POLICY_REMOTE };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, options, &operands);

        if (result != 0)
                return result;
        if (operands >= argc)
                return cli_usage_error("%s: missing PROGRAM [ARG...]", argv[0]);
        *command = &argv[operands];
        return 0;
}

static void warn_without_effect(const char *option, dsh_mode mode, const char *because, int *count)
{
        cli_print_message("warning: %s has no effect under %s, %s", option, dsh_mode_name(mode), because);
        (*count)++;
}

int cli_policy_options_warn_without_effect(const cli_policy_options *options, dsh_mode mode)
{
        int count = 0;

        switch (mode) {
        case DSH_MODE_READ_ONLY:
                if (options->allow_write)
                        warn_without_effect("--allow-write", mode, "where nothing is writable", &count);
                break;
        case DSH_MODE_DANGER_FULL_ACCESS:
                if (options->root)
                        warn_without_effect("--root", mode, "where nothing is confined", &count);
                if (options->allow_write)
                        warn_without_effect("--allow-write", mode, "where nothing is confined", &count);
                if (options->backend)
                        warn_without_effect("--backend", mode, "where no backend runs the command", &count);
                if (options->allow_unix_socket)
                        warn_without_effect("--allow-unix-socket", mode, "where nothing is confined", &count);
                if (options->mask)
                        warn_without_effect("--mask", mode, "where nothing is confined", &count);
                if (options->allow_env)
                        warn_without_effect("--allow-env", mode, "where nothing is confined", &count);
                break;
        case DSH_MODE_WORKSPACE_WRITE:
                break;
        }
        return count;
}

