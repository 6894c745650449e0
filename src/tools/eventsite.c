/* Call sites of events named RANK:SEQ (eventsite.h): one pass over each rank asked for. */
#include "vt_config.h"
#include "tools/eventsite.h"
#include "analysis/symbols.h"

#include <stdlib.h>

/* The requests in (rank, seq) order, so that one pass over a rank's records in order
 * answers all of its requests: O(records + requests log requests), whatever their
 * number (critical-path --json names every candidate). */
static const uint32_t *sort_rank;
static const uint64_t *sort_seq;

static int by_rank_seq(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    if (sort_rank[a] != sort_rank[b])
        return sort_rank[a] < sort_rank[b] ? -1 : 1;
    return sort_seq[a] < sort_seq[b] ? -1 : sort_seq[a] > sort_seq[b];
}

/* The requests at ix[*p..end) with sequence numbers up to hi get the site cs of the
 * record lo..hi (a full trace's call 2 callno + 1 and the burst before it, 2 callno);
 * those below lo name no record. */
static void take(const vt_trace *t, uint32_t r, const size_t *ix, size_t *p, size_t end, const uint64_t *seq,
                 const char **out, uint64_t lo, uint64_t hi, int64_t cs)
{
    while (*p < end && seq[ix[*p]] < lo)
        (*p)++;
    for (; *p < end && seq[ix[*p]] <= hi; (*p)++)
        out[ix[*p]] = vt_trace_callsite(t, r, cs) ? vt_site_name(t, r, cs) : "";
}

int vt__event_sites(const vt_trace *t, size_t n, const uint32_t *rank, const uint64_t *seq, const char **out,
                    vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    size_t *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return vt_error_set(err, "out of memory naming call sites");
    for (size_t i = 0; i < n; i++) {
        out[i] = "";
        ix[i] = i;
    }
    sort_rank = rank;
    sort_seq = seq;
    qsort(ix, n, sizeof *ix, by_rank_seq);
    int reduced = vt_trace_is_reduced(t), rc = 0;
    for (size_t b = 0; b < n && !rc;) {
        uint32_t r = rank[ix[b]];
        size_t e = b;
        while (e < n && rank[ix[e]] == r)
            e++;
        if (r >= nranks) {
            b = e;
            continue;
        }
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err)) {
            rc = -1;
            break;
        }
        int got = 0;
        size_t p = b;
        if (reduced) {
            vt_rrec rr;
            while (p < e && (got = vt_cursor_next_reduced(c, &rr, err)) == 1)
                take(t, r, ix, &p, e, seq, out, rr.seq, rr.seq, rr.callsite);
        } else {
            vt_event ev;
            while (p < e && (got = vt_cursor_next(c, &ev, err)) == 1)
                if (ev.fn >= 0)
                    take(t, r, ix, &p, e, seq, out, 2 * ev.callno, 2 * ev.callno + 1, ev.callsite);
        }
        rc = p < e && got < 0 ? -1 : 0;
        vt_cursor_close(c);
        b = e;
    }
    free(ix);
    return rc;
}
