/* The host's phase, for the latency benchmarks (issue 18): the one-way time of a cache
 * line passed between two threads, in ns. On the 2-core VMs of this project it is
 * bimodal (about 50 ns in one phase, 200-290 ns in the other, changing every few
 * seconds), and MPICH's shared-memory latency follows it (about 220 ns and 700 ns at 8
 * bytes): maint/bench/clock-floor.sh keeps a run only where the phase stayed fast. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
static _Atomic int flag __attribute__((aligned(64)));
enum { N = 200000 };
static void *other(void *a)
{
    (void)a;
    for (int i = 0; i < N; i++) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != 1) ;
        atomic_store_explicit(&flag, 0, memory_order_release);
    }
    return 0;
}
int main(void)
{
    pthread_t t;
    struct timespec a, b;
    pthread_create(&t, 0, other, 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++) {
        atomic_store_explicit(&flag, 1, memory_order_release);
        while (atomic_load_explicit(&flag, memory_order_acquire) != 0) ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, 0);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / N / 2);
    return 0;
}
