/* 1-D halo exchange with MPI_Irecv/MPI_Isend/MPI_Waitall and an MPI_Allreduce every
 * iteration, the shape of most stencil codes.
 *   mpiexec -n 2 ./halo [iterations=50] [cells=4096] [work_us=300]                      */
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
    int iters = argc > 1 ? atoi(argv[1]) : 50;
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    double work = argc > 3 ? atof(argv[3]) : 300;
    double *u = calloc((size_t)n + 2, sizeof *u);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double residual = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Request rq[4];
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[3]);
        MPI_Status st[4];
        MPI_Waitall(4, rq, st);
        compute(work * (rank == 0 ? 1.2 : 1.0));
        double local = 0;
        for (int i = 1; i <= n; i++) {
            u[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) + 1e-3;
            local += u[i];
        }
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("halo: %d iterations, %d cells per rank on %d ranks, sum %.6g\n", iters, n, size, residual);
    free(u);
    MPI_Finalize();
    return 0;
}
