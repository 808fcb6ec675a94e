/* SPDX-License-Identifier: MIT */
/*
 * The command line of every dsh-sandbox subcommand, parsed one way
 * (docs/cli.md): getopt_long over one table of the shared policy options
 * plus the subcommand's own, with --help/-h and --version everywhere.
 *
 * Options end at the first operand, so `dsh-sandbox run make -j4` runs
 * `make -j4`; `--` also ends them.  Long options are spelt out in full: an
 * abbreviation (`--allow` for `--allow-write`) is refused, so that a
 * script's command line keeps its meaning when an option is added.  Every
 * usage error is one line `dsh-sandbox: usage error: ...` and exit 2.
 */
#ifndef DSH_SANDBOX_CLI_OPTIONS_H
#define DSH_SANDBOX_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

#include "policy-options.h"

/* Which shared policy options a subcommand takes (cli_command_line.policy_options). */
enum {
        CLI_POLICY_MODE = 1 << 0,          /* -m, --mode MODE */
        CLI_POLICY_ROOT = 1 << 1,          /* -r, --root DIR */
        CLI_POLICY_ALLOW_WRITE = 1 << 2,   /* -w, --allow-write DIR (repeatable) */
        CLI_POLICY_SESSION = 1 << 3,       /* -s, --session ID */
        CLI_POLICY_BACKEND = 1 << 4,       /* -b, --backend NAME */
        CLI_POLICY_CONFIG = 1 << 5,        /* -c, --config FILE */
        CLI_POLICY_REMOTE = 1 << 6,        /* --remote DEST: run, confine, bash, probe only */
        CLI_POLICY_ALLOW_UNIX_SOCKET = 1 << 7,  /* --allow-unix-socket PATH (repeatable) */
        /* --network on|off, --allow-host PATTERN, --allow-local-port PORT (both repeatable), --dns-upstream IP:PORT */
        CLI_POLICY_NETWORK = 1 << 8,
        CLI_POLICY_SECRETS = 1 << 9,       /* --mask ENTRY, --allow-env NAME (both repeatable) */
        CLI_POLICY_ALL = ((1 << 6) - 1) | CLI_POLICY_ALLOW_UNIX_SOCKET | CLI_POLICY_NETWORK | CLI_POLICY_SECRETS,
};

/*
 * Keys for a subcommand's own options: a short option's key is its letter
 * (one the shared options do not use); a long-only option's key is
 * CLI_OPTION_OWN or above.  CLI_OPTION_OPERAND is the key an operand is
 * handed over with, when operands may come between options
 * (cli_command_line.operands_anywhere); CLI_OPTION_JSON is --json's.  An
 * empty value is refused for every option but those keyed
 * CLI_OPTION_OWN_TEXT or above: free text the subcommand judges itself (a
 * justification, whose emptiness has its own message).
 */
enum {
        CLI_OPTION_OPERAND = 1,
        CLI_OPTION_JSON = 0x200,
        CLI_OPTION_OWN,
        CLI_OPTION_OWN_TEXT = 0x300,
};

/* `--json` as a subcommand's only own option (a table ending with its zeroed entry). */
extern const struct option cli_json_option[];

/* cli_command_line.own_option for cli_json_option: `data` points to the bool that --json sets. */
int cli_store_json_option(int key, const char *value, void *data);

typedef struct cli_command_line {
        const char *name;            /* "run", "session show": named in every usage error */
        const char *help;            /* --help's text; the shared options' lines follow when it takes them all */
        unsigned policy_options;     /* the CLI_POLICY_* it takes; 0 for none */
        /* Its own options (name, has_arg: no_argument or required_argument, flag NULL, val: the key), ended
         * by a zeroed entry; NULL for none. */
        const struct option *own_options;
        /*
         * Stores its own option `key` with `value` (NULL for a flag), or an
         * operand under CLI_OPTION_OPERAND.  Returns 0, or CLI_EXIT_USAGE
         * after printing what was wrong.  May be NULL when there is nothing
         * to store.
         */
        int (*own_option)(int key, const char *value, void *data);
        void *data;
        /*
         * false (the default): options end at the first operand, which is
         * where the caller's operands start (a command and its own options).
         * true: options and operands may come in any order (`session show ID
         * --json`); every operand goes to own_option, `--` included.
         */
        bool operands_anywhere;
        /*
         * false (the default): an empty value is refused for every option.
         * true: the subcommand's own long-only options (keys from
         * CLI_OPTION_OWN) may have an empty value (`fs edit --new ''`
         * deletes the old text).
         */
        bool own_values_may_be_empty;
        /*
         * Shared options (CLI_POLICY_*) that keep their long form but lose
         * their short one here, whose letter the subcommand uses for its own
         * option (`fs rm -r` is --recursive; --root is spelt out there).
         */
        unsigned policy_long_only;
} cli_command_line;

/*
 * Not an exit status: what the parsers return after printing --help or
 * --version on stdout, which end the command there, nothing else done,
 * with exit status 0.  It is not 0, so that every step after the parse
 * (`if (result == 0) ...`) is skipped, and it is over 255, so that no one
 * can read it as an exit status (returned as one by mistake it would end as
 * 232, not as success): a command ends with cli_command_status(result).
 */
enum {
        CLI_PARSE_DONE = 1000,
};

/*
 * A command's exit status from what its steps returned: CLI_EXIT_SUCCESS
 * for a parser's CLI_PARSE_DONE, an exit status (0 to 255) as it is, and
 * anything else (a negative errno that came this far by mistake)
 * CLI_EXIT_FAILURE: a negative number never ends as success.  The one place
 * where "done" becomes exit 0.
 */
int cli_command_status(int result);

/*
 * Parses argv[1..] (argv[0] is the subcommand's name) as `line` describes,
 * the shared policy options into `policy` (values point into argv;
 * --allow-write's list and the network are owned: cli_policy_options_clear()).
 * The network options are judged together once all are read (docs/cli.md,
 * "Network"): --allow-host with --network, --allow-local-port with
 * --network on, --dns-upstream without --allow-host are usage errors.  Returns 0
 * with *operands the index of the first operand (argc when there is none),
 * CLI_PARSE_DONE after printing --help or --version on stdout, or
 * CLI_EXIT_USAGE after printing what was wrong.  `policy` may be NULL when
 * line->policy_options is 0.  Not reentrant: getopt's state is global.
 */
int cli_options_parse(const cli_command_line *line, int argc, char **argv, cli_policy_options *policy, int *operands);

/* For a subcommand that takes no operand: a usage error naming argv[operands], if there is one. */
int cli_refuse_operands(const char *command, int argc, char **argv, int operands);

/* cli_options_parse() for a subcommand with neither policy options nor operands, then cli_refuse_operands(). */
int cli_options_parse_without_operands(const cli_command_line *line, int argc, char **argv);

/*
 * An option's value that must be a whole number from 1 to `maximum`, digits
 * only: 0 with *out set, or CLI_EXIT_USAGE after printing "<command>:
 * <option> expects a whole number from 1 to <maximum>, not \"<value>\"".
 */
int cli_parse_positive(const char *command, const char *option, const char *value, long maximum, long *out);

/*
 * `NAME [policy options] [--] PROGRAM [ARG...]`, as run and confine take
 * it: every policy option, then the command, which starts at the first
 * operand.  Returns 0 with *command pointing into argv, CLI_PARSE_DONE after
 * printing `help` (followed by the policy options' lines) or the version, or
 * CLI_EXIT_USAGE after printing what was wrong.
 */
int cli_parse_policy_and_command(int argc, char **argv, const char *help, cli_policy_options *options,
                                 char ***command);

/* Prints "dsh-sandbox VERSION" on stdout, as --version does everywhere. */
void cli_print_version(void);

/*
 * A warning, not silence, for a shared option that the resolved mode makes
 * pointless: --allow-write under read-only (nothing is writable), --root,
 * --allow-write and --backend under danger-full-access (nothing is
 * confined).  One stderr line `dsh-sandbox: warning: ...` per option;
 * returns how many it printed.  Called once the policy is resolved, when
 * the mode is known whichever of --mode, the session and the config gave it.
 */
int cli_policy_options_warn_without_effect(const cli_policy_options *options, dsh_mode mode);

#endif
