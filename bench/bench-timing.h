/* SPDX-License-Identifier: MIT */
/* The clock and the median the C benchmarks share. */
#ifndef DSH_SANDBOX_BENCH_TIMING_H
#define DSH_SANDBOX_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* The monotonic clock in microseconds: only differences of it mean anything. */
static inline double now_microseconds(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) now.tv_sec * 1e6 + (double) now.tv_nsec / 1e3;
}

static inline int compare_doubles(const void *left, const void *right)
{
        double a = *(const double *) left, b = *(const double *) right;

        return (a > b) - (a < b);
}

/* The median of `count` samples (sorts them in place). */
static inline double median(double *samples, int count)
{
        qsort(samples, (size_t) count, sizeof(double), compare_doubles);
        return count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
}

#endif
