/* SPDX-License-Identifier: MIT */
/*
 * A terminal of the command's own, served by `dsh-sandbox run` when a person
 * runs it at a terminal.
 *
 * Why: an interactive shell needs a controlling terminal for job control,
 * and the user's own terminal must never be the confined command's.  A
 * command in the user's session and process groups can signal them
 * (kill(0, ...) reaches every process of the group it shares, whatever pid
 * namespace it is in), steal the terminal's foreground from the user's shell
 * once `run` is stopped and read what the user types next, or leave the
 * terminal dead behind it (a line discipline, modes).  So the command gets a
 * fresh pty as its controlling terminal, in a session of its own
 * (dsh_spawn_options.controlling_terminal), and this process copies bytes
 * between the user's terminal (in raw mode while the command runs) and the
 * pty's master, and passes the window size on.  Whatever the command does to
 * its terminal lands on that pty; the user's terminal gets only bytes, and
 * its modes back at the end.  Keys reach the command as bytes, interpreted by
 * the pty's own line discipline (copied from the user's terminal): Ctrl-C and
 * Ctrl-Z are the command's, as over `ssh -t`.
 */
#ifndef DSH_SANDBOX_CLI_TERMINAL_PROXY_H
#define DSH_SANDBOX_CLI_TERMINAL_PROXY_H

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "dsh-sandbox/provider.h"

typedef struct cli_terminal_proxy {
        int master;                     /* the pty's master, served by this process; -1: none */
        int slave;                      /* the command's side, until the spawn has it */
        int terminal_out;               /* the user's terminal to write the pty's output to: 1, 2, or 0 */
        struct termios saved;           /* the user's terminal as it was, put back at the end */
        bool raw;                       /* the user's terminal is in raw mode now */
} cli_terminal_proxy;

#define CLI_TERMINAL_PROXY_INIT { -1, -1, 1, { 0 }, false }

/*
 * When stdin is this process's controlling terminal and it is in that
 * terminal's foreground (a person at a shell), opens a pty like it (modes and
 * window size copied) and returns 1; returns 0 when there is no such
 * terminal (nothing to serve), or a negative errno.
 */
int cli_terminal_proxy_open(cli_terminal_proxy *proxy);

/* The spawn's stdio that is the user's terminal becomes the pty; the command takes it as its own. */
void cli_terminal_proxy_attach(const cli_terminal_proxy *proxy, dsh_spawn_options *options);

/*
 * Serves the pty until `runner` (this process's child) has exited and the
 * command's output is drained: the user's terminal in raw mode meanwhile,
 * its modes put back before this returns.  Reaps nothing.  Returns 0 or a
 * negative errno.
 */
int cli_terminal_proxy_serve(cli_terminal_proxy *proxy, pid_t runner);

/*
 * For a stop of this process while it serves (a SIGTSTP sent to it): the
 * user's terminal as it was, then raw again.  Async-signal-safe (tcsetattr
 * only); nothing while no terminal is served.
 */
void cli_terminal_proxy_suspend(void);
void cli_terminal_proxy_resume(void);

/* Closes what is left and puts the user's terminal back as it was. */
void cli_terminal_proxy_close(cli_terminal_proxy *proxy);

#endif
