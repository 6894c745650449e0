/* The ranks' clocks against rank 0's: the TSC scale each rank reads, and the ping-pongs
 * that give each rank's offset at MPI_Init and MPI_Finalize (and the latency L). */
#include "vt_config.h"
#include "tracing/clocksync.h"
#include "tracing/log.h"
#include "util/settings.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYNC_ROUNDS 20
#define CS_HOST_LEN 64

/* Offset of each rank's clock to rank 0's, from the ping-pong with the smallest round
 * trip. Rank 0 is the reference (offset 0). At least SYNC_ROUNDS round trips per rank;
 * more, up to SYNC_MAX_ROUNDS or SYNC_MAX_NS, while the fastest is slower than
 * VT_SYNC_GOOD_RTT (a descheduled rank, on an oversubscribed or noisy machine, makes every
 * round trip of a short series slow: the latency L calibrated from it was seen at 3.5 ms
 * where 0.2 ms is right). The round trips with rank 1 give the spread. */
#define SYNC_MAX_ROUNDS 400
#define SYNC_MAX_NS 200000000

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void vt_clocksync_run(vt_clocksync *cs, int which)
{
    int rank;
    PMPI_Comm_rank(cs->comm, &rank);
    int64_t at = vt_now(), off = 0;
    if (rank == 0) {
        static int64_t rtts[SYNC_MAX_ROUNDS];
        for (int k = 1; k < cs->size; k++) {
            int64_t best = INT64_MAX, res[2] = {0, 0}, begin = vt_now();
            int i = 0;
            /* at MPI_Finalize, a rank of rank 0's host keeps MPI_Init's pair: readers take
             * its offset as 0 (the same-clock flag), and L comes from MPI_Init's rounds */
            int skip = which == 1 && cs->same_clock && cs->same_clock[k];
            if (skip)
                res[0] = INT64_MIN;
            for (; i < SYNC_MAX_ROUNDS && !skip; i++) {
                if (i >= SYNC_ROUNDS && (best <= VT_SYNC_GOOD_RTT || vt_now() - begin > SYNC_MAX_NS))
                    break;
                int64_t t0 = vt_now(), tk;
                PMPI_Send(&t0, 1, MPI_INT64_T, k, 1, cs->comm);
                PMPI_Recv(&tk, 1, MPI_INT64_T, k, 2, cs->comm, MPI_STATUS_IGNORE);
                int64_t t1 = vt_now();
                if (k == 1)
                    rtts[i] = t1 - t0;
                if (t1 - t0 < cs->min_rtt)
                    cs->min_rtt = t1 - t0;
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    res[0] = tk;
                    res[1] = t0 + (t1 - t0) / 2 - tk;
                }
            }
            int64_t stop = INT64_MIN;
            PMPI_Send(&stop, 1, MPI_INT64_T, k, 1, cs->comm);
            PMPI_Send(res, 2, MPI_INT64_T, k, 3, cs->comm);
            if (k == 1 && which == 0) {
                qsort(rtts, (size_t)i, sizeof rtts[0], cmp_i64);
                cs->rtt_median = rtts[i / 2];
                cs->rtt_rounds = i;
            }
        }
    } else {
        for (;;) {
            int64_t t0, tk;
            PMPI_Recv(&t0, 1, MPI_INT64_T, 0, 1, cs->comm, MPI_STATUS_IGNORE);
            if (t0 == INT64_MIN)
                break;
            tk = vt_now();
            PMPI_Send(&tk, 1, MPI_INT64_T, 0, 2, cs->comm);
        }
        int64_t res[2];
        PMPI_Recv(res, 2, MPI_INT64_T, 0, 3, cs->comm, MPI_STATUS_IGNORE);
        at = res[0] == INT64_MIN ? cs->at[0] : res[0];
        /* rank 0's clock, read on its host: the offset is 0, as readers take it (the
         * same-clock flag) and the run-time reduction assumes on one node; the round
         * trips measured only their own noise (milliseconds on a loaded machine) */
        off = res[0] == INT64_MIN ? cs->off[0] : cs->root_clock ? 0 : res[1];
    }
    cs->at[which] = at;
    cs->off[which] = off;
}

/* Rank 0 calibrates the TSC; the ranks of its host take the same scale (their clocks
 * then agree exactly, offsets stay 0), the others calibrate their own. The calibration
 * starts before PMPI_Init (vt_init_begin), so that MPI's start-up, not a wait, makes most
 * or all of its 10 ms. With VTRACE_CLOCK=tsc, rank 0 says why its host does not use the
 * TSC (the ranks of other hosts: VTRACE_CLOCK_USED in the configuration). */
void vt_clocksync_choose(vt_clocksync *cs, int rank)
{
    struct {
        vt_tsc_scale s;
        int ok;
        char host[CS_HOST_LEN];
    } root;
    memset(&root, 0, sizeof root);
    if (rank == 0) {
        int why = vt_clock_calibrate(&cs->mark, cs->choice, &root.s);
        root.ok = why == VT_CLOCK_OK;
        if (why == VT_CLOCK_VARIANT)
            vt_warn("VTRACE_CLOCK=tsc: the processor does not say its TSC is invariant (cpuid 0x80000007 EDX bit 8, "
                    "or constant_tsc and nonstop_tsc in /proc/cpuinfo): the layer reads clock_gettime instead");
        else if (why == VT_CLOCK_UNCALIBRATED && cs->choice == VT_CLOCK_TSC)
            vt_warn("VTRACE_CLOCK=tsc: the TSC could not be calibrated against CLOCK_MONOTONIC (no pair of reads "
                    "within %d cycles): the layer reads clock_gettime instead", VT_CLOCK_LOOSE_CYCLES);
        gethostname(root.host, sizeof root.host - 1);
    }
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, cs->comm);
    char host[CS_HOST_LEN] = {0};
    gethostname(host, sizeof host - 1);
    cs->root_clock = strcmp(host, root.host) == 0;
    if (cs->root_clock) {
        vt_clock_use(root.ok ? &root.s : NULL);
    } else {
        vt_tsc_scale s;
        vt_clock_use(vt_clock_calibrate(&cs->mark, cs->choice, &s) == VT_CLOCK_OK ? &s : NULL);
    }
}
