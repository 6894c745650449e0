/* Load imbalance as a scenario; see imbalance.h. */
#include "vt_config.h"
#include "analysis/imbalance.h"

#include <stdlib.h>
#include <string.h>

#define WORLD_ID 1 /* MPI_COMM_WORLD's communicator id (doc/format.md) */

typedef struct burst {
    uint64_t seq, interval;
    int64_t dur;
    uint32_t rank;
} burst;

typedef struct collect {
    burst *b;
    size_t n, cap;
    uint64_t *interval;     /* per rank: world collectives completed so far */
    uint32_t nranks;
    int oom;
} collect;

static int on_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    (void)err;
    collect *c = arg;
    if (ev->rank >= c->nranks)
        return 0;
    if (!ev->is_call && ev->candidate && ev->end > ev->start) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1024;
            burst *nb = realloc(c->b, cap * sizeof *nb);
            if (!nb) {
                c->oom = 1;
                return 1;
            }
            c->b = nb;
            c->cap = cap;
        }
        c->b[c->n++] = (burst){ev->seq, c->interval[ev->rank], ev->end - ev->start, ev->rank};
        return 0;
    }
    if (ev->is_call)
        for (size_t i = 0; i < ev->ncons; i++)
            if (ev->cons[i].kind == VT_CON_GATE && !ev->cons[i].nonblocking && ev->cons[i].gate_comm == WORLD_ID) {
                c->interval[ev->rank]++;
                break;
            }
    return 0;
}

static int by_interval(const void *a, const void *b)
{
    const burst *x = a, *y = b;
    if (x->interval != y->interval)
        return x->interval < y->interval ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int vt_imbalance_scenario(const vt_trace *t, const vt_model_params *p, const char *text, vt_scenario *sc,
                          vt_imbalance_stats *st, vt_error *err)
{
    memset(sc, 0, sizeof *sc);
    memset(st, 0, sizeof *st);
    collect c = {.nranks = vt_trace_nranks(t)};
    c.interval = calloc(c.nranks ? c.nranks : 1, sizeof *c.interval);
    int64_t *sum = calloc(c.nranks ? c.nranks : 1, sizeof *sum);
    sc->text = strdup(text);
    if (!c.interval || !sum || !sc->text) {
        vt_error_set(err, "out of memory");
        goto fail;
    }
    vt_observer obs = {.arg = &c, .event = on_event};
    vt_replay_result res;
    if (vt_replay_observe(t, NULL, p, NULL, 0, &obs, &res, err)) {
        if (c.oom)
            vt_error_set(err, "out of memory for the candidate bursts");
        goto fail;
    }
    vt_replay_result_free(&res);
    if (c.n)
        qsort(c.b, c.n, sizeof *c.b, by_interval);
    size_t cap = 0;
    uint64_t maxint = 0;
    for (uint32_t r = 0; r < c.nranks; r++)
        if (c.interval[r] > maxint)
            maxint = c.interval[r];
    st->intervals = maxint + 1;
    /* each interval: the ranks' sums, their mean, the fraction each rank above it loses */
    for (size_t i = 0; i < c.n;) {
        size_t j = i;
        while (j < c.n && c.b[j].interval == c.b[i].interval)
            j++;
        int64_t total = 0;
        for (size_t k = i; k < j; k++) {
            sum[c.b[k].rank] += c.b[k].dur;
            total += c.b[k].dur;
        }
        st->candidate_ns += total;
        double mean = (double)total / (double)c.nranks;
        for (size_t k = i; k < j;) {
            uint32_t r = c.b[k].rank;
            size_t e = k;
            while (e < j && c.b[e].rank == r)
                e++;
            if ((double)sum[r] > mean) {
                st->above_ns += sum[r] - (int64_t)mean;
                int64_t ppm = (int64_t)((1.0 - mean / (double)sum[r]) * 1e6 + 0.5);
                for (size_t q = k; q < e && ppm > 0; q++) {
                    size_t ni = sc->nitems;
                    if (ni == cap) {
                        cap = cap ? 2 * cap : 256;
                        vt_shorten *n = realloc(sc->items, cap * sizeof *n);
                        if (!n) {
                            vt_error_set(err, "out of memory");
                            goto fail;
                        }
                        sc->items = n;
                    }
                    sc->items[ni] = (vt_shorten){.sel = VT_SEL_EVENT, .rank = r, .seq = c.b[q].seq, .how = VT_SHORT_PPM,
                                         .value = ppm};
                    sc->nitems++;
                    st->shortened++;
                }
            }
            sum[r] = 0;
            k = e;
        }
        i = j;
    }
    free(c.b);
    free(c.interval);
    free(sum);
    return 0;
fail:
    free(c.b);
    free(c.interval);
    free(sum);
    vt_scenario_free(sc);
    return -1;
}
