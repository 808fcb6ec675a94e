/* SPDX-License-Identifier: MIT */
/*
 * write-race MODE N ...: the write supervisor's hostile command.  One thread
 * flips what a name means, between a protected file and a plain one, while
 * this one opens the name O_WRONLY|O_TRUNC and writes to it, N times (a
 * count, never a time: the test's outcome may not depend on the machine's
 * speed).  It runs confined; the test judges the protected file on disk.
 *
 *   memory N PATH_A PATH_B   the path buffer itself flips between PATH_A and PATH_B (they differ in
 *                            one byte): a supervisor that decides on one reading of the command's
 *                            memory and lets the kernel read it again opens the other file
 *   exchange N X Y PATH      X and Y (two symlinks, or a directory and a symlink) are exchanged with
 *                            renameat2(RENAME_EXCHANGE), once as each open starts, while PATH (one of
 *                            them, or a file beneath one) is opened: a supervisor that decides on one
 *                            resolution of the name and opens it by a second one opens the other file
 *
 * Prints one line: "opens=N written=W refused=R last_refusal=ERRNO flips=F", W the opens that
 * succeeded (each truncated what it opened), R those that failed (ERRNO the last failure's name), F the successful flips.
 * Exit status: 0 once the loop ran, 2 for bad usage or a thread that cannot start.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define MARKER "written by write-race\n"

static atomic_bool race_over;
static atomic_long flips;
static atomic_long opens_started;
static char race_path[4096];

struct race {
        const char *first;
        const char *second;
};

/* Flips the one byte where the two paths differ, as fast as it can, until the writer is done. */
static void *flip_memory(void *data)
{
        const struct race *race = data;
        volatile char *byte;
        size_t at = 0;

        while (race->first[at] == race->second[at])
                at++;
        byte = (volatile char *) &race_path[at];
        while (!atomic_load_explicit(&race_over, memory_order_relaxed)) {
                *byte = race->first[at];
                *byte = race->second[at];
                atomic_fetch_add_explicit(&flips, 2, memory_order_relaxed);
        }
        return NULL;
}

/*
 * One exchange per open, started while that open is under way: exchanging
 * as fast as it can, the thread holds the directory's lock so often that
 * the opens starve (ten thousand took eleven seconds unconfined), and a
 * race that cannot finish its count proves nothing.
 */
static void *exchange_names(void *data)
{
        const struct race *race = data;
        long seen = 0;

        while (!atomic_load_explicit(&race_over, memory_order_relaxed)) {
                long now = atomic_load_explicit(&opens_started, memory_order_acquire);

                if (now == seen) {
                        sched_yield();
                        continue;
                }
                seen = now;
                if (syscall(SYS_renameat2, AT_FDCWD, race->first, AT_FDCWD, race->second, RENAME_EXCHANGE) == 0)
                        atomic_fetch_add_explicit(&flips, 1, memory_order_relaxed);
        }
        return NULL;
}

/*
 * Opens race_path O_WRONLY|O_TRUNC `count` times while `racer` runs; prints
 * the tally.  The truncation is the write that matters: a protected file
 * opened once is empty on disk.  Through one successful open in 1024 the
 * marker is written too (that the bytes land), not through every one:
 * truncating a file that holds data costs ext4 a journal commit, which
 * would make the count take minutes, while truncating an empty one is free.
 */
static int write_during(long count, void *(*racer)(void *), struct race *race)
{
        long written = 0, refused = 0;
        int last_refusal = 0;
        pthread_t thread;

        if (pthread_create(&thread, NULL, racer, race) != 0)
                return 2;
        for (long i = 0; i < count; i++) {
                int fd;

                atomic_fetch_add_explicit(&opens_started, 1, memory_order_release);
                fd = open(race_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                if (fd < 0) {
                        refused++;
                        last_refusal = errno;
                        continue;
                }
                if (written++ % 1024 == 0 && write(fd, MARKER, strlen(MARKER)) != (ssize_t) strlen(MARKER))
                        written--;
                close(fd);
        }
        atomic_store(&race_over, true);
        pthread_join(thread, NULL);
        printf("opens=%ld written=%ld refused=%ld last_refusal=%s flips=%ld\n", count, written, refused,
               last_refusal ? strerrorname_np(last_refusal) : "none", atomic_load(&flips));
        return 0;
}

static bool parse_count(const char *text, long *count)
{
        char *end = NULL;

        errno = 0;
        *count = strtol(text, &end, 10);
        return errno == 0 && end != text && *end == '\0' && *count > 0;
}

/* The number of bytes where two paths of one length differ. */
static size_t differences(const char *first, const char *second)
{
        size_t count = 0;

        for (; *first; first++, second++)
                count += *first != *second;
        return count;
}

static int usage(void)
{
        fputs("usage: write-race memory N PATH_A PATH_B | exchange N X Y PATH\n", stderr);
        return 2;
}

int main(int argc, char **argv)
{
        struct race race;
        long count;

        if (argc < 3 || !parse_count(argv[2], &count))
                return usage();
        if (strcmp(argv[1], "memory") == 0 && argc == 5) {
                if (strlen(argv[3]) != strlen(argv[4]) || strlen(argv[3]) >= sizeof(race_path) ||
                    differences(argv[3], argv[4]) != 1)
                        return usage();
                race = (struct race) { argv[3], argv[4] };
                strcpy(race_path, argv[3]);
                return write_during(count, flip_memory, &race);
        }
        if (strcmp(argv[1], "exchange") == 0 && argc == 6) {
                if (strlen(argv[5]) >= sizeof(race_path))
                        return usage();
                race = (struct race) { argv[3], argv[4] };
                strcpy(race_path, argv[5]);
                return write_during(count, exchange_names, &race);
        }
        return usage();
}
