/* vtrace clusters: the clustering of computation bursts (DBSCAN), the clusters'
 * timeline and the representative stable region, offline (clusters.h). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "analysis/clusters.h"
#include "tools/progress.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COUNTERS_NOTE                                                                                                  \
    "hardware counters unavailable (vtrace traces carry none, such as instructions or IPC): the "                    \
    "features are log10(burst duration) and the call site of the call that ends the burst (bursts "                 \
    "of different call sites are never in one cluster)"

void vt__usage_clusters(FILE *out)
{
    fprintf(out, "usage: vtrace clusters [--eps E] [--min-points K] [--windows W] [--threshold P] [--tolerance P]\n"
                 "                       [--stable N] [--timeline N] [--floor NS] [--json] [--quiet] DIR\n"
                 "Clusters the computation bursts (the time between two consecutive calls of a rank) with\n"
                 "DBSCAN and finds a representative stable region (a stretch of time windows whose\n"
                 "clusters stay the same). Hardware counters are not in vtrace traces: the features are\n"
                 "log10(duration) and the call site ending the burst. Exact 1-D DBSCAN per call site\n"
                 "over the sorted durations (no sampling).\n\n"
                 "  --eps E         DBSCAN radius in decades of duration (default 0.05: a factor 1.12)\n"
                 "  --min-points K  bursts within eps that make a core point, itself included (default 5)\n"
                 "  --windows W     time windows of the stability tracking (default 20)\n"
                 "  --all-windows   one line per window (without it: one per run of windows alike)\n"
                 "  --threshold P   a window is stable when clusters matched with the previous window's\n"
                 "                  hold more than P%% of its computation time (default 90)\n"
                 "  --tolerance P   matching margin on the duration ranges, in %% (default 10)\n"
                 "  --stable N      the region: the first N consecutive stable windows (default 3)\n"
                 "  --timeline N    characters per rank in the timeline (default 60)\n"
                 "  --floor NS      durations under NS ns count as NS (default 1000: the bursts of a\n"
                 "                  few ns of a call site make one cluster, not one per clock tick)\n"
                 "  --json          one JSON object: clusters, noise, timeline, windows, region\n"
                 VT__USAGE_DEBUG_DIR
                 "  --quiet         no progress display\n");
}

static void progress_cb(void *arg, uint64_t n)
{
    vt__progress_update(arg, n);
}

/* "MPI_Send at site" / "site" / "MPI_Send (call site unknown)" / "unknown". */
static void key_label(const vt_trace *t, const vt_cl_key *k, char *buf, size_t len, char *site, size_t slen,
                      const char **fname, const vt_callsite **cs)
{
    const vt_function *f = k->fn >= 0 ? vt_trace_function(t, k->rank, k->fn) : NULL;
    *cs = k->callsite >= 0 ? vt_trace_callsite(t, k->rank, k->callsite) : NULL;
    *fname = f ? f->name : NULL;
    site[0] = 0;
    if (*cs)
        snprintf(site, slen, "%s", vt_site_name(t, k->rank, k->callsite));
    if (*cs && f)
        snprintf(buf, len, "%s at %s", f->name, site);
    else if (*cs)
        snprintf(buf, len, "%s", site);
    else if (f)
        snprintf(buf, len, "%s (call site unknown)", f->name);
    else
        snprintf(buf, len, "unknown call site");
}

static char tl_char(int32_t c)
{
    if (c < 0)
        return ' ';
    if (c == 0)
        return '.';
    if (c <= 9)
        return (char)('0' + c);
    if (c <= 35)
        return (char)('A' + c - 10);
    if (c <= 61)
        return (char)('a' + c - 36);
    return '+';
}

static double pct(int64_t a, int64_t b)
{
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_windows(const vt_cl_result *r)
{
    printf("%7s %12s %12s %10s %9s %9s %9s  %s\n", "window", "start_ms", "end_ms", "bursts", "clusters", "noise",
           "matched", "stable");
    for (uint32_t w = 0; w < r->nwindows; w++) {
        const vt_cl_window *x = &r->windows[w];
        printf("%7u %12.3f %12.3f %10" PRIu64 " %9u %9" PRIu64 " %8.1f%%  %s\n", w, x->start / 1e6, x->end / 1e6,
               x->bursts, x->clusters, x->noise, pct(x->matched, x->time),
               w == 0 ? "-" : x->stable ? "yes" : "no");
    }
}

/* One line per run of consecutive windows with the same stability, with the ranges of
 * their figures; why nothing clusters when no window has a cluster. */
static void print_window_runs(const vt_cl_result *r, const vt_cl_params *p)
{
    uint32_t clustered = 0;
    printf("%13s %12s %12s %11s %11s %13s  %s  (--all-windows: each window)\n", "windows", "start_ms", "end_ms",
           "bursts", "clusters", "matched", "stable");
    for (uint32_t w = 0; w < r->nwindows;) {
        int st = w == 0 ? -1 : r->windows[w].stable;
        uint32_t e = w + 1;
        while (e < r->nwindows && r->windows[e].stable == st && st >= 0)
            e++;
        uint64_t b0 = UINT64_MAX, b1 = 0;
        uint32_t c0 = UINT32_MAX, c1 = 0;
        double m0 = 1e9, m1 = -1;
        for (uint32_t k = w; k < e; k++) {
            const vt_cl_window *x = &r->windows[k];
            double m = pct(x->matched, x->time);
            b0 = x->bursts < b0 ? x->bursts : b0, b1 = x->bursts > b1 ? x->bursts : b1;
            c0 = x->clusters < c0 ? x->clusters : c0, c1 = x->clusters > c1 ? x->clusters : c1;
            m0 = m < m0 ? m : m0, m1 = m > m1 ? m : m1;
            clustered += x->clusters > 0;
        }
        char ws[32], bs[32], cs[32], ms[32];
        snprintf(ws, sizeof ws, e - w > 1 ? "%u-%u" : "%u", w, e - 1);
        snprintf(bs, sizeof bs, b0 == b1 ? "%" PRIu64 : "%" PRIu64 "-%" PRIu64, b0, b1);
        snprintf(cs, sizeof cs, c0 == c1 ? "%u" : "%u-%u", c0, c1);
        snprintf(ms, sizeof ms, m0 == m1 ? "%.1f%%" : "%.1f-%.1f%%", m0, m1);
        printf("%13s %12.3f %12.3f %11s %11s %13s  %s\n", ws, r->windows[w].start / 1e6, r->windows[e - 1].end / 1e6,
               bs, cs, ms, st < 0 ? "- (the first)" : st ? "yes" : "no");
        w = e;
    }
    if (r->nwindows && !clustered)
        printf("no window has a cluster: none has %u bursts of one call site within %g decades of duration\n"
               "(--min-points); fewer --windows make longer windows\n",
               p->min_points, p->eps);
}

static void print_text(const vt_trace *t, const vt_cl_result *r, const vt_cl_params *p, int all_windows)
{
    printf("computation bursts: %zu on %u ranks, %.3f ms of computation%s\n", r->nbursts, r->nranks, r->time / 1e6,
           r->reduced ? " (a reduced trace: only its candidate bursts, CAND records, are seen)" : "");
    printf("features: %s\n", COUNTERS_NOTE);
    printf("method: exact 1-D DBSCAN per call site over the sorted log10 durations (eps %g decades, "
           "min-points %u, durations under %u ns counted as %u ns), every burst clustered, no sampling\n",
           p->eps, p->min_points, p->floor_ns, p->floor_ns);
    printf("clusters: %zu; noise: %" PRIu64 " bursts, %.3f ms (%.1f%% of computation time)\n\n", r->nclusters,
           r->noise, r->noise_time / 1e6, pct(r->noise_time, r->time));
    if (r->nclusters) {
        printf("%7s %10s %12s %6s %5s %12s %12s %12s %12s  %s\n", "cluster", "bursts", "time_ms", "share", "ranks",
               "mean_us", "min_us", "max_us", "stddev_us", "call site");
        for (size_t i = 0; i < r->nclusters; i++) {
            const vt_cl_cluster *c = &r->clusters[i];
            char label[1100], site[512];
            const char *fn;
            const vt_callsite *cs;
            key_label(t, &r->keys[c->key], label, sizeof label, site, sizeof site, &fn, &cs);
            printf("%7u %10" PRIu64 " %12.3f %5.1f%% %5u %12.3f %12.3f %12.3f %12.3f  %s\n", c->id, c->bursts,
                   c->time / 1e6, pct(c->time, r->time), c->ranks, c->mean / 1e3, c->min / 1e3, c->max / 1e3,
                   c->stddev / 1e3, label);
        }
        putchar('\n');
    }
    printf("timeline: %u windows of %.3f ms from %.3f ms; per rank the cluster with the most computation time "
           "(1-9, A-Z, a-z; '+' beyond 61; '.' noise; ' ' no computation)\n",
           r->ntimeline, r->tl_width / 1e6, r->t0 / 1e6);
    for (uint32_t k = 0; k < r->nranks; k++) {
        printf("  rank %-6u |", k);
        for (uint32_t w = 0; w < r->ntimeline; w++)
            putchar(tl_char(r->dominant[(size_t)k * r->ntimeline + w]));
        printf("|\n");
    }
    printf("\nstability: %u windows; a window is stable when its clusters matched with the previous window's "
           "(same call site, duration ranges overlapping with a %g%% margin) hold more than %g%% of its "
           "computation time\n",
           r->nwindows, p->tolerance * 100, p->threshold * 100);
    if (all_windows)
        print_windows(r);
    else
        print_window_runs(r, p);
    const vt_cl_region *g = &r->region;
    if (g->found) {
        printf("\nrepresentative region: windows %u-%u, %.3f ms to %.3f ms (%u stable windows in a row; stable "
               "until window %u)\n",
               g->first, g->last, g->start / 1e6, g->end / 1e6, p->min_stable, g->stretch_last);
        if (g->iter_source == 1)
            printf("iterations: %" PRIu64 " (iteration markers of rank %u)\n", g->iterations, g->iter_rank);
        else if (g->iter_source == 2)
            printf("iterations: %" PRIu64 " (rank %u's bursts repeat with a period of %u bursts)\n", g->iterations,
                   g->iter_rank, g->period);
        else
            printf("iterations: not detected\n");
    } else {
        printf("\nrepresentative region: none (no %u consecutive stable windows; the longest run: %u", p->min_stable,
               g->longest);
        if (g->longest)
            printf(" from window %u", g->longest_first);
        printf(")\n");
    }
}

static void print_json(const vt_trace *t, const vt_cl_result *r, const vt_cl_params *p)
{
    int first = 1;
    putchar('{');
    vt__json_key(stdout, &first, "bursts");
    printf("%zu", r->nbursts);
    vt__json_key(stdout, &first, "ranks");
    printf("%u", r->nranks);
    vt__json_key(stdout, &first, "computation_ns");
    printf("%" PRId64, r->time);
    vt__json_key(stdout, &first, "reduced");
    fputs(r->reduced ? "true" : "false", stdout);
    vt__json_key(stdout, &first, "bursts_seen");
    vt__json_str(stdout, r->reduced ? "candidate bursts only (CAND records of a reduced trace)" : "all");
    vt__json_key(stdout, &first, "hardware_counters");
    vt__json_str(stdout, "unavailable");
    vt__json_key(stdout, &first, "features");
    fputs("[\"log10_duration\",\"call_site\"]", stdout);
    vt__json_key(stdout, &first, "features_note");
    vt__json_str(stdout, COUNTERS_NOTE);
    vt__json_key(stdout, &first, "method");
    vt__json_str(stdout, "exact 1-D DBSCAN per call site over sorted log10 durations; no sampling");
    vt__json_key(stdout, &first, "eps");
    printf("%.17g", p->eps);
    vt__json_key(stdout, &first, "min_points");
    printf("%u", p->min_points);
    vt__json_key(stdout, &first, "floor_ns");
    printf("%u", p->floor_ns);

    vt__json_key(stdout, &first, "clusters");
    putchar('[');
    for (size_t i = 0; i < r->nclusters; i++) {
        const vt_cl_cluster *c = &r->clusters[i];
        char label[1100], site[512];
        const char *fn;
        const vt_callsite *cs;
        key_label(t, &r->keys[c->key], label, sizeof label, site, sizeof site, &fn, &cs);
        int f = 1;
        printf("%s{", i ? "," : "");
        vt__json_key(stdout, &f, "id");
        printf("%u", c->id);
        vt__json_key(stdout, &f, "bursts");
        printf("%" PRIu64, c->bursts);
        vt__json_key(stdout, &f, "ranks");
        printf("%u", c->ranks);
        vt__json_key(stdout, &f, "time_ns");
        printf("%" PRId64, c->time);
        vt__json_key(stdout, &f, "share");
        printf("%.6f", r->time > 0 ? (double)c->time / (double)r->time : 0.0);
        vt__json_key(stdout, &f, "duration_ns");
        printf("{\"mean\":%.1f,\"min\":%" PRId64 ",\"max\":%" PRId64 ",\"stddev\":%.1f}", c->mean, c->min, c->max,
               c->stddev);
        vt__json_key(stdout, &f, "call_sites");
        printf("[{");
        int g = 1;
        vt__json_key(stdout, &g, "label");
        vt__json_str(stdout, label);
        vt__json_key(stdout, &g, "function");
        if (fn)
            vt__json_str(stdout, fn);
        else
            fputs("null", stdout);
        vt__json_key(stdout, &g, "site");
        if (cs)
            vt__json_str(stdout, site);
        else
            fputs("null", stdout);
        vt__json_key(stdout, &g, "module");
        if (cs)
            vt__json_str(stdout, cs->module);
        else
            fputs("null", stdout);
        vt__json_key(stdout, &g, "offset");
        if (cs)
            printf("%" PRIu64, cs->offset);
        else
            fputs("null", stdout);
        vt__json_key(stdout, &g, "symbol");
        if (cs)
            vt__json_str(stdout, cs->symbol);
        else
            fputs("null", stdout);
        printf("}]}");
    }
    putchar(']');

    vt__json_key(stdout, &first, "noise");
    printf("{\"bursts\":%" PRIu64 ",\"time_ns\":%" PRId64 ",\"share\":%.6f}", r->noise, r->noise_time,
           r->time > 0 ? (double)r->noise_time / (double)r->time : 0.0);

    vt__json_key(stdout, &first, "timeline");
    printf("{\"windows\":%u,\"start_ns\":%" PRId64 ",\"window_ns\":%" PRId64
           ",\"legend\":\"cluster id with the most computation time; 0 noise, -1 no computation\",\"ranks\":[",
           r->ntimeline, r->t0, r->tl_width);
    for (uint32_t k = 0; k < r->nranks; k++) {
        printf("%s[", k ? "," : "");
        for (uint32_t w = 0; w < r->ntimeline; w++)
            printf("%s%d", w ? "," : "", r->dominant[(size_t)k * r->ntimeline + w]);
        putchar(']');
    }
    printf("]}");

    vt__json_key(stdout, &first, "windows");
    putchar('[');
    for (uint32_t w = 0; w < r->nwindows; w++) {
        const vt_cl_window *x = &r->windows[w];
        printf("%s{\"index\":%u,\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",\"bursts\":%" PRIu64
               ",\"time_ns\":%" PRId64 ",\"clusters\":%u,\"noise\":%" PRIu64 ",\"matched_ns\":%" PRId64
               ",\"matched_share\":%.6f,\"stable\":%s}",
               w ? "," : "", w, x->start, x->end, x->bursts, x->time, x->clusters, x->noise, x->matched,
               x->time > 0 ? (double)x->matched / (double)x->time : 0.0, x->stable ? "true" : "false");
    }
    putchar(']');

    const vt_cl_region *g = &r->region;
    vt__json_key(stdout, &first, "region");
    printf("{\"threshold\":%.6f,\"tolerance\":%.6f,\"min_stable\":%u,\"found\":%s", p->threshold, p->tolerance,
           p->min_stable, g->found ? "true" : "false");
    if (g->found) {
        printf(",\"first_window\":%u,\"last_window\":%u,\"stable_until_window\":%u,\"start_ns\":%" PRId64
               ",\"end_ns\":%" PRId64,
               g->first, g->last, g->stretch_last, g->start, g->end);
        printf(",\"iterations\":");
        if (g->iter_source)
            printf("{\"count\":%" PRIu64 ",\"rank\":%u,\"source\":\"%s\",\"period_bursts\":%u}", g->iterations,
                   g->iter_rank, g->iter_source == 1 ? "markers" : "period", g->period);
        else
            fputs("null", stdout);
    }
    printf(",\"longest_stable_run\":%u", g->longest);
    printf("}}\n");
}

int vt__cmd_clusters(int argc, char **argv)
{
    const char *dir = NULL;
    vt_cl_params p;
    vt_cl_defaults(&p);
    int json = 0, quiet = 0, all_windows = 0;
    /* a missing value is a bad one, shown as the option's name */
    const unsigned m = VT_OPT_MISSING_SELF;
    double threshold = -1, tolerance = -1; /* percentages */
    const vt__opt opts[] = {
        {NULL, "--eps", VT_OPT_NUMBER, .dest = &p.eps, .what = "a number of decades in (0, 10]", .lo = 1e-9, .hi = 10,
         .flags = m},
        {NULL, "--min-points", VT_OPT_POSITIVE, .dest = &p.min_points, .flags = m},
        {NULL, "--windows", VT_OPT_COUNT, .dest = &p.windows, .lo = 2, .hi = 100000, .flags = m},
        {NULL, "--timeline", VT_OPT_COUNT, .dest = &p.timeline, .lo = 1, .hi = 10000, .flags = m},
        {NULL, "--threshold", VT_OPT_NUMBER, .dest = &threshold, .what = "a percentage in [0, 100)", .lo = 0,
         .hi = 100, .flags = m | VT_OPT_BELOW},
        {NULL, "--tolerance", VT_OPT_NUMBER, .dest = &tolerance, .what = "a percentage in [0, 1000]", .lo = 0,
         .hi = 1000, .flags = m},
        {NULL, "--stable", VT_OPT_POSITIVE, .dest = &p.min_stable, .flags = m},
        {NULL, "--floor", VT_OPT_COUNT, .dest = &p.floor_ns, .what = "a duration in ns", .flags = m},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {NULL, "--all-windows", VT_OPT_FLAG, .dest = &all_windows},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_clusters, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (threshold >= 0)
        p.threshold = threshold / 100;
    if (tolerance >= 0)
        p.tolerance = tolerance / 100;
    if (p.min_stable >= p.windows)
        return vt__usage_error(vt__usage_clusters, "--stable %u needs more than %u --windows", p.min_stable,
                               p.windows);
    vt_trace *t = NULL;
    vt_error err;
    if (vt_trace_open(dir, &t, &err))
        return vt__fail(&err);
    vt__note_incomplete(t);
    vt__progress pr;
    vt__progress_start(&pr, "clusters", vt_trace_nrecords(t), quiet);
    p.progress = progress_cb;
    p.progress_arg = &pr;
    vt_cl_result r;
    int rc = vt_clusters_run(t, &p, &r, &err);
    vt__progress_end(&pr);
    if (rc) {
        vt_symbols_reset(); /* its cache belongs to this trace */
        vt_trace_close(t);
        return vt__fail(&err);
    }
    if (json)
        print_json(t, &r, &p);
    else
        print_text(t, &r, &p, all_windows);
    vt_clusters_free(&r);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    return VT_EXIT_OK;
}
