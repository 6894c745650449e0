/* A pipeline: each item passes rank 0 -> 1 -> ... -> P-1, every stage computing on it.
 * One rank can be made slower by a fraction, to check what-if predictions (maint/bench/
 * accuracy.sh): the trace of the slow run, with that rank's computation shortened back,
 * should predict the run time of the normal run.
 *   mpiexec -n 2 ./pipeline [items=200] [work_us=2000] [slow_rank=-1] [extra=0.0]         */
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int items = argc > 1 ? atoi(argv[1]) : 200;
    double work = argc > 2 ? atof(argv[2]) : 2000;
    int slow = argc > 3 ? atoi(argv[3]) : -1;
    double extra = argc > 4 ? atof(argv[4]) : 0.0;
    double item[16] = {0};
    double t0 = MPI_Wtime();
    for (int i = 0; i < items; i++) {
        if (rank > 0)
            MPI_Recv(item, 16, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute(work * (rank == slow ? 1.0 + extra : 1.0));
        item[0] += 1;
        if (rank < size - 1)
            MPI_Send(item, 16, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pipeline: %d items, %.0f us per stage, rank %d %.0f%% slower: %.6f s\n", items, work, slow,
               extra * 100, tmax);
    MPI_Finalize();
    return 0;
}
