/* Communicators whose member lists are ranges (format 1.3, compact lists): world, its
 * dup, a split by parity (strides of 2), a split in halves (contiguous), a barrier on
 * each. test/mpi/defs_scale.sh runs it on 4 and 16 ranks: the definitions a rank file
 * holds must not grow with the number of ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, parity, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
    MPI_Barrier(dup);
    MPI_Barrier(parity);
    MPI_Barrier(half);
    MPI_Comm_free(&half);
    MPI_Comm_free(&parity);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    if (rank == 0)
        printf("comm_scale: %d ranks\n", size);
    return 0;
}
