/* Preloaded below libvtrace (maint/bench/reply-path.sh): while cgpair's counted calls run
 * (cgpair built with -DCGPAIR_NO_TOGGLE calls cgreply_arm around them), switches
 * callgrind's collection on when PMPI_Recv returns and off when PMPI_Send is entered, so
 * that what is counted is the reply path of a ping-pong: the work between a message's
 * arrival and the next send (the layer's receive completion and its send's start, and
 * the application's loop). A window still open when the counted calls end (the last
 * receive of rank 0: the loop's exit, a few instructions) is closed and not counted.
 * Prints the windows counted at MPI_Finalize. For plain MPI (no libvtrace above it)
 * MPI_Send, MPI_Recv and MPI_Finalize lead here too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <valgrind/callgrind.h>

static long windows;
static int armed, open_window;

void cgreply_arm(void)
{
    armed = !armed;
    if (!armed && open_window) {
        CALLGRIND_TOGGLE_COLLECT;
        open_window = 0;
    }
}

static void window_off(void)
{
    if (open_window) {
        CALLGRIND_TOGGLE_COLLECT;
        open_window = 0;
        windows++;
    }
}

static void window_on(void)
{
    if (armed && !open_window) {
        open_window = 1;
        CALLGRIND_TOGGLE_COLLECT;
    }
}

#define NEXT(name) static __typeof__(&name) real; if (!real) real = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int PMPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    NEXT(PMPI_Send);
    window_off();
    return real(b, n, t, d, tag, c);
}

int PMPI_Send_c(const void *b, MPI_Count n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    NEXT(PMPI_Send_c);
    window_off();
    return real(b, n, t, d, tag, c);
}

int PMPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    NEXT(PMPI_Recv);
    int rc = real(b, n, t, s, tag, c, st);
    window_on();
    return rc;
}

int PMPI_Recv_c(void *b, MPI_Count n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    NEXT(PMPI_Recv_c);
    int rc = real(b, n, t, s, tag, c, st);
    window_on();
    return rc;
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    return PMPI_Send(b, n, t, d, tag, c);
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    return PMPI_Recv(b, n, t, s, tag, c, st);
}

int PMPI_Finalize(void)
{
    NEXT(PMPI_Finalize);
    fprintf(stderr, "cgreply: %ld windows\n", windows);
    return real();
}

int MPI_Finalize(void)
{
    return PMPI_Finalize();
}
