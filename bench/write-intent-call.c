/* SPDX-License-Identifier: MIT */
/*
 * write-intent-call: what one write-intent call costs where it runs.
 *
 * Opens one existing file COUNT times with O_WRONLY|O_CREAT|O_TRUNC and
 * closes it (one write-intent call, sent to the supervisor when there is
 * one), then COUNT times with O_RDONLY (a plain read, which the filter never
 * sends), and prints the mean time of each open and close in microseconds:
 * "write W read R".  Timed inside the one process, so that what starting a
 * confined call costs stays out of it; write-intent.bench.sh runs it
 * unconfined, under notify-floor and under each backend, in turn.  A
 * benchmark, never a test: it asserts nothing.
 *
 *   write-intent-call COUNT FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench-timing.h"

/* The mean microseconds of `count` opens of `path` with `flags`, each closed at once; negative when one failed. */
static double mean_open(const char *path, int flags, long count)
{
        double start = now_microseconds();
        long i;

        for (i = 0; i < count; i++) {
                int fd = open(path, flags | O_CLOEXEC, 0644);

                if (fd < 0)
                        return -1;
                close(fd);
        }
        return (now_microseconds() - start) / (double) count;
}

int main(int argc, char **argv)
{
        long count = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
        double write_open, read_open;

        if (count < 1) {
                fprintf(stderr, "usage: write-intent-call COUNT FILE   (COUNT a positive number)\n");
                return 2;
        }
        write_open = mean_open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, count);
        read_open = mean_open(argv[2], O_RDONLY, count);
        if (write_open < 0 || read_open < 0) {
                perror("write-intent-call: open");
                return 1;
        }
        printf("write %.2f read %.2f\n", write_open, read_open);
        return 0;
}
