/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "cli.h"

/*
 * The long-lived front ends end on SIGTERM, SIGINT and SIGHUP, but not
 * before every command they run is killed: the handler only writes the
 * signal's number to a pipe (async-signal-safe), and the front end's
 * watcher does the rest, then ends the process by that signal.
 */
static const int stopping_signals[] = { SIGTERM, SIGINT, SIGHUP };

static int stop_pipe[2] = { -1, -1 };

static void stop_on_signal(int signal_number)
{
        unsigned char byte = (unsigned char) signal_number;
        int saved = errno;

        (void) !write(stop_pipe[1], &byte, 1);
        errno = saved;
}

int cli_catch_stopping_signals(void)
{
        struct sigaction action = { 0 };

        if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return -1;
        action.sa_handler = stop_on_signal;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof(stopping_signals) / sizeof(stopping_signals[0]); i++) {
                struct sigaction previous;

                if (sigaction(stopping_signals[i], NULL, &previous) == 0 && previous.sa_handler != SIG_IGN)
                        sigaction(stopping_signals[i], &action, NULL);
        }
        return stop_pipe[0];
}
