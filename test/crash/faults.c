/* A ring exchange whose run ends on one rank (or all) after N iterations: by a fatal
 * signal, MPI_Abort, exit without MPI_Finalize, or normally (none).
 *
 *     faults KIND ITERATIONS [RANK|all] [PAUSE_MS]
 *
 * PAUSE_MS: before the fault, the faulting rank goes on calling MPI (a Barrier on
 * MPI_COMM_SELF every millisecond, a recorded call) for that long, so that a flush timer
 * can fire. Its last calls are an MPI_Isend and an MPI_Recv to and from itself on
 * MPI_COMM_SELF (the send's request is left to the end).
 * KIND: none, segv, bus, term, int, abrt, kill, abort, exit. The faulting rank prints
 * "rank R: fault KIND after N" first, so a test can compare the output with and
 * without tracing. */
#include <mpi.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void fault(const char *kind)
{
    if (!strcmp(kind, "segv")) {
        volatile int *volatile p = NULL;
        *p = 1;
    } else if (!strcmp(kind, "bus")) {
        /* a page of a file past its end */
        FILE *f = tmpfile();
        char *m = f ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0) : MAP_FAILED;
        if (m != MAP_FAILED)
            m[0] = 1;
        raise(SIGBUS);
    } else if (!strcmp(kind, "term")) {
        kill(getpid(), SIGTERM);
    } else if (!strcmp(kind, "int")) {
        kill(getpid(), SIGINT);
    } else if (!strcmp(kind, "abrt")) {
        abort();
    } else if (!strcmp(kind, "kill")) {
        kill(getpid(), SIGKILL);
    } else if (!strcmp(kind, "abort")) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    } else if (!strcmp(kind, "exit")) {
        exit(2);
    }
    sleep(30); /* a signal is on its way */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: faults KIND ITERATIONS [RANK|all] [PAUSE_MS]\n");
        MPI_Finalize();
        return 1;
    }
    const char *kind = argv[1];
    int n = atoi(argv[2]);
    int who = argc > 3 ? (!strcmp(argv[3], "all") ? -1 : atoi(argv[3])) : 1 % size;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double x = rank, y = 0;
    for (int i = 0; i < n; i++) {
        MPI_Sendrecv(&x, 1, MPI_DOUBLE, right, 0, &y, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        x = y + 1;
        if (i % 10 == 9)
            MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    int pause_ms = argc > 4 ? atoi(argv[4]) : 0;
    if (strcmp(kind, "none") && (who < 0 || who == rank)) {
        for (int ms = 0; ms < pause_ms; ms++) {
            MPI_Barrier(MPI_COMM_SELF);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        /* the last call before the fault is a blocking receive, whose record the layer
         * encodes only at the next record, a flush or the end (doc/piggyback.md) */
        MPI_Request self_send;
        MPI_Isend(&x, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, &self_send);
        MPI_Recv(&y, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        printf("rank %d: fault %s after %d\n", rank, kind, n);
        fflush(stdout);
        fault(kind);
    }
    /* the others wait in a receive from the faulting rank (or finish: none) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("done %g\n", x);
    MPI_Finalize();
    return 0;
}
