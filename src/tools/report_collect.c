/* vtrace report, the data: the bounded collections of the timeline, the function names
 * across ranks, the analyses (critical path of the measured run, domino path and what-if
 * gains, wait-state patterns) and the timeline read from the trace (calls, messages,
 * markers, a reduced trace's aggregated stretches), with the times of the events the
 * page points to (report.h). */
#include "vt_config.h"
#include "tools/report.h"
#include "analysis/replay.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ bounded collections */

int vt__report_heap_init(heap *h, size_t cap, size_t size)
{
    memset(h, 0, sizeof *h);
    h->cap = cap;
    h->size = size;
    if (cap == 0)
        return 0;
    h->v = malloc(cap * size);
    h->key = malloc(cap * sizeof *h->key);
    return h->v && h->key ? 0 : -1;
}

void vt__report_heap_free(heap *h)
{
    free(h->v);
    free(h->key);
}

static void heap_swap(heap *h, size_t a, size_t b, char *tmp)
{
    int64_t k = h->key[a];
    h->key[a] = h->key[b];
    h->key[b] = k;
    memcpy(tmp, h->v + a * h->size, h->size);
    memcpy(h->v + a * h->size, h->v + b * h->size, h->size);
    memcpy(h->v + b * h->size, tmp, h->size);
}

void vt__report_heap_push(heap *h, const void *item, int64_t key)
{
    char tmp[64];
    h->total++;
    if (h->cap == 0)
        return;
    size_t i;
    if (h->n < h->cap) {
        i = h->n++;
        memcpy(h->v + i * h->size, item, h->size);
        h->key[i] = key;
        while (i > 0 && h->key[(i - 1) / 2] > h->key[i]) {
            heap_swap(h, i, (i - 1) / 2, tmp);
            i = (i - 1) / 2;
        }
        return;
    }
    if (key <= h->key[0])
        return;
    memcpy(h->v, item, h->size);
    h->key[0] = key;
    for (i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->key[l] < h->key[m])
            m = l;
        if (r < h->n && h->key[r] < h->key[m])
            m = r;
        if (m == i)
            break;
        heap_swap(h, i, m, tmp);
        i = m;
    }
}

/* ------------------------------------------------------------------ function names */

static int32_t fn_index(report *R, const char *name)
{
    for (size_t i = 0; i < R->nfn; i++)
        if (!strcmp(R->fnames[i], name))
            return (int32_t)i;
    if (R->nfn == R->fncap) {
        size_t nc = R->fncap ? 2 * R->fncap : 64;
        char **n = realloc(R->fnames, nc * sizeof *n);
        if (!n)
            return -1;
        R->fnames = n;
        R->fncap = nc;
    }
    char *s = strdup(name);
    if (!s)
        return -1;
    R->fnames[R->nfn] = s;
    return (int32_t)R->nfn++;
}

static int build_fnmap(report *R)
{
    R->fnmap = calloc(R->nranks, sizeof *R->fnmap);
    if (!R->fnmap)
        return -1;
    for (uint32_t r = 0; r < R->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(R->t, r);
        R->fnmap[r] = calloc(rk->nfuncs + 1, sizeof **R->fnmap);
        if (!R->fnmap[r])
            return -1;
        for (size_t f = 0; f < rk->nfuncs; f++)
            if ((R->fnmap[r][f] = fn_index(R, rk->funcs[f].name)) < 0)
                return -1;
    }
    return 0;
}

static void seen_time(report *R, int64_t a, int64_t b)
{
    if (!R->have_t || a < R->tmin)
        R->tmin = a;
    if (!R->have_t || b > R->tmax)
        R->tmax = b;
    R->have_t = 1;
}

static void step(report *R)
{
    vt__progress_update(&R->prog, ++R->done);
}

/* ------------------------------------------------------------------ analyses */

static int critical_path(report *R)
{
    vt_error err;
    vt_scenario sc;
    char msg[256];
    if (vt_scenario_parse("", &sc, msg, sizeof msg)) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", msg);
        return -1;
    }
    R->cp = vt_critpath_new(R->nranks, 0);
    if (!R->cp) {
        vt_scenario_free(&sc);
        snprintf(R->cp_error, sizeof R->cp_error, "out of memory");
        return -1;
    }
    vt_observer obs;
    vt_replay_result res;
    vt_critpath_observer(R->cp, &obs);
    int rc = vt_replay_observe(R->t, NULL, &R->p, &sc, 1, &obs, &res, &err);
    vt_scenario_free(&sc);
    if (rc) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", err.msg);
        return -1;
    }
    vt__clock_warn(&res, NULL);
    R->rstart = res.start;
    R->measured = res.total[0] - res.start;
    R->clock_violations = res.clock_violations;
    rc = vt_critpath_finish(R->cp, res.start, &err);
    if (rc == 0)
        rc = vt_critpath_load_path(R->cp, &err);
    vt_replay_result_free(&res);
    if (rc) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", err.msg);
        return -1;
    }
    R->cpr = vt_critpath_get(R->cp);
    if (vt_critpath_per_function(R->cp, &R->cpfn, &R->ncpfn)) {
        snprintf(R->cp_error, sizeof R->cp_error, "out of memory");
        R->cpr = NULL;
        return -1;
    }
    return 0;
}

/* The domino path and every candidate's gain eliminated alone (domino.h). */
static int domino_whatif(report *R)
{
    vt_error err;
    if (vt_domino_run(R->t, &R->p, R->top, R->maxc, &R->dom, &err)) {
        snprintf(R->an_error, sizeof R->an_error, "%s", err.msg);
        return -1;
    }
    if (R->measured < 0)
        R->measured = R->dom.measured;
    step(R);
    /* each rank's, each function's candidates eliminated at once (vtrace domino --by) */
    if (vt_agg_run(R->t, &R->p, VT_AGG_RANK, "elim", R->maxc, &R->fix_rank, &err) ||
        vt_agg_run(R->t, &R->p, VT_AGG_FUNCTION, "elim", R->maxc, &R->fix_fn, &err)) {
        snprintf(R->an_error, sizeof R->an_error, "%s", err.msg);
        return -1;
    }
    step(R);
    return 0;
}

static int want_cmp(const void *a, const void *b)
{
    const want *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_wants(report *R)
{
    size_t nw = R->nwhatif < R->dom.n ? R->nwhatif : R->dom.n;
    R->wants = calloc(R->dom.nsteps + nw + 1, sizeof *R->wants);
    if (!R->wants)
        return -1;
    for (size_t i = 0; i < R->dom.nsteps + nw; i++) {
        const vt_domino_cand *c = &R->dom.c[i < R->dom.nsteps ? R->dom.order[i] : i - R->dom.nsteps];
        R->wants[R->nwants++] = (want){c->rank, c->seq, 1, 0};
    }
    vt_sort(R->wants, R->nwants, sizeof *R->wants, want_cmp);
    return 0;
}

const want *vt__report_find_want(const report *R, uint32_t rank, uint64_t seq)
{
    want key = {rank, seq, 0, 0};
    return R->nwants ? bsearch(&key, R->wants, R->nwants, sizeof key, want_cmp) : NULL;
}

/* Walks the wanted events of one rank along its stream (sequence numbers increase). */
typedef struct walker {
    want *w, *end;
} walker;

static void walker_init(report *R, walker *k, uint32_t rank)
{
    k->w = R->wants;
    k->end = R->wants + R->nwants;
    while (k->w < k->end && k->w->rank < rank)
        k->w++;
    want *e = k->w;
    while (e < k->end && e->rank == rank)
        e++;
    k->end = e;
}

static void walker_see(walker *k, uint64_t seq, int64_t start, int64_t end)
{
    while (k->w < k->end && k->w->seq < seq)
        k->w++;
    if (k->w < k->end && k->w->seq == seq) {
        k->w->start = start;
        k->w->end = end;
    }
}

/* The critical path's segments of one rank in order (their sequence numbers increase). */
typedef struct segwalk {
    const vt_cp_segment **v;
    size_t n, at;
} segwalk;

static int segwalk_init(const report *R, segwalk *s, uint32_t rank)
{
    memset(s, 0, sizeof *s);
    if (!R->cpr)
        return 0;
    for (size_t i = 0; i < R->cpr->nsegments; i++)
        s->n += R->cpr->segments[i].rank == rank;
    if (!s->n)
        return 0;
    s->v = malloc(s->n * sizeof *s->v);
    if (!s->v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < R->cpr->nsegments; i++)
        if (R->cpr->segments[i].rank == rank)
            s->v[k++] = &R->cpr->segments[i];
    return 0;
}

static int segwalk_on(segwalk *s, uint64_t seq)
{
    while (s->at < s->n && s->v[s->at]->last_seq < seq)
        s->at++;
    return s->at < s->n && s->v[s->at]->first_seq <= seq;
}

/* Key of a call for --max-events: on the critical path first, then the longest. */
static int64_t ev_key(int64_t dur, int on_path)
{
    if (dur < 0)
        dur = 0;
    if (dur > INT64_MAX / 4)
        dur = INT64_MAX / 4;
    return on_path ? dur + INT64_MAX / 2 : dur;
}

static void add_call(report *R, segwalk *sw, uint32_t r, int64_t fn, uint64_t seq, int64_t a, int64_t b)
{
    int on = segwalk_on(sw, seq);
    rev e = {a, b - a, seq, r, fn >= 0 ? R->fnmap[r][fn] : -1, on ? 1u : 0u};
    vt__report_heap_push(&R->ev, &e, ev_key(b - a, on));
    seen_time(R, a, b);
}

static void add_msg(report *R, uint32_t src, int64_t s, uint32_t dst, int64_t r, uint64_t bytes)
{
    rmsg m = {s, r, bytes, src, dst};
    vt__report_heap_push(&R->msg, &m, r - s);
}

/* The walkers of rank R's wanted events and path segments, and its cursor; 0, or -1
 * with err. */
static int rank_open(report *R, uint32_t r, segwalk *sw, walker *wk, vt_cursor **c, vt_error *err)
{
    if (segwalk_init(R, sw, r)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    walker_init(R, wk, r);
    if (vt_cursor_open(R->t, r, c, err)) {
        free(sw->v);
        return -1;
    }
    return 0;
}

static int timeline_full(report *R, uint32_t r, const vt_matches *m, int64_t **send_t, vt_error *err)
{
    vt_cursor *c;
    vt_event ev;
    walker wk;
    segwalk sw;
    size_t ns = 0, sp = 0;
    const vt_match_csend *cs = m ? vt_matches_csends(m, r, &ns) : NULL;
    if (rank_open(R, r, &sw, &wk, &c, err))
        return -1;
    int got;
    int64_t prev_exit = INT64_MIN;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        int64_t a = vt_global_time(R->t, r, ev.enter), b = vt_global_time(R->t, r, ev.exit);
        if (ev.fn < 0) {
            if (ev.code == 2) { /* MARKER */
                rmark mk = {a, ev.marker_value, ev.marker_kind, r};
                vt__report_heap_push(&R->mark, &mk, -(int64_t)R->mark.total); /* keeps the first ones */
            }
            continue;
        }
        uint64_t seq = 2 * ev.callno + 1;
        walker_see(&wk, seq - 1, prev_exit == INT64_MIN ? a : prev_exit, a); /* the burst before */
        walker_see(&wk, seq, a, b);
        add_call(R, &sw, r, ev.fn, seq, a, b);
        for (; sp < ns && cs[sp].index <= ev.index; sp++)
            if (cs[sp].index == ev.index)
                send_t[r][sp] = a;
        prev_exit = b;
    }
    vt_cursor_close(c);
    free(sw.v);
    return got < 0 ? -1 : 0;
}

static int timeline_reduced(report *R, uint32_t r, vt_error *err)
{
    vt_cursor *c;
    vt_rrec rec;
    walker wk;
    segwalk sw;
    if (rank_open(R, r, &sw, &wk, &c, err))
        return -1;
    int got, have_prev = 0;
    uint64_t prev_seq = 0;
    int64_t prev_exit = 0;
    while ((got = vt_cursor_next_reduced(c, &rec, err)) == 1) {
        int64_t a = vt_global_time(R->t, r, rec.enter), b = vt_global_time(R->t, r, rec.exit);
        if (have_prev) {
            /* Events between two records are merged into a gap of fixed length. */
            uint64_t merged = rec.seq > prev_seq ? rec.seq - prev_seq - (rec.kind == VT_RREC_END ? 0 : 1) : 0;
            int64_t gend = rec.kind == VT_RREC_END ? b : a;
            if (merged > 0 && gend >= prev_exit) {
                ragg g = {prev_exit, gend - prev_exit, merged, r};
                vt__report_heap_push(&R->agg, &g, gend - prev_exit);
            }
        }
        have_prev = 1;
        prev_seq = rec.seq;
        prev_exit = b;
        seen_time(R, a, b);
        if (rec.kind == VT_RREC_START || rec.kind == VT_RREC_END)
            continue;
        walker_see(&wk, rec.seq, a, b);
        if (rec.fn >= 0)
            add_call(R, &sw, r, rec.fn, rec.seq, a, b);
        for (size_t i = 0; i < rec.nmsgs; i++) {
            const vt_rmsg *mm = &rec.msgs[i];
            add_msg(R, mm->src, vt_global_time(R->t, mm->src, mm->S), r, b, mm->bytes);
        }
    }
    vt_cursor_close(c);
    free(sw.v);
    return got < 0 ? -1 : 0;
}

static int timeline(report *R, vt_error *err)
{
    vt_matches *m = NULL;
    int64_t **send_t = NULL;
    int rc = -1;
    if (!R->reduced) {
        if (vt_trace_match(R->t, VT_MATCH_PARTIAL, &m, err))
            return -1;
        send_t = calloc(R->nranks, sizeof *send_t);
        if (!send_t)
            goto oom;
        for (uint32_t r = 0; r < R->nranks; r++) {
            size_t n = 0;
            vt_matches_csends(m, r, &n);
            if (!(send_t[r] = calloc(n + 1, sizeof **send_t)))
                goto oom;
        }
    }
    for (uint32_t r = 0; r < R->nranks; r++) {
        if (R->reduced ? timeline_reduced(R, r, err) : timeline_full(R, r, m, send_t, err))
            goto out;
        step(R);
    }
    if (m) {
        for (uint32_t d = 0; d < R->nranks; d++) {
            size_t nr = 0, nk = 0;
            const vt_match_crecv *cr = vt_matches_crecvs(m, d, &nr);
            const vt_match_key *keys = vt_matches_keys(m, &nk);
            for (size_t i = 0; i < nr; i++) {
                if (cr[i].send_pos == VT_MPOS_NONE || cr[i].key >= nk)
                    continue;
                uint32_t src = keys[cr[i].key].src;
                size_t ns = 0;
                const vt_match_csend *cs = vt_matches_csends(m, src, &ns);
                if (src >= R->nranks || cr[i].send_pos >= ns)
                    continue;
                add_msg(R, src, send_t[src][cr[i].send_pos], d, vt_global_time(R->t, d, cr[i].done_exit),
                        cs[cr[i].send_pos].bytes);
            }
        }
    }
    rc = 0;
    goto out;
oom:
    snprintf(err->msg, sizeof err->msg, "out of memory");
out:
    if (send_t)
        for (uint32_t r = 0; r < R->nranks; r++)
            free(send_t[r]);
    free(send_t);
    vt_matches_free(m);
    return rc;
}

/* ------------------------------------------------------------------ the whole collection */

int vt__report_collect(report *R, int quiet)
{
    const char *dir = R->dir;
    vt_error err;
    if (build_fnmap(R) || vt__report_heap_init(&R->ev, R->max_events, sizeof(rev)) ||
        vt__report_heap_init(&R->msg, R->max_events, sizeof(rmsg)) ||
        vt__report_heap_init(&R->mark, R->max_events, sizeof(rmark)) ||
        vt__report_heap_init(&R->agg, R->max_events, sizeof(ragg))) {
        fprintf(stderr, "vtrace: out of memory\n");
        return VT_EXIT_ERROR;
    }
    vt__progress_start(&R->prog, "report", 2 + (R->top ? R->top : 1) + R->nranks, quiet);
    /* The analyses: a trace they cannot replay still gets its timeline and profile, and
     * the page says why they are missing. */
    if (critical_path(R))
        fprintf(stderr, "vtrace: warning: %s: no critical path: %s\n", dir, R->cp_error);
    step(R);
    if (domino_whatif(R))
        fprintf(stderr, "vtrace: warning: %s: no domino path or what-if gains: %s\n", dir, R->an_error);
    if (vt_patterns_analyze(R->t, NULL, 0, &R->pat, &err)) {
        snprintf(R->pat_error, sizeof R->pat_error, "%s", err.msg);
        R->pat = NULL;
        fprintf(stderr, "vtrace: warning: %s: no wait-state patterns: %s\n", dir, R->pat_error);
    }
    if (build_wants(R)) {
        vt__progress_end(&R->prog);
        fprintf(stderr, "vtrace: out of memory\n");
        return VT_EXIT_ERROR;
    }
    if (timeline(R, &err)) {
        vt__progress_end(&R->prog);
        return vt__fail(&err);
    }
    vt__progress_end(&R->prog);
    return VT_EXIT_OK;
}

void vt__report_free(report *R)
{
    for (size_t i = 0; i < R->nfn; i++)
        free(R->fnames[i]);
    free(R->fnames);
    if (R->fnmap)
        for (uint32_t r = 0; r < R->nranks; r++)
            free(R->fnmap[r]);
    free(R->fnmap);
    free(R->cpfn);
    vt_critpath_free(R->cp);
    vt_domino_free(&R->dom);
    vt_agg_free(&R->fix_rank);
    vt_agg_free(&R->fix_fn);
    vt_patterns_free(R->pat);
    free(R->wants);
    vt__report_heap_free(&R->ev);
    vt__report_heap_free(&R->msg);
    vt__report_heap_free(&R->mark);
    vt__report_heap_free(&R->agg);
}
