/* The record buffer in huge pages (issue 18, src/util/hugemem.c): the minor page faults
 * of the process while its records fill BP_MB megabytes of a buffer that holds them,
 * against at most BP_MAX_FAULTS (buffer_pages.sh: the kernel's transparent huge pages
 * allow it). In 4 KiB pages every 4096 bytes of records fault once (on a virtual machine
 * about 3.7 us each, 7 ns an 8-byte record). */
#include "mpitest.h"

#include <sys/mman.h>
#include <sys/resource.h>

static long minflt(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_minflt;
}

/* Whether this machine gives huge pages at all (a container may show the setting and
 * not have them): 4 MiB of the program's own, advised, written every 4 KiB. */
static int huge_pages_work(void)
{
    size_t len = (size_t)4 << 20;
    void *p;
    if (posix_memalign(&p, (size_t)2 << 20, len))
        return 0;
    int ok = 0;
#ifdef MADV_HUGEPAGE
    if (!madvise(p, len, MADV_HUGEPAGE)) {
        long f0 = minflt();
        for (size_t i = 0; i < len; i += 4096)
            ((volatile char *)p)[i] = 1;
        ok = minflt() - f0 <= 64;
    }
#endif
    free(p);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    const char *mb = getenv("BP_MB"), *max = getenv("BP_MAX_FAULTS");
    CHECK(mb && max, "BP_MB and BP_MAX_FAULTS must be set (buffer_pages.sh)");
    if (mb && max && !huge_pages_work())
        printf("no huge pages here: 4 MiB advised MADV_HUGEPAGE took more than 64 faults\n");
    else if (mb && max) {
        /* MPI_Send to MPI_PROC_NULL: a record of about 8 bytes, no communication */
        long calls = atol(mb) * (1L << 20) / 8;
        char byte = 0;
        long f0 = minflt();
        for (long i = 0; i < calls; i++)
            CHECK_MPI(MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        long faults = minflt() - f0;
        printf("%ld calls, %ld minor page faults\n", calls, faults);
        CHECK(faults <= atol(max), "%ld minor page faults while recording %ld calls, expected at most %s", faults,
              calls, max);
    }
    MPI_Finalize();
    return mt_result();
}
