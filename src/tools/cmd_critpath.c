/* vtrace critical-path: the chain of events and messages that decides the predicted
 * run time of one scenario, where that time goes (rank, call site, function), and the
 * slack of every candidate event (critpath.h, an observer of the what-if replay). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/eventsite.h"
#include "tools/progress.h"
#include "analysis/critpath.h"
#include "format/clockfix.h"
#include "model/model.h"
#include "analysis/replay.h"
#include "util/settings.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_critpath(FILE *out)
{
    fprintf(out, "usage: vtrace critical-path [--scenario TEXT] [--top N] [--full] [--threshold DUR] [--json] DIR\n"
                 "The critical path of the predicted run (the measured run by default): the events\n"
                 "and messages that make up the predicted run time T', its time per rank, call site\n"
                 "and function, and the candidate events with the least slack. A long path is\n"
                 "summarised: its first and last segments and the longest ones.\n\n"
                 "  -s, --scenario TEXT   one what-if scenario (syntax of vtrace whatif)\n"
                 "  -k, --top N           rows of each list: the path's longest segments, ranks, call\n"
                 "                        sites, functions, candidates by least slack (default 20;\n"
                 "                        --json: all)\n"
                 "      --full            the whole path and every row\n"
                 "      --threshold DUR   override the trace's candidate threshold (e.g. 500us)\n"
                 "      --json            one JSON object on one line\n"
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet          no progress display on a terminal\n"
                 "      --clock-repair    first repair receives that end before their send started\n");
}

static const char *edge_kind(enum vt_cp_edge_kind k)
{
    switch (k) {
    case VT_CP_MESSAGE: return "message";
    case VT_CP_SYNC: return "sync";
    default: return "collective";
    }
}

/* function (file:line) when the site has debug information, else module+0xOFFSET and
 * symbol, as the site: selector of a scenario matches them. */
static void site_name(void *arg, uint32_t rank, int64_t cs, char *name, size_t namelen, char *sym, size_t symlen)
{
    const vt_callsite *c = cs >= 0 ? vt_trace_callsite(arg, rank, cs) : NULL;
    vt_srcloc loc;
    sym[0] = '\0';
    if (!c) {
        snprintf(name, namelen, "?");
        return;
    }
    if (vt_symbols_resolve(arg, rank, cs, &loc)) {
        snprintf(name, namelen, "%s", vt_site_name(arg, rank, cs));
        return;
    }
    const char *base = strrchr(c->module, '/');
    base = base ? base + 1 : c->module;
    if (*base)
        snprintf(name, namelen, "%s+0x%" PRIx64, base, c->offset);
    else
        snprintf(name, namelen, "0x%" PRIx64, c->address);
    if (c->symbol)
        snprintf(sym, symlen, "%s", c->symbol);
}

static void id(char *buf, size_t len, uint32_t rank, uint64_t seq)
{
    snprintf(buf, len, "%u:%" PRIu64, rank, seq);
}

static void json_id(uint32_t rank, uint64_t seq)
{
    printf("\"%u:%" PRIu64 "\"", rank, seq);
}

/* ------------------------------------------------------------------ candidates
 *
 * Read from the critical path in slack order (vt_critpath_cands), in batches whose
 * call sites are found together (one pass over each rank named), so that --json with
 * every event a candidate stays in bounded memory. */

#define CAND_BATCH 65536

typedef struct cand_out {
    const vt_trace *t;
    int json;
    size_t printed;
    vt_cp_cand *c;
    uint32_t *rank;
    uint64_t *seq;
    const char **site;
    size_t n;
    vt_error *err;
} cand_out;

static int cand_flush(cand_out *o)
{
    if (!o->n)
        return 0;
    for (size_t i = 0; i < o->n; i++) {
        o->rank[i] = o->c[i].rank;
        o->seq[i] = o->c[i].seq;
    }
    if (vt__event_sites(o->t, o->n, o->rank, o->seq, o->site, o->err))
        return -1;
    for (size_t i = 0; i < o->n; i++) {
        const vt_cp_cand *c = &o->c[i];
        if (o->json) {
            printf("%s{\"event\":", o->printed++ ? "," : "");
            json_id(c->rank, c->seq);
            fputs(",\"what\":", stdout);
            vt__json_str(stdout, c->func ? c->func : "(computation)");
            fputs(",\"site\":", stdout);
            vt__json_str(stdout, o->site[i]);
            printf(",\"duration_ns\":%" PRId64 ",\"slack_ns\":%" PRId64 ",\"on_path\":%s}", c->dur, c->slack,
                   c->on_path ? "true" : "false");
        } else {
            char a[48];
            id(a, sizeof a, c->rank, c->seq);
            printf("  %-14s %14" PRId64 " %14" PRId64 " %-5s %-16s %s\n", a, c->dur, c->slack,
                   c->on_path ? "yes" : "no", c->func ? c->func : "(computation)", o->site[i]);
        }
    }
    o->n = 0;
    return 0;
}

static int cand_one(void *arg, const vt_cp_cand *c)
{
    cand_out *o = arg;
    o->c[o->n++] = *c;
    return o->n == CAND_BATCH ? cand_flush(o) : 0;
}

/* The first MAX candidates by least slack, with their call sites. */
static int print_cands(vt_critpath *cp, const vt_trace *t, size_t max, int json, vt_error *err)
{
    cand_out o = {.t = t, .json = json, .err = err};
    o.c = malloc(CAND_BATCH * sizeof *o.c);
    o.rank = malloc(CAND_BATCH * sizeof *o.rank);
    o.seq = malloc(CAND_BATCH * sizeof *o.seq);
    o.site = malloc(CAND_BATCH * sizeof *o.site);
    int rc = -1;
    if (!o.c || !o.rank || !o.seq || !o.site)
        vt_error_set(err, "out of memory listing the candidates");
    else if (!vt_critpath_cands(cp, max, cand_one, &o, err) && !cand_flush(&o))
        rc = 0;
    free(o.c);
    free(o.rank);
    free(o.seq);
    free(o.site);
    return rc;
}

/* ------------------------------------------------------------------ JSON */

static int json_segment(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e)
{
    (void)arg;
    (void)e;
    printf("%s{\"rank\":%u,\"first\":", i ? "," : "", s->rank);
    json_id(s->rank, s->first_seq);
    fputs(",\"last\":", stdout);
    json_id(s->rank, s->last_seq);
    printf(",\"events\":%zu,\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",\"ns\":%" PRId64 "}", s->nsteps, s->start,
           s->end, s->end - s->start);
    return 0;
}

static int json_edge(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e)
{
    (void)arg;
    (void)s;
    if (!e)
        return 0;
    printf("%s{\"kind\":\"%s\",\"from\":", i > 1 ? "," : "", edge_kind(e->kind));
    json_id(e->from_rank, e->from_seq);
    fputs(",\"to\":", stdout);
    json_id(e->to_rank, e->to_seq);
    fputs(",\"via\":", stdout);
    json_id(e->via_rank, e->via_seq);
    printf(",\"ns\":%" PRId64 "}", e->ns);
    return 0;
}

static int print_json(vt_critpath *cp, const vt_trace *t, const vt_critpath_result *r, const char *scen,
                      const vt_cp_part *fn, size_t nfn, const vt_cp_part *site, size_t nsite, vt_error *err)
{
    int first = 1;
    putchar('{');
    vt__json_key(stdout, &first, "scenario");
    vt__json_str(stdout, scen);
    vt__json_key(stdout, &first, "predicted_ns");
    printf("%" PRId64, r->end - r->start);
    vt__json_key(stdout, &first, "length_ns");
    printf("%" PRId64, r->length);
    vt__json_key(stdout, &first, "start_ns");
    printf("%" PRId64, r->start);
    vt__json_key(stdout, &first, "predicted_end_ns");
    printf("%" PRId64, r->end);
    vt__json_key(stdout, &first, "end_rank");
    printf("%u", r->end_rank);
    vt__json_key(stdout, &first, "startup_ns");
    printf("%" PRId64, r->startup);
    vt__json_key(stdout, &first, "segments_ns");
    printf("%" PRId64, r->seg_ns);
    vt__json_key(stdout, &first, "edges_ns");
    printf("%" PRId64, r->edge_ns);
    vt__json_key(stdout, &first, "consistent");
    fputs(r->consistent ? "true" : "false", stdout);
    vt__json_key(stdout, &first, "segments");
    putchar('[');
    if (vt_critpath_path(cp, json_segment, NULL, err))
        return -1;
    putchar(']');
    vt__json_key(stdout, &first, "edges");
    putchar('[');
    if (vt_critpath_path(cp, json_edge, NULL, err))
        return -1;
    putchar(']');
    vt__json_key(stdout, &first, "per_rank");
    putchar('[');
    for (uint32_t k = 0; k < r->nranks; k++)
        printf("%s{\"rank\":%u,\"ns\":%" PRId64 "}", k ? "," : "", k, r->per_rank[k]);
    putchar(']');
    vt__json_key(stdout, &first, "per_site");
    putchar('[');
    for (size_t i = 0; i < nsite; i++) {
        printf("%s{\"site\":", i ? "," : "");
        vt__json_str(stdout, site[i].name);
        if (site[i].symbol[0]) {
            fputs(",\"symbol\":", stdout);
            vt__json_str(stdout, site[i].symbol);
        }
        printf(",\"ns\":%" PRId64 ",\"events\":%" PRIu64 "}", site[i].ns, site[i].events);
    }
    putchar(']');
    vt__json_key(stdout, &first, "per_function");
    putchar('[');
    for (size_t i = 0; i < nfn; i++) {
        printf("%s{\"function\":", i ? "," : "");
        vt__json_str(stdout, fn[i].name);
        printf(",\"ns\":%" PRId64 ",\"events\":%" PRIu64 "}", fn[i].ns, fn[i].events);
    }
    putchar(']');
    vt__json_key(stdout, &first, "candidates");
    putchar('[');
    if (print_cands(cp, t, SIZE_MAX, 1, err))
        return -1;
    fputs("]}\n", stdout);
    return 0;
}

/* ------------------------------------------------------------------ text */

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

static void print_segment(const vt_critpath_result *r, const vt_cp_segment *s, const vt_cp_edge *e)
{
    char a[48], b[48], c[48];
    if (e) {
        id(a, sizeof a, e->from_rank, e->from_seq);
        id(b, sizeof b, e->to_rank, e->to_seq);
        id(c, sizeof c, e->via_rank, e->via_seq);
        char what[256];
        snprintf(what, sizeof what, "%s %s -> %s (via %s)", edge_kind(e->kind), a, b, c);
        printf("    %-32s %12s %12s %14" PRId64 "\n", what, "", "", e->ns);
    }
    id(a, sizeof a, s->rank, s->first_seq);
    id(b, sizeof b, s->rank, s->last_seq);
    char what[160];
    snprintf(what, sizeof what, "rank %u  %s .. %s", s->rank, a, b);
    printf("  %-34s %12.6f %12.6f %14" PRId64 "\n", what, (s->start - r->start) / 1e9, (s->end - r->start) / 1e9,
           s->end - s->start);
}

#define PATH_ENDS 5

/* What the path's walk keeps for the short display: its first and last PATH_ENDS
 * segments with their edges, and the TOP longest (in order of length, then of place). */
typedef struct seg_keep {
    vt_cp_segment s;
    vt_cp_edge e;
    int has_e;
    size_t i;
} seg_keep;

typedef struct path_view {
    const vt_critpath_result *r;
    int all;                   /* print every segment as it comes */
    seg_keep first[PATH_ENDS], last[PATH_ENDS];
    seg_keep *longest;
    uint32_t top, nlong;
} path_view;

static int longer(const seg_keep *a, const seg_keep *b)
{
    int64_t la = a->s.end - a->s.start, lb = b->s.end - b->s.start;
    return la != lb ? la > lb : a->i < b->i;
}

static int path_segment(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e)
{
    path_view *v = arg;
    if (v->all) {
        print_segment(v->r, s, e);
        return 0;
    }
    seg_keep k = {*s, e ? *e : (vt_cp_edge){0}, e != NULL, i};
    if (i < PATH_ENDS)
        v->first[i] = k;
    v->last[i % PATH_ENDS] = k;
    /* insertion into the TOP longest */
    uint32_t j = v->nlong < v->top ? v->nlong++ : v->top;
    if (j == v->top && (!v->top || !longer(&k, &v->longest[v->top - 1])))
        return 0;
    if (j == v->top)
        j--;
    while (j > 0 && longer(&k, &v->longest[j - 1])) {
        v->longest[j] = v->longest[j - 1];
        j--;
    }
    v->longest[j] = k;
    return 0;
}

/* The path: whole when short or FULL; else its first and last segments (with the edges
 * between them) and the TOP longest segments. */
static int print_path(vt_critpath *cp, const vt_critpath_result *r, uint32_t top, int full, vt_error *err)
{
    size_t n = r->nsegments;
    path_view v = {.r = r, .all = full || n <= 2 * PATH_ENDS + top, .top = top};
    printf("\npath (predicted seconds from the start):\n");
    printf("  %-34s %12s %12s %14s\n", "", "from", "to", "ns");
    printf("  %-34s %12.6f %12.6f %14" PRId64 "\n", "startup", 0.0, r->startup / 1e9, r->startup);
    if (!v.all && top && !(v.longest = malloc(top * sizeof *v.longest)))
        return vt_error_set(err, "out of memory showing the critical path");
    int rc = vt_critpath_path(cp, path_segment, &v, err);
    if (!rc && !v.all) {
        for (size_t i = 0; i < PATH_ENDS; i++)
            print_segment(r, &v.first[i].s, v.first[i].has_e ? &v.first[i].e : NULL);
        printf("  ... %zu segments and %zu edges (--full shows them)\n", n - 2 * PATH_ENDS, n - 2 * PATH_ENDS + 1);
        for (size_t i = n - PATH_ENDS; i < n; i++) {
            const seg_keep *k = &v.last[i % PATH_ENDS];
            print_segment(r, &k->s, i > n - PATH_ENDS && k->has_e ? &k->e : NULL);
        }
        if (top)
            printf("\nthe %" PRIu32 " longest segments of the path's %zu:\n", top, n);
        for (uint32_t i = 0; i < v.nlong; i++)
            print_segment(r, &v.longest[i].s, NULL);
    }
    free(v.longest);
    return rc;
}

static const vt_critpath_result *sorting;

static int by_rank_time(const void *x, const void *y)
{
    int64_t a = sorting->per_rank[*(const uint32_t *)x], b = sorting->per_rank[*(const uint32_t *)y];
    if (a != b)
        return a > b ? -1 : 1;
    return *(const uint32_t *)x > *(const uint32_t *)y ? 1 : -1;
}

/* "(N more; --full shows them)" after a list cut at TOP rows. */
static void more(size_t n, uint32_t top, int full)
{
    if (!full && n > top)
        printf("  (%zu more; --full shows them)\n", n - top);
}

static int print_text(vt_critpath *cp, const vt_trace *t, const vt_critpath_result *r, const char *dir,
                      const char *scen, uint32_t top, int full, const vt_cp_part *fn, size_t nfn,
                      const vt_cp_part *site, size_t nsite, vt_error *err)
{
    printf("critical path of %s, scenario: %s\n", dir, scen[0] ? scen : "(measured run)");
    printf("  predicted run time T' %.6f s (%" PRId64 " ns), ends on rank %u\n", (r->end - r->start) / 1e9,
           r->end - r->start, r->end_rank);
    printf("  path length %" PRId64 " ns = startup %" PRId64 " + %zu segments %" PRId64 " + %zu edges %" PRId64
           " ns: %s\n",
           r->length, r->startup, r->nsegments, r->seg_ns, r->nedges, r->edge_ns,
           r->consistent ? "consistent" : "INCONSISTENT (please report)");
    if (print_path(cp, r, top, full, err))
        return -1;
    printf("\ntime on the path per rank (most first):\n");
    uint32_t *rk = malloc((r->nranks ? r->nranks : 1) * sizeof *rk);
    uint32_t nr = 0;
    for (uint32_t k = 0; rk && k < r->nranks; k++)
        if (r->per_rank[k])
            rk[nr++] = k;
    sorting = r;
    if (rk)
        qsort(rk, nr, sizeof *rk, by_rank_time);
    for (uint32_t i = 0; rk && i < nr && (full || i < top); i++)
        printf("  rank %-8u %14" PRId64 " ns %7.2f%%\n", rk[i], r->per_rank[rk[i]], pct(r->per_rank[rk[i]], r->length));
    more(nr, top, full);
    free(rk);
    printf("\nper call site (a burst counts for the call that ends it):\n");
    for (size_t i = 0; i < nsite && (full || i < top); i++) {
        char nm[400];
        if (site[i].symbol[0])
            snprintf(nm, sizeof nm, "%s (%s)", site[i].name, site[i].symbol);
        else
            snprintf(nm, sizeof nm, "%s", site[i].name);
        printf("  %-40s %14" PRId64 " ns %7.2f%% %8" PRIu64 " events\n", nm, site[i].ns, pct(site[i].ns, r->length),
               site[i].events);
    }
    more(nsite, top, full);
    printf("\nper function:\n");
    for (size_t i = 0; i < nfn && (full || i < top); i++)
        printf("  %-40s %14" PRId64 " ns %7.2f%% %8" PRIu64 " events\n", fn[i].name, fn[i].ns, pct(fn[i].ns, r->length),
               fn[i].events);
    more(nfn, top, full);
    size_t n = r->ncands < top || full ? r->ncands : top;
    printf("\ncandidates with the least slack (%zu of %zu):\n", n, r->ncands);
    if (n)
        printf("  %-14s %14s %14s %-5s %-16s %s\n", "event", "duration ns", "slack ns", "path", "what", "call site");
    return print_cands(cp, t, n, 0, err);
}

/* -s TEXT, once. */
static int one_scenario(void *dest, const char *val, char *msg, size_t len)
{
    const char **text = dest;
    if (*text) {
        snprintf(msg, len, "one scenario only");
        return VT_EXIT_USAGE;
    }
    *text = val;
    return 0;
}

int vt__cmd_critpath(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL, *scen_text = NULL;
    uint32_t top = 20;
    int json = 0, rc = VT_EXIT_ERROR, repair = 0, full = 0;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    const vt__opt opts[] = {
        {"-s", "--scenario", VT_OPT_CALL, .dest = &scen_text, .call = one_scenario},
        {"-k", "--top", VT_OPT_COUNT, .dest = &top},
        {NULL, "--full", VT_OPT_FLAG, .dest = &full},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {NULL, "--clock-repair", VT_OPT_FLAG, .dest = &repair},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_critpath, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    /* one scenario: parsed, or "balance", made from the trace once it is open */
    vt__scenarios scl = {0};
    char msg[1024];
    if (vt__scenario_add(&scl, scen_text ? scen_text : "", msg, sizeof msg))
        return vt__usage_error(vt__usage_critpath, "scenario %s", msg);
    vt_scenario sc = scl.v[0];
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt_critpath *cp = NULL;
    vt_cp_part *fn = NULL, *site = NULL;
    size_t nfn = 0, nsite = 0;
    vt_error err;
    vt_replay_result res;
    int have_res = 0;
    vt_model_params p;
    if ((go = vt__replay_open(dir, threshold, quiet, vt__usage_critpath, &t, &pr, &p)) != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    vt_imbalance_stats ist;
    if (vt__scenarios_expand(&scl, t, &p, &ist, &err) < 0) {
        rc = vt__fail(&err);
        goto out;
    }
    sc = scl.v[0];
    if (vt__clock_repair(t, repair, &m, &fix, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    cp = vt_critpath_new(vt_trace_nranks(t), 0);
    if (!cp) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    /* In parallel under vtrace-mpi: every process replays its ranks and keeps their part
     * of the graph; the backward walk goes over the processes (critpath_par.c) */
    const vt_par_comm *par = vt__par();
    vt_observer obs;
    if (par)
        vt_critpath_par_observer(cp, par, &obs);
    else
        vt_critpath_observer(cp, &obs);
    int bad = par ? vt_replay_par_observe(t, &p, &sc, 1, &obs, par, &res, &err)
                  : vt_replay_observe(t, NULL, &p, &sc, 1, &obs, &res, &err);
    if (bad && par) {
        /* not finished in parallel: process 0 alone, for the serial answer or error */
        vt_critpath_free(cp);
        cp = NULL;
        int64_t v = 0;
        if (par->me == 0) {
            err.msg[0] = 0;
            if (!(cp = vt_critpath_new(vt_trace_nranks(t), 0))) {
                fprintf(stderr, "vtrace: out of memory\n");
                v = 1;
            } else {
                vt_critpath_observer(cp, &obs);
                bad = vt_replay_observe(t, NULL, &p, &sc, 1, &obs, &res, &err);
                v = bad;
            }
        }
        if (par->sum(par->arg, &v, 1))
            v = 1;
        if (par->me != 0 || !cp) {
            rc = v ? VT_EXIT_ERROR : VT_EXIT_OK;
            goto out;
        }
        par = NULL;
    }
    if (bad) {
        rc = vt__fail(&err);
        goto out;
    }
    have_res = 1;
    if (par) {
        uint64_t bytes;
        size_t max = json || full ? SIZE_MAX : top;
        if (vt_critpath_par_finish(cp, res.start, max, par, &bytes, &err)) {
            rc = err.msg[0] ? vt__fail(&err) : VT_EXIT_ERROR;
            goto out;
        }
        if (par->me != 0) {   /* process 0 has the path and writes it */
            rc = VT_EXIT_OK;
            goto out;
        }
        res.par_bytes += bytes;
    }
    vt__par_stats(par, res.par_rounds, res.par_bytes, res.events);
    vt__clock_warn(&res, fix);
    if (!par && vt_critpath_finish(cp, res.start, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    const vt_critpath_result *r = vt_critpath_get(cp);
    if (r->end != res.total[0]) {
        fprintf(stderr, "vtrace: internal error: the critical path ends at %" PRId64 ", the replay at %" PRId64 "\n",
                r->end, res.total[0]);
        goto out;
    }
    if (vt_critpath_per_function(cp, &fn, &nfn) || vt_critpath_per_site(cp, site_name, t, &site, &nsite)) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    if (json ? print_json(cp, t, r, sc.text, fn, nfn, site, nsite, &err)
             : print_text(cp, t, r, dir, sc.text, top, full, fn, nfn, site, nsite, &err)) {
        fflush(stdout);
        rc = vt__fail(&err);
        goto out;
    }
    rc = VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    free(fn);
    free(site);
    if (have_res)
        vt_replay_result_free(&res);
    vt_critpath_free(cp);
    vt__scenarios_free(&scl);
    vt_matches_free(m);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
