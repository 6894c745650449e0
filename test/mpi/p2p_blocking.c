/* Blocking point-to-point on 2 ranks: Send, Bsend (with MPI_Buffer_attach), Ssend,
 * Rsend into a pre-posted receive, Recv with real statuses and MPI_STATUS_IGNORE,
 * MPI_PROC_NULL peers and zero-length messages. Expectations: p2p_blocking.expect. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, i, j;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "p2p_blocking needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* A: 5 x Send of 10 ints (40 bytes), tag 1, 0 -> 1; real statuses. */
    for (i = 0; i < 5; i++) {
        int buf[10];
        if (mt_rank == 0) {
            for (j = 0; j < 10; j++)
                buf[j] = 100 * i + j;
            CHECK_MPI(MPI_Send(buf, 10, MPI_INT, 1, 1, MPI_COMM_WORLD));
        } else {
            memset(buf, 0, sizeof buf);
            CHECK_MPI(MPI_Recv(buf, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, 1, 10, MPI_INT);
            for (j = 0; j < 10; j++)
                CHECK(buf[j] == 100 * i + j, "A: buf[%d] = %d", j, buf[j]);
        }
    }

    /* B: 3 x Send of 8 doubles (64 bytes), tag 2, 1 -> 0; MPI_STATUS_IGNORE. */
    for (i = 0; i < 3; i++) {
        double d[8];
        if (mt_rank == 1) {
            for (j = 0; j < 8; j++)
                d[j] = i + j * 0.5;
            CHECK_MPI(MPI_Send(d, 8, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD));
        } else {
            memset(d, 0, sizeof d);
            CHECK_MPI(MPI_Recv(d, 8, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (j = 0; j < 8; j++)
                CHECK(d[j] == i + j * 0.5, "B: d[%d] = %g", j, d[j]);
        }
    }

    /* C: 4 x Bsend of 100 bytes, tag 3, 0 -> 1, through an attached buffer. */
    if (mt_rank == 0) {
        int bsize = 4 * (100 + MPI_BSEND_OVERHEAD);
        char *bbuf = malloc((size_t)bsize), msg[100];
        void *det;
        int detsize;
        CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
        for (i = 0; i < 4; i++) {
            memset(msg, 'a' + i, sizeof msg);
            CHECK_MPI(MPI_Bsend(msg, 100, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        }
        CHECK_MPI(MPI_Buffer_detach(&det, &detsize));
        CHECK(det == bbuf && detsize == bsize, "detached %p/%d", det, detsize);
        free(bbuf);
    } else {
        char msg[100];
        for (i = 0; i < 4; i++) {
            CHECK_MPI(MPI_Recv(msg, 100, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, 3, 100, MPI_BYTE);
            CHECK(msg[0] == 'a' + i && msg[99] == 'a' + i, "C: message %d holds %c", i, msg[0]);
        }
    }

    /* D: 2 x Ssend of 16 ints (64 bytes), tag 4, 1 -> 0. */
    for (i = 0; i < 2; i++) {
        int buf[16];
        if (mt_rank == 1) {
            for (j = 0; j < 16; j++)
                buf[j] = -j - i;
            CHECK_MPI(MPI_Ssend(buf, 16, MPI_INT, 0, 4, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(buf, 16, MPI_INT, 1, 4, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 1, 4, 16, MPI_INT);
            CHECK(buf[15] == -15 - i, "D: buf[15] = %d", buf[15]);
        }
    }

    /* E: Rsend of 5 ints (20 bytes), tag 5, 0 -> 1, into a receive rank 1 posted
     * before telling rank 0 (zero-length message, tag 6) that it may send. */
    if (mt_rank == 1) {
        int buf[5] = {0};
        MPI_Request req;
        CHECK_MPI(MPI_Irecv(buf, 5, MPI_INT, 0, 5, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 6, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&req, &st));
        CHECK_STATUS(st, 0, 5, 5, MPI_INT);
        CHECK(buf[0] == 7 && buf[4] == 11, "E: %d %d", buf[0], buf[4]);
    } else {
        int buf[5] = {7, 8, 9, 10, 11};
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, 6, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, 1, 6, 0, MPI_INT);
        CHECK_MPI(MPI_Rsend(buf, 5, MPI_INT, 1, 5, MPI_COMM_WORLD));
    }

    /* F: MPI_PROC_NULL on both ranks: Send of 10 bytes, tag 7, and a Recv. */
    {
        char b[10] = "procnull!";
        CHECK_MPI(MPI_Send(b, 10, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Recv(b, 10, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_BYTE);
        CHECK(strcmp(b, "procnull!") == 0, "F: buffer changed");
    }

    /* G: 2 x zero-length Send, tag 8, 0 -> 1. */
    for (i = 0; i < 2; i++) {
        int dummy = 42;
        if (mt_rank == 0) {
            CHECK_MPI(MPI_Send(&dummy, 0, MPI_INT, 1, 8, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(&dummy, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, 8, 0, MPI_INT);
            CHECK(dummy == 42, "G: buffer changed");
        }
    }

    MPI_Finalize();
    return mt_result();
}
