/* The least a tracer that times every call can cost (issue 18): an LD_PRELOAD library
 * whose MPI_Send and MPI_Recv read the TSC at their enter and exit and store the two
 * readings with the call's kind in a ring in memory, nothing else (no header, no
 * encoding, no call site, no file). maint/bench/clock-floor.sh runs the ping-pong plain,
 * through this library and through vtrace, in the same rounds: the floor's ratio to
 * plain MPI is what the two clock reads of a call and one store cost, which no design of
 * the layer that records each call's enter and exit can go under.
 * Build: mpicc.mpich -O2 -shared -fPIC -o clock-floor.so clock-floor.c */
#include <mpi.h>
#include <stdint.h>
#include <x86intrin.h>

enum { RING = 1 << 16 };
static struct { uint64_t enter, exit; int kind; } ring[RING];
static unsigned next;

static void keep(int kind, uint64_t enter)
{
    unsigned i = next++ & (RING - 1);
    ring[i].enter = enter;
    ring[i].exit = __rdtsc();
    ring[i].kind = kind;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    uint64_t t = __rdtsc();
    int rc = PMPI_Send(buf, count, type, dest, tag, comm);
    keep(0, t);
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    uint64_t t = __rdtsc();
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    keep(1, t);
    return rc;
}
