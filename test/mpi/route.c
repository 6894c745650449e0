/* A small program for the tracing routes and the settings tests: 3 ping-pongs of
 * 2 ints (tag 80 there, 81 back), an Allreduce and a Barrier on 2 ranks.
 * Built four ways (test/mpi/Makefile.mk): linked with libvtrace.la (route_lib,
 * mode_off, bad_buffer), linked by the plain MPI compiler and run with LD_PRELOAD
 * (route_preload), or rebuilt by 'mpicc -profile=vtrace' (route_profile). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, i, sum = 0;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "route needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 0; i < 3; i++) {
        int v[2] = {i, -i};
        if (mt_rank == 0) {
            CHECK_MPI(MPI_Send(v, 2, MPI_INT, 1, 80, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(v, 2, MPI_INT, 1, 81, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 1, 81, 2, MPI_INT);
            CHECK(v[0] == i + 1 && v[1] == -i - 1, "pong %d: %d %d", i, v[0], v[1]);
        } else {
            CHECK_MPI(MPI_Recv(v, 2, MPI_INT, 0, 80, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, 80, 2, MPI_INT);
            CHECK(v[0] == i && v[1] == -i, "ping %d: %d %d", i, v[0], v[1]);
            v[0]++;
            v[1]--;
            CHECK_MPI(MPI_Send(v, 2, MPI_INT, 0, 81, MPI_COMM_WORLD));
        }
    }
    int one = mt_rank + 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == 3, "Allreduce: %d", sum);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return mt_result();
}
