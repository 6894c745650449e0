/* Probes with MPI_ANY_SOURCE / MPI_ANY_TAG on 2 ranks: rank 0 sends, rank 1
 *   Probe + Recv of 3 messages (tags 50, 51, 52; 4, 8, 12 ints),
 *   an Iprobe that must fail (tag 99 is never sent), then Iprobe loops + Recv of
 *     2 messages (tag 53, 3 ints): failed Iprobes are counted, not recorded,
 *   Mprobe + Mrecv of 2 messages (tag 54, 5 ints),
 *   Mprobe + Mrecv from MPI_PROC_NULL (MPI_MESSAGE_NO_PROC),
 *   Improbe loops + Imrecv + Wait of 2 messages (tag 55, 7 ints).
 * Expectations: probe.expect, plus the Iprobe/Improbe call counts (dynamic). */
#include "mpitest.h"

static void payload(int *b, int n, int tag)
{
    for (int i = 0; i < n; i++)
        b[i] = tag * 100 + i;
}

static void check_payload(const int *b, int n, int tag)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == tag * 100 + i, "tag %d: element %d is %d", tag, i, b[i]);
}

int main(int argc, char **argv)
{
    int size, i, buf[16], n, flag;
    MPI_Status st, st2;
    MPI_Message msg;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "probe needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mt_rank == 0) {
        static const int tags[] = {50, 51, 52, 53, 53, 54, 54, 55, 55};
        static const int counts[] = {4, 8, 12, 3, 3, 5, 5, 7, 7};
        for (i = 0; i < 9; i++) {
            payload(buf, counts[i], tags[i]);
            CHECK_MPI(MPI_Send(buf, counts[i], MPI_INT, 1, tags[i], MPI_COMM_WORLD));
        }
    } else {
        int iprobes = 0, improbes = 0;
        /* Probe + Recv */
        for (i = 0; i < 3; i++) {
            CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 50 + i && n == 4 * (i + 1), "Probe %d: %d %d %d", i,
                  st.MPI_SOURCE, st.MPI_TAG, n);
            CHECK_MPI(MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            CHECK_STATUS(st2, 0, 50 + i, 4 * (i + 1), MPI_INT);
            check_payload(buf, n, 50 + i);
        }
        /* An Iprobe that cannot succeed. */
        flag = 1;
        CHECK_MPI(MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, &st));
        iprobes++;
        CHECK(!flag, "Iprobe found a message of tag 99");
        /* Iprobe loops + Recv */
        for (i = 0; i < 2; i++) {
            flag = 0;
            while (!flag) {
                CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                iprobes++;
            }
            CHECK_STATUS(st, 0, 53, 3, MPI_INT);
            CHECK_MPI(MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, 53, MPI_COMM_WORLD, &st2));
            CHECK_STATUS(st2, 0, 53, 3, MPI_INT);
            check_payload(buf, 3, 53);
        }
        mt_expect("fn 1 MPI_Iprobe calls=%d events=2", iprobes);
        /* Mprobe + Mrecv */
        for (i = 0; i < 2; i++) {
            CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            CHECK_STATUS(st, 0, 54, 5, MPI_INT);
            CHECK_MPI(MPI_Mrecv(buf, 16, MPI_INT, &msg, &st2));
            CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left the message");
            CHECK_STATUS(st2, 0, 54, 5, MPI_INT);
            check_payload(buf, 5, 54);
        }
        /* Mprobe + Mrecv from MPI_PROC_NULL */
        CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave another message");
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        CHECK_MPI(MPI_Mrecv(buf, 16, MPI_INT, &msg, &st2));
        CHECK_STATUS(st2, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        /* Improbe loops + Imrecv + Wait */
        for (i = 0; i < 2; i++) {
            flag = 0;
            while (!flag) {
                CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
                improbes++;
            }
            CHECK_STATUS(st, 0, 55, 7, MPI_INT);
            CHECK_MPI(MPI_Imrecv(buf, 16, MPI_INT, &msg, &req));
            CHECK_MPI(MPI_Wait(&req, &st2));
            CHECK_STATUS(st2, 0, 55, 7, MPI_INT);
            check_payload(buf, 7, 55);
        }
        mt_expect("fn 1 MPI_Improbe calls=%d events=2", improbes);
    }
    MPI_Finalize();
    return mt_result();
}
