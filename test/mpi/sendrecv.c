/* Sendrecv and Sendrecv_replace on 2 ranks, both alike: 4 Sendrecv of 6 ints,
 * tag 40 (the last two receive from MPI_ANY_SOURCE with MPI_ANY_TAG), one with
 * MPI_PROC_NULL on both sides (tag 43), 3 Sendrecv_replace of 5 doubles, tag 41.
 * Expectations: sendrecv.expect. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, other, i, k;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "sendrecv needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    other = 1 - mt_rank;
    for (i = 0; i < 4; i++) {
        int s[6], r[6];
        for (k = 0; k < 6; k++) {
            s[k] = 100 * mt_rank + 10 * i + k;
            r[k] = -1;
        }
        if (i < 2)
            CHECK_MPI(MPI_Sendrecv(s, 6, MPI_INT, other, 40, r, 6, MPI_INT, other, 40, MPI_COMM_WORLD, &st));
        else
            CHECK_MPI(MPI_Sendrecv(s, 6, MPI_INT, other, 40, r, 6, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                   MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, other, 40, 6, MPI_INT);
        for (k = 0; k < 6; k++)
            CHECK(r[k] == 100 * other + 10 * i + k, "Sendrecv %d: element %d is %d", i, k, r[k]);
    }
    {
        int s[6] = {1, 2, 3, 4, 5, 6}, r[6] = {9, 9, 9, 9, 9, 9};
        CHECK_MPI(MPI_Sendrecv(s, 6, MPI_INT, MPI_PROC_NULL, 43, r, 6, MPI_INT, MPI_PROC_NULL, 43,
                               MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        CHECK(r[0] == 9 && r[5] == 9, "Sendrecv from MPI_PROC_NULL changed the buffer");
    }
    for (i = 0; i < 3; i++) {
        double d[5];
        for (k = 0; k < 5; k++)
            d[k] = mt_rank + 0.25 * k + i;
        CHECK_MPI(MPI_Sendrecv_replace(d, 5, MPI_DOUBLE, other, 41, other, 41, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, other, 41, 5, MPI_DOUBLE);
        for (k = 0; k < 5; k++)
            CHECK(d[k] == other + 0.25 * k + i, "Sendrecv_replace %d: element %d is %g", i, k, d[k]);
    }
    MPI_Finalize();
    return mt_result();
}
