/* A load imbalance known by construction (test/model/domino_by.sh): each iteration,
 * slow_phase() computes 4 x longer on rank 1 than on rank 0 and ends in MPI_Allreduce;
 * fast_phase() computes as long on every rank and ends in MPI_Barrier. So rank 1 is the
 * rank to fix, slow_phase's Allreduce the call site and slow_phase the function.
 *   mpiexec -n 2 ./imbalance [iterations=40] [work_us=500]                             */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void compute(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) / 1e3 < us);
}

double slow_phase(int rank, double us, double x);
void fast_phase(double us);
volatile int barriers; /* after each call: no tail call, the return address is in the phase */

/* Not inlined and exported (-export-dynamic): the call sites' symbols are these names. */
__attribute__((noinline)) double slow_phase(int rank, double us, double x)
{
    compute(rank == 1 ? 4 * us : us);
    double y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    barriers++;
    return y;
}

__attribute__((noinline)) void fast_phase(double us)
{
    compute(us / 5);
    MPI_Barrier(MPI_COMM_WORLD);
    barriers++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    double work = argc > 2 ? atof(argv[2]) : 500;
    double x = 1;
    for (int it = 0; it < iters; it++) {
        x = slow_phase(rank, work, x) / 2;
        fast_phase(work);
    }
    if (rank == 0)
        printf("imbalance: %d iterations, %.0f us of work, %g\n", iters, work, x);
    MPI_Finalize();
    return 0;
}
