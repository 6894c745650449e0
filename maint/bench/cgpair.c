/* Instructions of MPI_Send/MPI_Recv pairs, for callgrind (maint/bench/pair-instructions.sh).
 *   cgpair pingpong BYTES TRIPS   the benchmark's ping-pong (the run-time reduction makes
 *                                 the decisions it makes there); counted: the trips
 *   cgpair waitall BYTES TRIPS    non-blocking exchange, a halo's pattern: each rank
 *                                 MPI_Irecv, MPI_Isend, MPI_Waitall of the two; counted: the trips
 *   cgpair wait BYTES TRIPS       non-blocking ping-pong: rank 0 MPI_Isend + MPI_Wait, then
 *                                 MPI_Irecv + MPI_Wait (rank 1 the other way round)
 *   cgpair waitany BYTES TRIPS    as waitall, the two completed by two MPI_Waitany(2) (the
 *                                 second finds the first's request MPI_REQUEST_NULL)
 *   cgpair waitsome BYTES TRIPS   as wait, each request completed by an MPI_Waitsome(2) of it
 *                                 and an MPI_REQUEST_NULL (one completion a call, always: a
 *                                 Waitsome of two active requests completes one or two as
 *                                 the receive is in or not, and the count would vary)
 *   cgpair batch BYTES BATCHES    rank 0 sends 32 messages, a barrier, rank 1 receives
 *                                 them, all arrived: no call waits, so MPI's own work is
 *                                 counted without its polling; counted: sends and receives
 * Collection is switched on around the counted calls only (run callgrind with
 * --collect-atstart=no). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
/* GCC takes MPICH's MPI_STATUSES_IGNORE (a null pointer) for an array too small */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#ifdef CGPAIR_NO_TOGGLE
/* reply-path.sh: the counted calls arm its preloaded cgreply.so, which switches collection */
void cgreply_arm(void) __attribute__((weak));
#undef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT (cgreply_arm ? cgreply_arm() : (void)0)
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 4) {
        fprintf(stderr, "usage: cgpair pingpong|waitall|wait|waitany|waitsome|batch BYTES N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int batch = strcmp(argv[1], "batch") == 0;
    int waitall = strcmp(argv[1], "waitall") == 0, wait = strcmp(argv[1], "wait") == 0;
    int waitany = strcmp(argv[1], "waitany") == 0, waitsome = strcmp(argv[1], "waitsome") == 0;
    long n = atol(argv[2]);
    int reps = atoi(argv[3]);
    char *buf = malloc(n > 0 ? (size_t)n : 1);
    memset(buf, 1, n > 0 ? (size_t)n : 1);
    char *rbuf = malloc(n > 0 ? (size_t)n : 1);
    enum { K = 32 };
    /* pass 0 warms up (connections, pools), pass 1 is counted */
    for (int pass = 0; pass < 2; pass++) {
        int rounds = pass ? reps : 10;
        if (!batch) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (pass)
                CALLGRIND_TOGGLE_COLLECT;
            for (int i = 0; i < rounds; i++) {
                MPI_Request rq[2];
                if (waitany && rank < 2) {
                    MPI_Irecv(rbuf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[0]);
                    MPI_Isend(buf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[1]);
                    int idx;
                    MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
                    MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
                } else if (waitall && rank < 2) {
                    MPI_Irecv(rbuf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[0]);
                    MPI_Isend(buf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[1]);
                    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
                } else if ((wait || waitsome) && rank < 2) {
                    for (int k = 0; k < 2; k++) {
                        if (k == rank)
                            MPI_Isend(buf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[0]);
                        else
                            MPI_Irecv(buf, (int)n, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD, &rq[0]);
                        if (waitsome) {
                            int out, idx[2];
                            rq[1] = MPI_REQUEST_NULL;
                            MPI_Waitsome(2, rq, &out, idx, MPI_STATUSES_IGNORE);
                        } else {
                            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
                        }
                    }
                } else if (waitall || wait || waitany || waitsome) {
                    continue;   /* ranks beyond 2 */
                } else if (rank == 0) {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            if (pass)
                CALLGRIND_TOGGLE_COLLECT;
            continue;
        }
        for (int b = 0; b < rounds; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                if (pass)
                    CALLGRIND_TOGGLE_COLLECT;
                for (int i = 0; i < K; i++)
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                if (pass)
                    CALLGRIND_TOGGLE_COLLECT;
            }
            /* rank 0's barrier message follows its K messages: they are all in */
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                if (pass)
                    CALLGRIND_TOGGLE_COLLECT;
                for (int i = 0; i < K; i++)
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (pass)
                    CALLGRIND_TOGGLE_COLLECT;
            }
        }
    }
    free(rbuf);
    free(buf);
    MPI_Finalize();
    return 0;
}
