/* What a recorded call costs over a long run, flushes included (issue 18,
 * doc/piggyback.md "The record buffer's pages"): N calls of MPI_Send to MPI_PROC_NULL
 * (one record of about 8 bytes each, no communication), then rank 0 prints ns a call and
 * the minor page faults and CPU times of the loop. 20M calls fill a 32 MiB buffer 5 times.
 *   mpicc.mpich -O2 -o record-cost maint/bench/record-cost.c
 *   VTRACE_DIR=DIR LD_PRELOAD=BUILD/.libs/libvtrace.so mpiexec.mpich -n 1 ./record-cost 20000000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    char buf[8] = {0};
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++)
        MPI_Send(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    getrusage(RUSAGE_SELF, &r1);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%.2f ns/call, minflt %ld, sys %.3f s, user %.3f s\n", (t1 - t0) / (double)n * 1e9,
               r1.ru_minflt - r0.ru_minflt, seconds(r1.ru_stime) - seconds(r0.ru_stime),
               seconds(r1.ru_utime) - seconds(r0.ru_utime));
    MPI_Finalize();
    return 0;
}
