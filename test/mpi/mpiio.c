/* MPI-IO on 2 ranks, on a file in the current directory (the test's work
 * directory): File_open, write_at and read_at of 100 ints at offset 400 * rank,
 * File_seek to 800 + 200 * rank, write_all of 50 ints, File_seek back, read_all,
 * File_close. Expectations: mpiio.expect. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, k, a[100], b[100];
    MPI_File fh;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "mpiio needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int me = mt_rank;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, "mpiio.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (k = 0; k < 100; k++) {
        a[k] = 1000 * me + k;
        b[k] = -1;
    }
    CHECK_MPI(MPI_File_write_at(fh, 400 * me, a, 100, MPI_INT, &st));
    {
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 100, "write_at wrote %d ints", n);
    }
    CHECK_MPI(MPI_File_read_at(fh, 400 * me, b, 100, MPI_INT, MPI_STATUS_IGNORE));
    for (k = 0; k < 100; k++)
        CHECK(b[k] == 1000 * me + k, "read_at: element %d is %d", k, b[k]);

    for (k = 0; k < 50; k++) {
        a[k] = 7000 + 100 * me + k;
        b[k] = -1;
    }
    CHECK_MPI(MPI_File_seek(fh, 800 + 200 * me, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write_all(fh, a, 50, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_seek(fh, 800 + 200 * me, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_all(fh, b, 50, MPI_INT, &st));
    {
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 50, "read_all read %d ints", n);
    }
    for (k = 0; k < 50; k++)
        CHECK(b[k] == 7000 + 100 * me + k, "read_all: element %d is %d", k, b[k]);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "File_close left the handle");
    MPI_Finalize();
    return mt_result();
}
