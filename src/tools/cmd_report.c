/* vtrace report DIR -o FILE: one self-contained HTML page (inline CSS and JavaScript,
 * the data as embedded JSON, nothing fetched) with a zoomable timeline per rank (MPI
 * calls, messages, iteration markers, a reduced trace's aggregated stretches), the
 * critical path of the measured run (critpath.h), the domino path (as vtrace domino
 * computes it), the per-function profile and the what-if gains of the longest
 * candidates. The page's CSS and JavaScript are src/tools/report/report.{css,js},
 * turned into C strings at build time (src/tools/report/embed.sh). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/critpath.h"
#include "analysis/domino.h"
#include "analysis/patterns.h"
#include "model/model.h"
#include "tools/progress.h"
#include "analysis/replay.h"
#include "util/settings.h"
#include "tools/report_assets.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vt__usage_report(FILE *out)
{
    fprintf(out, "usage: vtrace report [OPTIONS] -o FILE DIR\n"
                 "Writes one self-contained HTML page about the trace DIR (full or reduced): a timeline\n"
                 "per rank (MPI calls, messages, iteration markers, aggregated stretches of a reduced\n"
                 "trace) with zoom (wheel) and pan (drag), the critical path of the measured run, the\n"
                 "domino path, the per-function profile and the what-if gains of the longest candidates.\n\n"
                 "  -o, --output FILE       the page ('-': standard output)\n"
                 "      --max-events N      embed at most N calls (the longest; default 200000), and at\n"
                 "                          most N messages, markers, aggregated stretches and path\n"
                 "                          segments; the page says how many were left out\n"
                 "  -k, --top K             domino steps (default 5; 0: none)\n"
                 "      --whatif N          what-if rows: the N longest candidates, each eliminated alone\n"
                 "                          (default 10; 0: none)\n"
                 "      --max-candidates N  candidates the domino path considers, longest first (400)\n"
                 "      --threshold DUR     override the trace's candidate threshold (e.g. 500us)\n"
                 "  -q, --quiet             no progress display\n");
}

/* ------------------------------------------------------------------ small containers */

typedef struct rev {     /* a call on the timeline */
    int64_t start, dur;  /* global ns */
    uint64_t seq;
    uint32_t rank;
    int32_t fn;          /* index in the report's function names */
    unsigned flags;      /* 1 on the critical path */
} rev;

typedef struct rmsg {
    int64_t s, r;        /* send enter, receive end (global ns) */
    uint64_t bytes;
    uint32_t src, dst;
} rmsg;

typedef struct rmark {
    int64_t t, value;
    uint64_t kind;
    uint32_t rank;
} rmark;

typedef struct ragg {
    int64_t start, dur;
    uint64_t nevents;
    uint32_t rank;
} ragg;

/* A bounded collection keeping the N items with the largest keys (a min-heap). */
typedef struct heap {
    char *v;
    int64_t *key;
    size_t n, cap, size;
    uint64_t total;
} heap;

static int heap_init(heap *h, size_t cap, size_t size)
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

static void heap_free(heap *h)
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

static void heap_push(heap *h, const void *item, int64_t key)
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

/* ------------------------------------------------------------------ the report */

typedef struct want {    /* an event whose times the page needs (domino, what-if) */
    uint32_t rank;
    uint64_t seq;
    int64_t start, end;  /* global ns; start > end: not found */
} want;

typedef struct report {
    const char *dir;
    vt_trace *t;
    uint32_t nranks;
    int reduced;
    vt_model_params p;
    uint32_t max_events, top, nwhatif, maxc;
    vt__progress prog;
    uint64_t done;
    /* function names (across ranks) */
    char **fnames;
    size_t nfn, fncap;
    int32_t **fnmap;     /* per rank: function id -> name index */
    /* critical path */
    vt_critpath *cp;
    const vt_critpath_result *cpr;
    vt_cp_part *cpfn;
    size_t ncpfn;
    char cp_error[VT_ERROR_MAX];
    int64_t rstart;      /* replay's start (global ns) */
    int64_t measured;    /* measured run time (ns), -1 unknown */
    uint64_t clock_violations;
    /* candidates, domino, what-if (domino.h) */
    vt_domino dom;
    /* wait-state patterns (patterns.h) */
    vt_patterns *pat;
    char pat_error[VT_ERROR_MAX];
    char an_error[VT_ERROR_MAX];
    want *wants;
    size_t nwants;
    /* timeline */
    heap ev, msg, mark, agg;
    int64_t tmin, tmax;
    int have_t;
} report;

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
    qsort(R->wants, R->nwants, sizeof *R->wants, want_cmp);
    return 0;
}

static const want *find_want(const report *R, uint32_t rank, uint64_t seq)
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
    heap_push(&R->ev, &e, ev_key(b - a, on));
    seen_time(R, a, b);
}

static void add_msg(report *R, uint32_t src, int64_t s, uint32_t dst, int64_t r, uint64_t bytes)
{
    rmsg m = {s, r, bytes, src, dst};
    heap_push(&R->msg, &m, r - s);
}

static int timeline_full(report *R, uint32_t r, const vt_matches *m, int64_t **send_t, vt_error *err)
{
    vt_cursor *c;
    vt_event ev;
    walker wk;
    segwalk sw;
    size_t ns = 0, sp = 0;
    const vt_match_csend *cs = m ? vt_matches_csends(m, r, &ns) : NULL;
    if (segwalk_init(R, &sw, r)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    walker_init(R, &wk, r);
    if (vt_cursor_open(R->t, r, &c, err)) {
        free(sw.v);
        return -1;
    }
    int got;
    int64_t prev_exit = INT64_MIN;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        int64_t a = vt_global_time(R->t, r, ev.enter), b = vt_global_time(R->t, r, ev.exit);
        if (ev.fn < 0) {
            if (ev.code == 2) { /* MARKER */
                rmark mk = {a, ev.marker_value, ev.marker_kind, r};
                heap_push(&R->mark, &mk, -(int64_t)R->mark.total); /* keeps the first ones */
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
    if (segwalk_init(R, &sw, r)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    walker_init(R, &wk, r);
    if (vt_cursor_open(R->t, r, &c, err)) {
        free(sw.v);
        return -1;
    }
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
                heap_push(&R->agg, &g, gend - prev_exit);
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

/* ------------------------------------------------------------------ output */

/* JSON string inside a <script> element: vt__json_str, with '<' escaped so that no
 * "</script>" or "<!--" can end the element. */
static void jstr(FILE *out, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fputs("\"\"", out);
        return;
    }
    vt__json_str(mem, s);
    fclose(mem);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '<')
            fputs("\\u003c", out);
        else
            putc(buf[i], out);
    }
    free(buf);
}

static void jkey(FILE *out, int *first, const char *k)
{
    vt__json_key(out, first, k);
}

static int cmp_ev(const void *a, const void *b)
{
    const rev *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_msg(const void *a, const void *b)
{
    const rmsg *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

static int cmp_mark(const void *a, const void *b)
{
    const rmark *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_agg(const void *a, const void *b)
{
    const ragg *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void counts(FILE *o, int *first, const heap *h)
{
    jkey(o, first, "total");
    fprintf(o, "%" PRIu64, h->total);
    jkey(o, first, "embedded");
    fprintf(o, "%zu", h->n);
    jkey(o, first, "omitted");
    fprintf(o, "%" PRIu64, h->total - h->n);
}

typedef struct pfrow {
    const char *name;
    uint64_t calls, time, bytes;
} pfrow;

static int cmp_pf(const void *a, const void *b)
{
    const pfrow *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void write_profile(report *R, FILE *o)
{
    pfrow *rows = calloc(R->nfn + 1, sizeof *rows);
    uint64_t total = 0;
    if (!rows) {
        fputs("[]", o);
        return;
    }
    for (size_t i = 0; i < R->nfn; i++)
        rows[i].name = R->fnames[i];
    for (uint32_t r = 0; r < R->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(R->t, r);
        for (size_t i = 0; i < rk->nprofile; i++) {
            const vt_profile *pf = &rk->profile[i];
            if (pf->fn >= rk->nfuncs)
                continue;
            pfrow *x = &rows[R->fnmap[r][pf->fn]];
            x->calls += pf->calls;
            x->time += pf->time_ns;
            x->bytes += pf->bytes;
            total += pf->time_ns;
        }
    }
    qsort(rows, R->nfn, sizeof *rows, cmp_pf);
    putc('[', o);
    int any = 0;
    for (size_t i = 0; i < R->nfn; i++) {
        if (!rows[i].calls)
            continue;
        fprintf(o, "%s{\"function\":", any ? "," : "");
        jstr(o, rows[i].name);
        fprintf(o, ",\"calls\":%" PRIu64 ",\"time_ns\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"share\":%.6f}",
                rows[i].calls, rows[i].time, rows[i].bytes, total ? (double)rows[i].time / (double)total : 0.0);
        any = 1;
    }
    putc(']', o);
    free(rows);
}

static void write_event_ref(report *R, FILE *o, uint32_t rank, uint64_t seq, int64_t t0)
{
    const want *w = find_want(R, rank, seq);
    fprintf(o, "\"event\":\"%u:%" PRIu64 "\",\"rank\":%u,\"seq\":%" PRIu64, rank, seq, rank, seq);
    if (w && w->start <= w->end)
        fprintf(o, ",\"start\":%" PRId64 ",\"end\":%" PRId64, w->start - t0, w->end - t0);
}

static int cmp_gain(const void *a, const void *b)
{
    const vt_domino_cand *x = *(const vt_domino_cand *const *)a, *y = *(const vt_domino_cand *const *)b;
    return x->alone < y->alone ? -1 : x->alone > y->alone;
}

/* The wait-state patterns: totals per pattern and the largest findings (rank, call site). */
static void write_patterns(report *R, FILE *o)
{
    int first = 1;
    putc('{', o);
    jkey(o, &first, "available");
    fputs(R->pat ? "true" : "false", o);
    if (!R->pat) {
        jkey(o, &first, "error");
        jstr(o, R->pat_error);
        putc('}', o);
        return;
    }
    const vt_patterns *P = R->pat;
    jkey(o, &first, "reduced");
    fputs(P->reduced ? "true" : "false", o);
    jkey(o, &first, "total_ns");
    fprintf(o, "%" PRId64, P->total_ns);
    jkey(o, &first, "totals");
    putc('[', o);
    for (size_t i = 0, n = 0; i < P->nnames; i++) {
        if (!P->counts[i] && !P->totals_ns[i])
            continue;
        fprintf(o, "%s{\"pattern\":", n++ ? "," : "");
        jstr(o, P->names[i]);
        fprintf(o, ",\"severity_ns\":%" PRId64 ",\"count\":%" PRIu64 ",\"bound\":\"%s\"}", P->totals_ns[i],
                P->counts[i],
                P->bounds[i] == VT_BOUND_LOWER   ? "lower"
                : P->bounds[i] == VT_BOUND_UPPER ? "upper"
                                                 : "exact");
    }
    putc(']', o);
    jkey(o, &first, "findings");
    putc('[', o);
    for (size_t i = 0; i < P->nentries && i < 30; i++) {
        const vt_pattern_result_entry *e = &P->entries[i];
        char site[512] = "?";
        const vt_callsite *cs = vt_trace_callsite(R->t, e->rank, e->callsite);
        if (cs)
            vt__format_site(site, sizeof site, cs);
        fprintf(o, "%s{\"pattern\":", i ? "," : "");
        jstr(o, (size_t)e->pattern < P->nnames ? P->names[e->pattern] : "?");
        fprintf(o, ",\"rank\":%u,\"callsite\":", e->rank);
        jstr(o, site);
        fprintf(o, ",\"severity_ns\":%" PRId64 ",\"count\":%" PRIu64 "}", e->severity_ns, e->count);
    }
    putc(']', o);
    putc('}', o);
}

static void write_data(report *R, FILE *o)
{
    int first = 1;
    int64_t t0 = R->have_t ? R->tmin : 0;
    if (R->cpr && R->rstart < t0)
        t0 = R->rstart;
    putc('{', o);
    jkey(o, &first, "format");
    jstr(o, "vtrace-report");
    jkey(o, &first, "version");
    fputs("1", o);
    jkey(o, &first, "generator");
    jstr(o, "vtrace " PACKAGE_VERSION);
    jkey(o, &first, "trace");
    jstr(o, R->dir);
    jkey(o, &first, "kind");
    jstr(o, R->reduced ? "reduced" : "full");
    jkey(o, &first, "trace_version");
    jstr(o, vt_trace_version(R->t));
    jkey(o, &first, "mpi_version");
    jstr(o, vt_trace_mpi_version(R->t));
    jkey(o, &first, "incomplete");
    fputs(vt_trace_flags(R->t) & 1 ? "true" : "false", o);
    jkey(o, &first, "nranks");
    fprintf(o, "%u", R->nranks);
    jkey(o, &first, "hosts");
    putc('[', o);
    for (uint32_t r = 0; r < R->nranks; r++) {
        if (r)
            putc(',', o);
        jstr(o, vt_trace_rank(R->t, r)->hostname);
    }
    putc(']', o);
    jkey(o, &first, "start_ns");
    fprintf(o, "%" PRId64, t0);
    jkey(o, &first, "duration_ns");
    fprintf(o, "%" PRId64, R->have_t ? R->tmax - t0 : 0);
    jkey(o, &first, "measured_ns");
    fprintf(o, "%" PRId64, R->measured);
    jkey(o, &first, "threshold_ns");
    fprintf(o, "%" PRId64, R->p.theta);
    jkey(o, &first, "max_events");
    fprintf(o, "%u", R->max_events);
    jkey(o, &first, "clock_violations");
    fprintf(o, "%" PRIu64, R->clock_violations);
    jkey(o, &first, "functions");
    putc('[', o);
    for (size_t i = 0; i < R->nfn; i++) {
        if (i)
            putc(',', o);
        jstr(o, R->fnames[i]);
    }
    putc(']', o);

    /* timeline */
    int f2;
    jkey(o, &first, "events");
    f2 = 1;
    putc('{', o);
    counts(o, &f2, &R->ev);
    jkey(o, &f2, "fields");
    fputs("[\"rank\",\"start\",\"dur\",\"fn\",\"seq\",\"flags\"]", o);
    jkey(o, &f2, "data");
    putc('[', o);
    rev *ev = (rev *)R->ev.v;
    if (R->ev.n)
        qsort(ev, R->ev.n, sizeof *ev, cmp_ev);
    for (size_t i = 0; i < R->ev.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%" PRId64 ",%d,%" PRIu64 ",%u]\n", i ? "," : "", ev[i].rank, ev[i].start - t0,
                ev[i].dur, ev[i].fn, ev[i].seq, ev[i].flags);
    fputs("]}", o);

    jkey(o, &first, "messages");
    f2 = 1;
    putc('{', o);
    counts(o, &f2, &R->msg);
    jkey(o, &f2, "fields");
    fputs("[\"src\",\"send\",\"dst\",\"recv\",\"bytes\"]", o);
    jkey(o, &f2, "data");
    putc('[', o);
    rmsg *ms = (rmsg *)R->msg.v;
    if (R->msg.n)
        qsort(ms, R->msg.n, sizeof *ms, cmp_msg);
    for (size_t i = 0; i < R->msg.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%u,%" PRId64 ",%" PRIu64 "]\n", i ? "," : "", ms[i].src, ms[i].s - t0, ms[i].dst,
                ms[i].r - t0, ms[i].bytes);
    fputs("]}", o);

    jkey(o, &first, "markers");
    f2 = 1;
    putc('{', o);
    counts(o, &f2, &R->mark);
    jkey(o, &f2, "fields");
    fputs("[\"rank\",\"t\",\"kind\",\"value\"]", o);
    jkey(o, &f2, "data");
    putc('[', o);
    rmark *mk = (rmark *)R->mark.v;
    if (R->mark.n)
        qsort(mk, R->mark.n, sizeof *mk, cmp_mark);
    for (size_t i = 0; i < R->mark.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%" PRIu64 ",%" PRId64 "]", i ? "," : "", mk[i].rank, mk[i].t - t0, mk[i].kind,
                mk[i].value);
    fputs("]}", o);

    jkey(o, &first, "aggregated");
    f2 = 1;
    putc('{', o);
    counts(o, &f2, &R->agg);
    jkey(o, &f2, "fields");
    fputs("[\"rank\",\"start\",\"dur\",\"events\"]", o);
    jkey(o, &f2, "data");
    putc('[', o);
    ragg *ag = (ragg *)R->agg.v;
    if (R->agg.n)
        qsort(ag, R->agg.n, sizeof *ag, cmp_agg);
    for (size_t i = 0; i < R->agg.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%" PRId64 ",%" PRIu64 "]\n", i ? "," : "", ag[i].rank, ag[i].start - t0,
                ag[i].dur, ag[i].nevents);
    fputs("]}", o);

    /* critical path */
    jkey(o, &first, "critical_path");
    f2 = 1;
    putc('{', o);
    jkey(o, &f2, "available");
    fputs(R->cpr ? "true" : "false", o);
    if (!R->cpr) {
        jkey(o, &f2, "error");
        jstr(o, R->cp_error);
    } else {
        const vt_critpath_result *c = R->cpr;
        jkey(o, &f2, "length_ns");
        fprintf(o, "%" PRId64, c->length);
        jkey(o, &f2, "predicted_ns");
        fprintf(o, "%" PRId64, c->end - c->start);
        jkey(o, &f2, "end_rank");
        fprintf(o, "%u", c->end_rank);
        jkey(o, &f2, "startup_ns");
        fprintf(o, "%" PRId64, c->startup);
        jkey(o, &f2, "consistent");
        fputs(c->consistent ? "true" : "false", o);
        jkey(o, &f2, "steps");
        fprintf(o, "%zu", c->nsteps);
        /* the longest segments, and the edges between two segments kept */
        size_t keep = c->nsegments < R->max_events ? c->nsegments : R->max_events;
        char *kept = calloc(c->nsegments + 1, 1);
        if (kept && keep < c->nsegments) {
            heap h;
            if (heap_init(&h, keep, sizeof(size_t)) == 0) {
                for (size_t i = 0; i < c->nsegments; i++)
                    heap_push(&h, &i, c->segments[i].end - c->segments[i].start);
                for (size_t i = 0; i < h.n; i++)
                    kept[((size_t *)h.v)[i]] = 1;
            }
            heap_free(&h);
        } else if (kept) {
            memset(kept, 1, c->nsegments);
        }
        size_t nkept = 0;
        jkey(o, &f2, "segments");
        fputs("{\"fields\":[\"rank\",\"start\",\"end\",\"first_seq\",\"last_seq\"],\"data\":[", o);
        for (size_t i = 0; kept && i < c->nsegments; i++) {
            const vt_cp_segment *s = &c->segments[i];
            if (!kept[i])
                continue;
            fprintf(o, "%s[%u,%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 "]\n", nkept ? "," : "", s->rank,
                    s->start - t0, s->end - t0, s->first_seq, s->last_seq);
            nkept++;
        }
        fprintf(o, "],\"total\":%zu,\"embedded\":%zu,\"omitted\":%zu}", c->nsegments, nkept, c->nsegments - nkept);
        jkey(o, &f2, "edges");
        fputs("{\"fields\":[\"kind\",\"from_rank\",\"from\",\"to_rank\",\"to\",\"ns\"],\"data\":[", o);
        size_t ne = 0;
        for (size_t i = 0; kept && i < c->nedges && i + 1 < c->nsegments; i++) {
            const vt_cp_edge *e = &c->edges[i];
            if (!kept[i] || !kept[i + 1])
                continue;
            const char *kind = e->kind == VT_CP_MESSAGE ? "message" : e->kind == VT_CP_SYNC ? "sync" : "collective";
            fprintf(o, "%s[\"%s\",%u,%" PRId64 ",%u,%" PRId64 ",%" PRId64 "]\n", ne ? "," : "", kind, e->from_rank,
                    c->segments[i].end - t0, e->to_rank, c->segments[i + 1].start - t0, e->ns);
            ne++;
        }
        fprintf(o, "],\"total\":%zu,\"embedded\":%zu}", c->nedges, ne);
        free(kept);
        jkey(o, &f2, "per_rank");
        putc('[', o);
        for (uint32_t k = 0; k < c->nranks; k++)
            fprintf(o, "%s%" PRId64, k ? "," : "", c->per_rank[k]);
        putc(']', o);
        jkey(o, &f2, "per_function");
        putc('[', o);
        for (size_t i = 0; i < R->ncpfn; i++) {
            fprintf(o, "%s{\"function\":", i ? "," : "");
            jstr(o, R->cpfn[i].name);
            fprintf(o, ",\"ns\":%" PRId64 ",\"events\":%" PRIu64 "}", R->cpfn[i].ns, R->cpfn[i].events);
        }
        putc(']', o);
    }
    putc('}', o);

    /* domino path and what-if */
    jkey(o, &first, "analysis_error");
    jstr(o, R->an_error);
    jkey(o, &first, "candidates");
    fprintf(o, "%zu", R->dom.n);
    jkey(o, &first, "domino");
    putc('[', o);
    int64_t prev = R->measured;
    for (size_t s = 0; s < R->dom.nsteps; s++) {
        const vt_domino_cand *c = &R->dom.c[R->dom.order[s]];
        int64_t pred = R->dom.pred[s];
        fprintf(o, "%s{\"step\":%zu,", s ? "," : "", s + 1);
        write_event_ref(R, o, c->rank, c->seq, t0);
        fputs(",\"what\":", o);
        jstr(o, c->fn);
        fprintf(o, ",\"duration_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64 ",\"step_gain_ns\":%" PRId64
                   ",\"gain_ns\":%" PRId64 ",\"gain_pct\":%.3f}\n",
                c->dur, pred, prev - pred, R->measured - pred,
                R->measured > 0 ? 100.0 * (double)(R->measured - pred) / (double)R->measured : 0.0);
        prev = pred;
    }
    putc(']', o);
    jkey(o, &first, "whatif");
    putc('[', o);
    size_t nw = R->nwhatif < R->dom.n ? R->nwhatif : R->dom.n;
    const vt_domino_cand **rows = calloc(nw + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < nw; i++)
        if (R->dom.c[i].alone >= 0)
            rows[nr++] = &R->dom.c[i];
    if (nr)
        qsort(rows, nr, sizeof *rows, cmp_gain);
    for (size_t i = 0; i < nr; i++) {
        const vt_domino_cand *c = rows[i];
        fprintf(o, "%s{", i ? "," : "");
        write_event_ref(R, o, c->rank, c->seq, t0);
        fputs(",\"what\":", o);
        jstr(o, c->fn);
        fprintf(o, ",\"duration_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64 ",\"gain_ns\":%" PRId64
                   ",\"gain_pct\":%.3f}\n",
                c->dur, c->alone, R->measured - c->alone,
                R->measured > 0 ? 100.0 * (double)(R->measured - c->alone) / (double)R->measured : 0.0);
    }
    free(rows);
    putc(']', o);
    jkey(o, &first, "patterns");
    write_patterns(R, o);
    jkey(o, &first, "profile");
    write_profile(R, o);
    putc('}', o);
}

static void write_lines(FILE *o, const char *const *lines)
{
    for (; *lines; lines++)
        fputs(*lines, o);
}

static void write_page(report *R, FILE *o)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>vtrace report</title>\n<style>\n",
          o);
    write_lines(o, vt__report_css);
    fputs("</style>\n</head>\n<body data-vt-status=\"loading\">\n"
          "<noscript><p class=\"vt-error\">This report needs JavaScript.</p></noscript>\n"
          "<div id=\"vt-errors\"></div>\n<div id=\"vt-app\"></div>\n"
          "<script type=\"application/json\" id=\"vt-data\">",
          o);
    write_data(R, o);
    fputs("</script>\n<script>\n", o);
    write_lines(o, vt__report_js);
    fputs("</script>\n</body>\n</html>\n", o);
}

/* ------------------------------------------------------------------ the command */

static void report_free(report *R)
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
    vt_patterns_free(R->pat);
    free(R->wants);
    heap_free(&R->ev);
    heap_free(&R->msg);
    heap_free(&R->mark);
    heap_free(&R->agg);
}

int vt__cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *threshold = NULL;
    int quiet = 0, rc = VT_EXIT_ERROR;
    report R;
    memset(&R, 0, sizeof R);
    R.max_events = 200000;
    R.top = 5;
    R.nwhatif = 10;
    R.maxc = 400;
    R.measured = -1;
    const vt__opt opts[] = {
        {"-o", "--output", VT_OPT_STRING, .dest = &out, .flags = VT_OPT_EQ},
        {NULL, "--max-events", VT_OPT_COUNT, .dest = &R.max_events},
        {"-k", "--top", VT_OPT_COUNT, .dest = &R.top},
        {NULL, "--whatif", VT_OPT_COUNT, .dest = &R.nwhatif},
        {NULL, "--max-candidates", VT_OPT_POSITIVE, .dest = &R.maxc},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {0},
    };
    const vt__args args = {.usage = vt__usage_report, .opts = opts, .pos = {&dir}};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (!out)
        return vt__usage_error(vt__usage_report, "missing -o FILE (the HTML page to write)");
    if (!dir)
        return vt__usage_error(vt__usage_report, "missing trace directory");
    int64_t theta = 0;
    if (threshold && vt_parse_duration(threshold, &theta))
        return vt__usage_error(vt__usage_report, "--threshold takes a duration such as 500us, not '%s'", threshold);

    /* The output first: an unwritable place is reported before the long part. The page
     * is written to a temporary file beside it and renamed when complete. */
    int to_stdout = !strcmp(out, "-");
    char *tmp = NULL;
    FILE *o = stdout;
    if (!to_stdout) {
        size_t len = strlen(out) + 16;
        tmp = malloc(len);
        if (!tmp) {
            fprintf(stderr, "vtrace: out of memory\n");
            return VT_EXIT_ERROR;
        }
        snprintf(tmp, len, "%s.tmpXXXXXX", out);
        int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            free(tmp);
            return VT_EXIT_ERROR;
        }
        mode_t um = umask(0);
        umask(um);
        if (fchmod(fd, 0666 & ~um) != 0 || !(o = fdopen(fd, "w"))) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return VT_EXIT_ERROR;
        }
    }

    vt_error err;
    R.dir = dir;
    if (vt_trace_open(dir, &R.t, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    R.nranks = vt_trace_nranks(R.t);
    R.reduced = vt_trace_is_reduced(R.t);
    if (vt__model_params(R.t, dir, NULL, vt__usage_report, &R.p) != VT_ARGS_GO)
        goto out;
    if (threshold)
        R.p.theta = theta;
    if (build_fnmap(&R) || heap_init(&R.ev, R.max_events, sizeof(rev)) ||
        heap_init(&R.msg, R.max_events, sizeof(rmsg)) || heap_init(&R.mark, R.max_events, sizeof(rmark)) ||
        heap_init(&R.agg, R.max_events, sizeof(ragg))) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    vt__progress_start(&R.prog, "report", 1 + (R.top ? R.top : 1) + R.nranks, quiet);
    /* The analyses: a trace they cannot replay still gets its timeline and profile, and
     * the page says why they are missing. */
    if (critical_path(&R))
        fprintf(stderr, "vtrace: warning: %s: no critical path: %s\n", dir, R.cp_error);
    step(&R);
    if (domino_whatif(&R))
        fprintf(stderr, "vtrace: warning: %s: no domino path or what-if gains: %s\n", dir, R.an_error);
    if (vt_patterns_analyze(R.t, NULL, 0, &R.pat, &err)) {
        snprintf(R.pat_error, sizeof R.pat_error, "%s", err.msg);
        R.pat = NULL;
        fprintf(stderr, "vtrace: warning: %s: no wait-state patterns: %s\n", dir, R.pat_error);
    }
    if (build_wants(&R)) {
        vt__progress_end(&R.prog);
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    if (timeline(&R, &err)) {
        vt__progress_end(&R.prog);
        rc = vt__fail(&err);
        goto out;
    }
    vt__progress_end(&R.prog);
    write_page(&R, o);
    if (fflush(o) != 0 || ferror(o)) {
        fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", to_stdout ? "standard output" : out,
                strerror(errno));
        goto out;
    }
    if (!to_stdout) {
        int bad = fclose(o) != 0;
        o = NULL;
        if (bad || rename(tmp, out) != 0) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            goto out;
        }
        free(tmp);
        tmp = NULL;
    }
    rc = VT_EXIT_OK;
out:
    if (!to_stdout && o)
        fclose(o);
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    report_free(&R);
    vt_trace_close(R.t);
    return rc;
}
