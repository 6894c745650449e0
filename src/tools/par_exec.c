/* vtrace under mpiexec: vtrace itself is never linked with MPI, so that a serial run
 * needs no MPI at all. When it sees more than one process (the launcher's PMI_SIZE, or
 * Open MPI's OMPI_COMM_WORLD_SIZE) or is given --parallel, it replaces itself with
 * vtrace-mpi, installed beside it, which is linked with MPI (par_mpi.c). A separate
 * binary rather than a dlopen of libmpi: MPI has no stable ABI across implementations
 * (handles and constants come from mpi.h), so the MPI part must be compiled against the
 * MPI it runs with anyway, and a plain program of that MPI is what mpiexec expects. */
#include "vt_config.h"
#include "tools/tools.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long env_size(void)
{
    const char *v = getenv("PMI_SIZE");
    if (!v)
        v = getenv("OMPI_COMM_WORLD_SIZE");
    return v ? strtol(v, NULL, 10) : 1;
}

/* LD_PRELOAD without libvtrace: the analyzer is never traced. */
static void untrace(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "libvtrace"))
        return;
    char *keep = malloc(strlen(pre) + 1), *copy = strdup(pre);
    if (!keep || !copy) {
        unsetenv("LD_PRELOAD");
        free(keep);
        free(copy);
        return;
    }
    keep[0] = 0;
    for (char *save, *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save))
        if (!strstr(tok, "libvtrace"))
            strcat(strcat(keep, keep[0] ? ":" : ""), tok);
    setenv("LD_PRELOAD", keep, 1);
    free(keep);
    free(copy);
}

int vt__par_start(int *argc, char ***argv)
{
    int forced = *argc > 1 && strcmp((*argv)[1], "--parallel") == 0;
    if (!forced && env_size() <= 1)
        return 0;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
    if (n <= 0) {
        fprintf(stderr, "vtrace: cannot find my own path (/proc/self/exe) to run vtrace-mpi: %s\n", strerror(errno));
        exit(VT_EXIT_ERROR);
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    strcpy(slash ? slash + 1 : self, "vtrace-mpi");
    untrace();
    execv(self, *argv);
    fprintf(stderr, "vtrace: running under mpiexec with %ld processes%s, but cannot run %s: %s (vtrace-mpi is built "
            "with vtrace; run vtrace without mpiexec for a serial analysis)\n", env_size(),
            forced ? " (--parallel)" : "", self, strerror(errno));
    exit(VT_EXIT_ERROR);
}

void vt__par_end(void) {}

const vt_par_comm *vt__par(void) { return NULL; }
