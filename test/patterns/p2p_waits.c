/* Point-to-point wait states of known sizes, 2 ranks (test/patterns/mpi_patterns.sh):
 *   A  rank 1 MPI_Recv, rank 0 sends 20 ms later           Late Sender 20 ms (rank 1)
 *   B  rank 1 MPI_Irecv + MPI_Wait, rank 0 sends 30 ms later Late Sender 30 ms (rank 1, MPI_Wait)
 *   C  rank 0 MPI_Ssend, rank 1 receives 20 ms later        Late Receiver 20 ms (rank 0)
 *   D  rank 0 sends tag 4, then tag 5 25 ms later; rank 1 receives tag 5 first
 *                                                            Late Sender + Wrong Order 25 ms (rank 1)
 * Phases are separated by barriers (their waits are not checked). */
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
    int rank, size, x = 0, y = 0;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_waits: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* A */
    if (rank == 0) {
        sleep_ms(20);
        TIMED(rank, "A", MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
    } else {
        TIMED(rank, "A", MPI_Recv(&y, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* B */
    if (rank == 0) {
        sleep_ms(30);
        TIMED(rank, "B", MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
    } else {
        MPI_Irecv(&y, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq);
        TIMED(rank, "B", MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* C */
    if (rank == 0) {
        TIMED(rank, "C", MPI_Ssend(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
    } else {
        sleep_ms(20);
        TIMED(rank, "C", MPI_Recv(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* D */
    if (rank == 0) {
        MPI_Send(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
        sleep_ms(25);
        TIMED(rank, "D", MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    } else {
        TIMED(rank, "D", MPI_Recv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Recv(&y, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
