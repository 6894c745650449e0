/* Pattern C1 at run time (issue 4, test 4): a halo exchange with an MPI_Allreduce every
 * iteration and no candidate between the allreduces (the work per iteration is well
 * below the threshold): the collectives' atoms align every rank's difference, so the
 * run-time reduction records none of the point-to-point messages. rt_c1.check looks.
 * The test runs with a threshold of 1 s: on a loaded machine a burst of 50 us can be
 * preempted past 1 ms (78 ms seen in a loaded make check), and a candidate there rightly
 * keeps the next messages.
 *   mpiexec -n 2 ./halo_c1 [iterations=40] [work_us=50]                                  */
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
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    double work = argc > 2 ? atof(argv[2]) : 50;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double u[3] = {0, rank, 0}, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);   /* everyone starts from one collective atom */
    for (int it = 0; it < iters; it++) {
        MPI_Request rq[4];
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&u[2], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[3]);
        MPI_Status st[4];
        MPI_Waitall(4, rq, st);
        compute(work * (rank + 1));
        double local = u[0] + u[2];
        MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        u[1] = sum / 1e3;
    }
    if (rank == 0)
        printf("halo_c1: %d iterations on %d ranks, sum %.6g\n", iters, size, sum);
    MPI_Finalize();
    return 0;
}
