/* Two phases of iterations for the run-time periodicity detector (VTRACE_PERIODIC):
 * 40 iterations of (Barrier, Allreduce), then 40 of (Bcast, Barrier, Allreduce,
 * Barrier), each call from one call site. test/mpi/periodic.check reads the markers. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    int x = 1, y = 0;
    for (int i = 0; i < 40; i++) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    }
    for (int i = 0; i < 40; i++) {
        CHECK_MPI(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK(y == 2 || y == 4, "allreduce gave %d", y);
    MPI_Finalize();
    return mt_result();
}
