/* The program of test/mpi/filter.sh (VTRACE_FILTER): a ring exchange with a piggyback
 * header on every message (VTRACE_MODE=both), an Allreduce and a Barrier the filter leaves
 * out, and MPI_Win_fence called from two functions, one of which is a filtered call site
 * (site:fence_a; linked with -export-dynamic so that dladdr names it).
 * usage: filtered [ITERATIONS] */
#include "mpitest.h"

#include <time.h>

static void spin_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

void fence_a(MPI_Win w);
void fence_b(MPI_Win w);
__attribute__((noinline)) void fence_a(MPI_Win w) { CHECK(MPI_Win_fence(0, w) == MPI_SUCCESS, "fence a"); }
__attribute__((noinline)) void fence_b(MPI_Win w) { CHECK(MPI_Win_fence(0, w) == MPI_SUCCESS, "fence b"); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_rank = rank;
    int winbuf = 0;
    MPI_Win win;
    MPI_Win_create(&winbuf, sizeof winbuf, sizeof winbuf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < iters; i++) {
        spin_us(rank == 0 ? 300 : 100 + 40 * (i % 5));
        int out[64], in[64];
        for (int k = 0; k < 64; k++)
            out[k] = rank * 1000 + i + k;
        MPI_Request r[2];
        MPI_Irecv(in, 64, MPI_INT, left, i, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, 64, MPI_INT, right, i, MPI_COMM_WORLD, &r[1]);
        MPI_Status st[2];
        MPI_Waitall(2, r, st);
        CHECK(in[5] == left * 1000 + i + 5, "ring message %d from %d", i, left);
        int sum = 0, one = 1;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == size, "allreduce %d", sum);
        fence_a(win);
        spin_us(50);
        fence_b(win);
        if (i % 5 == 4)
            MPI_Barrier(MPI_COMM_WORLD);
        /* a blocking send the filter cannot touch: its header still travels */
        if (rank == 0)
            MPI_Send(out, 8, MPI_INT, 1, 100 + i, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(in, 8, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return mt_result();
}
