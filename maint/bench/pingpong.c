/* Ping-pong latency and bandwidth between ranks 0 and 1, and the cost of one recorded
 * event (a loop of MPI_Send to MPI_PROC_NULL, which MPI completes at once).
 * Prints one line per measurement: "name size value" (ns per one-way trip, or ns per
 * call). Run it plain and traced by maint/bench/run-bench.sh, which computes ratios. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "pingpong: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long sizes[] = {0, 8, 64, 1024, 8192, 8240, 65536, 1048576, 4194304};
    char *buf = malloc(4194304);
    memset(buf, 1, 4194304);
    enum { REPS = 7 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        long n = sizes[s];
        int iters = n <= 8192 ? 20000 : n <= 65536 ? 2000 : 100;
        double samples[REPS];
        for (int r = 0; r < REPS; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            for (int i = 0; i < iters; i++) {
                if (rank == 0) {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            samples[r] = (now() - t0) / iters / 2;
        }
        qsort(samples, REPS, sizeof samples[0], cmp);
        if (rank == 0)
            printf("latency_ns %ld %.1f\n", n, samples[REPS / 2]);
    }
    /* Bandwidth: a window of non-blocking 4 MiB messages one way, then an ack. */
    {
        enum { WINDOW = 8, ROUNDS = 10 };
        long n = 4194304 / WINDOW;
        char *big = malloc(4194304);
        memset(big, 2, 4194304);
        MPI_Request reqs[WINDOW];
        MPI_Status sts[WINDOW];
        double samples[REPS];
        for (int r = 0; r < REPS; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            for (int k = 0; k < ROUNDS; k++) {
                for (int w = 0; w < WINDOW; w++) {
                    if (rank == 0)
                        MPI_Isend(big + w * n, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &reqs[w]);
                    else if (rank == 1)
                        MPI_Irecv(big + w * n, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[w]);
                }
                if (rank < 2)
                    MPI_Waitall(WINDOW, reqs, sts);
                if (rank == 0)
                    MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else if (rank == 1)
                    MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            }
            samples[r] = 4194304.0 * ROUNDS / (now() - t0) * 1e3; /* MB/s: now() is in ns */
        }
        qsort(samples, REPS, sizeof samples[0], cmp);
        if (rank == 0)
            printf("bandwidth_MBps %d %.1f\n", 4194304, samples[REPS / 2]);
        free(big);
    }
    /* Cost of one recorded event: calls that do no communication. */
    {
        int iters = 1000000;
        double samples[REPS];
        for (int r = 0; r < REPS; r++) {
            double t0 = now();
            for (int i = 0; i < iters; i++)
                MPI_Send(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
            samples[r] = (now() - t0) / iters;
        }
        qsort(samples, REPS, sizeof samples[0], cmp);
        if (rank == 0)
            printf("call_ns 8 %.2f\n", samples[REPS / 2]);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
