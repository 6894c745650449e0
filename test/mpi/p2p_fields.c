/* MPI_Send/MPI_Recv records whose tag and bytes sit on either side of a varint's one-byte
 * limit (63/64 zigzagged, 127/128): the inlined handlers store the communicator and the
 * side in one word where each fits a byte, and encode varints otherwise (issue 18). */
#include "mpitest.h"

static char buf[1000];

int main(int argc, char **argv)
{
    static const int sizes[] = {0, 8, 127, 128, 1000}, tags[] = {0, 63, 64, 1000};
    int rank;
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) {
            if (rank == 0) {
                CHECK_MPI(MPI_Send(buf, sizes[i], MPI_BYTE, 1, tags[j], MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                int n;
                CHECK_MPI(MPI_Recv(buf, 1000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
                CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == tags[j] && n == sizes[i], "message %d %d", i, j);
            }
        }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
