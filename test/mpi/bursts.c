/* Issue 13's two shapes for the size of a reduced trace, run with VTRACE_MODE=both
 * (rt_equiv.sh: the reduced trace holds no more records and bytes than the full one):
 *   bursts   long computation bursts between collectives (as NPB FT: an all-to-all and a
 *            reduction between stretches of local work), every burst a candidate;
 *   short    frequent short messages (a ring of small eager sends, a reduction now and then),
 *            no burst a candidate: most records drop. With "jitter", 0-2 us of pseudo-random
 *            work before each exchange, so that its times do not compress to nearly nothing
 *            on a calm machine (test/mpi/stored.sh compares the reduced and full bytes).
 *   mpiexec -n 2 ./bursts bursts|short [iterations [jitter]]                              */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int shortmsgs = argc > 1 && !strcmp(argv[1], "short");
    int iters = argc > 2 ? atoi(argv[2]) : (shortmsgs ? 2000 : 20);
    int jitter = argc > 3 && !strcmp(argv[3], "jitter");
    unsigned seed = 12345u + (unsigned)rank;
    double a[256] = {0}, b[256], sum = 0, s;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < iters; i++) {
        if (shortmsgs) {
            int x = i, y;
            if (jitter) {
                seed = seed * 1103515245u + 12345u;
                compute((seed >> 16) % 2000 / 1000.0);
            }
            MPI_Sendrecv(&x, 1, MPI_INT, right, 7, &y, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum += y;
            if (i % 100 == 99) {
                MPI_Allreduce(&sum, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                sum = s / size;
            }
        } else {
            compute(2000 + 500 * rank);
            MPI_Alltoall(a, 256 / size, MPI_DOUBLE, b, 256 / size, MPI_DOUBLE, MPI_COMM_WORLD);
            compute(1000);
            a[0] = b[0] + 1;
            MPI_Allreduce(&a[0], &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sum += s;
        }
    }
    if (rank == 0)
        printf("bursts: %s, %d iterations on %d ranks, checksum %.0f\n", shortmsgs ? "short" : "bursts", iters, size, sum);
    MPI_Finalize();
    return 0;
}
