/* A world that spawns another (test/mpi/spawn_dir.sh):
 *     spawn_world PATH_OF_THIS_PROGRAM quiet|msg
 * The parents (2) spawn 2 children of PATH; with 'msg' parent 0 sends an int to child 0
 * over the intercommunicator; each world makes collectives of its own; both sides then
 * disconnect (the children's parent communicator was never created by a traced call). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter;
    MPI_Comm_get_parent(&parent);
    int rank, x = 41;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int msg = argc > 2 && !strcmp(argv[2], "msg");
    if (parent == MPI_COMM_NULL) {
        char *args[] = {argv[1], argv[2], NULL};
        MPI_Comm_spawn(argv[1], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        if (msg && rank == 0)
            MPI_Send(&x, 1, MPI_INT, 0, 7, inter);
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("parent %d: %d\n", rank, x);
        MPI_Comm_disconnect(&inter);
    } else {
        if (msg && rank == 0)
            MPI_Recv(&x, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        printf("child %d: %d\n", rank, x);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
