/* vtrace-mpi: vtrace linked with MPI, which vtrace runs in its place under mpiexec
 * (par_exec.c). The transport of the parallel replay (vt_par_comm): a round is a sparse
 * exchange with nonblocking consensus (Hoefler, Siebert and Lumsdaine's NBX): a
 * synchronous send to each process there is something for, receives of whatever
 * arrives, and a nonblocking barrier once this process's sends are all matched; the
 * round ends when the barrier does. No process learns the others' counts: the cost is
 * the messages and a barrier, O(log P), not O(P). Only process 0 writes: the others'
 * standard output and error go to /dev/null (the results are every process's). */
#include "vt_config.h"
#include "tools/tools.h"

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define TAG_ROUND 7301

static vt_par_comm comm;
static MPI_Comm world;

static int exchange(void *arg, uint8_t *const *out, const size_t *len,
                    int (*deliver)(void *darg, int from, const uint8_t *data, size_t len), void *darg)
{
    (void)arg;
    int P = comm.nproc, n = 0, rc = 0;
    MPI_Request *rq = malloc(sizeof *rq * (size_t)(P + 1));
    if (!rq)
        return -1;
    for (int q = 0; q < P; q++)
        if (len[q] && q != comm.me && len[q] <= INT32_MAX)
            MPI_Issend(out[q], (int)len[q], MPI_BYTE, q, TAG_ROUND, world, &rq[n++]);
        else if (len[q] > INT32_MAX)
            rc = -1;
    MPI_Request bar = MPI_REQUEST_NULL;
    int in_barrier = 0;
    unsigned idle = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (;;) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_ROUND, world, &flag, &st);
        if (flag) {
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            if ((size_t)cnt > cap) {
                free(buf);
                cap = (size_t)cnt;
                if (!(buf = malloc(cap)))
                    cap = 0;
            }
            MPI_Recv(cap ? buf : NULL, cap ? cnt : 0, MPI_BYTE, st.MPI_SOURCE, TAG_ROUND, world, MPI_STATUS_IGNORE);
            if (!cap || (rc == 0 && deliver(darg, st.MPI_SOURCE, buf, (size_t)cnt)))
                rc = -1;
            continue;
        }
        /* nothing arrived: after a while, let a process that shares this core run
         * (MPICH polls; under an oversubscribed mpiexec the others wait for it) */
        if (++idle % 64 == 0)
            sched_yield();
        int done;
        if (!in_barrier) {
            done = 1;
            for (int i = 0; i < n && done; i++)
                MPI_Test(&rq[i], &done, MPI_STATUS_IGNORE);
            if (done) {
                MPI_Ibarrier(world, &bar);
                in_barrier = 1;
            }
        } else {
            MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
            if (done)
                break;
        }
    }
    free(buf);
    free(rq);
    return rc;
}

static int sum(void *arg, int64_t *v, size_t n)
{
    (void)arg;
    for (size_t off = 0; off < n;) {
        int k = n - off > (1u << 30) ? 1 << 30 : (int)(n - off);
        MPI_Request rq;
        int done = 0;
        if (MPI_Iallreduce(MPI_IN_PLACE, v + off, k, MPI_INT64_T, MPI_SUM, world, &rq) != MPI_SUCCESS)
            return -1;
        /* (a test loop that yields: an oversubscribed core still turns over) */
        for (unsigned idle = 1; MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done; idle++)
            if (idle % 64 == 0)
                sched_yield();
        if (!done)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

int vt__par_start(int *argc, char ***argv)
{
    if (*argc > 1 && strcmp((*argv)[1], "--parallel") == 0) {
        (*argv)[1] = (*argv)[0];
        (*argc)--;
        (*argv)++;
    }
    MPI_Init(argc, argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_size(world, &comm.nproc);
    MPI_Comm_rank(world, &comm.me);
    comm.exchange = exchange;
    comm.sum = sum;
    if (comm.me != 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            return 1;
    }
    /* whatif, reduce, patterns and critical-path replay in parallel; process 0 runs the
     * others alone */
    if (*argc > 1 && strcmp((*argv)[1], "whatif") && strcmp((*argv)[1], "reduce") && strcmp((*argv)[1], "patterns") &&
        strcmp((*argv)[1], "critical-path")) {
        if (comm.me != 0)
            return 1;
        if (comm.nproc > 1)
            fprintf(stderr, "vtrace: '%s' does not run in parallel: process 0 runs it alone\n", (*argv)[1]);
    }
    return 0;
}

void vt__par_end(void)
{
    MPI_Comm_free(&world);
    MPI_Finalize();
}

const vt_par_comm *vt__par(void) { return &comm; }
