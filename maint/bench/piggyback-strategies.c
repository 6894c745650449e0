/* Cost of carrying a fixed-size header on every message, by strategy and header size,
 * on this machine's MPI (doc/piggyback.md; piggyback-notes.md measured a prototype):
 *   mpicc.mpich -O2 -o pbstrat maint/bench/piggyback-strategies.c && mpiexec.mpich -n 2 ./pbstrat [REPS]
 * For each payload size and strategy: the one-way latency of a ping-pong (half the
 * round trip), median over REPS rounds of 50 round trips, strategies interleaved round by
 * round so that the machine's noise hits them alike, and the ratio to plain MPI.
 *   plain      MPI_Send/MPI_Recv of the payload (MPI_BYTE)
 *   pack H     header and payload copied into one buffer, sent as H + n bytes; the
 *              receiver receives into a buffer of H + n bytes and copies the payload out
 *   struct H   a struct datatype [H header bytes | the payload] over MPI_BOTTOM, made and
 *              freed for every message (as a wrapper would for a user datatype)
 * H = 64 and 208 (doc/piggyback.md: a small header, or one sized for the worst
 * polynomial of m = 4 variables and K = 8 terms). Plain MPI only: no vtrace. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDTRIPS 50
enum { PLAIN, PACK64, PACK208, STRUCT64, STRUCT208, NSTRAT };
static const char *const names[NSTRAT] = {"plain", "pack 64", "pack 208", "struct 64", "struct 208"};
static const int hsize[NSTRAT] = {0, 64, 208, 64, 208};

static uint8_t *user, *pool, header[256];

static void xfer(int strat, int peer, size_t n, int send)
{
    int h = hsize[strat];
    if (strat == PLAIN) {
        if (send)
            MPI_Send(user, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(user, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strat == PACK64 || strat == PACK208) {
        if (send) {
            memcpy(pool, header, (size_t)h);
            memcpy(pool + h, user, n);
            MPI_Send(pool, (int)(n + (size_t)h), MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        } else {
            MPI_Recv(pool, (int)(n + (size_t)h), MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memcpy(header, pool, (size_t)h);
            memcpy(user, pool + h, n);
        }
    } else {
        int len[2] = {h, (int)n};
        MPI_Aint disp[2];
        MPI_Datatype types[2] = {MPI_BYTE, MPI_BYTE}, t;
        MPI_Get_address(header, &disp[0]);
        MPI_Get_address(user, &disp[1]);
        MPI_Type_create_struct(2, len, disp, types, &t);
        MPI_Type_commit(&t);
        if (send)
            MPI_Send(MPI_BOTTOM, 1, t, peer, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(MPI_BOTTOM, 1, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Type_free(&t);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (size != 2) {
        if (!rank)
            fprintf(stderr, "run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const size_t sizes[] = {8, 64, 1024, 8000, 8192, 65536, 262144, 4194304};
    size_t maxn = sizes[sizeof sizes / sizeof sizes[0] - 1];
    user = malloc(maxn);
    pool = malloc(maxn + 256);
    memset(user, 1, maxn);
    memset(header, 2, sizeof header);
    int peer = 1 - rank;
    if (!rank)
        printf("%9s %-11s %12s %8s\n", "bytes", "strategy", "latency_us", "ratio");
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        int rt = n >= 262144 ? 10 : ROUNDTRIPS;
        double *lat = calloc((size_t)reps * NSTRAT, sizeof *lat);
        for (int r = 0; r < reps; r++) {
            for (int s = 0; s < NSTRAT; s++) {
                MPI_Barrier(MPI_COMM_WORLD);
                xfer(s, peer, n, rank == 0); /* warm-up */
                xfer(s, peer, n, rank == 1);
                double t0 = MPI_Wtime();
                for (int k = 0; k < rt; k++) {
                    xfer(s, peer, n, rank == 0);
                    xfer(s, peer, n, rank == 1);
                }
                lat[s * reps + r] = (MPI_Wtime() - t0) / rt / 2 * 1e6;
            }
        }
        if (!rank) {
            double plain = 0;
            for (int s = 0; s < NSTRAT; s++) {
                qsort(lat + s * reps, (size_t)reps, sizeof *lat, cmp);
                double med = lat[s * reps + reps / 2];
                if (s == PLAIN)
                    plain = med;
                printf("%9zu %-11s %12.3f %8.2f\n", n, names[s], med, med / plain);
            }
        }
        free(lat);
    }
    MPI_Finalize();
    return 0;
}
