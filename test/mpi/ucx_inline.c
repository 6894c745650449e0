/* UCX's inline limit widened by the header (src/mpid/pb_env.c): what MPI_Init's wrapper
 * left in UCX_MM_FIFO_ELEM_SIZE, against UI_WANT (ucx_inline.sh): a number, or "unset".
 * The rule, restated: with VTRACE_UCX_INLINE=1 the layer sets 192 (UCX's 128 + the
 * 64-byte header), only in the modes with headers, only on an MPI over UCX, and never
 * over a value of the user's; an MPICH whose device is not ch4:ucx must leave it unset
 * (UI_USER=1: the case set it itself, kept on any MPI). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    const char *want = getenv("UI_WANT");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
#if defined(MPICH) && !defined(OPEN_MPI)
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    if (!strstr(version, "ch4:ucx") && !getenv("UI_USER"))
        want = "unset";
#endif
    const char *v = getenv("UCX_MM_FIFO_ELEM_SIZE");
    CHECK(want != NULL, "UI_WANT is not set (testlist)");
    if (want)
        CHECK(!strcmp(v ? v : "unset", want), "UCX_MM_FIFO_ELEM_SIZE=%s, expected %s", v ? v : "(unset)", want);
    /* the message size the setting is for: 64 payload bytes, 128 with the header */
    char buf[64] = {0};
    int peer = mt_rank ^ 1;
    MPI_Status st;
    if (peer < 2)
        CHECK_MPI(MPI_Sendrecv_replace(buf, 64, MPI_BYTE, peer, 1, peer, 1, MPI_COMM_WORLD, &st));
    MPI_Finalize();
    return mt_result();
}
