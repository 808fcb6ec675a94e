/* SPDX-License-Identifier: MIT */
/*
 * A long-lived front end stopped by a signal (the CLI catches SIGTERM,
 * SIGINT and SIGHUP and writes the signal's number as one byte to a pipe):
 * a thread watches the pipe's read end and, on a stop, runs the front end's
 * `stop` — which kills every command it runs and returns once they have
 * ended — then ends the process by that signal, so that its parent sees
 * what it asked for.  Calls in flight are not answered: the process ends.
 */
#ifndef DSH_SERVICE_STOP_WATCH_H
#define DSH_SERVICE_STOP_WATCH_H

#include <pthread.h>
#include <stdbool.h>

typedef struct service_stop_watch {
        int stop_fd;
        int quit[2];            /* the end of the serving: the watcher returns */
        void (*stop)(void *data);
        void *data;
        pthread_t thread;
        bool started;
} service_stop_watch;

/* Starts watching `stop_fd` (-1: nothing to watch; nothing starts).  Returns 0 or a negative errno. */
int service_stop_watch_start(service_stop_watch *watch, int stop_fd, void (*stop)(void *data), void *data);

/* Ends the watcher once the serving has ended (a stop already under way ends the process instead). */
void service_stop_watch_end(service_stop_watch *watch);

#endif
