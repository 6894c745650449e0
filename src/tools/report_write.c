/* vtrace report, the page: the collected data (report.h) as JSON in a <script> element,
 * between the page's CSS and JavaScript (src/tools/report/, embedded at build time as
 * report_assets.h). */
#include "vt_config.h"
#include "tools/report.h"
#include "analysis/symbols.h"
#include "tools/report_assets.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* "NAME":{"total":N,"embedded":N,"omitted":N,"fields":FIELDS,"data":[ for the items of H,
 * sorted by CMP and returned; the caller writes the rows and "]}". */
static void *table_begin(FILE *o, int *first, const char *name, heap *h, const char *fields,
                         int (*cmp)(const void *, const void *))
{
    int f2 = 1;
    jkey(o, first, name);
    putc('{', o);
    counts(o, &f2, h);
    jkey(o, &f2, "fields");
    fputs(fields, o);
    jkey(o, &f2, "data");
    putc('[', o);
    if (h->n)
        vt_sort(h->v, h->n, h->size, cmp);
    return h->v;
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
    vt_sort(rows, R->nfn, sizeof *rows, cmp_pf);
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
    const want *w = vt__report_find_want(R, rank, seq);
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
/* "KEY":[the 10 best rows of A] (vtrace domino --by KEY) */
static void write_agg(FILE *o, const char *key, const vt_agg *a)
{
    jstr(o, key);
    fputs(":[", o);
    for (size_t i = 0; i < a->n && i < 10; i++) {
        const vt_agg_row *r = &a->rows[i];
        int64_t m = a->measured;
        fprintf(o, "%s{\"what\":", i ? "," : "");
        jstr(o, r->label);
        fputs(",\"scenario\":", o);
        jstr(o, r->scenario);
        fprintf(o, ",\"candidates\":%" PRIu64 ",\"duration_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64
                   ",\"gain_ns\":%" PRId64 ",\"gain_pct\":%.3f}\n",
                r->count, r->dur, r->pred, m - r->pred, m > 0 ? 100.0 * (double)(m - r->pred) / (double)m : 0.0);
    }
    putc(']', o);
}

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
        const char *site = vt_trace_callsite(R->t, e->rank, e->callsite) ? vt_site_name(R->t, e->rank, e->callsite) : "?";
        fprintf(o, "%s{\"pattern\":", i ? "," : "");
        jstr(o, (size_t)e->pattern < P->nnames ? P->names[e->pattern] : "?");
        fprintf(o, ",\"rank\":%u,\"callsite\":", e->rank);
        jstr(o, site);
        fprintf(o, ",\"severity_ns\":%" PRId64 ",\"count\":%" PRIu64 "}", e->severity_ns, e->count);
    }
    putc(']', o);
    putc('}', o);
}

/* "detail":{"start":NS,"end":NS,"complete":B}: the window whose every call is embedded
 * (relative to T0; complete: the whole run). */
static void write_detail(report *R, FILE *o, int *first, int64_t t0)
{
    int64_t a = R->w0, b = R->w1;
    int complete = a <= R->tmin && b > R->tmax;
    if (a < t0)
        a = t0;
    if (b > R->tmax || b < a)
        b = b < a ? a : R->tmax;
    jkey(o, first, "detail");
    fprintf(o, "{\"start\":%" PRId64 ",\"end\":%" PRId64 ",\"complete\":%s}", a - t0, b - t0,
            complete ? "true" : "false");
}

/* "bins":{"origin":NS,"width":NS,"n":N,"fields":[...],"ranks":[[...],...]}: each rank's
 * bins that hold anything, flattened (bin index first), origin relative to T0; none when
 * the detail holds every call (the page draws the calls). */
static void write_bins(report *R, FILE *o, int *first, int64_t t0)
{
    const rbins *B = &R->bins;
    int complete = R->w0 <= R->tmin && R->w1 > R->tmax;
    jkey(o, first, "bins");
    fprintf(o, "{\"origin\":%" PRId64 ",\"width\":%" PRId64 ",\"n\":%u,\"clamped\":%" PRIu64
               ",\"fields\":[\"bin\",\"mpi\",\"calls\",\"fn\",\"fn_ns\",\"agg\"],\"ranks\":[",
            B->origin - t0, B->width, B->nbins, B->clamped);
    for (uint32_t r = 0; r < R->nranks; r++) {
        const rbin *row = &B->b[(size_t)r * B->nbins];
        fputs(r ? ",\n[" : "[", o);
        for (uint32_t i = 0, n = 0; !complete && i < B->nbins; i++) {
            const rbin *x = &row[i];
            if (!x->mpi && !x->agg && !x->calls)
                continue;
            fprintf(o, "%s%u,%" PRId64 ",%u,%d,%" PRId64 ",%" PRId64, n++ ? "," : "", i, x->mpi, x->calls,
                    x->dom_ns ? x->dom : -1, x->dom_ns, x->agg);
        }
        putc(']', o);
    }
    fputs("]}", o);
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
    /* each rank from MPI_Init's end to MPI_Finalize: computation where no call is drawn */
    jkey(o, &first, "spans");
    putc('[', o);
    for (uint32_t r = 0; r < R->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(R->t, r);
        fprintf(o, "%s[%" PRId64 ",%" PRId64 "]", r ? "," : "", vt_global_time(R->t, r, rk->init_time) - t0,
                vt_global_time(R->t, r, rk->fini_time) - t0);
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

    /* timeline: the bins, and the calls and messages of the detail window */
    write_detail(R, o, &first, t0);
    write_bins(R, o, &first, t0);
    jkey(o, &first, "events");
    fprintf(o, "{\"total\":%" PRIu64 ",\"embedded\":%zu,\"omitted\":%" PRIu64
               ",\"fields\":[\"rank\",\"start\",\"dur\",\"fn\",\"seq\",\"flags\"],\"data\":[",
            R->ev_total, R->nev, R->ev_total - R->nev);
    if (R->nev)
        vt_sort(R->ev, R->nev, sizeof *R->ev, cmp_ev);
    for (size_t i = 0; i < R->nev; i++) {
        const rev *ev = &R->ev[i];
        fprintf(o, "%s[%u,%" PRId64 ",%" PRId64 ",%d,%" PRIu64 ",%u]\n", i ? "," : "", ev->rank, ev->start - t0,
                ev->dur, ev->fn, ev->seq, ev->flags);
    }
    fputs("]}", o);

    /* the messages that cross the window (the window may have shrunk after they came) */
    size_t nm = 0;
    rmsg *msv = (rmsg *)R->msg.v;
    for (size_t i = 0; i < R->msg.n; i++)
        if (msv[i].s < R->w1 && msv[i].r >= R->w0)
            msv[nm++] = msv[i];
    R->msg.n = nm;
    const rmsg *ms =
        table_begin(o, &first, "messages", &R->msg, "[\"src\",\"send\",\"dst\",\"recv\",\"bytes\"]", cmp_msg);
    for (size_t i = 0; i < R->msg.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%u,%" PRId64 ",%" PRIu64 "]\n", i ? "," : "", ms[i].src, ms[i].s - t0, ms[i].dst,
                ms[i].r - t0, ms[i].bytes);
    fputs("]}", o);

    const rmark *mk = table_begin(o, &first, "markers", &R->mark, "[\"rank\",\"t\",\"kind\",\"value\"]", cmp_mark);
    for (size_t i = 0; i < R->mark.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%" PRIu64 ",%" PRId64 "]", i ? "," : "", mk[i].rank, mk[i].t - t0, mk[i].kind,
                mk[i].value);
    fputs("]}", o);

    const ragg *ag = table_begin(o, &first, "aggregated", &R->agg, "[\"rank\",\"start\",\"dur\",\"events\"]", cmp_agg);
    for (size_t i = 0; i < R->agg.n; i++)
        fprintf(o, "%s[%u,%" PRId64 ",%" PRId64 ",%" PRIu64 "]\n", i ? "," : "", ag[i].rank, ag[i].start - t0,
                ag[i].dur, ag[i].nevents);
    fputs("]}", o);

    /* critical path */
    jkey(o, &first, "critical_path");
    int f2 = 1;
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
            if (vt__report_heap_init(&h, keep, sizeof(size_t)) == 0) {
                for (size_t i = 0; i < c->nsegments; i++)
                    vt__report_heap_push(&h, &i, c->segments[i].end - c->segments[i].start);
                for (size_t i = 0; i < h.n; i++)
                    kept[((size_t *)h.v)[i]] = 1;
            }
            vt__report_heap_free(&h);
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
    fprintf(o, "%zu", R->ncand);
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
    size_t nw = R->nwk;
    const vt_domino_cand **rows = calloc(nw + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < nw; i++)
        if (R->dom.c[i].alone >= 0)
            rows[nr++] = &R->dom.c[i];
    if (nr)
        vt_sort(rows, nr, sizeof *rows, cmp_gain);
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
    jkey(o, &first, "fix_first");
    putc('{', o);
    write_agg(o, "rank", &R->fix_rank);
    putc(',', o);
    write_agg(o, "function", &R->fix_fn);
    if (R->bal_ok)
        fprintf(o, ",\"balance\":{\"scenario\":\"balance\",\"intervals\":%" PRIu64 ",\"above_ns\":%" PRId64
                   ",\"predicted_ns\":%" PRId64 ",\"gain_ns\":%" PRId64 ",\"gain_pct\":%.3f}",
                R->bal.intervals, R->bal.above_ns, R->bal_pred, R->measured - R->bal_pred,
                R->measured > 0 ? 100.0 * (double)(R->measured - R->bal_pred) / (double)R->measured : 0.0);
    putc('}', o);
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

void vt__report_write_page(report *R, FILE *o)
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
