/* A rank that changes its CPU affinity during the run: the trace's placement (written at
 * MPI_Finalize) says the new binding, since the layer looks again when the affinity
 * changed (topo.h, vt_placement_refresh), and the one of MPI_Init otherwise. Rank 1 binds
 * all its threads to the first CPU it may use; rank 0 keeps its binding. */
#define _GNU_SOURCE
#include "mpitest.h"

#include <dirent.h>
#include <sched.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    if (mt_rank == 1) {
        cpu_set_t set;
        CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
        int first = 0;
        while (first < CPU_SETSIZE && !CPU_ISSET(first, &set))
            first++;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        /* every thread of the process (MPI's too), as hwloc_set_cpubind of the process */
        DIR *d = opendir("/proc/self/task");
        CHECK(d != NULL, "cannot list /proc/self/task");
        for (struct dirent *e; d && (e = readdir(d));)
            if (e->d_name[0] != '.')
                CHECK(sched_setaffinity(atoi(e->d_name), sizeof set, &set) == 0, "sched_setaffinity %s failed",
                      e->d_name);
        if (d)
            closedir(d);
        FILE *f = fopen("rebind.cpu", "w");
        CHECK(f != NULL, "cannot write rebind.cpu");
        if (f) {
            fprintf(f, "%d\n", first);
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return mt_result();
}
