/* Wait states in collectives of known sizes, 2 ranks (test/patterns/mpi_patterns.sh):
 *   rank 0 20 ms late at MPI_Barrier           Wait at Barrier 20 ms (rank 1)
 *   rank 1 30 ms late at MPI_Allreduce         Wait at NxN 30 ms (rank 0)
 *   root 0 10 ms late at MPI_Bcast             Late Broadcast 10 ms (rank 1)
 *   rank 1 15 ms late at MPI_Reduce (root 0)   Early Reduce 15 ms (rank 0)
 * An MPI_Sendrecv first aligns the ranks (its wait is not checked). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts))
        ;
}

/* The checked calls' enters on the machine's monotonic clock (both ranks run on one
 * host), measured independently of vtrace: "enter RANK PHASE NS" on stdout, printed
 * after the call. On a loaded machine a rank can be descheduled for many ms, so the
 * waits are not the sleeps; check_mpi.py compares vtrace's waits with these. */
static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#define TIMED(rank, phase, call)                                            \
    do {                                                                    \
        long long t_ = now_ns();                                            \
        call;                                                               \
        printf("enter %d %s %lld\n", rank, phase, t_);                      \
        fflush(stdout);                                                     \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "coll_waits: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Sendrecv(&x, 1, MPI_INT, 1 - rank, 9, &y, 1, MPI_INT, 1 - rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        sleep_ms(20);
    TIMED(rank, "barrier", MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        sleep_ms(30);
    TIMED(rank, "allreduce", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0)
        sleep_ms(10);
    TIMED(rank, "bcast", MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 1)
        sleep_ms(15);
    TIMED(rank, "reduce", MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
