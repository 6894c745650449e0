/* Master/worker on 3 ranks, started by MPI_Init_thread(MPI_THREAD_MULTIPLE) (the
 * layer's locked path): rank 0 hands out 20 tasks (tag 1, 1 int), receives each
 * result (tag 2, 2 ints) from MPI_ANY_SOURCE and gives that worker the next task,
 * or a zero-length stop message (tag 3). Which worker does which task is up to MPI:
 * the ranks write, from their statuses and counters, how many messages each peer
 * should show in the trace (dynamic.expect.RANK); static expectations in
 * master_worker.expect. */
#include "mpitest.h"

#define NTASKS 20

int main(int argc, char **argv)
{
    int size, w, provided = -1;
    MPI_Status st;
    /* MPI_Init_thread, MPI_THREAD_MULTIPLE: the layer's locked path */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (size < 2) {
        fprintf(stderr, "master_worker needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mt_rank == 0) {
        int next = 0, results = 0, seen[NTASKS] = {0}, *per = calloc((size_t)size, sizeof(int));
        for (w = 1; w < size; w++) {
            if (next < NTASKS) {
                CHECK_MPI(MPI_Send(&next, 1, MPI_INT, w, 1, MPI_COMM_WORLD));
                next++;
            } else {
                CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, w, 3, MPI_COMM_WORLD));
            }
        }
        while (results < NTASKS) {
            int r[2] = {-1, -1};
            CHECK_MPI(MPI_Recv(r, 2, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
            results++;
            CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size && st.MPI_TAG == 2, "result from %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            if (st.MPI_SOURCE < 1 || st.MPI_SOURCE >= size)
                break;
            CHECK(r[0] >= 0 && r[0] < NTASKS && !seen[r[0]] && r[1] == r[0] * r[0], "result %d %d", r[0], r[1]);
            if (r[0] >= 0 && r[0] < NTASKS)
                seen[r[0]] = 1;
            per[st.MPI_SOURCE]++;
            if (next < NTASKS) {
                CHECK_MPI(MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD));
                next++;
            } else {
                CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, st.MPI_SOURCE, 3, MPI_COMM_WORLD));
            }
        }
        for (w = 1; w < size; w++) {
            mt_expect("count %d rank=0 name=MPI_Recv src=%d rtag=2 rbytes=8", per[w], w);
            mt_expect("count %d rank=0 name=MPI_Send peer=%d tag=1 bytes=4", per[w], w);
            mt_expect("count 1 rank=0 name=MPI_Send peer=%d tag=3 bytes=0", w);
        }
        free(per);
    } else {
        int done = 0;
        for (;;) {
            int task = -1, r[2];
            CHECK_MPI(MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_TAG == 3)
                break;
            CHECK(st.MPI_TAG == 1 && task >= 0 && task < NTASKS, "task %d tag %d", task, st.MPI_TAG);
            r[0] = task;
            r[1] = task * task;
            CHECK_MPI(MPI_Send(r, 2, MPI_INT, 0, 2, MPI_COMM_WORLD));
            done++;
        }
        mt_expect("fn %d MPI_Send calls=%d events=%d bytes=%d", mt_rank, done, done, 8 * done);
        mt_expect("fn %d MPI_Recv calls=%d events=%d bytes=%d", mt_rank, done + 1, done + 1, 4 * done);
        mt_expect("count %d rank=%d name=MPI_Recv src=0 rtag=1 rbytes=4", done, mt_rank);
        mt_expect("count 1 rank=%d name=MPI_Recv src=0 rtag=3 rbytes=0", mt_rank);
        mt_expect("count %d rank=%d name=MPI_Send peer=0 tag=2 bytes=8", done, mt_rank);
    }
    MPI_Finalize();
    return mt_result();
}
