/* rt_recv_stage: what a blocking MPI_Recv shows the program when the run-time reduction
 * receives small messages into its own stage (pb_fast.h, vt__rt_recv_stage: payloads up
 * to VT_PB_LOCAL_STAGE - VT_PB_H = 2048 bytes) and folds them at the call's exit
 * (vt_rt_recv_call). For every size around the stage's limit and the copy's inline
 * sizes, with the named source and tag, with MPI_ANY_SOURCE and MPI_ANY_TAG, with a
 * capacity larger than the message and with MPI_STATUS_IGNORE: the status's source, tag,
 * count and element count, the data, and the user's bytes past the message untouched.
 * Each message is answered the same way, and the whole exchange repeated, so that the
 * receives take the folded path (the difference current) as well as the general one.
 * testlist runs it with VTRACE_MODE=both and RUN_RT=yes: the reduced trace must be
 * `vtrace reduce` of the full one. */
#include "mpitest.h"

#include <stdint.h>

#define CANARY 0xa5
#define SLACK 16

static const int sizes[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025,
                            2039, 2040, 2047, 2048, 2049, 2056, 4096};

static unsigned char pattern(int size, int round, int i)
{
    return (unsigned char)(size * 31 + round * 7 + i * 13 + 1);
}

static void fill(unsigned char *b, int n, int size, int round)
{
    for (int i = 0; i < n; i++)
        b[i] = pattern(size, round, i);
}

/* The receive's checks: status (unless ignored), data, canaries past the message. */
static void check_received(const unsigned char *b, int cap, int n, int size, int round, const MPI_Status *st,
                           int src, int tag, const char *how)
{
    if (st) {
        int count = -1, elements = -1;
        MPI_Get_count(st, MPI_BYTE, &count);
        MPI_Get_elements(st, MPI_BYTE, &elements);
        CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == n && elements == n,
              "%s, %d bytes, round %d: source %d tag %d count %d elements %d (expected %d %d %d)", how, size,
              round, st->MPI_SOURCE, st->MPI_TAG, count, elements, src, tag, n);
    }
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (b[i] != pattern(size, round, i))
            bad = i;
    CHECK(bad < 0, "%s, %d bytes, round %d: byte %d is %d, expected %d", how, size, round, bad,
          bad < 0 ? 0 : b[bad], bad < 0 ? 0 : pattern(size, round, bad));
    for (int i = n; i < cap + SLACK; i++)
        if (b[i] != CANARY) {
            CHECK(b[i] == CANARY, "%s, %d bytes, round %d: byte %d past the message written (%d)", how, size,
                  round, i, b[i]);
            break;
        }
}

/* One message from `from` to `to`, received in one of four ways (WAY). */
static void one(int me, int from, int to, int size, int round, int way, unsigned char *sbuf, unsigned char *rbuf)
{
    int tag = 100 + size % 1000;
    if (me == from) {
        fill(sbuf, size, size, round);
        CHECK_MPI(MPI_Send(sbuf, size, MPI_BYTE, to, tag, MPI_COMM_WORLD));
        return;
    }
    int cap = way == 2 ? size + 5 : size;
    memset(rbuf, CANARY, (size_t)cap + SLACK);
    MPI_Status st;
    static const char *const how[] = {"named source and tag", "MPI_ANY_SOURCE and MPI_ANY_TAG",
                                      "a larger capacity", "MPI_STATUS_IGNORE"};
    switch (way) {
    case 0: CHECK_MPI(MPI_Recv(rbuf, cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st)); break;
    case 1: CHECK_MPI(MPI_Recv(rbuf, cap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st)); break;
    case 2: CHECK_MPI(MPI_Recv(rbuf, cap, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st)); break;
    default: CHECK_MPI(MPI_Recv(rbuf, cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); break;
    }
    check_received(rbuf, cap, size, size, round, way == 3 ? NULL : &st, from, tag, how[way]);
}

/* Doubles across the stage's limit: 255, 256 and 257 of them (2040, 2048, 2056 bytes). */
static void doubles(int me, int round)
{
    for (int n = 255; n <= 257; n++) {
        double s[260], r[260];
        if (me == 0) {
            for (int i = 0; i < n; i++)
                s[i] = round * 1000.0 + i + 0.5;
            CHECK_MPI(MPI_Send(s, n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            for (int i = 0; i < 260; i++)
                r[i] = -1.0;
            CHECK_MPI(MPI_Recv(r, 258, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, 7, n, MPI_DOUBLE);
            int bad = -1;
            for (int i = 0; i < n && bad < 0; i++)
                if (r[i] != round * 1000.0 + i + 0.5)
                    bad = i;
            CHECK(bad < 0 && r[n] == -1.0, "%d doubles, round %d: element %d wrong or element %d written", n,
                  round, bad, n);
        }
    }
}

int main(int argc, char **argv)
{
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mt_rank = me;
    if (np != 2) {
        fprintf(stderr, "rt_recv_stage: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    enum { MAX = 4096 + 5 + SLACK };
    unsigned char *sbuf = malloc(MAX), *rbuf = malloc(MAX);
    for (int round = 0; round < 4; round++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int way = 0; way < 4; way++) {
                one(me, 0, 1, sizes[k], round, way, sbuf, rbuf);
                one(me, 1, 0, sizes[k], round, way, sbuf, rbuf);
            }
        doubles(me, round);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return mt_result();
}
