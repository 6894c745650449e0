/* Call sites of events named RANK:SEQ (eventsite.h): one pass over each rank asked for. */
#include "vt_config.h"
#include "tools/eventsite.h"
#include "analysis/symbols.h"

#include <stdlib.h>

/* Request i matches a record of sequence number seq (full trace: a call, 2 callno + 1,
 * and the burst before it, 2 callno) with call site cs. */
static void take(size_t n, const uint32_t *rank, const uint64_t *seq, const char **out, const vt_trace *t,
                 uint32_t r, uint64_t lo, uint64_t hi, int64_t cs)
{
    for (size_t i = 0; i < n; i++)
        if (rank[i] == r && !out[i] && seq[i] >= lo && seq[i] <= hi && vt_trace_callsite(t, r, cs))
            out[i] = vt_site_name(t, r, cs);
}

int vt__event_sites(const vt_trace *t, size_t n, const uint32_t *rank, const uint64_t *seq, const char **out,
                    vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    unsigned char *want = calloc(nranks ? nranks : 1, 1);
    if (!want)
        return vt_error_set(err, "out of memory naming call sites");
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        if (rank[i] < nranks)
            want[rank[i]] = 1;
    }
    int reduced = vt_trace_is_reduced(t), rc = 0;
    for (uint32_t r = 0; r < nranks && !rc; r++) {
        if (!want[r])
            continue;
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err)) {
            rc = -1;
            break;
        }
        int got;
        if (reduced) {
            vt_rrec rr;
            while ((got = vt_cursor_next_reduced(c, &rr, err)) == 1)
                take(n, rank, seq, out, t, r, rr.seq, rr.seq, rr.callsite);
        } else {
            vt_event ev;
            while ((got = vt_cursor_next(c, &ev, err)) == 1)
                if (ev.fn >= 0)
                    take(n, rank, seq, out, t, r, 2 * ev.callno, 2 * ev.callno + 1, ev.callsite);
        }
        rc = got < 0 ? -1 : 0;
        vt_cursor_close(c);
    }
    for (size_t i = 0; i < n; i++)
        if (!out[i])
            out[i] = "";
    free(want);
    return rc;
}
