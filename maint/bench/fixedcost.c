/* The layer's fixed costs (maint/bench/fixed-costs.sh): MPI_Init, the first collective
 * after it (where ranks that leave MPI_Init at different times wait for each other), the
 * next CALLS MPI_Allreduce calls, and MPI_Finalize, each timed on every rank by the wall
 * clock and by the process's CPU clock. One line per rank:
 *   rank R init W C first W C rest W C fin W C      (nanoseconds)
 *   fixedcost [CALLS]   (default 1000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000;
    long long w[5], c[5];
    w[0] = now(CLOCK_MONOTONIC), c[0] = now(CLOCK_PROCESS_CPUTIME_ID);
    MPI_Init(&argc, &argv);
    w[1] = now(CLOCK_MONOTONIC), c[1] = now(CLOCK_PROCESS_CPUTIME_ID);
    int rank, x = 1, y;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    w[2] = now(CLOCK_MONOTONIC), c[2] = now(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < calls; i++)
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    w[3] = now(CLOCK_MONOTONIC), c[3] = now(CLOCK_PROCESS_CPUTIME_ID);
    MPI_Finalize();
    w[4] = now(CLOCK_MONOTONIC), c[4] = now(CLOCK_PROCESS_CPUTIME_ID);
    printf("rank %d init %lld %lld first %lld %lld rest %lld %lld fin %lld %lld\n", rank, w[1] - w[0], c[1] - c[0],
           w[2] - w[1], c[2] - c[1], w[3] - w[2], c[3] - c[2], w[4] - w[3], c[4] - c[3]);
    return 0;
}
