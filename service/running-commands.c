/* SPDX-License-Identifier: MIT */
#include "running-commands.h"

#include <errno.h>
#include <signal.h>

void running_commands_init(running_commands *commands)
{
        pthread_condattr_t monotonic;

        *commands = (running_commands) { .list = NULL };
        pthread_mutex_init(&commands->lock, NULL);
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_cond_init(&commands->changed, &monotonic);
        pthread_condattr_destroy(&monotonic);
}

void running_commands_destroy(running_commands *commands)
{
        pthread_cond_destroy(&commands->changed);
        pthread_mutex_destroy(&commands->lock);
}

/* The call's cancel hook, on the transport's reading thread: dsh_bash_cancel() only writes to a pipe. */
static void cancel_command(void *data)
{
        dsh_bash_cancel(data, SIGTERM);
}

void running_commands_enter(running_commands *commands, running_command *command)
{
        pthread_mutex_lock(&commands->lock);
        command->next = commands->list;
        commands->list = command;
        if (commands->ending)
                dsh_bash_cancel(command->cancellation, SIGKILL);
        pthread_mutex_unlock(&commands->lock);
        rpc_call_on_cancel(command->call, cancel_command, command->cancellation);
}

void running_commands_leave(running_commands *commands, running_command *command)
{
        rpc_call_on_cancel(command->call, NULL, NULL);
        pthread_mutex_lock(&commands->lock);
        for (running_command **link = &commands->list; *link; link = &(*link)->next)
                if (*link == command) {
                        *link = command->next;
                        break;
                }
        pthread_cond_broadcast(&commands->changed);
        pthread_mutex_unlock(&commands->lock);
}

void running_commands_kill(running_commands *commands, rpc_server *server)
{
        pthread_mutex_lock(&commands->lock);
        commands->ending = true;
        for (running_command *command = commands->list; command; command = command->next) {
                dsh_bash_cancel(command->cancellation, SIGKILL);
                if (server)
                        rpc_server_cancel(server, rpc_call_id(command->call));
        }
        pthread_mutex_unlock(&commands->lock);
}

void running_commands_wait(running_commands *commands, const struct timespec *deadline)
{
        pthread_mutex_lock(&commands->lock);
        while (commands->list) {
                if (!deadline)
                        pthread_cond_wait(&commands->changed, &commands->lock);
                else if (pthread_cond_timedwait(&commands->changed, &commands->lock, deadline) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&commands->lock);
}
