/* vtrace report, the timeline (issue 15): one pass over each rank's stream that keeps
 * memory bounded whatever the trace's length. Every call goes into the bins (report.h,
 * ranks x bins); only the calls of the detail window, at most --max-events of them, are
 * kept one by one, with the messages that cross the window. Also: markers, a reduced
 * trace's aggregated stretches, the times of the events the page points to, and the
 * bounded collections (heaps) they are kept in. */
#include "vt_config.h"
#include "tools/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ bounded collections */

/* The items are allocated as they come (doubling, up to CAP): a small trace's page
 * takes little memory. */
int vt__report_heap_init(heap *h, size_t cap, size_t size)
{
    memset(h, 0, sizeof *h);
    h->cap = cap;
    h->size = size;
    return 0;
}

static int heap_grow(heap *h)
{
    size_t nc = h->alloc ? 2 * h->alloc : 1024;
    if (nc > h->cap)
        nc = h->cap;
    char *v = realloc(h->v, nc * h->size);
    if (!v)
        return -1;
    h->v = v;
    int64_t *k = realloc(h->key, nc * sizeof *k);
    if (!k)
        return -1;
    h->key = k;
    h->alloc = nc;
    return 0;
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
        if (h->n == h->alloc && heap_grow(h)) {
            h->lost++;
            return;
        }
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

/* ------------------------------------------------------------------ bins */

/* Bins per rank: a few thousand (a page is about 1,400 pixels wide and is zoomed), fewer
 * at many ranks so that ranks x bins stays under 2^21 (64 MiB). */
static uint32_t bins_per_rank(uint32_t nranks)
{
    uint64_t n = (UINT64_C(1) << 21) / (nranks ? nranks : 1);
    return n > 4096 ? 4096 : n < 16 ? 16 : (uint32_t)n;
}

/* The run's first enter (MPI_Init's: its end less its mean duration in the profile) and
 * its last exit (MPI_Finalize's end), estimated from the ranks' definitions; the grid
 * grows when calls go past the end. */
static void run_extent(report *R, int64_t *first, int64_t *last)
{
    *first = INT64_MAX;
    *last = INT64_MIN;
    for (uint32_t r = 0; r < R->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(R->t, r);
        int64_t init = 0, fini = 0;
        for (size_t i = 0; i < rk->nprofile; i++) {
            const vt_profile *pf = &rk->profile[i];
            if (pf->fn >= rk->nfuncs || !pf->calls)
                continue;
            const char *nm = rk->funcs[pf->fn].name;
            if (!strncmp(nm, "MPI_Init", 8))
                init = (int64_t)(pf->time_ns / pf->calls);
            else if (!strcmp(nm, "MPI_Finalize"))
                fini = (int64_t)(pf->time_ns / pf->calls);
        }
        int64_t a = vt_global_time(R->t, r, rk->init_time) - init - 1;
        int64_t b = vt_global_time(R->t, r, rk->fini_time) + fini + 1;
        if (a < *first)
            *first = a;
        if (rk->fini_time > rk->init_time && b > *last)
            *last = b;
    }
    if (*first == INT64_MAX)
        *first = 0;
    if (*last <= *first)
        *last = *first + 1000000;
}

static int bins_init(report *R)
{
    rbins *B = &R->bins;
    int64_t first, last;
    run_extent(R, &first, &last);
    B->nbins = bins_per_rank(R->nranks);
    B->origin = first;
    B->width = (last - first) / B->nbins + 1;
    B->b = calloc((size_t)R->nranks * B->nbins, sizeof *B->b);
    B->acc = calloc(R->nfn + 1, sizeof *B->acc);
    B->touched = calloc(R->nfn + 1, sizeof *B->touched);
    return B->b && B->acc && B->touched ? 0 : -1;
}

/* Closes the open bin: its dominant function from the time per function. */
static void bins_close(report *R)
{
    rbins *B = &R->bins;
    if (!B->open)
        return;
    rbin *x = &B->b[(size_t)B->rank * B->nbins + B->cur];
    int32_t best = -2;
    int64_t bns = 0;
    for (size_t i = 0; i < B->ntouched; i++) {
        int32_t f = B->touched[i];
        if (B->acc[f] > bns) {
            bns = B->acc[f];
            best = f;
        }
        B->acc[f] = 0;
    }
    B->ntouched = 0;
    B->open = 0;
    if (best == -2)
        return;
    if (best == (int32_t)R->nfn)
        best = -1;
    if (x->dom_ns && x->dom == best)
        x->dom_ns += bns;
    else if (bns > x->dom_ns) {
        x->dom = best;
        x->dom_ns = bns;
    }
}

/* Twice the width: neighbouring bins merged on every rank read so far. */
static void bins_double(report *R)
{
    rbins *B = &R->bins;
    bins_close(R);
    for (uint32_t r = 0; r <= B->rank && r < R->nranks; r++) {
        rbin *b = &B->b[(size_t)r * B->nbins];
        for (uint32_t j = 0; j < B->nbins / 2; j++) {
            rbin x = b[2 * j], y = b[2 * j + 1];
            x.mpi += y.mpi;
            x.agg += y.agg;
            x.calls += y.calls;
            if (x.dom_ns && y.dom_ns && x.dom == y.dom)
                x.dom_ns += y.dom_ns;
            else if (y.dom_ns > x.dom_ns) {
                x.dom = y.dom;
                x.dom_ns = y.dom_ns;
            }
            b[j] = x;
        }
        memset(b + B->nbins / 2, 0, (B->nbins - B->nbins / 2) * sizeof *b);
    }
    B->width *= 2;
}

/* [a, b) of rank R: a call of function FN (report's index, -1 unknown), or a reduced
 * trace's aggregated stretch (AGG). */
static void bins_add(report *R, uint32_t r, int32_t fn, int64_t a, int64_t b, int agg)
{
    rbins *B = &R->bins;
    if (a < B->origin) {
        B->clamped += !agg;
        a = B->origin;
    }
    if (b < a)
        b = a;
    if (B->open && B->rank != r)
        bins_close(R);
    B->rank = r;
    while ((b - B->origin) / B->width >= B->nbins)
        bins_double(R);
    uint32_t i = (uint32_t)((a - B->origin) / B->width), last = (uint32_t)((b - B->origin) / B->width);
    rbin *row = &B->b[(size_t)r * B->nbins];
    if (!agg)
        row[i].calls++;
    int32_t slot = fn >= 0 ? fn : (int32_t)R->nfn;
    for (; i <= last; i++) {
        int64_t s = B->origin + (int64_t)i * B->width, e = s + B->width;
        int64_t part = (b < e ? b : e) - (a > s ? a : s);
        if (part <= 0)
            continue;
        if (agg) {
            row[i].agg += part;
            continue;
        }
        row[i].mpi += part;
        if (B->open && B->cur != i)
            bins_close(R);
        B->cur = i;
        B->open = 1;
        if (!B->acc[slot])
            B->touched[B->ntouched++] = slot;
        B->acc[slot] += part;
    }
}

/* ------------------------------------------------------------------ walkers */

static void seen_time(report *R, int64_t a, int64_t b)
{
    if (!R->have_t || a < R->tmin)
        R->tmin = a;
    if (!R->have_t || b > R->tmax)
        R->tmax = b;
    R->have_t = 1;
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

/* ------------------------------------------------------------------ detail */

/* Each rank keeps its calls from w0 on, up to its share of --max-events; where a rank
 * runs out, the window ends (w1), so that the window holds every call of every rank. */
typedef struct detail {
    uint64_t kept, share;
} detail;

static void add_call(report *R, detail *d, uint32_t r, int64_t fn, uint64_t seq, int64_t a, int64_t b)
{
    int32_t f = fn >= 0 && (size_t)fn < vt_trace_rank(R->t, r)->nfuncs ? R->fnmap[r][fn] : -1;
    R->ev_total++;
    seen_time(R, a, b);
    bins_add(R, r, f, a, b, 0);
    if (b < R->w0 || a >= R->w1)
        return;
    if (d->kept >= d->share || R->nev >= R->evcap) {
        R->w1 = a;
        return;
    }
    if (R->nev == R->evalloc) {
        size_t nc = R->evalloc ? 2 * R->evalloc : 4096;
        rev *v = realloc(R->ev, (nc < R->evcap ? nc : R->evcap) * sizeof *v);
        if (!v) { /* the window ends here: out of memory for more */
            R->w1 = a;
            return;
        }
        R->ev = v;
        R->evalloc = nc < R->evcap ? nc : R->evcap;
    }
    R->ev[R->nev++] = (rev){a, b - a, seq, r, f, 0};
    d->kept++;
}

static void add_msg(report *R, uint32_t src, int64_t s, uint32_t dst, int64_t r, uint64_t bytes)
{
    if (r < R->w0 || s >= R->w1) {
        R->msg.total++;
        return;
    }
    rmsg m = {s, r, bytes, src, dst};
    vt__report_heap_push(&R->msg, &m, -(int64_t)R->msg.total); /* keeps the first ones */
}

static int timeline_full(report *R, uint32_t r, vt_cursor *c, walker *wk, detail *d, vt_error *err)
{
    vt_event ev;
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
        walker_see(wk, seq - 1, prev_exit == INT64_MIN ? a : prev_exit, a); /* the burst before */
        walker_see(wk, seq, a, b);
        add_call(R, d, r, ev.fn, seq, a, b);
        prev_exit = b;
    }
    return got < 0 ? -1 : 0;
}

static int timeline_reduced(report *R, uint32_t r, vt_cursor *c, walker *wk, detail *d, vt_error *err)
{
    vt_rrec rec;
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
                bins_add(R, r, -1, prev_exit, gend, 1);
            }
        }
        have_prev = 1;
        prev_seq = rec.seq;
        prev_exit = b;
        seen_time(R, a, b);
        if (rec.kind == VT_RREC_START || rec.kind == VT_RREC_END)
            continue;
        walker_see(wk, rec.seq, a, b);
        if (rec.fn >= 0)
            add_call(R, d, r, rec.fn, rec.seq, a, b);
        for (size_t i = 0; i < rec.nmsgs; i++) {
            const vt_rmsg *mm = &rec.msgs[i];
            add_msg(R, mm->src, vt_global_time(R->t, mm->src, mm->S), r, b, mm->bytes);
        }
    }
    return got < 0 ? -1 : 0;
}

int vt__report_timeline_init(report *R)
{
    if (bins_init(R))
        return -1;
    R->evcap = R->max_events;
    R->w0 = R->detail_from > 0 ? R->bins.origin + R->detail_from : INT64_MIN;
    R->w1 = INT64_MAX;
    if (vt__report_heap_init(&R->msg, R->max_events, sizeof(rmsg)) ||
        vt__report_heap_init(&R->mark, R->max_events, sizeof(rmark)) ||
        vt__report_heap_init(&R->agg, R->max_events, sizeof(ragg)))
        return -1;
    return 0;
}

int vt__report_timeline(report *R, vt_error *err)
{
    detail d = {0, R->evcap / (R->nranks ? R->nranks : 1)};
    if (d.share == 0 && R->evcap)
        d.share = 1;
    for (uint32_t r = 0; r < R->nranks; r++) {
        vt_cursor *c;
        walker wk;
        walker_init(R, &wk, r);
        if (vt_cursor_open(R->t, r, &c, err))
            return -1;
        d.kept = 0;
        int rc = R->reduced ? timeline_reduced(R, r, c, &wk, &d, err) : timeline_full(R, r, c, &wk, &d, err);
        vt_cursor_close(c);
        bins_close(R);
        if (rc)
            return -1;
        vt__progress_update(&R->prog, ++R->done);
    }
    /* the window ends where the first rank ran out of its share */
    size_t k = 0;
    for (size_t i = 0; i < R->nev; i++)
        if (R->ev[i].start < R->w1)
            R->ev[k++] = R->ev[i];
    R->nev = k;
    return 0;
}

/* ------------------------------------------------------------------ messages, path */

static void tee_publish(void *arg, uint32_t rank, uint64_t send_seq, void *ext)
{
    vt__report_tee *T = arg;
    if (T->inner.publish)
        T->inner.publish(T->inner.arg, rank, send_seq, ext);
}

static int tee_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    vt__report_tee *T = arg;
    for (size_t i = 0; i < ev->ncons; i++) {
        const vt_obs_con *k = &ev->cons[i];
        if (k->kind == VT_CON_MSG)
            add_msg(T->R, k->rank, k->S, ev->rank, ev->end, k->bytes);
    }
    return T->inner.event ? T->inner.event(T->inner.arg, ev, err) : 0;
}

void vt__report_tee_install(vt__report_tee *tee, report *R, vt_observer *obs)
{
    tee->inner = *obs;
    tee->R = R;
    obs->arg = tee;
    obs->publish = tee_publish;
    obs->event = tee_event;
}

/* The critical path's segments of one rank in order (their sequence numbers increase). */
typedef struct segwalk {
    const vt_cp_segment **v;
    size_t n, at;
} segwalk;

static int segwalk_init(const report *R, segwalk *s, uint32_t rank)
{
    memset(s, 0, sizeof *s);
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

int vt__report_mark_path(report *R)
{
    if (!R->cpr)
        return 0;
    /* the detail is in rank order, each rank's calls in stream order */
    for (size_t i = 0; i < R->nev;) {
        uint32_t r = R->ev[i].rank;
        segwalk sw;
        if (segwalk_init(R, &sw, r))
            return -1;
        for (; i < R->nev && R->ev[i].rank == r; i++)
            R->ev[i].flags = segwalk_on(&sw, R->ev[i].seq) ? 1u : 0u;
        free(sw.v);
    }
    return 0;
}

void vt__report_timeline_free(report *R)
{
    free(R->bins.b);
    free(R->bins.acc);
    free(R->bins.touched);
    free(R->ev);
    vt__report_heap_free(&R->msg);
    vt__report_heap_free(&R->mark);
    vt__report_heap_free(&R->agg);
}
