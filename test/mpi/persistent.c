/* Persistent requests on 2 ranks, both alike: Send_init and Recv_init of 8 ints,
 * tag 30; 4 rounds of Startall + Waitall, 3 rounds of Start + Start + Wait + Wait,
 * then Request_free. Expectations: persistent.expect. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, other, i, k, sbuf[8], rbuf[8];
    MPI_Request req[2];
    MPI_Status sts[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "persistent needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    other = 1 - mt_rank;
    CHECK_MPI(MPI_Recv_init(rbuf, 8, MPI_INT, other, 30, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Send_init(sbuf, 8, MPI_INT, other, 30, MPI_COMM_WORLD, &req[1]));
    for (i = 0; i < 7; i++) {
        for (k = 0; k < 8; k++) {
            sbuf[k] = 1000 * i + 10 * mt_rank + k;
            rbuf[k] = -1;
        }
        if (i < 4) {
            CHECK_MPI(MPI_Startall(2, req));
            CHECK_MPI(MPI_Waitall(2, req, sts));
        } else {
            CHECK_MPI(MPI_Start(&req[0]));
            CHECK_MPI(MPI_Start(&req[1]));
            CHECK_MPI(MPI_Wait(&req[0], &sts[0]));
            CHECK_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        }
        CHECK_STATUS(sts[0], other, 30, 8, MPI_INT);
        CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL, "round %d freed a persistent request", i);
        for (k = 0; k < 8; k++)
            CHECK(rbuf[k] == 1000 * i + 10 * other + k, "round %d: element %d is %d", i, k, rbuf[k]);
    }
    CHECK_MPI(MPI_Request_free(&req[0]));
    CHECK_MPI(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "Request_free left a request");
    MPI_Finalize();
    return mt_result();
}
