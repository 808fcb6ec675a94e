/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's cancellation (dsh_bash_cancel): a pipe the caller writes a
 * signal number into, from any thread or a signal handler, and the run polls
 * beside the command's output, so that it wakes at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bash/bash-execution.h"
#include "base/error.h"
#include "provider/spawn.h"

struct dsh_bash_cancellation {
        int read_fd;
        int write_fd;
        bool requested;   /* a request was read: the run's side only */
};

int dsh_bash_cancellation_new(dsh_bash_cancellation **cancellation_out, dsh_error *error)
{
        dsh_bash_cancellation *cancellation = calloc(1, sizeof(*cancellation));
        int fds[2], result;

        *cancellation_out = NULL;
        if (!cancellation)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_pipe_above_stdio(fds);
        if (result < 0) {
                free(cancellation);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the cancellation pipe: %s",
                                     strerror(-result));
        }
        /* Non-blocking both ways: a signal handler must never block on a full pipe (it is cancelled already). */
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        cancellation->read_fd = fds[0];
        cancellation->write_fd = fds[1];
        *cancellation_out = cancellation;
        return 0;
}

void dsh_bash_cancellation_free(dsh_bash_cancellation *cancellation)
{
        if (!cancellation)
                return;
        close(cancellation->read_fd);
        close(cancellation->write_fd);
        free(cancellation);
}

void dsh_bash_cancel(dsh_bash_cancellation *cancellation, int signal_number)
{
        int saved_errno = errno;
        unsigned char request = signal_number > 0 && signal_number < NSIG && signal_number < 256
                                        ? (unsigned char) signal_number
                                        : (unsigned char) SIGKILL;

        if (cancellation && write(cancellation->write_fd, &request, 1) < 0) {
                /* EAGAIN: the pipe is full of earlier requests, which say the same. */
        }
        errno = saved_errno;
}

int dsh_bash_cancellation_take(dsh_bash_cancellation *cancellation)
{
        unsigned char requests[64];
        int signal_number = 0;
        ssize_t length;

        if (!cancellation)
                return 0;
        while ((length = read(cancellation->read_fd, requests, sizeof(requests))) > 0 ||
               (length < 0 && errno == EINTR))
                for (ssize_t i = 0; i < length; i++)
                        if (signal_number != SIGKILL)
                                signal_number = requests[i];
        if (signal_number)
                cancellation->requested = true;
        return signal_number;
}

bool dsh_bash_cancellation_requested(dsh_bash_cancellation *cancellation)
{
        if (!cancellation)
                return false;
        (void) dsh_bash_cancellation_take(cancellation);
        return cancellation->requested;
}

int dsh_bash_cancellation_fd(const dsh_bash_cancellation *cancellation)
{
        return cancellation ? cancellation->read_fd : -1;
}
