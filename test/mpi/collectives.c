/* Collectives on 2 ranks in a tight loop of 10 iterations: Barrier, Bcast, Reduce,
 * Allreduce, Gather, Gatherv, Scatter, Scatterv, Allgather, Allgatherv, Alltoall,
 * Alltoallv, Alltoallw, Reduce_scatter, Reduce_scatter_block, Scan, Exscan,
 * Iallreduce + Wait, Ibarrier + Wait (19 collectives per iteration), and an
 * MPI_Wtime (counted, not recorded). Rooted ones alternate their root. Every result is checked. Expectations: collectives.expect. */
#include "mpitest.h"

#define ITER 10

int main(int argc, char **argv)
{
    int size, it, k;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "collectives needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int me = mt_rank;
    for (it = 0; it < ITER; it++) {
        const int root = it % 2, root2 = (it + 1) % 2;
        int a[8], b[8], c[8];
        double d[4], e[4];
        MPI_Request req;
        double t0 = MPI_Wtime(); /* counted in the profile, never a record */

        /* >= 0: Open MPI's clock starts at 0.0 at its first reading */
        CHECK(t0 >= 0, "MPI_Wtime %g", t0);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

        /* Bcast 4 ints from root */
        for (k = 0; k < 4; k++)
            a[k] = me == root ? it * 10 + k : -1;
        CHECK_MPI(MPI_Bcast(a, 4, MPI_INT, root, MPI_COMM_WORLD));
        for (k = 0; k < 4; k++)
            CHECK(a[k] == it * 10 + k, "Bcast %d: %d", it, a[k]);

        /* Reduce 3 ints to root2 */
        for (k = 0; k < 3; k++)
            a[k] = me + k + it;
        CHECK_MPI(MPI_Reduce(a, b, 3, MPI_INT, MPI_SUM, root2, MPI_COMM_WORLD));
        if (me == root2)
            for (k = 0; k < 3; k++)
                CHECK(b[k] == 1 + 2 * (k + it), "Reduce %d: %d", it, b[k]);

        /* Allreduce 2 doubles */
        d[0] = me + it;
        d[1] = 0.5 * me;
        CHECK_MPI(MPI_Allreduce(d, e, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        CHECK(e[0] == 1 + it && e[1] == 0.5, "Allreduce %d: %g %g", it, e[0], e[1]);

        /* Gather 2 ints to root */
        a[0] = me;
        a[1] = it;
        CHECK_MPI(MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, root, MPI_COMM_WORLD));
        if (me == root)
            CHECK(b[0] == 0 && b[1] == it && b[2] == 1 && b[3] == it, "Gather %d", it);

        /* Gatherv: rank r sends r + 1 ints */
        {
            int counts[2] = {1, 2}, displs[2] = {0, 1};
            for (k = 0; k < me + 1; k++)
                a[k] = 100 * me + k;
            CHECK_MPI(MPI_Gatherv(a, me + 1, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
            if (me == root)
                CHECK(b[0] == 0 && b[1] == 100 && b[2] == 101, "Gatherv %d: %d %d %d", it, b[0], b[1], b[2]);
        }

        /* Scatter 3 ints to each from root */
        for (k = 0; k < 6; k++)
            a[k] = it + k;
        CHECK_MPI(MPI_Scatter(a, 3, MPI_INT, b, 3, MPI_INT, root, MPI_COMM_WORLD));
        for (k = 0; k < 3; k++)
            CHECK(b[k] == it + 3 * me + k, "Scatter %d: %d", it, b[k]);

        /* Scatterv: 2 ints to rank 0, 1 to rank 1 */
        {
            int counts[2] = {2, 1}, displs[2] = {0, 2};
            for (k = 0; k < 3; k++)
                a[k] = 7 * it + k;
            CHECK_MPI(MPI_Scatterv(a, counts, displs, MPI_INT, b, 2 - me, MPI_INT, root, MPI_COMM_WORLD));
            for (k = 0; k < 2 - me; k++)
                CHECK(b[k] == 7 * it + displs[me] + k, "Scatterv %d: %d", it, b[k]);
        }

        /* Allgather 1 int */
        a[0] = 5 * me + it;
        CHECK_MPI(MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD));
        CHECK(b[0] == it && b[1] == 5 + it, "Allgather %d", it);

        /* Allgatherv: rank r contributes r + 1 ints */
        {
            int counts[2] = {1, 2}, displs[2] = {0, 1};
            for (k = 0; k < me + 1; k++)
                a[k] = 10 * me + k + it;
            CHECK_MPI(MPI_Allgatherv(a, me + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD));
            CHECK(b[0] == it && b[1] == 10 + it && b[2] == 11 + it, "Allgatherv %d", it);
        }

        /* Alltoall 2 ints per peer */
        for (k = 0; k < 4; k++)
            a[k] = 100 * me + k;
        CHECK_MPI(MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD));
        CHECK(b[0] == 2 * me && b[1] == 2 * me + 1 && b[2] == 100 + 2 * me && b[3] == 101 + 2 * me,
              "Alltoall %d", it);

        /* Alltoallv: rank r sends r + p + 1 ints to p */
        {
            int sc[2], sd[2], rc[2], rd[2];
            for (k = 0; k < 2; k++) {
                sc[k] = rc[k] = me + k + 1;
            }
            sd[0] = rd[0] = 0;
            sd[1] = rd[1] = sc[0];
            for (k = 0; k < 8; k++)
                a[k] = 1000 * me + k;
            CHECK_MPI(MPI_Alltoallv(a, sc, sd, MPI_INT, c, rc, rd, MPI_INT, MPI_COMM_WORLD));
            /* from p: p's block for me starts at p's sd[me]: 0, or p's sc[0] = p + 1 */
            for (int p = 0; p < 2; p++) {
                int off = me == 0 ? 0 : p + 1;
                for (k = 0; k < rc[p]; k++)
                    CHECK(c[rd[p] + k] == 1000 * p + off + k, "Alltoallv %d from %d: %d", it, p, c[rd[p] + k]);
            }
        }

        /* Alltoallw: 1 element per pair, MPI_INT when r + p is even, else MPI_DOUBLE */
        {
            struct { int i; double x; } sw[2], rw[2];
            int cnt[2] = {1, 1}, sdis[2], rdis[2];
            MPI_Datatype st_[2], rt_[2];
            for (k = 0; k < 2; k++) {
                st_[k] = rt_[k] = (me + k) % 2 == 0 ? MPI_INT : MPI_DOUBLE;
                sdis[k] = rdis[k] = (int)(k * sizeof sw[0]) + ((me + k) % 2 == 0 ? 0 : (int)sizeof(double));
                sw[k].i = 10 * me + k;
                sw[k].x = 10.5 * me + k;
                rw[k].i = -1;
                rw[k].x = -1;
            }
            CHECK_MPI(MPI_Alltoallw(sw, cnt, sdis, st_, rw, cnt, rdis, rt_, MPI_COMM_WORLD));
            for (k = 0; k < 2; k++) {
                if ((me + k) % 2 == 0)
                    CHECK(rw[k].i == 10 * k + me, "Alltoallw %d from %d: %d", it, k, rw[k].i);
                else
                    CHECK(rw[k].x == 10.5 * k + me, "Alltoallw %d from %d: %g", it, k, rw[k].x);
            }
        }

        /* Reduce_scatter: 1 int to rank 0, 2 to rank 1 */
        {
            int counts[2] = {1, 2};
            for (k = 0; k < 3; k++)
                a[k] = me * 10 + k + it;
            CHECK_MPI(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            for (k = 0; k < counts[me]; k++) {
                int g = me == 0 ? k : 1 + k;
                CHECK(b[k] == 10 + 2 * (g + it), "Reduce_scatter %d: %d", it, b[k]);
            }
        }

        /* Reduce_scatter_block: 2 ints each */
        for (k = 0; k < 4; k++)
            a[k] = me + k;
        CHECK_MPI(MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (k = 0; k < 2; k++)
            CHECK(b[k] == 1 + 2 * (2 * me + k), "Reduce_scatter_block %d: %d", it, b[k]);

        /* Scan and Exscan of 1 int */
        a[0] = me + 1 + it;
        CHECK_MPI(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(b[0] == (me == 0 ? 1 + it : 3 + 2 * it), "Scan %d: %d", it, b[0]);
        b[0] = -7;
        CHECK_MPI(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (me == 1)
            CHECK(b[0] == 1 + it, "Exscan %d: %d", it, b[0]);

        /* Iallreduce of 3 ints + Wait, Ibarrier + Wait */
        for (k = 0; k < 3; k++)
            a[k] = me * k + it;
        CHECK_MPI(MPI_Iallreduce(a, b, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (k = 0; k < 3; k++)
            CHECK(b[k] == k + 2 * it, "Iallreduce %d: %d", it, b[k]);
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL, "Ibarrier Wait left the request");
    }
    MPI_Finalize();
    return mt_result();
}
