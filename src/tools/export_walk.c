/* The walks the exporters share (export.h): a full trace's records with the messages
 * each call starts and completes (vt_trace_match's positions and one id per matched
 * message), and a reduced trace's records with the messages its COMP records name; also
 * the host of a rank and the growth of their arrays. Each exporter passes its own
 * callbacks; this file calls no exporter. */
#include "vt_config.h"
#include "tools/export.h"
#include "util/sort.h"

#include <stdio.h>
#include <stdlib.h>

int vt__export_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *nv = realloc(*v, n * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = n;
    return 0;
}

const char *vt__export_host(const vt_trace *t, uint32_t r)
{
    const vt_rank *R = vt_trace_rank(t, r);
    if (R && R->hostname && R->hostname[0])
        return R->hostname;
    if (R && R->global_hostname && R->global_hostname[0])
        return R->global_hostname;
    return "unknown host";
}

static int oom(const char *name, vt_error *err)
{
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", name);
    return -1;
}

int vt__xmsgs_open(vt__xmsgs *x, const vt_trace *t, const char *name, vt_error *err)
{
    x->m = NULL;
    x->nranks = vt_trace_nranks(t);
    x->send_base = NULL;
    if (vt_trace_match(t, VT_MATCH_PARTIAL, &x->m, err))
        return -1;
    x->send_base = calloc(x->nranks + 1, sizeof *x->send_base);
    if (!x->send_base) {
        vt__xmsgs_close(x);
        return oom(name, err);
    }
    for (uint32_t r = 0; r < x->nranks; r++) {
        size_t n;
        vt_matches_csends(x->m, r, &n);
        x->send_base[r + 1] = x->send_base[r] + n;
    }
    return 0;
}

void vt__xmsgs_close(vt__xmsgs *x)
{
    free(x->send_base);
    vt_matches_free(x->m);
    x->send_base = NULL;
    x->m = NULL;
}

/* A receive and the call that completed it. */
typedef struct done_ref {
    uint64_t done_index;
    uint64_t id;  /* 0: no send */
    size_t pos;
} done_ref;

static int cmp_done(const void *a, const void *b)
{
    const done_ref *x = a, *y = b;
    if (x->done_index != y->done_index)
        return x->done_index < y->done_index ? -1 : 1;
    uint64_t i = x->id ? x->id : UINT64_MAX, j = y->id ? y->id : UINT64_MAX;
    if (i != j)
        return i < j ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int vt__xmsgs_walk(const vt__xmsgs *x, const vt_trace *t, uint32_t r, const vt__xcall_ops *ops, void *arg,
                   const char *name, vt_error *err)
{
    size_t ns, nr, nkeys;
    const vt_match_csend *cs = vt_matches_csends(x->m, r, &ns);
    const vt_match_crecv *cr = vt_matches_crecvs(x->m, r, &nr);
    const vt_match_key *keys = vt_matches_keys(x->m, &nkeys);
    done_ref *dr = malloc((nr + 1) * sizeof *dr);
    if (!dr)
        return oom(name, err);
    for (size_t j = 0; j < nr; j++) {
        uint64_t id = 0;
        if (cr[j].send_pos != VT_MPOS_NONE && cr[j].key < nkeys)
            id = x->send_base[keys[cr[j].key].src] + cr[j].send_pos + 1;
        dr[j] = (done_ref){cr[j].done_index, id, j};
    }
    vt_sort(dr, nr, sizeof *dr, cmp_done);
    vt_cursor *c;
    if (vt_cursor_open(t, r, &c, err)) {
        free(dr);
        return -1;
    }
    size_t si = 0, di = 0;
    vt_event ev;
    int got;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        if (ops->record(arg, &ev))
            goto fail;
        while (si < ns && cs[si].index < ev.index)
            si++;
        for (; si < ns && cs[si].index == ev.index; si++)
            if (ops->sent(arg, &ev, si, cs[si].recv_pos != VT_MPOS_NONE ? x->send_base[r] + si + 1 : 0))
                goto fail;
        while (di < nr && dr[di].done_index < ev.index)
            di++;
        for (; di < nr && dr[di].done_index == ev.index; di++)
            if (ops->completed(arg, &ev, dr[di].pos, dr[di].id))
                goto fail;
        if (ops->done && ops->done(arg, &ev))
            goto fail;
    }
    if (got < 0)
        goto fail;
    vt_cursor_close(c);
    free(dr);
    return 0;
fail:
    vt_cursor_close(c);
    free(dr);
    return -1;
}

/* One record of rank R and, for a COMP record, its messages (*id counts them). */
static int visit_rrec(const vt__xrrec_ops *ops, void *arg, uint32_t r, uint32_t nranks, const vt_rrec *rr,
                      uint64_t *id)
{
    if (ops->record && ops->record(arg, r, rr))
        return -1;
    if (rr->kind != VT_RREC_COMP)
        return 0;
    for (size_t i = 0; i < rr->nmsgs; i++) {
        ++*id;
        if (rr->msgs[i].src < nranks && ops->message(arg, r, rr, &rr->msgs[i], *id))
            return -1;
    }
    return 0;
}

int vt__xrrecs_walk(const vt_trace *t, const vt__xrrec_ops *ops, void *arg, vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    uint64_t id = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_rrec rr;
        int got = 0, rc = 0;
        while (!rc && (got = vt_cursor_next_reduced(c, &rr, err)) == 1)
            rc = visit_rrec(ops, arg, r, nranks, &rr, &id);
        vt_cursor_close(c);
        if (rc || got < 0)
            return -1;
    }
    return 0;
}
