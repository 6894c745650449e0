/* MPI_Waitany, Waitsome, Testany and Testsome in the cases their common path (one
 * thread, success, no persistent request: handlers.c, post_few) and the general one
 * divide: more than four requests with MPI_REQUEST_NULL among them, a Waitsome of 130
 * completions (the record's count takes two bytes), MPI_UNDEFINED (all null, or only an
 * inactive persistent request), an inactive persistent request beside active ones, a
 * generalized request, and MPI_ERR_IN_STATUS (a truncated receive). Two ranks, both
 * alike; test/mpi/anysome.check reads the trace. ANYSOME_SKIP=truncate leaves the truncated
 * receive out (the run-time reduction stops at a receive whose header did not arrive). */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

#define MANY 130

static int other;
/* MPI_STATUSES_IGNORE through a pointer the compiler cannot see through: GCC warns
 * (-Wstringop-overflow) about MPICH's constant. */
static MPI_Status *volatile statuses_ignore;

static int g_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int g_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int g_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rbuf[8], sbuf[8], idx, flag, out, ids[MANY];
    MPI_Request q[MANY];
    MPI_Status st, sts[MANY];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    other = 1 - mt_rank;
    statuses_ignore = MPI_STATUSES_IGNORE;
    for (int i = 0; i < 8; i++)
        sbuf[i] = 100 * mt_rank + i;

    /* Waitany over six requests, the first and last MPI_REQUEST_NULL: receives of tags
     * 31 (1 int) and 32 (2 ints), sends of the same; then all null: MPI_UNDEFINED */
    {
        int done = 0;
        q[0] = q[5] = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, other, 31, MPI_COMM_WORLD, &q[1]));
        CHECK_MPI(MPI_Irecv(&rbuf[1], 2, MPI_INT, other, 32, MPI_COMM_WORLD, &q[2]));
        CHECK_MPI(MPI_Isend(sbuf, 1, MPI_INT, other, 31, MPI_COMM_WORLD, &q[3]));
        CHECK_MPI(MPI_Isend(sbuf, 2, MPI_INT, other, 32, MPI_COMM_WORLD, &q[4]));
        for (int k = 0; k < 4; k++) {
            CHECK_MPI(MPI_Waitany(6, q, &idx, &st));
            CHECK(idx >= 1 && idx <= 4 && !(done & 1 << idx), "Waitany index %d", idx);
            done |= 1 << idx;
            if (idx == 1 || idx == 2)
                CHECK_STATUS(st, other, 30 + idx, idx, MPI_INT);
        }
        CHECK(rbuf[0] == 100 * other && rbuf[2] == 100 * other + 1, "Waitany: received %d %d", rbuf[0], rbuf[2]);
        CHECK_MPI(MPI_Waitany(6, q, &idx, &st));
        CHECK(idx == MPI_UNDEFINED, "Waitany of null requests: index %d", idx);
        CHECK_MPI(MPI_Testany(6, q, &idx, &flag, MPI_STATUS_IGNORE));
        CHECK(flag && idx == MPI_UNDEFINED, "Testany of null requests: flag %d index %d", flag, idx);
    }

    /* one Waitsome completes MANY receives from MPI_PROC_NULL (complete when posted) */
    for (int i = 0; i < MANY; i++)
        CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, MPI_PROC_NULL, 33, MPI_COMM_WORLD, &q[i]));
    CHECK_MPI(MPI_Waitsome(MANY, q, &out, ids, sts));
    CHECK(out == MANY, "Waitsome of %d receives from MPI_PROC_NULL: outcount %d", MANY, out);
    CHECK_MPI(MPI_Testsome(MANY, q, &out, ids, statuses_ignore));
    CHECK(out == MPI_UNDEFINED, "Testsome of null requests: outcount %d", out);

    /* an inactive persistent receive (tag 34) beside a receive and a send of tag 35 */
    {
        MPI_Request p[2];
        CHECK_MPI(MPI_Recv_init(&rbuf[4], 1, MPI_INT, other, 34, MPI_COMM_WORLD, &p[0]));
        CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, other, 35, MPI_COMM_WORLD, &p[1]));
        CHECK_MPI(MPI_Waitsome(1, p, &out, ids, sts));
        CHECK(out == MPI_UNDEFINED, "Waitsome of an inactive persistent request: outcount %d", out);
        CHECK_MPI(MPI_Testany(1, p, &idx, &flag, &st));
        CHECK(flag && idx == MPI_UNDEFINED, "Testany of an inactive request: flag %d index %d", flag, idx);
        CHECK_MPI(MPI_Send(sbuf, 1, MPI_INT, other, 35, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Waitany(2, p, &idx, &st));
        CHECK(idx == 1, "Waitany beside an inactive request: index %d", idx);
        CHECK_STATUS(st, other, 35, 1, MPI_INT);
        CHECK_MPI(MPI_Isend(sbuf, 1, MPI_INT, other, 34, MPI_COMM_WORLD, &p[1]));
        CHECK_MPI(MPI_Start(&p[0]));
        for (int n = 0; n < 2;) {
            CHECK_MPI(MPI_Testsome(2, p, &out, ids, sts));
            CHECK(out != MPI_UNDEFINED, "Testsome of active requests: MPI_UNDEFINED");
            for (int k = 0; k < out; k++)
                if (ids[k] == 0)
                    CHECK_STATUS(sts[k], other, 34, 1, MPI_INT);
            n += out == MPI_UNDEFINED ? 2 : out;
        }
        CHECK(rbuf[4] == 100 * other, "the persistent receive gave %d", rbuf[4]);
        CHECK_MPI(MPI_Request_free(&p[0]));
    }

    /* a generalized request, complete, among null ones: Waitany and Testsome */
    for (int k = 0; k < 2; k++) {
        q[0] = q[1] = q[2] = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Grequest_start(g_query, g_free, g_cancel, NULL, &q[1]));
        CHECK_MPI(MPI_Grequest_complete(q[1]));
        if (k == 0) {
            CHECK_MPI(MPI_Waitany(3, q, &idx, &st));
            CHECK(idx == 1 && st.MPI_TAG == MPI_UNDEFINED, "Waitany of a generalized request: %d, tag %d", idx,
                  st.MPI_TAG);
        } else {
            CHECK_MPI(MPI_Testsome(3, q, &out, ids, sts));
            CHECK(out == 1 && ids[0] == 1, "Testsome of a generalized request: %d", out);
        }
        CHECK(q[1] == MPI_REQUEST_NULL, "the generalized request is not freed");
    }

    /* MPI_ERR_IN_STATUS: a receive of 1 int that 2 arrive for (tag 36), beside its send */
    const char *skip = getenv("ANYSOME_SKIP");
    if (!skip || strcmp(skip, "truncate") != 0) {
        int rc, n = 0, err = 0;
        CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, other, 36, MPI_COMM_WORLD, &q[0]));
        CHECK_MPI(MPI_Isend(sbuf, 2, MPI_INT, other, 36, MPI_COMM_WORLD, &q[1]));
        while (n < 2) {
            rc = MPI_Waitsome(2, q, &out, ids, sts);
            CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS, "Waitsome returned %d", rc);
            if (out == MPI_UNDEFINED)
                break;
            for (int k = 0; k < out; k++) {
                int cls = MPI_SUCCESS;
                if (rc == MPI_ERR_IN_STATUS)
                    MPI_Error_class(sts[k].MPI_ERROR, &cls);
                CHECK((ids[k] == 0) == (cls == MPI_ERR_TRUNCATE), "Waitsome: request %d, error class %d", ids[k], cls);
                err += cls == MPI_ERR_TRUNCATE;
            }
            n += out;
        }
        CHECK(err == 1, "%d truncated receives", err);
        CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return mt_result();
}
