/* MPI_THREAD_MULTIPLE: two threads per rank exchange messages with the same thread of
 * the other rank at the same time (tags 100 + thread), while the main thread waits.
 * The layer locks around each record: every message must be in the trace, matched,
 * and the data intact. Also calls what MPI allows before MPI_Init and after
 * MPI_Finalize, which the layer must let through without recording or crashing. */
#include "mpitest.h"

#include <pthread.h>

enum { NMSG = 500 };

static void *exchange(void *arg)
{
    int t = (int)(long)arg, other = 1 - mt_rank;
    for (int i = 0; i < NMSG; i++) {
        int out[4] = {mt_rank, t, i, 7}, in[4] = {0};
        MPI_Status st;
        MPI_Request rq;
        CHECK_MPI(MPI_Irecv(in, 4, MPI_INT, other, 100 + t, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Send(out, 4, MPI_INT, other, 100 + t, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&rq, &st));
        CHECK_STATUS(st, other, 100 + t, 4, MPI_INT);
        CHECK(in[0] == other && in[1] == t && in[2] == i && in[3] == 7, "thread %d message %d: %d %d %d %d", t, i,
              in[0], in[1], in[2], in[3]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, size, flag = 1;
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized before MPI_Init");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threads needs 2 ranks and MPI_THREAD_MULTIPLE (got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
    pthread_t th[2];
    for (long t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, exchange, (void *)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK(finalized, "MPI_Finalized after MPI_Finalize");
    return mt_result();
}
