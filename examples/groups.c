/* Group exchange after seed 002's image registration (Fig. 8): K iterations over M
 * control points; the ranks of each point's group compute, send to the group's leader
 * with MPI_Send/MPI_Recv, then pass data around the group with MPI_Sendrecv.
 *   mpiexec -n 2 ./groups [K=20] [M=16] [work_us=200]                                  */
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
    int K = argc > 1 ? atoi(argv[1]) : 20;
    int M = argc > 2 ? atoi(argv[2]) : 16;
    double work = argc > 3 ? atof(argv[3]) : 200;
    double data[64] = {0}, in[64];
    for (int i = 0; i < K; i++) {
        for (int phi = 0; phi < M; phi++) {
            /* Group of point phi: gsize consecutive ranks starting at phi mod size. */
            int gsize = 1 + (phi + i) % (size < 4 ? size : 4);
            int first = phi % size, pos = (rank - first + size) % size;
            if (pos >= gsize)
                continue;
            int leader = first;
            compute(work * (1 + (rank + phi) % 3) / 2);
            if (gsize == 1)
                continue;
            if (rank == leader) {
                for (int k = 1; k < gsize; k++)
                    MPI_Recv(in, 64, MPI_DOUBLE, (first + k) % size, phi, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(data, 64, MPI_DOUBLE, leader, phi, MPI_COMM_WORLD);
            }
            int next = first + (pos + 1) % gsize, prev = first + (pos + gsize - 1) % gsize;
            MPI_Sendrecv(data, 64, MPI_DOUBLE, next % size, 1000 + phi, in, 64, MPI_DOUBLE, prev % size,
                         1000 + phi, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            data[0] = 0.5 * (data[0] + in[0]) + 1;
        }
    }
    double sum = 0;
    MPI_Reduce(&data[0], &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("groups: %d iterations x %d points on %d ranks, checksum %.0f\n", K, M, size, sum);
    MPI_Finalize();
    return 0;
}
