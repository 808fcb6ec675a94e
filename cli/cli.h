/* SPDX-License-Identifier: MIT */
/* The dsh-sandbox command-line tool: shared declarations.  The CLI uses only the public API. */
#ifndef DSH_SANDBOX_CLI_H
#define DSH_SANDBOX_CLI_H

#include <stdbool.h>

#include "dsh-sandbox/sandbox.h"

/* Exit statuses of the tool itself (docs/cli.md): the command's own status otherwise. */
enum {
        CLI_EXIT_SUCCESS = 0,
        CLI_EXIT_FAILURE = 1,
        CLI_EXIT_USAGE = 2,
        CLI_EXIT_SANDBOX = 125,
        CLI_EXIT_CANNOT_EXECUTE = 126,
        CLI_EXIT_NOT_FOUND = 127,
};

/* Prints "dsh-sandbox: <CODE>: <message>" (or without a code) on one stderr line. */
void cli_print_error(const dsh_error *error);

/* Prints "dsh-sandbox: <message>" on one stderr line. */
void cli_print_message(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* All `length` bytes to `fd`, again after EINTR and short writes: 0, or a negative errno (-EIO for a write
 * that took nothing). */
int cli_write_all(int fd, const void *bytes, size_t length);

/* Prints a usage error naming what was wrong and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/*
 * JSON strings carry only UTF-8, and paths and arguments are bytes.  The
 * library's codec (dsh-sandbox/json.h) refuses, naming the member, any
 * string it cannot carry, so nothing is ever dropped from what is printed;
 * the subcommands check the caller's own input here first, to refuse it
 * before anything runs and name it as the caller knows it ("confine:
 * argv[2]", "the workspace root").  Returns 0 when `text` is valid UTF-8;
 * otherwise prints "<what> is not valid UTF-8 (byte 0xNN at offset N), and a
 * JSON string cannot carry it" as a usage error and returns CLI_EXIT_USAGE.
 */
int cli_require_utf8(const char *text, const char *what_format, ...) __attribute__((format(printf, 2, 3)));

/*
 * Prints what a dsh_json_encode_*() call returned: `text` and a newline on
 * stdout (0, or 1 when stdout cannot be written), or, when `encoded` is
 * negative, `error` on one stderr line: a member JSON cannot carry
 * (DSH_ERROR_INVALID_INPUT, a path that is not UTF-8) as a usage error
 * (2), anything else with `failure_status`.  Frees `text`, clears `error`.
 */
int cli_print_json(int encoded, char *text, dsh_error *error, int failure_status);

/* The exit status for a library error: 125 for the sandbox, 126/127 for exec, 2 for bad input. */
int cli_exit_status_for_error(const dsh_error *error);

/* Prints a library error and returns its exit status for the commands that set up or resolve: 2
 * for bad input, else `failure_status`.  The error is cleared. */
int cli_library_error(dsh_error *error, int failure_status);

/* `path` made absolute against the cwd, as a shell takes it; a new string, or NULL when out of memory. */
char *cli_path_from_cwd(const char *path);

/*
 * For a long-lived front end (serve, mcp): SIGTERM, SIGINT and SIGHUP are caught,
 * and each writes its number as one byte to a pipe.  Returns the pipe's
 * read end for the front end to watch, or -1 (the signals then keep their
 * default).  A signal ignored at start (nohup) stays ignored.
 */
int cli_catch_stopping_signals(void);

/* Subcommands: each receives argv starting at its own name. */
int cli_command_run(int argc, char **argv);
int cli_command_bash(int argc, char **argv);
int cli_command_confine(int argc, char **argv);
int cli_command_probe(int argc, char **argv);
int cli_command_session(int argc, char **argv);
int cli_command_policy(int argc, char **argv);
int cli_command_why(int argc, char **argv);
int cli_command_fs(int argc, char **argv);
int cli_command_mcp(int argc, char **argv);
int cli_command_serve(int argc, char **argv);
int cli_command_remote_helper(int argc, char **argv);
int cli_command_remote_service(int argc, char **argv);

#endif
