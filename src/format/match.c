/* Message matching (doc/format.md, "Sequence numbers and matching").
 *
 * One streaming pass per rank collects its sends (in call order) and its receives
 * (in record order, with their posting index), resolving the source and tag of
 * nonblocking and persistent receives from their completions and of matched receives
 * from their probes. Entries go straight into the compact result arrays
 * (vt_match_csend, 32 bytes; vt_match_crecv, 40 bytes): no per-entry allocation, and
 * the (communicator, source, destination, tag) of an entry is interned once into a
 * key table, so an entry carries a 32-bit key instead of the four fields.
 *
 * Pairing needs no sort: the receives of a key are chained in posting order through
 * their send_pos field (a FIFO per key, head and tail in two arrays of the key table's
 * size), then every rank's sends are walked in call order and each takes the head of
 * its key's chain: the k-th send of a key meets its k-th receive. The full
 * vt_match_recv / vt_match_send arrays of the older interface are built only when a
 * caller asks for them (build_full()).
 *
 * Files: match_keys.c (the key table, the kinds of calls, the errors: shared with the
 * replay), match_scan.c (the pass over a rank, on_event()), this file (pairing, the
 * result and its views); match_priv.h.
 *
 * Memory: 72 bytes per message (both ends) plus the key table, against about 490 for
 * the former two-pass, sort-based version; the per-rank request, template and probe
 * maps hold only what is in flight.
 *
 * Streaming together with the replay (done: src/analysis/replay_stream.c). vt_replay
 * given no vt_matches matches while it replays, in its one pass over the records, with
 * these rules on per-rank windows instead of whole arrays (the commands whatif, domino,
 * critical-path and reduce do so; info, dump and the clock repair use vt_trace_match):
 *   - each rank's records go through the same on_event() logic when the replay decodes
 *     them; sends and receives enter two rings with the fields of vt_match_csend /
 *     vt_match_crecv, positions counting from the rank's start;
 *   - a send is released into its key's FIFO in call order, once it is known not to be
 *     cancelled (at once without a request, else at its completion, its
 *     MPI_Request_free or the reuse of its request id); a receive is released in posting
 *     order once it and every receive posted before it have a key (an MPI_Mprobe holds
 *     the place of its MPI_Mrecv's receive in that order); the FIFOs hold only unpaired
 *     entries, and the k-th released send of a key meets its k-th released receive, as
 *     pair_all() pairs them;
 *   - what the replay needs before the trace has shown it (a receive's completing record
 *     when it is posted, which orders the replay's pending receives and gives a
 *     synchronous posting its E; whether a send was cancelled when it is made; the
 *     receives posted after a probe) it gets by reading ahead on that rank: those
 *     records are matched and kept until the replay takes them, so one decoding serves
 *     both;
 *   - whether a message is synchronous is known at its send; a receive posted before its
 *     send is paired keeps its posting (P, d) in a slot anyway, dropped at its completion
 *     when the message turns out not synchronous;
 *   - entries leave the windows once the replay is done with them, so memory follows the
 *     messages in flight, the reading ahead and the block buffers, not the trace length;
 *   - what is left in the FIFOs are the unmatched entries, reported with the same
 *     messages (match_keys.c; first in key order), as are receives never completed.
 * Results are the same, bit for bit, as replaying with vt_trace_match's result.
 */
#include "vt_config.h"
#include "format/match_priv.h"
#include "format/reader_priv.h"
#include "util/sort.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the result */

typedef struct full_view {
    vt_match_recv **recvs;
    vt_match_send **sends;
} full_view;

struct vt_matches {
    const vt_trace *t;
    unsigned flags;
    uint32_t nranks;
    vt_match_crecv **recvs;
    size_t *nrecvs;
    vt_match_csend **sends;
    size_t *nsends;
    vt_match_key *keys;
    size_t nkeys;
    uint64_t count, unmatched;
    _Atomic(full_view *) full; /* built on demand */
};

static void full_free(full_view *f, uint32_t nranks)
{
    if (!f)
        return;
    for (uint32_t r = 0; r < nranks; r++) {
        if (f->recvs)
            free(f->recvs[r]);
        if (f->sends)
            free(f->sends[r]);
    }
    free(f->recvs);
    free(f->sends);
    free(f);
}

void vt_matches_free(vt_matches *m)
{
    if (!m)
        return;
    for (uint32_t r = 0; r < m->nranks; r++) {
        if (m->recvs)
            free(m->recvs[r]);
        if (m->sends)
            free(m->sends[r]);
    }
    free(m->recvs);
    free(m->sends);
    free(m->nrecvs);
    free(m->nsends);
    free(m->keys);
    full_free(atomic_load(&m->full), m->nranks);
    free(m);
}

/* ------------------------------------------------------------------ pairing */

typedef struct exc {
    uint64_t post;
    uint32_t pos;
} exc;

static int cmp_exc(const void *pa, const void *pb)
{
    const exc *a = pa, *b = pb;
    if (a->post != b->post)
        return a->post < b->post ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static void chain_append(vt_match_crecv *rv, uint32_t p, uint32_t *head, uint32_t *tail)
{
    uint32_t k = rv[p].key;
    rv[p].send_pos = VT_MPOS_NONE;
    if (head[k] == VT_MPOS_NONE)
        head[k] = p;
    else
        rv[tail[k]].send_pos = p;
    tail[k] = p;
}

/* Chains the receives of one rank into their keys' FIFOs, in posting order: record
 * order, except receives posted by an earlier probe (post_index < index), merged in by
 * their posting index. */
static int chain_rank(vt_match_crecv *rv, size_t nr, uint32_t *head, uint32_t *tail)
{
    size_t nx = 0;
    for (size_t i = 0; i < nr; i++)
        nx += rv[i].post_index != rv[i].index;
    exc *x = NULL;
    if (nx) {
        x = malloc(nx * sizeof *x);
        if (!x)
            return -1;
        nx = 0;
        for (size_t i = 0; i < nr; i++)
            if (rv[i].post_index != rv[i].index)
                x[nx++] = (exc){rv[i].post_index, (uint32_t)i};
        vt_sort(x, nx, sizeof *x, cmp_exc);
    }
    size_t j = 0;
    for (size_t i = 0; i < nr; i++) {
        if (rv[i].post_index != rv[i].index)
            continue;
        while (j < nx && x[j].post < rv[i].post_index)
            chain_append(rv, x[j++].pos, head, tail);
        chain_append(rv, (uint32_t)i, head, tail);
    }
    while (j < nx)
        chain_append(rv, x[j++].pos, head, tail);
    free(x);
    return 0;
}

/* The first unmatched entry in (communicator, source, destination, tag) order, for
 * the message when unmatched entries are an error. */
typedef struct first_unmatched {
    int have, is_send;
    uint32_t key, rank, pos;
} first_unmatched;

static void note_unmatched(first_unmatched *u, const vt_match_key *keys, int is_send, uint32_t key, uint32_t rank,
                           uint32_t pos)
{
    if (u->have && !vt__key_less(&keys[key], &keys[u->key]))
        return;
    *u = (first_unmatched){1, is_send, key, rank, pos};
}

static int report_unmatched(const vt_trace *t, const vt_matches *m, const first_unmatched *u, vt_error *err)
{
    uint64_t index = u->is_send ? m->sends[u->rank][u->pos].index : m->recvs[u->rank][u->pos].index;
    return vt__match_err_unmatched(err, t, &m->keys[u->key], u->is_send, index);
}

/* Pairs the k-th send of every key with its k-th receive. */
static int pair_all(const vt_trace *t, vt_matches *m, unsigned flags, vt_error *err)
{
    const char *path0 = vt_trace_rank(t, 0)->path;
    size_t nk = m->nkeys ? m->nkeys : 1;
    uint32_t *head = malloc(nk * sizeof *head), *tail = malloc(nk * sizeof *tail);
    if (!head || !tail) {
        free(head);
        free(tail);
        return vt__seterr(err, path0, 0, "expected memory to match messages, found none");
    }
    memset(head, 0xff, nk * sizeof *head);
    for (uint32_t r = 0; r < m->nranks; r++) {
        if (chain_rank(m->recvs[r], m->nrecvs[r], head, tail)) {
            free(head);
            free(tail);
            return vt__seterr(err, path0, 0, "expected memory to match messages, found none");
        }
    }
    free(tail);
    first_unmatched u = {0};
    for (uint32_t r = 0; r < m->nranks; r++) {
        vt_match_csend *se = m->sends[r];
        for (size_t i = 0; i < m->nsends[r]; i++) {
            uint32_t k = se[i].key, h = head[k];
            if (h == VT_MPOS_NONE) { /* a send nobody received */
                m->unmatched++;
                if (!(flags & VT_MATCH_PARTIAL))
                    note_unmatched(&u, m->keys, 1, k, r, (uint32_t)i);
                continue;
            }
            vt_match_crecv *re = &m->recvs[m->keys[k].dst][h];
            head[k] = re->send_pos;
            re->send_pos = (uint32_t)i;
            se[i].recv_pos = h;
            m->count++;
        }
    }
    /* receives left in their FIFOs: no send */
    for (size_t k = 0; k < m->nkeys; k++) {
        if (head[k] == VT_MPOS_NONE)
            continue;
        uint32_t dst = m->keys[k].dst;
        if (!(flags & VT_MATCH_PARTIAL))
            note_unmatched(&u, m->keys, 0, (uint32_t)k, dst, head[k]);
        for (uint32_t p = head[k]; p != VT_MPOS_NONE;) {
            uint32_t next = m->recvs[dst][p].send_pos;
            m->recvs[dst][p].send_pos = VT_MPOS_NONE;
            m->unmatched++;
            p = next;
        }
    }
    free(head);
    if (u.have)
        return report_unmatched(t, m, &u, err);
    return 0;
}

int vt_trace_match(const vt_trace *t, unsigned flags, vt_matches **out, vt_error *err)
{
    if (!out)
        return vt__seterr(err, "(match)", 0, "expected an output pointer, found NULL");
    *out = NULL;
    uint32_t nranks = vt_trace_nranks(t);
    if (!t || nranks == 0)
        return vt__seterr(err, "(match)", 0, "expected an open trace, found none");
    const char *path0 = vt_trace_rank(t, 0)->path;
    int rc = -1;
    vt_keytab keys;
    vt__keytab_init(&keys);
    vt_matches *m = calloc(1, sizeof *m);
    if (!m)
        goto nomem;
    m->t = t;
    m->flags = flags;
    m->nranks = nranks;
    atomic_init(&m->full, NULL);
    m->recvs = calloc(nranks, sizeof *m->recvs);
    m->sends = calloc(nranks, sizeof *m->sends);
    m->nrecvs = calloc(nranks, sizeof *m->nrecvs);
    m->nsends = calloc(nranks, sizeof *m->nsends);
    if (!m->recvs || !m->sends || !m->nrecvs || !m->nsends)
        goto nomem;

    for (uint32_t r = 0; r < nranks; r++) {
        rank_state s;
        memset(&s, 0, sizeof s);
        s.t = t;
        s.rk = vt_trace_rank(t, r);
        s.rank = r;
        s.flags = flags;
        s.err = err;
        s.keys = &keys;
        /* a reduced trace names its messages in its records: nothing to match */
        int bad = s.rk->reduced ? 0 : vt__match_scan_rank(&s);
        m->sends[r] = s.sends;
        m->recvs[r] = s.recvs;
        m->nsends[r] = s.ns;
        m->nrecvs[r] = s.nr;
        m->unmatched += s.unmatched;
        if (bad)
            goto out;
    }
    m->keys = keys.k;
    m->nkeys = keys.n;
    keys.k = NULL;
    if (pair_all(t, m, flags, err))
        goto out;
    rc = 0;
    goto out;
nomem:
    vt__seterr(err, path0, 0, "expected memory to match messages, found none");
out:
    vt__keytab_free(&keys);
    if (rc == 0)
        *out = m;
    else
        vt_matches_free(m);
    return rc;
}

/* ------------------------------------------------------------------ the full view */

/* The vt_match_recv / vt_match_send arrays: the compact result, plus what it leaves
 * out (the bytes and sub of receives), from a second pass over every rank. */
static full_view *build_full(const vt_matches *m)
{
    uint32_t n = m->nranks;
    full_view *f = calloc(1, sizeof *f);
    uint64_t **rb = calloc(n, sizeof *rb);
    uint32_t **rs = calloc(n, sizeof *rs);
    vt_keytab scratch;
    vt__keytab_init(&scratch);
    int ok = 0;
    if (!f || !rb || !rs)
        goto out;
    f->recvs = calloc(n, sizeof *f->recvs);
    f->sends = calloc(n, sizeof *f->sends);
    if (!f->recvs || !f->sends)
        goto out;
    for (uint32_t r = 0; r < n; r++) {
        rank_state s;
        vt_error e;
        memset(&s, 0, sizeof s);
        s.t = m->t;
        s.rk = vt_trace_rank(m->t, r);
        s.rank = r;
        s.flags = m->flags;
        s.err = &e;
        s.keys = &scratch;
        s.extras = 1;
        int bad = vt__match_scan_rank(&s) || s.nr != m->nrecvs[r] || s.ns != m->nsends[r];
        for (size_t i = 0; !bad && i < s.nr; i++)
            bad = s.recvs[i].index != m->recvs[r][i].index;
        if (!bad && s.nr == 0) {
            rb[r] = malloc(sizeof **rb);
            rs[r] = malloc(sizeof **rs);
            bad = !rb[r] || !rs[r];
        } else if (!bad) {
            rb[r] = s.rbytes;
            rs[r] = s.rsub;
            s.rbytes = NULL;
            s.rsub = NULL;
        }
        vt__match_rank_free(&s);
        if (bad)
            goto out;
    }
    for (uint32_t r = 0; r < n; r++) {
        size_t nr = m->nrecvs[r], ns = m->nsends[r];
        f->recvs[r] = malloc((nr ? nr : 1) * sizeof **f->recvs);
        f->sends[r] = malloc((ns ? ns : 1) * sizeof **f->sends);
        if (!f->recvs[r] || !f->sends[r])
            goto out;
        for (size_t i = 0; i < nr; i++) {
            const vt_match_crecv *c = &m->recvs[r][i];
            const vt_match_key *k = &m->keys[c->key];
            vt_match_recv *o = &f->recvs[r][i];
            memset(o, 0, sizeof *o);
            o->index = c->index;
            o->sub = rs[r][i];
            o->post_index = c->post_index;
            o->done_index = c->done_index;
            o->done_exit = c->done_exit;
            o->comm_id = k->comm_id;
            o->src = o->send_rank = k->src;
            o->tag = k->tag;
            o->bytes = rb[r][i];
            o->send_index = UINT64_MAX;
            o->send_pos = SIZE_MAX;
            if (c->send_pos != VT_MPOS_NONE) {
                const vt_match_csend *s = &m->sends[k->src][c->send_pos];
                o->send_index = s->index;
                o->send_sub = s->sub;
                o->send_pos = c->send_pos;
            }
        }
        for (size_t i = 0; i < ns; i++) {
            const vt_match_csend *c = &m->sends[r][i];
            const vt_match_key *k = &m->keys[c->key];
            vt_match_send *o = &f->sends[r][i];
            memset(o, 0, sizeof *o);
            o->index = c->index;
            o->fn = c->fn;
            o->sub = c->sub;
            o->comm_id = k->comm_id;
            o->dst = k->dst;
            o->tag = k->tag;
            o->bytes = c->bytes;
            o->recv_index = UINT64_MAX;
            o->recv_pos = SIZE_MAX;
            if (c->recv_pos != VT_MPOS_NONE) {
                o->recv_index = m->recvs[k->dst][c->recv_pos].index;
                o->recv_sub = rs[k->dst][c->recv_pos];
                o->recv_pos = c->recv_pos;
            }
        }
    }
    ok = 1;
out:
    for (uint32_t r = 0; r < n; r++) {
        if (rb)
            free(rb[r]);
        if (rs)
            free(rs[r]);
    }
    free(rb);
    free(rs);
    vt__keytab_free(&scratch);
    if (!ok) {
        full_free(f, n);
        return NULL;
    }
    return f;
}

static full_view *full_of(const vt_matches *cm)
{
    vt_matches *m = (vt_matches *)cm; /* the view is a cache: logically const */
    full_view *f = atomic_load(&m->full);
    if (f)
        return f;
    f = build_full(m);
    if (!f)
        return NULL;
    full_view *expected = NULL;
    if (!atomic_compare_exchange_strong(&m->full, &expected, f)) { /* another thread was first */
        full_free(f, m->nranks);
        return expected;
    }
    return f;
}

/* ------------------------------------------------------------------ accessors */

uint64_t vt_matches_count(const vt_matches *m) { return m ? m->count : 0; }
uint64_t vt_matches_unmatched(const vt_matches *m) { return m ? m->unmatched : 0; }

const vt_match_crecv *vt_matches_crecvs(const vt_matches *m, uint32_t rank, size_t *n)
{
    if (!m || rank >= m->nranks) {
        if (n)
            *n = 0;
        return NULL;
    }
    if (n)
        *n = m->nrecvs[rank];
    return m->recvs[rank];
}

const vt_match_csend *vt_matches_csends(const vt_matches *m, uint32_t rank, size_t *n)
{
    if (!m || rank >= m->nranks) {
        if (n)
            *n = 0;
        return NULL;
    }
    if (n)
        *n = m->nsends[rank];
    return m->sends[rank];
}

const vt_match_key *vt_matches_keys(const vt_matches *m, size_t *n)
{
    if (n)
        *n = m ? m->nkeys : 0;
    return m ? m->keys : NULL;
}

const vt_match_recv *vt_matches_recvs(const vt_matches *m, uint32_t rank, size_t *n)
{
    const full_view *f = m && rank < m->nranks ? full_of(m) : NULL;
    if (n)
        *n = f ? m->nrecvs[rank] : 0;
    return f ? f->recvs[rank] : NULL;
}

const vt_match_send *vt_matches_sends(const vt_matches *m, uint32_t rank, size_t *n)
{
    const full_view *f = m && rank < m->nranks ? full_of(m) : NULL;
    if (n)
        *n = f ? m->nsends[rank] : 0;
    return f ? f->sends[rank] : NULL;
}

#define FIND_BODY(arr, cnt)                                                                                      \
    size_t lo = 0, hi = (cnt);                                                                                   \
    while (lo < hi) {                                                                                            \
        size_t mid = lo + (hi - lo) / 2;                                                                         \
        if (arr[mid].index < index || (arr[mid].index == index && arr[mid].sub < sub))                           \
            lo = mid + 1;                                                                                        \
        else                                                                                                     \
            hi = mid;                                                                                            \
    }                                                                                                            \
    return lo < (cnt) && arr[lo].index == index && arr[lo].sub == sub ? &arr[lo] : NULL;

const vt_match_recv *vt_matches_find_recv(const vt_matches *m, uint32_t rank, uint64_t index, uint32_t sub)
{
    size_t n;
    const vt_match_recv *a = vt_matches_recvs(m, rank, &n);
    if (!a)
        return NULL;
    FIND_BODY(a, n)
}

const vt_match_send *vt_matches_find_send(const vt_matches *m, uint32_t rank, uint64_t index, uint32_t sub)
{
    size_t n;
    const vt_match_send *a = vt_matches_sends(m, rank, &n);
    if (!a)
        return NULL;
    FIND_BODY(a, n)
}

