/* Where the trace goes: the directory's default name, spawned worlds' subdirectories,
 * creating the path (tracedir.h). */
#include "vt_config.h"
#include "tracing/tracedir.h"

#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int vt_mkdirs(const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) && errno != EEXIST)
        return -errno;
    return 0;
}

/* Processes started by MPI_Comm_spawn inherit the parents' VTRACE_DIR: their world's
 * trace goes into DIR/spawn-HOST-PID (rank 0's), never over the parents' rank files. */
void vt_spawned_subdir(char *dir, size_t len)
{
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        return;
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    size_t n = strlen(dir);
    snprintf(dir + n, len - n, "/spawn-%s-%ld", host, (long)getpid());
}

void vt_default_dir(char *out, size_t len)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *job = getenv("SLURM_JOB_ID");
    if (!job)
        job = getenv("PBS_JOBID");
    if (!job)
        job = getenv("LSB_JOBID");
    if (job)
        snprintf(out, len, "vtrace-%s-%s", stamp, job);
    else
        snprintf(out, len, "vtrace-%s-%ld", stamp, (long)getpid());
}
