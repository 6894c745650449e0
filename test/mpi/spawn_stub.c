/* Stand-ins for the C entry points of process creation and connection (PMPI_Comm_spawn,
 * PMPI_Comm_spawn_multiple, PMPI_Comm_accept, PMPI_Comm_connect) for test/mpi/f90_spawn.sh:
 * each writes the C arguments it receives to spawn_stub.RANK.log and returns MPI_SUCCESS
 * with MPI_COMM_NULL and error codes 100, 101, ... instead of creating or connecting
 * anything. Defined in the program (exported), they take the place of the MPI library's
 * for every caller: Open MPI's own Fortran binding (the plain build) and libvtrace's (the
 * traced one), so the two logs show whether both hand the C layer the same strings. */
#include <mpi.h>
#include <stdio.h>

static FILE *stub_log(void)
{
    static FILE *f;
    if (!f) {
        int rank = 0;
        char name[64];
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        snprintf(name, sizeof name, "spawn_stub.%d.log", rank);
        f = fopen(name, "w");
    }
    return f;
}

static void put_argv(FILE *f, char **argv)
{
    if (argv == MPI_ARGV_NULL) {
        fprintf(f, " argv=MPI_ARGV_NULL");
        return;
    }
    fprintf(f, " argv={");
    for (int i = 0; argv[i]; i++)
        fprintf(f, "%s[%s]", i ? "," : "", argv[i]);
    fprintf(f, "}");
}

static void put_info(FILE *f, MPI_Info info)
{
    int n = 0;
    char key[MPI_MAX_INFO_KEY + 1], val[64];
    if (info == MPI_INFO_NULL) {
        fprintf(f, " info=NULL");
        return;
    }
    PMPI_Info_get_nkeys(info, &n);
    fprintf(f, " info={");
    for (int i = 0; i < n; i++) {
        int flag = 0;
        PMPI_Info_get_nthkey(info, i, key);
        PMPI_Info_get(info, key, (int)sizeof val - 1, val, &flag);
        fprintf(f, "%s%s=[%s]", i ? "," : "", key, flag ? val : "?");
    }
    fprintf(f, "}");
}

static void put_end(FILE *f, int root, MPI_Comm comm, MPI_Comm *out, int *errcodes, int n)
{
    fprintf(f, " root=%d comm=%s", root, comm == MPI_COMM_WORLD ? "WORLD" : comm == MPI_COMM_SELF ? "SELF" : "other");
    if (n < 0)
        ; /* (no error codes) */
    else if (errcodes == MPI_ERRCODES_IGNORE)
        fprintf(f, " errcodes=MPI_ERRCODES_IGNORE");
    else
        for (int i = 0; i < n; i++)
            errcodes[i] = 100 + i;
    fprintf(f, "\n");
    fflush(f);
    *out = MPI_COMM_NULL;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    FILE *f = stub_log();
    fprintf(f, "spawn command=[%s]", command);
    put_argv(f, argv);
    fprintf(f, " maxprocs=%d", maxprocs);
    put_info(f, info);
    put_end(f, root, comm, intercomm, array_of_errcodes, maxprocs);
    return MPI_SUCCESS;
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                             MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    FILE *f = stub_log();
    int n = 0;
    fprintf(f, "spawn_multiple count=%d", count);
    for (int i = 0; i < count; i++) {
        fprintf(f, " | command=[%s]", array_of_commands[i]);
        if (array_of_argv == MPI_ARGVS_NULL)
            fprintf(f, " argvs=MPI_ARGVS_NULL");
        else
            put_argv(f, array_of_argv[i]);
        fprintf(f, " maxprocs=%d", array_of_maxprocs[i]);
        put_info(f, array_of_info[i]);
        n += array_of_maxprocs[i];
    }
    fprintf(f, " |");
    put_end(f, root, comm, intercomm, array_of_errcodes, n);
    return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    FILE *f = stub_log();
    fprintf(f, "accept port=[%s]", port_name);
    put_info(f, info);
    put_end(f, root, comm, newcomm, NULL, -1);
    return MPI_SUCCESS;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    FILE *f = stub_log();
    fprintf(f, "connect port=[%s]", port_name);
    put_info(f, info);
    put_end(f, root, comm, newcomm, NULL, -1);
    return MPI_SUCCESS;
}
