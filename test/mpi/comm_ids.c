/* Communicator identities the layer must get right (MPICH's comm suite, run through the
 * layer, found each): on 2 ranks,
 *   1. a receive posted on a communicator that is freed before it completes, its handle
 *      given at once to a new communicator with the ranks reversed (cmfree.c): the
 *      message comes from rank 0 of the freed one, not of the new one;
 *   2. MPI_Comm_create_group over {0} (rank 0 alone), then over {0, 1}: both members
 *      must give the second the same id although only rank 0 made the first
 *      (comm_group_rand.c), or the replay cannot match the barrier on it;
 *   3. more than 256 tags of MPI_Comm_create_group, two communicators each: no two live
 *      communicators may share an id.
 * Run in VTRACE_MODE=both: the run-time reduced trace must be `vtrace reduce` of the
 * full one, and both must replay. Results checked with mpitest.h. */
#include "mpitest.h"

#define TAGS 270

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mt_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "comm_ids: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* 1 */
    MPI_Comm dup, rev;
    int buf = -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 1) {
        MPI_Request req;
        MPI_Status st;
        MPI_Irecv(&buf, 1, MPI_INT, 0, 7, dup, &req);
        MPI_Comm_free(&dup);
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&req, &st);
        CHECK(buf == 42 && st.MPI_SOURCE == 0 && st.MPI_TAG == 7, "freed communicator: got %d from %d tag %d", buf,
              st.MPI_SOURCE, st.MPI_TAG);
    } else {
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
        MPI_Barrier(MPI_COMM_WORLD);
        buf = 42;
        MPI_Send(&buf, 1, MPI_INT, 1, 7, dup);
        MPI_Comm_free(&dup);
    }
    MPI_Comm_free(&rev);

    /* 2 */
    MPI_Group world, g0, g01;
    int r0[1] = {0}, r01[2] = {0, 1};
    MPI_Comm c;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, r0, &g0);
    MPI_Group_incl(world, 2, r01, &g01);
    if (rank == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, g0, 0, &c);
        MPI_Comm_free(&c);
    }
    MPI_Comm_create_group(MPI_COMM_WORLD, g01, 0, &c);
    MPI_Barrier(c);
    MPI_Comm_free(&c);
    MPI_Group_free(&g0);
    MPI_Group_free(&g01);

    /* 3 */
    for (int t = 0; t < TAGS; t++) {
        MPI_Comm a, b;
        MPI_Comm_create_group(MPI_COMM_WORLD, world, t, &a);
        MPI_Comm_create_group(MPI_COMM_WORLD, world, t, &b);
        MPI_Barrier(a);
        MPI_Barrier(b);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }
    MPI_Group_free(&world);

    MPI_Finalize();
    return mt_result();
}
