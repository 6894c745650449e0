/* vtrace period: the periodic structure of each rank's stream of calls (seed 000's
 * dynamic periodicity detector, dpd.h): stretches where the calls repeat with a period,
 * their iterations and what one iteration is, and where the pattern changes. */
#include "vt_config.h"
#include "tools/tools.h"
#include "util/dpd.h"
#include "tools/progress.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_period(FILE *out)
{
    fprintf(out, "usage: vtrace period [--window N] [--max-period M] [--min-iterations K] [--json] [--quiet] DIR\n"
                 "Finds where each rank's calls repeat (a dynamic periodicity detector on the stream of\n"
                 "(function, call site) of every call): the stretches of records with a period, how many\n"
                 "iterations, the time per iteration, and the calls of one iteration.\n\n"
                 "  --window N          samples compared (default 64)\n"
                 "  --max-period M      longest period looked for (default 256)\n"
                 "  --min-iterations K  report stretches of at least K iterations (default 3)\n"
                 "  --json              one JSON object per stretch and line\n");
}

/* The calls of a rank as small ids: (function, call site) interned. */
typedef struct idmap {
    uint64_t *keys;   /* fn << 32 | callsite, + 1; 0 empty */
    uint32_t *ids;
    size_t cap, n;
} idmap;

static int intern(idmap *m, uint64_t key, uint32_t *id)
{
    key++;
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 256;
        uint64_t *nk = calloc(nc, sizeof *nk);
        uint32_t *ni = calloc(nc, sizeof *ni);
        if (!nk || !ni) {
            free(nk);
            free(ni);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = (m->keys[i] * 0x9e3779b97f4a7c15ull >> 20) & (nc - 1);
            while (nk[j])
                j = (j + 1) & (nc - 1);
            nk[j] = m->keys[i];
            ni[j] = m->ids[i];
        }
        free(m->keys);
        free(m->ids);
        m->keys = nk;
        m->ids = ni;
        m->cap = nc;
    }
    size_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) {
        m->keys[j] = key;
        m->ids[j] = (uint32_t)m->n++;
    }
    *id = m->ids[j];
    return 0;
}

/* The last H samples: record index, enter time, function. */
typedef struct hist {
    uint64_t *index;
    int64_t *enter;
    int64_t *fn;
    size_t cap;
} hist;

typedef struct stretch {
    uint32_t period;
    uint64_t first, last;       /* sample numbers (calls of the rank, from 0) */
    uint64_t first_index;       /* record index of the first */
    int64_t start;              /* enter of the first */
    int64_t it_min, it_max, it_sum;
    uint64_t iters;             /* complete iterations timed */
    int64_t it_begin;           /* enter of the current iteration's first call */
    int64_t fns[64];            /* the calls of one iteration (up to 64) */
} stretch;

static void print_stretch(const vt_trace *t, uint32_t rank, const stretch *s, int json, uint32_t miniter)
{
    uint64_t n = s->last - s->first + 1, iters = n / s->period;
    if (iters < miniter)
        return;
    if (json) {
        int first = 1;
        fputc('{', stdout);
        vt__json_key(stdout, &first, "rank");
        printf("%u", rank);
        vt__json_key(stdout, &first, "period");
        printf("%u", s->period);
        vt__json_key(stdout, &first, "iterations");
        printf("%" PRIu64, iters);
        vt__json_key(stdout, &first, "first_call");
        printf("%" PRIu64, s->first);
        vt__json_key(stdout, &first, "last_call");
        printf("%" PRIu64, s->last);
        vt__json_key(stdout, &first, "first_record");
        printf("%" PRIu64, s->first_index);
        vt__json_key(stdout, &first, "start_ns");
        printf("%" PRId64, s->start);
        vt__json_key(stdout, &first, "iteration_ns");
        if (s->iters)
            printf("{\"mean\":%" PRId64 ",\"min\":%" PRId64 ",\"max\":%" PRId64 "}", s->it_sum / (int64_t)s->iters,
                   s->it_min, s->it_max);
        else
            fputs("null", stdout);
        vt__json_key(stdout, &first, "calls");
        fputc('[', stdout);
        for (uint32_t k = 0; k < s->period && k < 64; k++) {
            const vt_function *f = vt_trace_function(t, rank, s->fns[k]);
            if (k)
                fputc(',', stdout);
            vt__json_str(stdout, f ? f->name : "?");
        }
        fputs("]}\n", stdout);
        return;
    }
    printf("rank %u: calls %" PRIu64 "-%" PRIu64 " (records from %" PRIu64 "): period %u, %" PRIu64 " iterations", rank,
           s->first, s->last, s->first_index, s->period, iters);
    if (s->iters)
        printf(", %.3f ms per iteration (min %.3f, max %.3f)", s->it_sum / (double)s->iters / 1e6, s->it_min / 1e6,
               s->it_max / 1e6);
    printf("\n  one iteration:");
    for (uint32_t k = 0; k < s->period && k < 64; k++) {
        const vt_function *f = vt_trace_function(t, rank, s->fns[k]);
        printf(" %s", f ? f->name : "?");
    }
    printf("%s\n", s->period > 64 ? " ..." : "");
}

int vt__cmd_period(int argc, char **argv)
{
    const char *dir = NULL;
    uint32_t N = 64, M = 256, miniter = 3;
    int json = 0, quiet = 0, rc = VT_EXIT_ERROR;
    const vt__opt opts[] = {
        {NULL, "--window", VT_OPT_COUNT, .dest = &N, .lo = 1, .hi = 65536},
        {NULL, "--max-period", VT_OPT_COUNT, .dest = &M, .lo = 1, .hi = 65536},
        {NULL, "--min-iterations", VT_OPT_POSITIVE, .dest = &miniter},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {0},
    };
    const vt__args args = {.usage = vt__usage_period, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    vt_trace *t = NULL;
    vt_error err;
    if (vt_trace_open(dir, &t, &err))
        return vt__fail(&err);
    vt__note_incomplete(t);
    int reduced = vt_trace_is_reduced(t);
    if (reduced && !json)
        printf("(a reduced trace: the periods are those of its records; merged events are not seen)\n");
    size_t H = (size_t)N + M + 1;
    hist h = {calloc(H, sizeof(uint64_t)), calloc(H, sizeof(int64_t)), calloc(H, sizeof(int64_t)), H};
    vt_dpd dpd = {0};
    idmap ids = {0};
    vt__progress pr;
    vt__progress_start(&pr, "period", vt_trace_nrecords(t), quiet);
    uint64_t seen = 0;
    if (!h.index || !h.enter || !h.fn)
        goto nomem;
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, &err)) {
            rc = vt__fail(&err);
            goto out;
        }
        if (vt_dpd_init(&dpd, N, M)) {
            vt_cursor_close(c);
            goto nomem;
        }
        free(ids.keys);
        free(ids.ids);
        memset(&ids, 0, sizeof ids);
        stretch s = {0};
        int in = 0, got;
        uint64_t k = 0;
        for (;;) {
            vt_event ev;
            vt_rrec rr;
            int64_t fn, cs, enter;
            uint64_t index;
            if (reduced) {
                got = vt_cursor_next_reduced(c, &rr, &err);
                if (got == 1 && (rr.kind == VT_RREC_START || rr.kind == VT_RREC_END))
                    continue;
                fn = rr.fn, cs = rr.callsite, enter = rr.enter, index = rr.index;
            } else {
                got = vt_cursor_next(c, &ev, &err);
                if (got == 1 && ev.fn < 0)
                    continue;
                fn = ev.fn, cs = ev.callsite, enter = ev.enter, index = ev.index;
            }
            if (got <= 0)
                break;
            vt__progress_update(&pr, ++seen);
            uint32_t id;
            if (intern(&ids, (uint64_t)(fn + 1) << 32 | (uint32_t)(cs + 1), &id))
                goto nomem_c;
            size_t slot = k % H;
            h.index[slot] = index;
            h.enter[slot] = vt_global_time(t, r, enter);
            h.fn[slot] = fn;
            uint32_t p = vt_dpd_push(&dpd, id);
            if (in && p != s.period) {
                /* the period ended at the sample before */
                s.last = k - 1;
                print_stretch(t, r, &s, json, miniter);
                in = 0;
            }
            if (!in && p) {
                memset(&s, 0, sizeof s);
                s.period = p;
                s.first = k + 1 - (uint64_t)N - p;
                size_t fs = s.first % H;
                s.first_index = h.index[fs];
                s.start = h.enter[fs];
                for (uint32_t q = 0; q < p && q < 64; q++)
                    s.fns[q] = h.fn[(s.first + q) % H];
                s.it_begin = s.start;
                /* the iterations already in the window */
                for (uint64_t b = s.first + p; b <= k; b += p) {
                    int64_t e = h.enter[b % H], dt = e - s.it_begin;
                    s.it_min = s.iters ? (dt < s.it_min ? dt : s.it_min) : dt;
                    s.it_max = s.iters ? (dt > s.it_max ? dt : s.it_max) : dt;
                    s.it_sum += dt;
                    s.iters++;
                    s.it_begin = e;
                }
                in = 1;
            } else if (in && (k - s.first) % s.period == 0) {
                int64_t dt = h.enter[slot] - s.it_begin;
                s.it_min = s.iters ? (dt < s.it_min ? dt : s.it_min) : dt;
                s.it_max = s.iters ? (dt > s.it_max ? dt : s.it_max) : dt;
                s.it_sum += dt;
                s.iters++;
                s.it_begin = h.enter[slot];
            }
            k++;
        }
        if (in) {
            s.last = k - 1;
            print_stretch(t, r, &s, json, miniter);
        }
        vt_cursor_close(c);
        vt_dpd_free(&dpd);
        if (got < 0) {
            rc = vt__fail(&err);
            goto out;
        }
        continue;
    nomem_c:
        vt_cursor_close(c);
        goto nomem;
    }
    rc = VT_EXIT_OK;
    goto out;
nomem:
    fprintf(stderr, "vtrace: out of memory\n");
out:
    vt__progress_end(&pr);
    vt_dpd_free(&dpd);
    free(ids.keys);
    free(ids.ids);
    free(h.index);
    free(h.enter);
    free(h.fn);
    vt_trace_close(t);
    return rc;
}
