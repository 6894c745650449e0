/* What the ping-pong benchmarks (pingpong.c, interleave.c) share: the clock they time
 * with and the order they sort samples in. */
#ifndef VT_BENCH_CLOCK_H
#define VT_BENCH_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in ns */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* qsort's order of doubles, ascending */
static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
