/* Many small events on 2 ranks: N ping-pongs of 1 int (tag 90 there, 91 back;
 * N is the first argument, default 20000) and a final Allreduce of a checksum. A
 * second argument "nb": each message by MPI_Isend/MPI_Irecv completed by MPI_Wait or
 * MPI_Waitall, and an MPI_Allreduce every 100 rounds (dropped_skip_nb).
 * Used with a 64 KiB buffer (small_buffer: the buffer is flushed many times) and
 * with the fault-injection hook VTRACE_TEST_FAIL_AFTER (fail_after: the trace is
 * cut short, the application must not notice). With MT_RSS_FILE=F each rank writes
 * its resident memory now and at its peak (VmRSS and VmHWM in kB) to F.RANK before
 * MPI_Finalize (dropped_window). */
#include "mpitest.h"

static void write_rss(const char *prefix)
{
    char path[4096], line[256];
    long now = -1, peak = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "VmRSS: %ld", &now);
        sscanf(line, "VmHWM: %ld", &peak);
    }
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s.%d", prefix, mt_rank);
    f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fprintf(f, "%ld %ld\n", now, peak);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    int size, i, n = 20000, v;
    long sum = 0, total = 0;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "many_events needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1)
        n = atoi(argv[1]);
    int nb = argc > 2 && strcmp(argv[2], "nb") == 0;
    MPI_Request rq;
    for (i = 0; i < n; i++) {
        if (mt_rank == 0 && nb) {
            v = i;
            CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, 1, 90, MPI_COMM_WORLD, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, 1, 91, MPI_COMM_WORLD, &rq));
            CHECK_MPI(MPI_Waitall(1, &rq, &st));
            if (v != 2 * i || st.MPI_TAG != 91)
                CHECK(v == 2 * i && st.MPI_TAG == 91, "round %d: %d tag %d", i, v, st.MPI_TAG);
        } else if (nb) {
            CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, 0, 90, MPI_COMM_WORLD, &rq));
            CHECK_MPI(MPI_Wait(&rq, &st));
            if (v != i || st.MPI_TAG != 90)
                CHECK(v == i && st.MPI_TAG == 90, "round %d: %d tag %d", i, v, st.MPI_TAG);
            v *= 2;
            CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, 0, 91, MPI_COMM_WORLD, &rq));
            CHECK_MPI(MPI_Waitall(1, &rq, &st));
        } else if (mt_rank == 0) {
            v = i;
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 1, 90, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, 91, MPI_COMM_WORLD, &st));
            if (v != 2 * i || st.MPI_TAG != 91)
                CHECK(v == 2 * i && st.MPI_TAG == 91, "round %d: %d tag %d", i, v, st.MPI_TAG);
        } else {
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 90, MPI_COMM_WORLD, &st));
            if (v != i || st.MPI_TAG != 90)
                CHECK(v == i && st.MPI_TAG == 90, "round %d: %d tag %d", i, v, st.MPI_TAG);
            v *= 2;
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 91, MPI_COMM_WORLD));
        }
        sum += v;
        if (nb && i % 100 == 99) {
            long part = v, all = 0;
            CHECK_MPI(MPI_Allreduce(&part, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
            CHECK(all == 2L * i, "round %d: Allreduce gave %ld", i, all);
        }
    }
    CHECK_MPI(MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == 2L * n * (n - 1), "checksum %ld, expected %ld", total, 2L * n * (n - 1));
    if (mt_rank == 0)
        printf("many_events: %d ping-pongs, checksum %ld\n", n, total);
    const char *rss = getenv("MT_RSS_FILE");
    if (rss)
        write_rss(rss);
    MPI_Finalize();
    return mt_result();
}
