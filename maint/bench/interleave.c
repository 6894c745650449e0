/* Ping-pong variants interleaved in one run (issue 18, fourteenth pass): on this project's
 * 2-core VMs the host's phase changes every few seconds and other jobs share the cores, so
 * ratios of separate runs mislead. Each cycle runs every variant for BLOCK round trips
 * (after 50 unmeasured ones) between ranks 0 and 1; rank 0 prints per variant the median
 * block (ns one way), its ratio to the first variant's median, the median of the
 * cycle-by-cycle ratios ("paired") and the ratio of the lower quartiles (the blocks of the
 * fast phase).
 *   mpiexec.mpich -n 2 [LD_PRELOAD=libvtrace.so] interleave VARIANT...
 *   VARIANT: P<bytes>  PMPI_Send/PMPI_Recv (MPI's own path, even under the layer)
 *            M<bytes>[:<bits>]  MPI_Send/MPI_Recv; <bits> given to vt_abl_set(bits) when
 *            the preloaded library has it (the ablation hooks of branch lat55-abl)
 *   CYCLES (default 200) and BLOCK (default 1000) from the environment. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"

enum { MAXV = 64, MAXBYTES = 4096 };

typedef struct {
    int pmpi, bytes;
    unsigned bits;
} variant;

/* the q-quantile of n values (a sorted copy) */
static double quantile(const double *v, int n, double q)
{
    double *s = malloc((size_t)n * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp);
    double r = s[(int)(q * (n - 1) + 0.5)];
    free(s);
    return r;
}

static int parse(const char *arg, variant *v)
{
    if (arg[0] != 'P' && arg[0] != 'M')
        return -1;
    v->pmpi = arg[0] == 'P';
    char *end;
    long n = strtol(arg + 1, &end, 10);
    v->bits = 0;
    if (end == arg + 1 || n < 0 || n > MAXBYTES)
        return -1;
    v->bytes = (int)n;
    if (*end == ':' && !v->pmpi) {
        const char *b = end + 1;
        v->bits = (unsigned)strtoul(b, &end, 0);
        if (end == b)
            return -1;
    }
    return *end ? -1 : 0;
}

static void trip(const variant *v, int rank, char *buf)
{
    int n = v->bytes, peer = 1 - rank;
    if (v->pmpi) {
        if (rank == 0)
            PMPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        PMPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1)
            PMPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    } else {
        if (rank == 0)
            MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1)
            MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
}

/* one block of variant v: ns per one-way trip */
static double block_of(const variant *v, int rank, int block, char *buf)
{
    for (int i = 0; i < 50; i++)
        trip(v, rank, buf);
    double t0 = now();
    for (int i = 0; i < block; i++)
        trip(v, rank, buf);
    return (now() - t0) / block / 2;
}

static void report(char **names, int nv, const double *t, int cycles)
{
    double *r = malloc((size_t)cycles * sizeof *r);
    double m0 = quantile(t, cycles, 0.5), q0 = quantile(t, cycles, 0.25);
    for (int v = 0; v < nv; v++) {
        const double *tv = t + (size_t)v * cycles;
        for (int k = 0; k < cycles; k++)
            r[k] = tv[k] / t[k];
        double m = quantile(tv, cycles, 0.5), q = quantile(tv, cycles, 0.25);
        printf("%-10s median %8.1f ns %6.3fx  paired %6.3fx  q25 %8.1f ns %6.3fx\n", names[v], m, m / m0,
               quantile(r, cycles, 0.5), q, q / q0);
    }
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nv = argc - 1;
    variant vs[MAXV];
    int bad = size < 2 || nv < 1 || nv > MAXV;
    for (int v = 0; !bad && v < nv; v++)
        bad = parse(argv[v + 1], &vs[v]) != 0;
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 interleave P<bytes>|M<bytes>[:<bits>]... (at most %d)\n", MAXV);
        MPI_Finalize();
        return 2;
    }
    const char *ec = getenv("CYCLES"), *eb = getenv("BLOCK");
    int cycles = ec ? atoi(ec) : 200, block = eb ? atoi(eb) : 1000;
    if (cycles < 1 || block < 1) {
        if (rank == 0)
            fprintf(stderr, "interleave: CYCLES and BLOCK must be positive integers\n");
        MPI_Finalize();
        return 2;
    }
    void (*set)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "vt_abl_set");
    for (int v = 0; !set && rank == 0 && v < nv; v++)
        if (vs[v].bits) {
            fprintf(stderr, "interleave: %s: no vt_abl_set in this process (an ablation build of libvtrace); "
                            "bits ignored\n", argv[v + 1]);
            break;
        }
    double *t = calloc((size_t)nv * (size_t)cycles, sizeof *t);
    static char buf[MAXBYTES];
    memset(buf, 1, sizeof buf);
    for (int k = 0; k < cycles; k++)
        for (int v = 0; v < nv; v++) {
            if (set)
                set(vs[v].bits);
            PMPI_Barrier(MPI_COMM_WORLD);
            t[(size_t)v * cycles + k] = rank < 2 ? block_of(&vs[v], rank, block, buf) : 0;
        }
    if (set)
        set(0);
    if (rank == 0)
        report(argv + 1, nv, t, cycles);
    free(t);
    MPI_Finalize();
    return 0;
}
