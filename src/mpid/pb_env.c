/* The environment the piggyback transport sets before MPI_Init (modes reduced and both):
 * the header adds VT_PB_H bytes to every message, so the MPI's size thresholds that the
 * user's messages crossed without tracing are moved by VT_PB_H, each only when the user
 * has not set it (doc/piggyback.md, "Strategies" and "UCX's inline limit, tenth pass"). */
#include "vt_config.h"
#include "mpid/pb_priv.h"
#include "util/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* UCX's FIFO element of its shared-memory transports (posix and sysv; UCX 1.13's
 * default, `ucx_info -c`): a message that fits it with UCX's own header goes inline. */
#define VT_UCX_FIFO_ELEM 128

static int mode_wants_headers(const char *m)
{
    /* the parser of the configuration (an invalid value ends the run in MPI_Init) */
    enum vt_mode mode;
    return vt_parse_mode(m, &mode) == 0 && (mode == VT_MODE_REDUCED || mode == VT_MODE_BOTH);
}

/* Sets name to value bytes unless it is set already (the user's value is kept). */
static void set_default(const char *name, long value)
{
    if (getenv(name))
        return;
    char v[32];
    snprintf(v, sizeof v, "%ld", value);
    setenv(name, v, 0);
}

/* Whether the MPI may send through UCX. MPICH says its device in the library version
 * (MPI_Get_library_version may be called before MPI_Init): ch4:ucx, not ch4:ofi or ch3.
 * Open MPI chooses its pml (ucx, or ob1 with vader on one node) inside MPI_Init, too
 * late: its pml ucx reads the same variable, which nothing else reads, so it is set. */
static int mpi_may_use_ucx(void)
{
#ifdef OPEN_MPI
    return 1;
#else
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return 0;
    version[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    return strstr(version, "ch4:ucx") != NULL;
#endif
}

/* UCX sends a message inline in a FIFO element of its shared-memory transports; the
 * header pushes payloads within VT_PB_H bytes below that limit out of it (a 64-byte
 * payload: 1.5 times MPI's own instructions). With VTRACE_UCX_INLINE=1 the element is
 * widened by the header, unless the user set its size under any of UCX's names for it
 * (MM_ for both transports; POSIX_ and SYSV_ for one, which take precedence). Not by
 * default: every process of the job must use the same size, or UCX writes past the
 * peer's elements and the job hangs, and a rank in another mode (refused at MPI_Init
 * only after MPI's first messages) or one without the layer would not set it
 * (doc/piggyback.md, "UCX's inline limit, tenth pass": test/mpi/mixed_modes.sh hung
 * with it on by default). */
static void widen_ucx_inline(void)
{
    const char *v = getenv("VTRACE_UCX_INLINE");
    int on = 0;
    if (!v || vt_parse_int(v, 0, 1, &on) || !on)
        return; /* an invalid value: MPI_Init ends the run with the configuration's message */
    if (getenv("UCX_POSIX_FIFO_ELEM_SIZE") || getenv("UCX_SYSV_FIFO_ELEM_SIZE") || !mpi_may_use_ucx())
        return;
    set_default("UCX_MM_FIFO_ELEM_SIZE", VT_UCX_FIFO_ELEM + VT_PB_H);
}

void vt_pb_before_init(void)
{
    if (!mode_wants_headers(getenv("VTRACE_MODE")))
        return;
    /* A header pushes payloads just below the eager limit over it: an exchange that is
     * safe plainly (both ranks send first) would deadlock. UCX decides the limit on
     * MPICH ch4:ucx; raised by the header unless the user chose it. */
    set_default("UCX_RNDV_THRESH", VT_PB_PACK_MAX + VT_PB_H);
#ifdef OPEN_MPI
    /* Open MPI 4.1 on one node (pml ob1, btl vader): btl_vader_eager_limit, 4096 bytes by
     * default, headers included (a send of 4041 payload bytes or more waits for its
     * receive); raised by the header unless the user set it (mpiexec --mca sets it too). */
    set_default("OMPI_MCA_btl_vader_eager_limit", 4096 + VT_PB_H);
#endif
    widen_ucx_inline();
}

/* Also when the library is loaded: MPICH's mpi_f08 MPI_Init calls PMPI_Init itself, so
 * MPI_Init's wrapper never runs there, and UCX reads these variables inside PMPI_Init.
 * Setting them twice is harmless (a value already set is kept). */
__attribute__((constructor)) static void vt_pb_env_at_load(void)
{
    vt_pb_before_init();
}
