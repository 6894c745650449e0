/* The piggyback header's fields, read raw: rank 0 sends through the layer (every kind of
 * send the model tells apart), rank 1 receives with PMPI_Recv, past the layer, and writes
 * what each header says to hdr.log; pb_header.check compares it with rank 0's trace
 * (the sending call's sequence number and enter, the model's synchronous and blocking
 * bits, the payload length). Run with VTRACE_MODE=reduced on 2 ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 64
#define BIG 10000   /* above the model's rendezvous threshold (8256): synchronous */

static void raw_recv(FILE *log, int tag, int bytes)
{
    unsigned char *b = calloc(1, (size_t)bytes + H);
    MPI_Status st;
    int n;
    PMPI_Recv(b, bytes + H, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
    PMPI_Get_count(&st, MPI_BYTE, &n);
    uint64_t payload, seq;
    int64_t start;
    memcpy(&payload, b + 8, 8);
    memcpy(&seq, b + 16, 8);
    memcpy(&start, b + 24, 8);
    fprintf(log, "tag=%d count=%d magic=%c%c sync=%d blocking=%d payload=%llu seq=%llu start=%lld\n", tag, n, b[0],
            b[1], (b[3] >> 3) & 1, (b[3] >> 2) & 1, (unsigned long long)payload, (unsigned long long)seq,
            (long long)start);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(1, BIG), *back = calloc(1, 8);
    if (rank == 0) {
        int bsize = BIG + MPI_BSEND_OVERHEAD;
        void *bb = malloc((size_t)bsize), *det;
        MPI_Request r;
        MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Ssend(buf, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        MPI_Buffer_attach(bb, bsize);
        MPI_Bsend(buf, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        MPI_Buffer_detach(&det, &bsize);
        MPI_Isend(buf, BIG, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Send(buf, BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        MPI_Sendrecv(buf, 8, MPI_BYTE, 1, 6, back, 8, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send_init(buf, 16, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
        /* always synchronous whatever the size (not blocking); never, however large */
        MPI_Issend(buf, 8, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Buffer_attach(bb, bsize);
        MPI_Bsend(buf, BIG, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        MPI_Buffer_detach(&det, &bsize);
        free(bb);
    } else if (rank == 1) {
        FILE *log = fopen("hdr.log", "w");
        if (!log)
            MPI_Abort(MPI_COMM_WORLD, 2);
        raw_recv(log, 1, 8);
        raw_recv(log, 2, 8);
        raw_recv(log, 3, 8);
        raw_recv(log, 4, BIG);
        raw_recv(log, 5, BIG);
        raw_recv(log, 6, 8);
        MPI_Send(back, 8, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
        raw_recv(log, 7, 16);
        raw_recv(log, 7, 16);
        raw_recv(log, 8, 8);
        raw_recv(log, 9, BIG);
        fclose(log);
    }
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
