/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "dsh-sandbox/provider.h"

#include "stop-watch.h"

static void *watch_for_stop(void *data)
{
        service_stop_watch *watch = data;
        struct pollfd fds[2] = { { watch->stop_fd, POLLIN, 0 }, { watch->quit[0], POLLIN, 0 } };
        unsigned char signal_number = 0;

        while (poll(fds, 2, -1) < 0 && errno == EINTR)
                ;
        if (fds[1].revents || read(watch->stop_fd, &signal_number, 1) != 1)
                return NULL;
        watch->stop(watch->data);
        _exit(dsh_end_like_child(signal_number ? signal_number : SIGTERM));
}

int service_stop_watch_start(service_stop_watch *watch, int stop_fd, void (*stop)(void *data), void *data)
{
        int failed;

        *watch = (service_stop_watch) { .stop_fd = stop_fd, .quit = { -1, -1 }, .stop = stop, .data = data };
        if (stop_fd < 0)
                return 0;
        if (pipe2(watch->quit, O_CLOEXEC) < 0)
                return -errno;
        failed = pthread_create(&watch->thread, NULL, watch_for_stop, watch);
        watch->started = failed == 0;
        return -failed;
}

void service_stop_watch_end(service_stop_watch *watch)
{
        if (watch->started) {
                (void) !write(watch->quit[1], "", 1);
                pthread_join(watch->thread, NULL);
        }
        if (watch->quit[0] >= 0) {
                close(watch->quit[0]);
                close(watch->quit[1]);
        }
}
