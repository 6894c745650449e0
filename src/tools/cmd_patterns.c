/* vtrace patterns: wait states (Late Sender, Late Receiver, Wrong Order, waits in
 * collectives) and communication costs, with user patterns from plug-ins (patterns.h,
 * vtrace_pattern.h). */
#include "tools/tools.h"
#include "tools/progress.h"
#include "analysis/symbols.h"
#include "analysis/patterns.h"

#include <dlfcn.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_patterns(FILE *out)
{
    fprintf(out, "usage: vtrace patterns [--json] [--pattern NAME]... [--plugin FILE.so]... DIR\n\n"
                 "Wait-state patterns of the trace in DIR (global times), as time lost, by pattern,\n"
                 "then by rank and call site, sorted, with the share of the run time (the sum over\n"
                 "ranks of their durations):\n"
                 "  Late Sender       a receive (or the Wait of an Irecv) entered before its send\n"
                 "  Wrong Order       the part of Late Sender where an earlier-sent message was\n"
                 "                    received later (included in Late Sender)\n"
                 "  Late Receiver     a synchronous send (MPI_Ssend, or a send of VTRACE_MODEL_TRDV\n"
                 "                    bytes or more) entered before its receive was posted\n"
                 "  Wait at Barrier, Wait at NxN (Allreduce, Alltoall, Allgather, ...),\n"
                 "  Early Reduce (root of Reduce/Gather), Late Broadcast (Bcast/Scatter non-roots)\n"
                 "  P2P Communication, Collective Communication, Synchronization\n"
                 "                    time in those calls minus their wait states\n"
                 "On a reduced trace the profile and the recorded messages are exact, wait states\n"
                 "are lower bounds and costs upper bounds (the output says so).\n\n"
                 "  --json            one JSON object per finding: pattern, rank, callsite, symbol,\n"
                 "                    severity_ns, count, share, bound (exact, lower, upper)\n"
                 "  --pattern NAME    list the findings of this pattern only (repeatable; case and\n"
                 "                    '-'/'_' for spaces do not matter: late-sender, wait_at_barrier)\n"
                 "  --plugin FILE.so  also run the user pattern in FILE.so (vtrace_pattern.h);\n"
                 "                    may be repeated\n"
                 VT__USAGE_DEBUG_DIR
                 "  -h, --help        this text\n");
}

#define MAX_PLUGINS 32

static const char *bound_name(int b)
{
    return b == VT_BOUND_LOWER ? "lower" : b == VT_BOUND_UPPER ? "upper" : "exact";
}

static const char *bound_mark(int b)
{
    return b == VT_BOUND_LOWER ? ">=" : b == VT_BOUND_UPPER ? "<=" : "  ";
}

/* module+0xOFFSET and the dynamic symbol; *src the site's function (file:line), "" when
 * it has no debug information. */
static void site_parts(const vt_trace *t, uint32_t rank, int64_t cs, char *site, size_t len, const char **sym,
                       const char **src)
{
    const vt_callsite *c = vt_trace_callsite(t, rank, cs);
    vt_srcloc loc;
    *sym = "";
    *src = c && vt_symbols_resolve(t, rank, cs, &loc) ? vt_site_name(t, rank, cs) : "";
    if (!c) {
        snprintf(site, len, "?");
        return;
    }
    const char *mod = c->module ? c->module : "";
    const char *base = strrchr(mod, '/');
    base = base ? base + 1 : mod;
    if (*base)
        snprintf(site, len, "%s+0x%" PRIx64, base, c->offset);
    else
        snprintf(site, len, "0x%" PRIx64, c->address);
    *sym = c->symbol ? c->symbol : "";
}

/* --pattern: names compared ignoring case, with '-' and '_' for spaces. */
static int same_name(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = *a == '-' || *a == '_' ? ' ' : tolower((unsigned char)*a);
        int y = *b == '-' || *b == '_' ? ' ' : tolower((unsigned char)*b);
        if (x != y)
            return 0;
        if (!x)
            return 1;
    }
}

static const char *const *selected;
static size_t nselected;

static int wanted(const vt_patterns *p, int pattern)
{
    if (!nselected)
        return 1;
    for (size_t i = 0; i < nselected; i++)
        if (same_name(selected[i], p->names[pattern]))
            return 1;
    return 0;
}

static double share(int64_t ns, int64_t total)
{
    return total > 0 ? 100.0 * (double)ns / (double)total : 0.0;
}

static void print_json(const vt_trace *t, const vt_patterns *p)
{
    for (size_t i = 0; i < p->nentries; i++) {
        const vt_pattern_result_entry *e = &p->entries[i];
        char site[512];
        const char *sym, *src;
        int first = 1;
        if (!wanted(p, e->pattern))
            continue;
        site_parts(t, e->rank, e->callsite, site, sizeof site, &sym, &src);
        putchar('{');
        vt__json_key(stdout, &first, "pattern");
        vt__json_str(stdout, p->names[e->pattern]);
        vt__json_key(stdout, &first, "kind");
        fputs(e->pattern >= VT_PAT_NBUILTIN ? "\"plugin\""
                                            : vt_pattern_is_wait(e->pattern) ? "\"wait\"" : "\"cost\"",
              stdout);
        if (e->pattern < VT_PAT_NBUILTIN && vt_pattern_parent(e->pattern)) {
            vt__json_key(stdout, &first, "parent");
            vt__json_str(stdout, vt_pattern_parent(e->pattern));
        }
        vt__json_key(stdout, &first, "rank");
        printf("%" PRIu32, e->rank);
        vt__json_key(stdout, &first, "callsite");
        vt__json_str(stdout, site);
        vt__json_key(stdout, &first, "symbol");
        vt__json_str(stdout, sym);
        vt__json_key(stdout, &first, "source");
        vt__json_str(stdout, src);
        vt__json_key(stdout, &first, "severity_ns");
        printf("%" PRId64, e->severity_ns);
        vt__json_key(stdout, &first, "count");
        printf("%" PRIu64, e->count);
        vt__json_key(stdout, &first, "share");
        printf("%.6f", share(e->severity_ns, p->total_ns) / 100.0);
        vt__json_key(stdout, &first, "bound");
        printf("\"%s\"", bound_name(p->bounds[e->pattern]));
        vt__json_key(stdout, &first, "reduced");
        fputs(p->reduced ? "true" : "false", stdout);
        fputs("}\n", stdout);
    }
}

static void print_text(const vt_trace *t, const char *dir, const vt_patterns *p)
{
    int64_t first = 0, last = 0;
    for (uint32_t q = 0; q < p->nranks; q++) {
        const vt_rank *rk = vt_trace_rank(t, q);
        int64_t a = vt_global_time(t, q, rk->init_time), b = vt_global_time(t, q, rk->fini_time);
        first = q == 0 || a < first ? a : first;
        last = q == 0 || b > last ? b : last;
    }
    printf("wait-state patterns of %s: %" PRIu32 " ranks, run time %.6f s (from MPI_Init's end to MPI_Finalize);\n"
           "shares are of the time of all ranks, %.6f s (each rank's run time, summed)\n",
           dir, p->nranks, (double)(last - first) / 1e9, (double)p->total_ns / 1e9);
    if (p->reduced)
        printf("reduced trace: the per-function profile and the recorded messages are exact; wait states are\n"
               "lower bounds (>=: waits on merged messages are not visible; Wrong Order, Early Reduce and\n"
               "Late Broadcast are not computed), communication costs upper bounds (<=)\n");
    else
        printf("full trace: every figure is exact\n");
    printf("\n%-30s %14s %8s %10s\n", "pattern", "time (s)", "share", "count");
    for (size_t k = 0; k < p->nnames; k++) {
        const char *parent = k < VT_PAT_NBUILTIN ? vt_pattern_parent((enum vt_pattern_id)k) : NULL;
        char name[96];
        snprintf(name, sizeof name, parent ? "  %s (in %s)" : "%s", p->names[k], parent);
        printf("%-30s %s%12.6f %7.2f%% %10" PRIu64 "\n", name, bound_mark(p->bounds[k]),
               (double)p->totals_ns[k] / 1e9, share(p->totals_ns[k], p->total_ns), p->counts[k]);
    }
    int64_t waits = 0;
    for (uint32_t q = 0; q < p->nranks; q++)
        waits += p->rank_wait_ns[q];
    printf("%-30s %s%12.6f %7.2f%%\n", "all wait states", bound_mark(p->bounds[0]), (double)waits / 1e9,
           share(waits, p->total_ns));
    printf("\nby rank (wait states):\n%-6s %14s %8s\n", "rank", "time (s)", "share");
    for (uint32_t q = 0; q < p->nranks; q++)
        printf("%-6" PRIu32 " %s%12.6f %7.2f%%\n", q, bound_mark(p->bounds[0]), (double)p->rank_wait_ns[q] / 1e9,
               share(p->rank_wait_ns[q], p->total_ns));
    printf("\nby pattern, rank and call site:\n%-26s %5s %14s %8s %8s  %s\n", "pattern", "rank", "time (s)", "share",
           "count", "call site");
    for (size_t i = 0; i < p->nentries; i++) {
        const vt_pattern_result_entry *e = &p->entries[i];
        char site[512], both[1024];
        if (!wanted(p, e->pattern))
            continue;
        const char *sym, *src;
        site_parts(t, e->rank, e->callsite, site, sizeof site, &sym, &src);
        snprintf(both, sizeof both, "%s%s%s", site, *sym ? " " : "", sym);
        printf("%-26s %5" PRIu32 " %s%12.6f %7.2f%% %8" PRIu64 "  ", p->names[e->pattern], e->rank,
               bound_mark(p->bounds[e->pattern]), (double)e->severity_ns / 1e9, share(e->severity_ns, p->total_ns),
               e->count);
        if (*src)
            fputs(src, stdout); /* function (file:line): the last column, read as it is */
        else
            vt__text_token(stdout, both);
        putchar('\n');
    }
}

/* --plugin FILE: up to MAX_PLUGINS. */
typedef struct plugin_files {
    const char *v[MAX_PLUGINS];
    size_t n;
} plugin_files;

static int plugin_file(void *dest, const char *val, char *msg, size_t len)
{
    plugin_files *pf = dest;
    if (!*val)
        return -1;
    if (pf->n == MAX_PLUGINS) {
        snprintf(msg, len, "more than %d plug-ins", MAX_PLUGINS);
        return VT_EXIT_USAGE;
    }
    pf->v[pf->n++] = val;
    return 0;
}

int vt__cmd_patterns(int argc, char **argv)
{
    int json = 0;
    const char *dir = NULL;
    plugin_files pf = {.n = 0};
    vt__strlist names = {0};
    const vt__opt opts[] = {
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {NULL, "--pattern", VT_OPT_LIST, .dest = &names},
        {NULL, "--plugin", VT_OPT_CALL, .dest = &pf, .what = "a file", .flags = VT_OPT_EQ | VT_OPT_NEEDS,
         .call = plugin_file},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_patterns, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory", .extra = "more than one trace directory",
                           .extra_plain = 1, .prefix = "patterns: ", .dashdash = 1};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    const char *const *paths = pf.v;
    size_t npaths = pf.n;

    void *handles[MAX_PLUGINS];
    const vtrace_pattern *plugins[MAX_PLUGINS];
    size_t nh = 0;
    int rc = VT_EXIT_OK;
    for (size_t k = 0; k < npaths && rc == VT_EXIT_OK; k++) {
        /* a bare name is a file of the working directory, not a library search */
        char path[4096];
        snprintf(path, sizeof path, "%s%s", strchr(paths[k], '/') ? "" : "./", paths[k]);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *why = dlerror();
            fprintf(stderr, "vtrace: patterns: cannot load plug-in %s: %s\n", paths[k], why ? why : "unknown error");
            rc = VT_EXIT_ERROR;
            break;
        }
        handles[nh++] = h;
        vtrace_pattern_entry entry;
        *(void **)&entry = dlsym(h, VTRACE_PATTERN_ENTRY);
        const vtrace_pattern *pl = entry ? entry() : NULL;
        if (!entry) {
            fprintf(stderr,
                    "vtrace: patterns: %s: no function %s() (not a vtrace patterns plug-in; see vtrace_pattern.h)\n",
                    paths[k], VTRACE_PATTERN_ENTRY);
            rc = VT_EXIT_ERROR;
        } else if (!pl || pl->api_version != VTRACE_PATTERN_API_VERSION || !pl->name || !pl->finish) {
            fprintf(stderr,
                    "vtrace: patterns: %s: %s() returned %s (expected API version %u with a name and a finish "
                    "callback)\n",
                    paths[k], VTRACE_PATTERN_ENTRY, !pl ? "NULL" : "an unusable description",
                    VTRACE_PATTERN_API_VERSION);
            rc = VT_EXIT_ERROR;
        } else {
            plugins[k] = pl;
        }
    }
    /* every --pattern names a built-in pattern or a loaded plug-in's */
    for (size_t k = 0; k < names.n && rc == VT_EXIT_OK; k++) {
        int known = 0;
        for (int b = 0; b < VT_PAT_NBUILTIN && !known; b++)
            known = same_name(names.v[k], vt_pattern_name((enum vt_pattern_id)b));
        for (size_t q = 0; q < npaths && !known; q++)
            known = same_name(names.v[k], plugins[q]->name);
        if (!known) {
            fprintf(stderr, "vtrace: patterns: unknown pattern '%s'; the patterns are:", names.v[k]);
            for (int b = 0; b < VT_PAT_NBUILTIN; b++)
                fprintf(stderr, "%s '%s'", b ? "," : "", vt_pattern_name((enum vt_pattern_id)b));
            for (size_t q = 0; q < npaths; q++)
                fprintf(stderr, ", '%s' (plug-in)", plugins[q]->name);
            fputc('\n', stderr);
            rc = VT_EXIT_USAGE;
        }
    }
    selected = names.v;
    nselected = names.n;
    if (rc == VT_EXIT_OK) {
        vt_error err;
        vt_trace *t;
        vt_patterns *res = NULL;
        if (vt_trace_open(dir, &t, &err)) {
            rc = vt__fail(&err);
        } else {
            vt__note_incomplete(t);
            /* in parallel under vtrace-mpi when the analysis streams or the trace is
             * reduced; else process 0 runs it alone */
            const vt_par_comm *par = vt__par();
            if (par && !vt_patterns_parallel(t, plugins, npaths)) {
                if (par->me == 0)
                    fprintf(stderr, "vtrace: patterns of an incomplete trace, or with a plug-in that sees events, "
                                    "does not run in parallel: process 0 runs it alone\n");
                par = NULL;
            }
            if (vt__par() && !par && vt__par()->me != 0)
                ;   /* (process 0 answers) */
            else if (vt_patterns_analyze_par(t, plugins, npaths, par, &res, &err))
                rc = par && par->me != 0 ? VT_EXIT_ERROR : vt__fail(&err);
            else if (par && par->me != 0)
                ;
            else if (vt__par_stats(par, res->par_stats[0], res->par_stats[1], res->par_stats[2]), json)
                print_json(t, res);
            else
                print_text(t, dir, res);
            vt_patterns_free(res);
            vt_symbols_reset(); /* its cache belongs to this trace */
            vt_trace_close(t);
        }
    }
    fflush(stdout);
    for (size_t k = nh; k > 0; k--)
        dlclose(handles[k - 1]);
    free(names.v);
    return rc;
}
