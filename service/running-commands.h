/* SPDX-License-Identifier: MIT */
/*
 * The bash commands a front end (serve's bash.run, mcp's bash tool) runs
 * for calls in flight, known so that the end of the client's input or a
 * stop kills each of them: under Landlock the command's process group is
 * the only handle on it, and none may outlive the server.
 */
#ifndef DSH_SERVICE_RUNNING_COMMANDS_H
#define DSH_SERVICE_RUNNING_COMMANDS_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "dsh-sandbox/bash-tool.h"

#include "jsonrpc.h"

/* One command, entered by its call for as long as it may run (it lives on the call's stack). */
typedef struct running_command {
        dsh_bash_cancellation *cancellation;
        rpc_call *call;
        struct running_command *next;
} running_command;

typedef struct running_commands {
        pthread_mutex_t lock;
        pthread_cond_t changed;         /* on CLOCK_MONOTONIC: signalled when a command leaves */
        running_command *list;
        bool ending;                    /* every command was killed: one entered from now on is killed at once */
} running_commands;

void running_commands_init(running_commands *commands);
void running_commands_destroy(running_commands *commands);

/*
 * Enters `command`, and makes its call's cancellation a SIGTERM to the
 * command's group (what is left of it gets SIGKILL after the grace); once
 * running_commands_kill() was called, the command is killed at once (it
 * never runs).
 */
void running_commands_enter(running_commands *commands, running_command *command);

/* Leaves (and takes the cancel hook off its call): the caller does this before it frees the cancellation. */
void running_commands_leave(running_commands *commands, running_command *command);

/*
 * Kills every command (SIGKILL to its group), and every one entered later.
 * With `server`, each command's call is cancelled too, so that one still
 * waiting for its client's approval stops waiting.
 */
void running_commands_kill(running_commands *commands, rpc_server *server);

/* Waits until every command has left, or until `deadline` (CLOCK_MONOTONIC; NULL: no bound). */
void running_commands_wait(running_commands *commands, const struct timespec *deadline);

#endif
