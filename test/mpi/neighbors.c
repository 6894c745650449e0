/* Neighbourhood collectives where a rank has fewer neighbours than the communicator has
 * ranks (MPICH's collective suite, run through the layer, found it reading the count and
 * type arrays past their end there): on 3 ranks, a 1-D non-periodic Cartesian
 * communicator (ranks 0 and 2 have an MPI_PROC_NULL neighbour and one real one, rank 1
 * two real ones) and a ring as a distributed graph (one source, one destination each).
 * Every result is checked (mpitest.h). test/mpi/neighbors.expect has the bytes each
 * rank's trace must report: only the blocks that move data. */
#include "mpitest.h"

#define ITER 5

#define expect_int(what, got, want) CHECK((got) == (want), "%s: got %d, want %d", what, got, want)
#define expect_double(what, got, want) CHECK((got) == (want), "%s: got %g, want %g", what, got, want)

/* The Cartesian line: blocks are [left, right]; a missing neighbour leaves its receive
 * block untouched. */
static void line(MPI_Comm cart, int rank, int size)
{
    int left = rank > 0 ? rank - 1 : -1, right = rank < size - 1 ? rank + 1 : -1;
    int r2[2], s2[2] = {100 + rank, 200 + rank};

    r2[0] = r2[1] = -1;
    MPI_Neighbor_allgather(&s2[0], 1, MPI_INT, r2, 1, MPI_INT, cart);
    expect_int("allgather from the left", r2[0], left >= 0 ? 100 + left : -1);
    expect_int("allgather from the right", r2[1], right >= 0 ? 100 + right : -1);

    r2[0] = r2[1] = -1;
    MPI_Neighbor_alltoall(s2, 1, MPI_INT, r2, 1, MPI_INT, cart);
    /* the left neighbour's right block, the right neighbour's left block */
    expect_int("alltoall from the left", r2[0], left >= 0 ? 200 + left : -1);
    expect_int("alltoall from the right", r2[1], right >= 0 ? 100 + right : -1);

    /* one int to the left, two to the right: two from the left, one from the right */
    int sv[3] = {10 * rank, 10 * rank + 1, 10 * rank + 2}, rv[3] = {-1, -1, -1};
    int scounts[2] = {1, 2}, sdispls[2] = {0, 1}, rcounts[2] = {2, 1}, rdispls[2] = {0, 2};
    MPI_Neighbor_alltoallv(sv, scounts, sdispls, MPI_INT, rv, rcounts, rdispls, MPI_INT, cart);
    expect_int("alltoallv from the left (1)", rv[0], left >= 0 ? 10 * left + 1 : -1);
    expect_int("alltoallv from the left (2)", rv[1], left >= 0 ? 10 * left + 2 : -1);
    expect_int("alltoallv from the right", rv[2], right >= 0 ? 10 * right : -1);

    /* an int to the left, a double to the right: a double from the left, an int from
     * the right */
    struct {
        int i;
        double d;
    } out = {rank, rank + 0.5}, in = {-1, -1.0};
    int wcounts[2] = {1, 1};
    MPI_Aint sd[2], rd[2], base;
    MPI_Get_address(&out, &base);
    MPI_Get_address(&out.i, &sd[0]);
    MPI_Get_address(&out.d, &sd[1]);
    sd[0] -= base, sd[1] -= base;
    MPI_Get_address(&in, &base);
    MPI_Get_address(&in.d, &rd[0]);
    MPI_Get_address(&in.i, &rd[1]);
    rd[0] -= base, rd[1] -= base;
    MPI_Datatype stypes[2] = {MPI_INT, MPI_DOUBLE}, rtypes[2] = {MPI_DOUBLE, MPI_INT};
    MPI_Neighbor_alltoallw(&out, wcounts, sd, stypes, &in, wcounts, rd, rtypes, cart);
    expect_double("alltoallw from the left", in.d, left >= 0 ? left + 0.5 : -1.0);
    expect_int("alltoallw from the right", in.i, right >= 0 ? right : -1);

    in.i = -1, in.d = -1.0;
    MPI_Request req;
    MPI_Ineighbor_alltoallw(&out, wcounts, sd, stypes, &in, wcounts, rd, rtypes, cart, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect_double("ialltoallw from the left", in.d, left >= 0 ? left + 0.5 : -1.0);
    expect_int("ialltoallw from the right", in.i, right >= 0 ? right : -1);
}

/* The ring: two ints and a double from the previous rank to the next. */
static void ring(MPI_Comm g, int rank, int size)
{
    int prev = (rank + size - 1) % size;
    int s[2] = {rank, -rank}, r[2] = {-1, -1}, rcount = 2, rdispl = 0;
    MPI_Neighbor_allgatherv(s, 2, MPI_INT, r, &rcount, &rdispl, MPI_INT, g);
    expect_int("ring allgatherv (1)", r[0], prev);
    expect_int("ring allgatherv (2)", r[1], -prev);

    double sd = rank + 0.25, rd = -1.0;
    int one = 1;
    MPI_Aint zero = 0;
    MPI_Datatype t = MPI_DOUBLE;
    MPI_Neighbor_alltoallw(&sd, &one, &zero, &t, &rd, &one, &zero, &t, g);
    expect_double("ring alltoallw", rd, prev + 0.25);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (mt_rank == 0)
            fprintf(stderr, "neighbors: needs 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[1] = {size}, periods[1] = {0};
    MPI_Comm cart, g;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    int src = (mt_rank + size - 1) % size, dst = (mt_rank + 1) % size;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
    /* Open MPI's MPI_UNWEIGHTED is (int *)2, which GCC takes for an array of size 0 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
    for (int i = 0; i < ITER; i++) {
        line(cart, mt_rank, size);
        ring(g, mt_rank, size);
    }
    MPI_Comm_free(&g);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return mt_result();
}
