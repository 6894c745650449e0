/* One-sided calls in a trace (MPICH's rma tests, run through the layer, found traces
 * with them unreadable: the reader took MPI_Put's target for a message's destination and
 * waited for its receive). On 2 ranks: a window, fences around MPI_Put, MPI_Get and
 * MPI_Accumulate, a passive-target epoch with MPI_Rput and MPI_Wait, MPI_Fetch_and_op and
 * MPI_Compare_and_swap; every result checked (mpitest.h). The trace must read, reduce
 * and replay (RUN_MODEL), and the run-time reduced trace be vtrace reduce's (rma_rt). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (mt_rank + 1) % size, from = (mt_rank + size - 1) % size;
    int winbuf[4] = {0, 0, 0, 0};
    MPI_Win win;
    MPI_Win_create(winbuf, sizeof winbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int one = 100 + mt_rank, got = -1, add = 1;
    MPI_Win_fence(0, win);
    MPI_Put(&one, 1, MPI_INT, peer, 0, 1, MPI_INT, win);
    MPI_Accumulate(&add, 1, MPI_INT, peer, 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Get(&got, 1, MPI_INT, peer, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    CHECK(winbuf[0] == 100 + from, "put from %d: %d", from, winbuf[0]);
    CHECK(winbuf[1] == 1, "accumulate: %d", winbuf[1]);
    CHECK(got == 100 + mt_rank, "get: %d", got);

    MPI_Barrier(MPI_COMM_WORLD);
    int two = 200 + mt_rank, old = -1, cmp = 0, swap = 7, prev = -1;
    MPI_Request req;
    MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
    MPI_Rput(&two, 1, MPI_INT, peer, 2, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Fetch_and_op(&add, &old, MPI_INT, peer, 1, MPI_SUM, win);
    MPI_Compare_and_swap(&swap, &cmp, &prev, MPI_INT, peer, 3, win);
    MPI_Win_unlock(peer, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win);
    CHECK(winbuf[2] == 200 + from, "rput from %d: %d", from, winbuf[2]);
    CHECK(winbuf[1] == 2, "fetch_and_op: %d", winbuf[1]);
    CHECK(winbuf[3] == 7, "compare_and_swap: %d", winbuf[3]);
    MPI_Win_unlock(mt_rank, win);
    CHECK(old == 1 && prev == 0, "fetched %d, swapped out %d", old, prev);

    MPI_Win_free(&win);
    MPI_Finalize();
    return mt_result();
}
