/* vtrace critical-path: the chain of events and messages that decides the predicted
 * run time of one scenario, where that time goes (rank, call site, function), and the
 * slack of every candidate event (critpath.h, an observer of the what-if replay). */
#include "vt_config.h"
#include "tools/tools.h"
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
    fprintf(out, "usage: vtrace critical-path [--scenario TEXT] [--top N] [--threshold DUR] [--json] DIR\n"
                 "The critical path of the predicted run (the measured run by default): the events\n"
                 "and messages that make up the predicted run time T', its time per rank, call site\n"
                 "and function, and the candidate events with the least slack.\n\n"
                 "  -s, --scenario TEXT   one what-if scenario (syntax of vtrace whatif)\n"
                 "  -k, --top N           candidates listed by least slack (default 20; --json: all)\n"
                 "      --threshold DUR   override the trace's candidate threshold (e.g. 500us)\n"
                 "      --json            one JSON object on one line\n"
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

/* module+0xOFFSET and symbol, as the site: selector of a scenario matches them. */
static void site_name(void *arg, uint32_t rank, int64_t cs, char *name, size_t namelen, char *sym, size_t symlen)
{
    const vt_callsite *c = cs >= 0 ? vt_trace_callsite(arg, rank, cs) : NULL;
    sym[0] = '\0';
    if (!c) {
        snprintf(name, namelen, "?");
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

static int json_cand(void *arg, const vt_cp_cand *c)
{
    size_t *i = arg;
    printf("%s{\"event\":", (*i)++ ? "," : "");
    json_id(c->rank, c->seq);
    fputs(",\"what\":", stdout);
    vt__json_str(stdout, c->func ? c->func : "(computation)");
    printf(",\"duration_ns\":%" PRId64 ",\"slack_ns\":%" PRId64 ",\"on_path\":%s}", c->dur, c->slack,
           c->on_path ? "true" : "false");
    return 0;
}

static int text_cand(void *arg, const vt_cp_cand *x)
{
    char a[48];
    (void)arg;
    id(a, sizeof a, x->rank, x->seq);
    printf("  %-14s %14" PRId64 " %14" PRId64 " %-5s %s\n", a, x->dur, x->slack, x->on_path ? "yes" : "no",
           x->func ? x->func : "(computation)");
    return 0;
}

static int print_json(vt_critpath *cp, const vt_critpath_result *r, const char *scen, const vt_cp_part *fn,
                      size_t nfn, const vt_cp_part *site, size_t nsite, vt_error *err)
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
    size_t nc = 0;
    if (vt_critpath_cands(cp, SIZE_MAX, json_cand, &nc, err))
        return -1;
    fputs("]}\n", stdout);
    return 0;
}

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

static int text_segment(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e)
{
    const vt_critpath_result *r = arg;
    char a[48], b[48], c[48];
    (void)i;
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
    return 0;
}

static int print_text(vt_critpath *cp, const vt_critpath_result *r, const char *dir, const char *scen, uint32_t top,
                      const vt_cp_part *fn, size_t nfn, const vt_cp_part *site, size_t nsite, vt_error *err)
{
    printf("critical path of %s, scenario: %s\n", dir, scen[0] ? scen : "(measured run)");
    printf("  predicted run time T' %.6f s (%" PRId64 " ns), ends on rank %u\n", (r->end - r->start) / 1e9,
           r->end - r->start, r->end_rank);
    printf("  path length %" PRId64 " ns = startup %" PRId64 " + %zu segments %" PRId64 " + %zu edges %" PRId64
           " ns: %s\n",
           r->length, r->startup, r->nsegments, r->seg_ns, r->nedges, r->edge_ns,
           r->consistent ? "consistent" : "INCONSISTENT (please report)");
    printf("\npath (predicted seconds from the start):\n");
    printf("  %-34s %12s %12s %14s\n", "", "from", "to", "ns");
    printf("  %-34s %12.6f %12.6f %14" PRId64 "\n", "startup", 0.0, r->startup / 1e9, r->startup);
    if (vt_critpath_path(cp, text_segment, (void *)r, err))
        return -1;
    printf("\ntime on the path per rank:\n");
    for (uint32_t k = 0; k < r->nranks; k++)
        if (r->per_rank[k])
            printf("  rank %-8u %14" PRId64 " ns %7.2f%%\n", k, r->per_rank[k], pct(r->per_rank[k], r->length));
    printf("\nper call site (a burst counts for the call that ends it):\n");
    for (size_t i = 0; i < nsite; i++) {
        char nm[400];
        if (site[i].symbol[0])
            snprintf(nm, sizeof nm, "%s (%s)", site[i].name, site[i].symbol);
        else
            snprintf(nm, sizeof nm, "%s", site[i].name);
        printf("  %-40s %14" PRId64 " ns %7.2f%% %8" PRIu64 " events\n", nm, site[i].ns, pct(site[i].ns, r->length),
               site[i].events);
    }
    printf("\nper function:\n");
    for (size_t i = 0; i < nfn; i++)
        printf("  %-40s %14" PRId64 " ns %7.2f%% %8" PRIu64 " events\n", fn[i].name, fn[i].ns, pct(fn[i].ns, r->length),
               fn[i].events);
    size_t n = r->ncands < top ? r->ncands : top;
    printf("\ncandidates with the least slack (%zu of %zu):\n", n, r->ncands);
    if (n)
        printf("  %-14s %14s %14s %-5s %s\n", "event", "duration ns", "slack ns", "path", "what");
    if (vt_critpath_cands(cp, n, text_cand, NULL, err))
        return -1;
    return 0;
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
    int json = 0, rc = VT_EXIT_ERROR, repair = 0;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    const vt__opt opts[] = {
        {"-s", "--scenario", VT_OPT_CALL, .dest = &scen_text, .call = one_scenario},
        {"-k", "--top", VT_OPT_COUNT, .dest = &top},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {NULL, "--clock-repair", VT_OPT_FLAG, .dest = &repair},
        {0},
    };
    const vt__args args = {.usage = vt__usage_critpath, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    vt_scenario sc;
    char msg[1024];
    if (vt_scenario_parse(scen_text ? scen_text : "", &sc, msg, sizeof msg))
        return vt__usage_error(vt__usage_critpath, "scenario %s", msg);
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
    if (vt__clock_repair(t, repair, &m, &fix, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    cp = vt_critpath_new(vt_trace_nranks(t), 0);
    if (!cp) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    vt_observer obs;
    vt_critpath_observer(cp, &obs);
    if (vt_replay_observe(t, NULL, &p, &sc, 1, &obs, &res, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    have_res = 1;
    vt__clock_warn(&res, fix);
    if (vt_critpath_finish(cp, res.start, &err)) {
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
    if (json ? print_json(cp, r, sc.text, fn, nfn, site, nsite, &err)
             : print_text(cp, r, dir, sc.text, top, fn, nfn, site, nsite, &err)) {
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
    vt_scenario_free(&sc);
    vt_matches_free(m);
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
