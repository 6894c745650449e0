/* vtrace: reads trace directories. Dispatches to one subcommand per file (cmd_*.c);
 * their options and usage errors are args.c's. */
#include "vt_config.h"
#include "tools/tools.h"
#include "util/codec.h"

#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static const vt__command commands[] = {
    {"info", "summary of a trace: ranks, duration, events, messages, profile", vt__cmd_info, vt__usage_info},
    {"dump", "one line (or JSON object) per record", vt__cmd_dump, vt__usage_dump},
    {"whatif", "predicted run time if candidate events were shorter", vt__cmd_whatif, vt__usage_whatif},
    {"domino", "what to fix first: events, ranks, call sites or functions by predicted gain", vt__cmd_domino,
     vt__usage_domino},
    {"reduce", "write the reduced trace of a full trace: what can change a prediction", vt__cmd_reduce, vt__usage_reduce},
    {"period", "where each rank's calls repeat: iterations and their time", vt__cmd_period,
     vt__usage_period},
    {"critical-path", "the chain of events that makes the predicted run time; slack", vt__cmd_critpath,
     vt__usage_critpath},
    {"patterns", "wait states (Late Sender, Late Receiver, collectives) and their cost", vt__cmd_patterns,
     vt__usage_patterns},
    {"clusters", "computation bursts clustered (DBSCAN), timeline, stable region", vt__cmd_clusters,
     vt__usage_clusters},
    {"compensate", "the trace with the layer's per-event overhead removed", vt__cmd_compensate,
     vt__usage_compensate},
    {"export", "the trace in another viewer's format (otf2, paraver, perfetto)", vt__cmd_export, vt__usage_export},
    {"report", "one self-contained HTML page: timeline, critical and domino paths, profile", vt__cmd_report,
     vt__usage_report},
    {"config-vars", "the VTRACE_* settings: type, default, accepted values (--full)", vt__cmd_config_vars,
     vt__usage_config_vars},
    {"synth", "write a synthetic trace of a regular pattern (halo, allreduce, pipeline, ...)", vt__cmd_synth,
     vt__usage_synth},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: vtrace COMMAND [OPTIONS] DIR\n"
                 "       vtrace help [COMMAND]\n"
                 "       vtrace --version\n\n"
                 "Reads a vtrace trace directory (vtrace.defs and rank-NNNNNN.vte files).\n\n"
                 "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "  %-13s %s\n", "help", "this text, or the options of a command");
    fprintf(out, "\n'vtrace COMMAND --help' shows the options of a command.\n"
                 "Exit status: 0 success, 1 bad or unreadable trace, 2 usage error.\n");
}

static const vt__command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
#if defined(__GLIBC__) && defined(M_MXFAST)
    /* No fastbins: at 16K ranks and more the replay frees a rank's small blocks when
     * it finishes, long after they were last touched; fastbins keep them unmerged
     * until a large free walks them all (malloc_consolidate), a cache miss each. Freed
     * straight into the bins (tcache still takes the most recent), the replay of
     * `synth -n 16384 -i 6` misses 5% fewer D1 lines (doc/replay-scale.md). */
    mallopt(M_MXFAST, 0);
#endif
    if (vt__par_start(&argc, &argv)) {
        vt__par_end();
        return VT_EXIT_OK;   /* (a process of vtrace-mpi with nothing to do) */
    }
    int rc = run(argc, argv);
    vt__par_end();
    return rc;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        /* no command at all: the list of commands is what helps */
        fprintf(stderr, "vtrace: missing command\n");
        usage(stderr);
        return VT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("vtrace %s (trace format %d.%d)\n", PACKAGE_VERSION, VT_FORMAT_MAJOR, VT_FORMAT_MINOR);
        return VT_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2) {
            const vt__command *c = find(argv[2]);
            if (!c)
                return vt__usage_error(usage, "unknown command '%s'", argv[2]);
            c->usage(stdout);
            return VT_EXIT_OK;
        }
        usage(stdout);
        return VT_EXIT_OK;
    }
    const vt__command *c = find(cmd);
    if (!c)
        return vt__usage_error(usage, "unknown command '%s'", cmd);
    vt__command_name = c->name;
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vtrace: error writing the output\n");
        return VT_EXIT_ERROR;
    }
    return rc;
}
