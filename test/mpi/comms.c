/* Communicators on 4 ranks, with traffic on each:
 *   Comm_split(color = rank % 2): Send/Recv (tag 60, 4 ints) from sub-rank 0 to 1,
 *     Bcast from sub-rank 1, Allreduce;
 *   Comm_dup(MPI_COMM_WORLD): Barrier, Sendrecv around the ring (tag 61);
 *   Comm_create(group {1, 2, 3}): rank 0 gets MPI_COMM_NULL; Bcast from its rank 0
 *     (world 1), Send (tag 62, 3 ints) from its rank 2 (world 3) to its rank 0, which
 *     receives from MPI_ANY_SOURCE;
 *   Cart_create(1-D, periodic, no reorder): Sendrecv with the Cart_shift neighbours
 *     (tag 63), Reduce to cart rank 3;
 *   Comm_free of every one; then Comm_dup again, Barrier, Comm_free.
 * Expectations: comms.expect (peers and roots are world ranks; the ids of a
 * communicator agree on every member). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int size, subrank, v, w, k;
    int buf[4];
    MPI_Comm sub, dup, cr, cart;
    MPI_Group wg, g;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        fprintf(stderr, "comms needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int me = mt_rank;

    /* split */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &sub));
    MPI_Comm_rank(sub, &subrank);
    CHECK(subrank == me / 2, "sub-rank %d", subrank);
    if (subrank == 0) {
        for (k = 0; k < 4; k++)
            buf[k] = 10 * me + k;
        CHECK_MPI(MPI_Send(buf, 4, MPI_INT, 1, 60, sub));
    } else {
        CHECK_MPI(MPI_Recv(buf, 4, MPI_INT, 0, 60, sub, &st));
        CHECK_STATUS(st, 0, 60, 4, MPI_INT);
        CHECK(buf[3] == 10 * (me - 2) + 3, "split Recv: %d", buf[3]);
    }
    v = subrank == 1 ? 100 + me : -1;
    CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 1, sub));
    CHECK(v == 100 + (me % 2) + 2, "split Bcast: %d", v);
    v = me;
    CHECK_MPI(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, sub));
    CHECK(w == (me % 2 ? 4 : 2), "split Allreduce: %d", w);

    /* dup */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Barrier(dup));
    v = me;
    CHECK_MPI(MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % 4, 61, &w, 1, MPI_INT, (me + 3) % 4, 61, dup, &st));
    CHECK_STATUS(st, (me + 3) % 4, 61, 1, MPI_INT);
    CHECK(w == (me + 3) % 4, "dup Sendrecv: %d", w);

    /* create over {1, 2, 3} */
    {
        int members[3] = {1, 2, 3};
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, 3, members, &g);
        CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, g, &cr));
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
    }
    if (me == 0) {
        CHECK(cr == MPI_COMM_NULL, "rank 0 got a communicator from Comm_create");
    } else {
        int crank;
        MPI_Comm_rank(cr, &crank);
        CHECK(crank == me - 1, "Comm_create rank %d", crank);
        buf[0] = crank == 0 ? 7 : -1;
        buf[1] = crank == 0 ? 8 : -1;
        CHECK_MPI(MPI_Bcast(buf, 2, MPI_INT, 0, cr));
        CHECK(buf[0] == 7 && buf[1] == 8, "create Bcast: %d %d", buf[0], buf[1]);
        if (crank == 2) {
            buf[0] = 1;
            buf[1] = 2;
            buf[2] = 3;
            CHECK_MPI(MPI_Send(buf, 3, MPI_INT, 0, 62, cr));
        } else if (crank == 0) {
            CHECK_MPI(MPI_Recv(buf, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cr, &st));
            CHECK_STATUS(st, 2, 62, 3, MPI_INT);
            CHECK(buf[2] == 3, "create Recv: %d", buf[2]);
        }
    }

    /* 1-D periodic cartesian communicator */
    {
        int dims[1] = {4}, periods[1] = {1}, left, right, crank;
        CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
        MPI_Comm_rank(cart, &crank);
        CHECK(crank == me, "cart rank %d", crank);
        MPI_Cart_shift(cart, 0, 1, &left, &right);
        CHECK(left == (me + 3) % 4 && right == (me + 1) % 4, "Cart_shift %d %d", left, right);
        v = 50 + me;
        CHECK_MPI(MPI_Sendrecv(&v, 1, MPI_INT, right, 63, &w, 1, MPI_INT, left, 63, cart, &st));
        CHECK_STATUS(st, left, 63, 1, MPI_INT);
        CHECK(w == 50 + left, "cart Sendrecv: %d", w);
        v = me;
        CHECK_MPI(MPI_Reduce(&v, &w, 1, MPI_INT, MPI_SUM, 3, cart));
        if (me == 3)
            CHECK(w == 6, "cart Reduce: %d", w);
    }

    CHECK_MPI(MPI_Comm_free(&sub));
    CHECK_MPI(MPI_Comm_free(&dup));
    if (cr != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&cr));
    CHECK_MPI(MPI_Comm_free(&cart));

    /* a new communicator after the frees (MPI may reuse a freed handle): a new id */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Barrier(dup));
    CHECK_MPI(MPI_Comm_free(&dup));
    MPI_Finalize();
    return mt_result();
}
