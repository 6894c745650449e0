/* Non-blocking point-to-point on 2 ranks, both ranks alike: Isend, Irecv, Issend,
 * Ibsend completed by Wait, Waitall, Waitany, Waitsome, Test loops, Testall,
 * Testany and Testsome, with real statuses and MPI_STATUS(ES)_IGNORE; then Wait on
 * MPI_REQUEST_NULL, Waitall with a null request, and a cancelled Irecv.
 * Tags 10..20 name the phases. How many Test/Waitsome calls it takes is up to MPI:
 * the program counts them and writes those expectations (mt_expect). Static
 * expectations: p2p_nonblocking.expect. */
#include "mpitest.h"

static int other;
/* MPI_STATUSES_IGNORE through a pointer the compiler cannot see through: GCC warns
 * (-Wstringop-overflow) about MPICH's constant. */
static MPI_Status *volatile statuses_ignore;

static void fill(int *b, int n, int tag, int from)
{
    for (int i = 0; i < n; i++)
        b[i] = tag * 1000 + from * 100 + i;
}

static void check_buf(const int *b, int n, int tag, const char *phase)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == tag * 1000 + other * 100 + i, "%s: element %d is %d", phase, i, b[i]);
}

int main(int argc, char **argv)
{
    int size, i, k;
    int sbuf[4][8], rbuf[4][8];
    MPI_Request req[8];
    MPI_Status st, sts[8];
    int tests = 0, test_hits = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "p2p_nonblocking needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    other = 1 - mt_rank;
    statuses_ignore = MPI_STATUSES_IGNORE;

    /* Wait: 3 x (Irecv + Isend of 4 ints, tag 10); Wait with a status, then
     * MPI_STATUS_IGNORE. */
    for (i = 0; i < 3; i++) {
        fill(sbuf[0], 4, 10, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 4, MPI_INT, other, 10, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Isend(sbuf[0], 4, MPI_INT, other, 10, MPI_COMM_WORLD, &req[1]));
        CHECK_MPI(MPI_Wait(&req[0], &st));
        CHECK_STATUS(st, other, 10, 4, MPI_INT);
        CHECK(req[0] == MPI_REQUEST_NULL, "Wait left the request");
        CHECK_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        check_buf(rbuf[0], 4, 10, "Wait");
    }

    /* Waitall: 2 x (Irecv tags 11, 12 (8 and 2 ints), Isend tags 11, 12) with
     * statuses, then once with MPI_STATUSES_IGNORE. */
    for (i = 0; i < 3; i++) {
        fill(sbuf[0], 8, 11, mt_rank);
        fill(sbuf[1], 2, 12, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 8, MPI_INT, other, 11, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Irecv(rbuf[1], 8, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &req[1]));
        CHECK_MPI(MPI_Isend(sbuf[0], 8, MPI_INT, other, 11, MPI_COMM_WORLD, &req[2]));
        CHECK_MPI(MPI_Isend(sbuf[1], 2, MPI_INT, other, 12, MPI_COMM_WORLD, &req[3]));
        if (i < 2) {
            CHECK_MPI(MPI_Waitall(4, req, sts));
            CHECK_STATUS(sts[0], other, 11, 8, MPI_INT);
            CHECK_STATUS(sts[1], other, 12, 2, MPI_INT);
        } else {
            CHECK_MPI(MPI_Waitall(4, req, statuses_ignore));
        }
        for (k = 0; k < 4; k++)
            CHECK(req[k] == MPI_REQUEST_NULL, "Waitall left request %d", k);
        check_buf(rbuf[0], 8, 11, "Waitall");
        check_buf(rbuf[1], 2, 12, "Waitall");
    }

    /* Waitany: Irecv tags 13, 14, 15 (1, 2, 3 ints) + Issend tags 13, 14, 15; six
     * Waitany, each completes one request. */
    {
        int done[6] = {0};
        for (k = 0; k < 3; k++) {
            fill(sbuf[k], k + 1, 13 + k, mt_rank);
            CHECK_MPI(MPI_Irecv(rbuf[k], 8, MPI_INT, other, 13 + k, MPI_COMM_WORLD, &req[k]));
        }
        for (k = 0; k < 3; k++)
            CHECK_MPI(MPI_Issend(sbuf[k], k + 1, MPI_INT, other, 13 + k, MPI_COMM_WORLD, &req[3 + k]));
        for (k = 0; k < 6; k++) {
            int idx = -1;
            CHECK_MPI(MPI_Waitany(6, req, &idx, &st));
            CHECK(idx >= 0 && idx < 6 && !done[idx], "Waitany index %d", idx);
            if (idx >= 0 && idx < 6)
                done[idx] = 1;
            if (idx >= 0 && idx < 3)
                CHECK_STATUS(st, other, 13 + idx, idx + 1, MPI_INT);
        }
        for (k = 0; k < 3; k++)
            check_buf(rbuf[k], k + 1, 13 + k, "Waitany");
    }

    /* Waitsome: Irecv x 2 + Ibsend x 2 of 3 ints, tag 16, until all 4 are done. */
    {
        int bsize = 2 * (3 * (int)sizeof(int) + MPI_BSEND_OVERHEAD), ndone = 0, calls = 0, out, idx[4];
        char *bbuf = malloc((size_t)bsize);
        void *det;
        CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
        fill(sbuf[0], 3, 16, mt_rank);
        fill(sbuf[1], 3, 16, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 3, MPI_INT, other, 16, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Irecv(rbuf[1], 3, MPI_INT, other, 16, MPI_COMM_WORLD, &req[1]));
        CHECK_MPI(MPI_Ibsend(sbuf[0], 3, MPI_INT, other, 16, MPI_COMM_WORLD, &req[2]));
        CHECK_MPI(MPI_Ibsend(sbuf[1], 3, MPI_INT, other, 16, MPI_COMM_WORLD, &req[3]));
        while (ndone < 4) {
            CHECK_MPI(MPI_Waitsome(4, req, &out, idx, sts));
            calls++;
            CHECK(out >= 1 && out <= 4, "Waitsome outcount %d", out);
            if (out < 1 || out == MPI_UNDEFINED)
                break;
            for (k = 0; k < out; k++)
                if (idx[k] < 2)
                    CHECK_STATUS(sts[k], other, 16, 3, MPI_INT);
            ndone += out;
        }
        CHECK_MPI(MPI_Buffer_detach(&det, &bsize));
        free(bbuf);
        check_buf(rbuf[0], 3, 16, "Waitsome");
        check_buf(rbuf[1], 3, 16, "Waitsome");
        mt_expect("fn %d MPI_Waitsome calls=%d events=%d", mt_rank, calls, calls);
    }

    /* Test loops: Irecv + Isend of 5 ints, tag 17; MPI_Test until each is done.
     * Failed tests are only counted. */
    {
        int flag = 0;
        fill(sbuf[0], 5, 17, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 5, MPI_INT, other, 17, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Isend(sbuf[0], 5, MPI_INT, other, 17, MPI_COMM_WORLD, &req[1]));
        for (k = 0; k < 2; k++) {
            flag = 0;
            while (!flag) {
                CHECK_MPI(MPI_Test(&req[k], &flag, k == 0 ? &st : MPI_STATUS_IGNORE));
                tests++;
            }
            test_hits++;
        }
        CHECK_STATUS(st, other, 17, 5, MPI_INT);
        check_buf(rbuf[0], 5, 17, "Test");
        mt_expect("fn %d MPI_Test calls=%d events=%d", mt_rank, tests, test_hits);
    }

    /* Testall: Irecv x 2 + Isend x 2 of 1 int, tag 18, until all are done. */
    {
        int flag = 0, calls = 0;
        fill(sbuf[0], 1, 18, mt_rank);
        fill(sbuf[1], 1, 18, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 1, MPI_INT, other, 18, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Irecv(rbuf[1], 1, MPI_INT, other, 18, MPI_COMM_WORLD, &req[1]));
        CHECK_MPI(MPI_Isend(sbuf[0], 1, MPI_INT, other, 18, MPI_COMM_WORLD, &req[2]));
        CHECK_MPI(MPI_Isend(sbuf[1], 1, MPI_INT, other, 18, MPI_COMM_WORLD, &req[3]));
        while (!flag) {
            CHECK_MPI(MPI_Testall(4, req, &flag, sts));
            calls++;
        }
        CHECK_STATUS(sts[0], other, 18, 1, MPI_INT);
        CHECK_STATUS(sts[1], other, 18, 1, MPI_INT);
        check_buf(rbuf[0], 1, 18, "Testall");
        mt_expect("fn %d MPI_Testall calls=%d events=1", mt_rank, calls);
    }

    /* Testany: Irecv + Isend of 6 ints, tag 19, until both are done. */
    {
        int flag, idx, calls = 0, hits = 0;
        fill(sbuf[0], 6, 19, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 6, MPI_INT, other, 19, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Isend(sbuf[0], 6, MPI_INT, other, 19, MPI_COMM_WORLD, &req[1]));
        while (hits < 2) {
            flag = 0;
            CHECK_MPI(MPI_Testany(2, req, &idx, &flag, &st));
            calls++;
            if (flag) {
                CHECK(idx == 0 || idx == 1, "Testany index %d", idx);
                if (idx == 0)
                    CHECK_STATUS(st, other, 19, 6, MPI_INT);
                hits++;
            }
        }
        check_buf(rbuf[0], 6, 19, "Testany");
        mt_expect("fn %d MPI_Testany calls=%d events=2", mt_rank, calls);
    }

    /* Testsome: Irecv + Isend of 7 ints, tag 20, until both are done. */
    {
        int out, idx[2], calls = 0, hits = 0, ndone = 0;
        fill(sbuf[0], 7, 20, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 7, MPI_INT, other, 20, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Isend(sbuf[0], 7, MPI_INT, other, 20, MPI_COMM_WORLD, &req[1]));
        while (ndone < 2) {
            CHECK_MPI(MPI_Testsome(2, req, &out, idx, statuses_ignore));
            calls++;
            CHECK(out != MPI_UNDEFINED, "Testsome: no active request left");
            if (out == MPI_UNDEFINED)
                break;
            if (out > 0)
                hits++;
            ndone += out;
        }
        check_buf(rbuf[0], 7, 20, "Testsome");
        mt_expect("fn %d MPI_Testsome calls=%d events=%d", mt_rank, calls, hits);
    }

    /* Edge cases (tag 21): Wait on MPI_REQUEST_NULL completes nothing (counted, not
     * recorded); Waitall with a null request among live ones; a cancelled Irecv. */
    {
        MPI_Request none = MPI_REQUEST_NULL;
        int cancelled = 0;
        CHECK_MPI(MPI_Wait(&none, &st));
        CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "Wait(MPI_REQUEST_NULL): %d %d",
              st.MPI_SOURCE, st.MPI_TAG);
        fill(sbuf[0], 2, 21, mt_rank);
        CHECK_MPI(MPI_Irecv(rbuf[0], 2, MPI_INT, other, 21, MPI_COMM_WORLD, &req[0]));
        req[1] = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Isend(sbuf[0], 2, MPI_INT, other, 21, MPI_COMM_WORLD, &req[2]));
        CHECK_MPI(MPI_Waitall(3, req, sts));
        CHECK_STATUS(sts[0], other, 21, 2, MPI_INT);
        check_buf(rbuf[0], 2, 21, "Waitall with a null request");
        CHECK_MPI(MPI_Irecv(rbuf[0], 2, MPI_INT, other, 22, MPI_COMM_WORLD, &req[0]));
        CHECK_MPI(MPI_Cancel(&req[0]));
        CHECK_MPI(MPI_Wait(&req[0], &st));
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "the receive of tag 22 was not cancelled");
    }

    MPI_Finalize();
    return mt_result();
}
