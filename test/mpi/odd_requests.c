/* Requests MPI completes without a usable status, or out of the program's sight (found
 * by running MPICH's pt2pt suite through the layer): a receive freed while active
 * (MPI_Request_free), MPI_Isendrecv and MPI_Isendrecv_replace (MPICH 4.0.2 fills no
 * status for them), a receive from MPI_PROC_NULL. Two ranks; test/mpi/odd_requests.check
 * reads the trace. */
#include "mpitest.h"
#include "vt_mpi_lacks.h"   /* MPI_Isendrecv is MPI-4: not in Open MPI 4.1 */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    int other = 1 - mt_rank;
    (void)other;
    int buf = -1, out = 100 + mt_rank, in = -1;
    MPI_Request r;
    /* a receive freed while active: it still takes rank 0's message */
    if (mt_rank == 1) {
        CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "the freed request is not MPI_REQUEST_NULL");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        CHECK_MPI(MPI_Send(&out, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
#ifndef VT_LACKS_MPI_Isendrecv
    /* Isendrecv, Isendrecv_replace */
    CHECK_MPI(MPI_Isendrecv(&out, 1, MPI_INT, other, 7, &in, 1, MPI_INT, other, 7, MPI_COMM_WORLD, &r));
    MPI_Status sts[1];
    CHECK_MPI(MPI_Waitall(1, &r, sts));
    CHECK(in == 100 + other, "Isendrecv gave %d", in);
    int x = 200 + mt_rank;
    CHECK_MPI(MPI_Isendrecv_replace(&x, 1, MPI_INT, other, 8, other, 8, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(x == 200 + other, "Isendrecv_replace gave %d", x);
#endif
    /* a receive from MPI_PROC_NULL */
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Wait(&r, &st));
    MPI_Finalize();
    return mt_result();
}
