/* Message matching (doc/format.md, "Sequence numbers and matching").
 *
 * Pass 1 streams each rank once and collects its sends (in call order) and its
 * receives with their posting index, resolving the source and tag of nonblocking and
 * persistent receives from their completions and of matched receives from their
 * probes. Pass 2 sorts both by (communicator id, source, destination, tag, order) and
 * pairs the k-th receive of each key with its k-th send. */
#include "vt_config.h"
#include "reader.h"
#include "reader_priv.h"
#include "codec.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ u64 -> u64 map */

typedef struct map {
    uint64_t *keys; /* 0: empty */
    uint64_t *vals;
    size_t cap, n; /* cap: power of two */
} map;

static size_t map_slot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static int map_grow(map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint64_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = map_slot(m->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

/* key != 0 */
static int map_put(map *m, uint64_t key, uint64_t val)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m))
        return -1;
    size_t j = map_slot(key, m->cap);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->n++;
    m->keys[j] = key;
    m->vals[j] = val;
    return 0;
}

static size_t map_find(const map *m, uint64_t key)
{
    if (!m->cap || !key)
        return SIZE_MAX;
    size_t j = map_slot(key, m->cap);
    while (m->keys[j]) {
        if (m->keys[j] == key)
            return j;
        j = (j + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

static void map_del_slot(map *m, size_t j)
{
    /* backward-shift deletion keeps probe chains intact */
    size_t mask = m->cap - 1;
    m->keys[j] = 0;
    m->n--;
    size_t i = (j + 1) & mask;
    while (m->keys[i]) {
        size_t home = map_slot(m->keys[i], m->cap);
        /* move entry i to the hole j when j lies cyclically in [home, i) */
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->keys[j] = m->keys[i];
            m->vals[j] = m->vals[i];
            m->keys[i] = 0;
            j = i;
        }
        i = (i + 1) & mask;
    }
}

static void map_clear(map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ collected entries */

enum { ST_OK = 0, ST_PENDING = 1, ST_SKIP = 2 };

typedef struct isend {
    vt_match_send pub;
    uint64_t block_off;
    uint8_t state;
} isend;

typedef struct irecv {
    vt_match_recv pub;
    uint64_t block_off;
    uint64_t request; /* for messages about unresolved receives */
    uint8_t state;
} irecv;

typedef struct vec {
    void *p;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        if (cap > SIZE_MAX / v->size)
            return NULL;
        void *p = realloc(v->p, cap * v->size);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    void *e = (char *)v->p + v->n * v->size;
    memset(e, 0, v->size);
    v->n++;
    return e;
}

/* ------------------------------------------------------------------ function kinds */

enum fkind {
    K_OTHER,
    K_RECV,      /* MPI_Recv, MPI_Sendrecv(_replace): posting at the record, P/T/B */
    K_IRECV,     /* MPI_Irecv, MPI_Isendrecv(_replace): resolved by the completion */
    K_RECV_INIT, /* persistent receive template */
    K_SEND_INIT, /* persistent send template (any other *_init with a send peer) */
    K_START,     /* MPI_Start, MPI_Startall */
    K_MPROBE,    /* MPI_Mprobe, MPI_Improbe */
    K_MRECV,     /* MPI_Mrecv */
    K_IMRECV,    /* MPI_Imrecv */
};

static int name_is(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0)
        return 0;
    return name[n] == 0 || strcmp(name + n, "_c") == 0;
}

static uint8_t classify(const vt_function *f, uint8_t *is_init)
{
    *is_init = strstr(f->name, "_init") != NULL;
    if (name_is(f->name, "MPI_Recv") || name_is(f->name, "MPI_Sendrecv") || name_is(f->name, "MPI_Sendrecv_replace"))
        return (f->fields & VT_F_RPEER) ? K_RECV : K_OTHER;
    if (name_is(f->name, "MPI_Irecv") || name_is(f->name, "MPI_Isendrecv") || name_is(f->name, "MPI_Isendrecv_replace"))
        return (f->fields & VT_F_REQUEST) ? K_IRECV : K_OTHER;
    if (name_is(f->name, "MPI_Recv_init") || name_is(f->name, "MPI_Precv_init"))
        return (f->fields & VT_F_REQUEST) ? K_RECV_INIT : K_OTHER;
    if (*is_init && (f->fields & VT_F_PEER) && (f->fields & VT_F_REQUEST))
        return K_SEND_INIT;
    if (name_is(f->name, "MPI_Start") || name_is(f->name, "MPI_Startall"))
        return (f->fields & VT_F_STARTED) ? K_START : K_OTHER;
    if (name_is(f->name, "MPI_Mprobe") || name_is(f->name, "MPI_Improbe"))
        return (f->fields & VT_F_MSG) ? K_MPROBE : K_OTHER;
    if (name_is(f->name, "MPI_Mrecv"))
        return (f->fields & VT_F_MSG) ? K_MRECV : K_OTHER;
    if (name_is(f->name, "MPI_Imrecv"))
        return (f->fields & VT_F_MSG) ? K_IMRECV : K_OTHER;
    return K_OTHER;
}

/* ------------------------------------------------------------------ pass 1 */

typedef struct tmpl {
    uint8_t recv; /* 1 receive template, 0 send template */
    int64_t fn;   /* the *_init function */
    uint64_t comm_id;
    int64_t peer, tag;
    uint64_t bytes;
} tmpl;

typedef struct probe {
    uint64_t index, comm_id, block_off;
    int64_t peer, tag;
    uint64_t bytes;
} probe;

/* active request values: pos << 2 | kind */
enum { A_RECV = 1, A_SEND = 2, A_IMRECV = 3 };

typedef struct rank_state {
    const vt_trace *t;
    const vt_rank *rk;
    uint32_t rank;
    unsigned flags;
    vec sends, recvs, tmpls, probes;
    map active, templates, probe_map;
    uint64_t unmatched;
    vt_error *err;
} rank_state;

static uint64_t comm_id_of(const vt_rank *rk, int64_t comm)
{
    return comm >= 0 && (uint64_t)comm < rk->ncomms ? rk->comms[comm].id : 0;
}

static int nomem(rank_state *s, const vt_event *ev)
{
    return vt__seterr(s->err, s->rk->path, ev->block_offset, "expected memory to match record %llu, found none",
                      (unsigned long long)ev->index);
}

static isend *add_send(rank_state *s, const vt_event *ev, uint64_t comm_id, int64_t peer, int64_t tag, uint64_t bytes,
                       uint32_t sub, int64_t fn)
{
    isend *e = vec_push(&s->sends);
    if (!e)
        return NULL;
    e->pub.index = ev->index;
    e->pub.fn = fn;
    e->pub.sub = sub;
    e->pub.comm_id = comm_id;
    e->pub.dst = (uint32_t)peer;
    e->pub.tag = tag;
    e->pub.bytes = bytes;
    e->pub.recv_index = UINT64_MAX;
    e->pub.recv_pos = SIZE_MAX;
    e->block_off = ev->block_offset;
    return e;
}

static irecv *add_recv(rank_state *s, const vt_event *ev, uint64_t comm_id, uint64_t post, uint32_t sub)
{
    irecv *e = vec_push(&s->recvs);
    if (!e)
        return NULL;
    e->pub.index = ev->index;
    e->pub.sub = sub;
    e->pub.post_index = post;
    e->pub.done_index = ev->index;
    e->pub.done_exit = ev->exit;
    e->pub.comm_id = comm_id;
    e->pub.send_index = UINT64_MAX;
    e->pub.send_pos = SIZE_MAX;
    e->block_off = ev->block_offset;
    e->state = ST_PENDING;
    return e;
}

static void resolve_recv(irecv *e, int64_t src, int64_t tag, uint64_t bytes)
{
    if (src < 0) { /* MPI_PROC_NULL or unknown (cancelled) */
        e->state = ST_SKIP;
        return;
    }
    e->pub.src = e->pub.send_rank = (uint32_t)src;
    e->pub.tag = tag;
    e->pub.bytes = bytes;
    e->state = ST_OK;
}

static int set_active(rank_state *s, const vt_event *ev, uint64_t req, size_t pos, unsigned kind)
{
    if (req == 0)
        return 0;
    if (map_put(&s->active, req, ((uint64_t)pos << 2) | kind))
        return nomem(s, ev);
    return 0;
}

static int on_event(rank_state *s, const vt_event *ev, const uint8_t *kinds, const uint8_t *inits)
{
    const vt_rank *rk = s->rk;
    if (ev->fn < 0)
        return 0;
    uint8_t k = kinds[ev->fn];
    uint64_t comm_id = comm_id_of(rk, ev->comm);
    int64_t tag = (ev->fields & VT_F_TAG) ? ev->tag : -1;

    /* the send side of any call with a send peer (not a persistent template) */
    if ((ev->fields & VT_F_PEER) && ev->peer >= 0 && !inits[ev->fn]) {
        isend *e = add_send(s, ev, comm_id, ev->peer, tag, ev->bytes, 0, ev->fn);
        if (!e)
            return nomem(s, ev);
        if (k != K_IRECV && set_active(s, ev, ev->request, s->sends.n - 1, A_SEND))
            return -1;
    }

    switch (k) {
    case K_RECV: {
        irecv *e = add_recv(s, ev, comm_id, ev->index, 0);
        if (!e)
            return nomem(s, ev);
        resolve_recv(e, ev->rpeer, (ev->fields & VT_F_RTAG) ? ev->rtag : -1, ev->rbytes);
        break;
    }
    case K_IRECV:
        if (ev->request) {
            irecv *e = add_recv(s, ev, comm_id, ev->index, 0);
            if (!e)
                return nomem(s, ev);
            e->request = ev->request;
            if (set_active(s, ev, ev->request, s->recvs.n - 1, A_RECV))
                return -1;
        }
        break;
    case K_RECV_INIT:
    case K_SEND_INIT:
        if (ev->request) {
            tmpl *tp = vec_push(&s->tmpls);
            if (!tp)
                return nomem(s, ev);
            tp->recv = k == K_RECV_INIT;
            tp->fn = ev->fn;
            tp->comm_id = comm_id;
            tp->peer = ev->peer;
            tp->tag = tag;
            tp->bytes = ev->bytes;
            if (map_put(&s->templates, ev->request, s->tmpls.n - 1))
                return nomem(s, ev);
        }
        break;
    case K_START: {
        uint32_t nsend = 0, nrecv = 0;
        for (size_t i = 0; i < ev->nstarted; i++) {
            uint64_t req = ev->started[i];
            size_t slot = map_find(&s->templates, req);
            if (slot == SIZE_MAX)
                continue; /* persistent collective, or a request we know nothing of */
            const tmpl *tp = (const tmpl *)s->tmpls.p + s->templates.vals[slot];
            if (tp->recv) {
                irecv *e = add_recv(s, ev, tp->comm_id, ev->index, nrecv++);
                if (!e)
                    return nomem(s, ev);
                e->request = req;
                if (set_active(s, ev, req, s->recvs.n - 1, A_RECV))
                    return -1;
            } else if (tp->peer >= 0) {
                if (!add_send(s, ev, tp->comm_id, tp->peer, tp->tag, tp->bytes, nsend++, tp->fn))
                    return nomem(s, ev);
                if (set_active(s, ev, req, s->sends.n - 1, A_SEND))
                    return -1;
            }
        }
        break;
    }
    case K_MPROBE:
        if (ev->msg) {
            probe *p = vec_push(&s->probes);
            if (!p)
                return nomem(s, ev);
            p->index = ev->index;
            p->comm_id = comm_id;
            p->block_off = ev->block_offset;
            p->peer = (ev->fields & VT_F_RPEER) ? ev->rpeer : VT_PEER_UNKNOWN;
            p->tag = (ev->fields & VT_F_RTAG) ? ev->rtag : -1;
            p->bytes = ev->rbytes;
            if (map_put(&s->probe_map, ev->msg, s->probes.n - 1))
                return nomem(s, ev);
        }
        break;
    case K_MRECV:
    case K_IMRECV: {
        if (!ev->msg)
            break; /* MPI_MESSAGE_NO_PROC */
        size_t slot = map_find(&s->probe_map, ev->msg);
        if (slot == SIZE_MAX) {
            if (s->flags & VT_MATCH_PARTIAL) {
                s->unmatched++;
                break;
            }
            return vt__seterr(s->err, rk->path, ev->block_offset,
                              "expected an MPI_Mprobe or MPI_Improbe of message id %llu before record %llu (rank %u), found none",
                              (unsigned long long)ev->msg, (unsigned long long)ev->index, s->rank);
        }
        const probe p = ((const probe *)s->probes.p)[s->probe_map.vals[slot]];
        map_del_slot(&s->probe_map, slot);
        /* source and tag from the probe's status; the receive's own as a fallback */
        int64_t src = p.peer, rtag = p.tag;
        if (src == VT_PEER_UNKNOWN && (ev->fields & VT_F_RPEER)) {
            src = ev->rpeer;
            rtag = (ev->fields & VT_F_RTAG) ? ev->rtag : rtag;
        }
        uint64_t comm = p.comm_id ? p.comm_id : comm_id;
        irecv *e = add_recv(s, ev, comm, p.index, 0);
        if (!e)
            return nomem(s, ev);
        resolve_recv(e, src, rtag, (ev->fields & VT_F_RBYTES) ? ev->rbytes : p.bytes);
        if (k == K_IMRECV && e->state == ST_OK && set_active(s, ev, ev->request, s->recvs.n - 1, A_IMRECV))
            return -1;
        break;
    }
    default:
        break;
    }

    /* completions */
    for (size_t i = 0; i < ev->ndone; i++) {
        const vt_completion *d = &ev->done[i];
        size_t slot = map_find(&s->active, d->request);
        if (slot == SIZE_MAX)
            continue;
        uint64_t v = s->active.vals[slot];
        map_del_slot(&s->active, slot);
        size_t pos = (size_t)(v >> 2);
        unsigned kind = (unsigned)(v & 3);
        if (kind == A_SEND) {
            isend *e = (isend *)s->sends.p + pos;
            if (d->flags & VT_COMPL_CANCELLED)
                e->state = ST_SKIP;
        } else {
            irecv *e = (irecv *)s->recvs.p + pos;
            e->pub.done_index = ev->index;
            e->pub.done_exit = ev->exit;
            if (d->flags & VT_COMPL_CANCELLED)
                e->state = ST_SKIP;
            else if (kind == A_RECV)
                resolve_recv(e, d->peer, d->tag, d->bytes);
            else if (d->flags & VT_COMPL_RECV)
                e->pub.bytes = d->bytes;
        }
    }
    return 0;
}

static int scan_rank(rank_state *s)
{
    const vt_rank *rk = s->rk;
    vt_cursor *c = NULL;
    vt_event ev;
    int rc = -1;
    uint8_t *kinds = malloc(rk->nfuncs ? rk->nfuncs : 1);
    uint8_t *inits = malloc(rk->nfuncs ? rk->nfuncs : 1);
    if (!kinds || !inits) {
        vt__seterr(s->err, rk->path, 0, "expected memory to match messages, found none");
        goto out;
    }
    for (size_t i = 0; i < rk->nfuncs; i++)
        kinds[i] = classify(&rk->funcs[i], &inits[i]);
    if (vt_cursor_open(s->t, s->rank, &c, s->err))
        goto out;
    int got;
    while ((got = vt_cursor_next(c, &ev, s->err)) == 1)
        if (on_event(s, &ev, kinds, inits))
            goto out;
    if (got < 0)
        goto out;
    /* receives never resolved */
    for (size_t i = 0; i < s->recvs.n; i++) {
        irecv *e = (irecv *)s->recvs.p + i;
        if (e->state != ST_PENDING)
            continue;
        if (!(s->flags & VT_MATCH_PARTIAL)) {
            vt__seterr(s->err, rk->path, e->block_off,
                       "expected a completion of request %llu of receive record %llu (rank %u, communicator 0x%llx), "
                       "found none in the rank's records",
                       (unsigned long long)e->request, (unsigned long long)e->pub.index, s->rank,
                       (unsigned long long)e->pub.comm_id);
            goto out;
        }
        e->state = ST_SKIP;
        s->unmatched++;
    }
    rc = 0;
out:
    vt_cursor_close(c);
    free(kinds);
    free(inits);
    map_clear(&s->active);
    map_clear(&s->templates);
    map_clear(&s->probe_map);
    free(s->tmpls.p);
    free(s->probes.p);
    s->tmpls.p = s->probes.p = NULL;
    return rc;
}

/* ------------------------------------------------------------------ pass 2 */

typedef struct key {
    uint64_t comm;
    int64_t tag;
    uint32_t src, dst;
    uint64_t order;
    uint32_t sub;
    uint32_t rank; /* rank holding the entry */
    size_t pos;    /* position in that rank's array */
} key;

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int cmp_key_group(const key *a, const key *b)
{
    int c;
    if ((c = cmp_u64(a->comm, b->comm)) || (c = cmp_u64(a->src, b->src)) || (c = cmp_u64(a->dst, b->dst)))
        return c;
    return (a->tag > b->tag) - (a->tag < b->tag);
}

static int cmp_key(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    int c = cmp_key_group(a, b);
    if (c || (c = cmp_u64(a->order, b->order)) || (c = cmp_u64(a->sub, b->sub)))
        return c;
    return cmp_u64(a->rank, b->rank);
}

struct vt_matches {
    uint32_t nranks;
    vt_match_recv **recvs;
    size_t *nrecvs;
    vt_match_send **sends;
    size_t *nsends;
    uint64_t count, unmatched;
};

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
    free(m);
}

static int err_unmatched_send(const vt_trace *t, const key *k, const isend *e, vt_error *err)
{
    const vt_rank *rk = vt_trace_rank(t, k->rank);
    return vt__seterr(err, rk->path, e->block_off,
                      "expected a receive matching send record %llu of rank %u (to %u, tag %lld, communicator 0x%llx), "
                      "found none",
                      (unsigned long long)e->pub.index, k->rank, k->dst, (long long)k->tag, (unsigned long long)k->comm);
}

static int err_unmatched_recv(const vt_trace *t, const key *k, const irecv *e, vt_error *err)
{
    const vt_rank *rk = vt_trace_rank(t, k->rank);
    return vt__seterr(err, rk->path, e->block_off,
                      "expected a send matching receive record %llu of rank %u (from %u, tag %lld, communicator 0x%llx), "
                      "found none",
                      (unsigned long long)e->pub.index, k->rank, k->src, (long long)k->tag, (unsigned long long)k->comm);
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
    vec *sends = calloc(nranks, sizeof *sends);
    vec *recvs = calloc(nranks, sizeof *recvs);
    key *sk = NULL, *rkeys = NULL;
    vt_matches *m = calloc(1, sizeof *m);
    uint64_t unmatched = 0;
    if (!sends || !recvs || !m)
        goto nomem;
    m->nranks = nranks;
    m->recvs = calloc(nranks, sizeof *m->recvs);
    m->sends = calloc(nranks, sizeof *m->sends);
    m->nrecvs = calloc(nranks, sizeof *m->nrecvs);
    m->nsends = calloc(nranks, sizeof *m->nsends);
    if (!m->recvs || !m->sends || !m->nrecvs || !m->nsends)
        goto nomem;

    /* pass 1 */
    size_t ns = 0, nr = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        rank_state s;
        memset(&s, 0, sizeof s);
        s.t = t;
        s.rk = vt_trace_rank(t, r);
        s.rank = r;
        s.flags = flags;
        s.err = err;
        s.sends.size = sizeof(isend);
        s.recvs.size = sizeof(irecv);
        s.tmpls.size = sizeof(tmpl);
        s.probes.size = sizeof(probe);
        int bad = scan_rank(&s);
        sends[r] = s.sends;
        recvs[r] = s.recvs;
        unmatched += s.unmatched;
        if (bad)
            goto out;
        /* drop skipped entries (order is kept) */
        size_t o = 0;
        for (size_t i = 0; i < sends[r].n; i++)
            if (((isend *)sends[r].p)[i].state != ST_SKIP)
                ((isend *)sends[r].p)[o++] = ((isend *)sends[r].p)[i];
        sends[r].n = o;
        o = 0;
        for (size_t i = 0; i < recvs[r].n; i++)
            if (((irecv *)recvs[r].p)[i].state == ST_OK)
                ((irecv *)recvs[r].p)[o++] = ((irecv *)recvs[r].p)[i];
        recvs[r].n = o;
        ns += sends[r].n;
        nr += recvs[r].n;
    }

    /* pass 2 */
    sk = malloc((ns ? ns : 1) * sizeof *sk);
    rkeys = malloc((nr ? nr : 1) * sizeof *rkeys);
    if (!sk || !rkeys)
        goto nomem;
    size_t a = 0, b = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        for (size_t i = 0; i < sends[r].n; i++) {
            const isend *e = (const isend *)sends[r].p + i;
            sk[a++] = (key){e->pub.comm_id, e->pub.tag, r, e->pub.dst, e->pub.index, e->pub.sub, r, i};
        }
        for (size_t i = 0; i < recvs[r].n; i++) {
            const irecv *e = (const irecv *)recvs[r].p + i;
            rkeys[b++] = (key){e->pub.comm_id, e->pub.tag, e->pub.src, r, e->pub.post_index, e->pub.sub, r, i};
        }
    }
    qsort(sk, ns, sizeof *sk, cmp_key);
    qsort(rkeys, nr, sizeof *rkeys, cmp_key);
    a = b = 0;
    while (a < ns || b < nr) {
        int c = a == ns ? 1 : b == nr ? -1 : cmp_key_group(&sk[a], &rkeys[b]);
        if (c == 0) {
            isend *se = (isend *)sends[sk[a].rank].p + sk[a].pos;
            irecv *re = (irecv *)recvs[rkeys[b].rank].p + rkeys[b].pos;
            se->pub.recv_pos = rkeys[b].pos;
            se->pub.recv_index = re->pub.index;
            se->pub.recv_sub = re->pub.sub;
            re->pub.send_pos = sk[a].pos;
            re->pub.send_rank = sk[a].rank;
            re->pub.send_index = se->pub.index;
            re->pub.send_sub = se->pub.sub;
            m->count++;
            a++;
            b++;
        } else if (c < 0) { /* a send nobody received */
            if (!(flags & VT_MATCH_PARTIAL)) {
                err_unmatched_send(t, &sk[a], (const isend *)sends[sk[a].rank].p + sk[a].pos, err);
                goto out;
            }
            unmatched++;
            a++;
        } else {
            if (!(flags & VT_MATCH_PARTIAL)) {
                err_unmatched_recv(t, &rkeys[b], (const irecv *)recvs[rkeys[b].rank].p + rkeys[b].pos, err);
                goto out;
            }
            unmatched++;
            b++;
        }
    }
    m->unmatched = unmatched;

    /* public arrays */
    for (uint32_t r = 0; r < nranks; r++) {
        m->sends[r] = malloc((sends[r].n ? sends[r].n : 1) * sizeof(vt_match_send));
        m->recvs[r] = malloc((recvs[r].n ? recvs[r].n : 1) * sizeof(vt_match_recv));
        if (!m->sends[r] || !m->recvs[r])
            goto nomem;
        for (size_t i = 0; i < sends[r].n; i++)
            m->sends[r][i] = ((const isend *)sends[r].p)[i].pub;
        for (size_t i = 0; i < recvs[r].n; i++)
            m->recvs[r][i] = ((const irecv *)recvs[r].p)[i].pub;
        m->nsends[r] = sends[r].n;
        m->nrecvs[r] = recvs[r].n;
    }
    rc = 0;
    goto out;
nomem:
    vt__seterr(err, path0, 0, "expected memory to match messages, found none");
out:
    if (sends)
        for (uint32_t r = 0; r < nranks; r++)
            free(sends[r].p);
    if (recvs)
        for (uint32_t r = 0; r < nranks; r++)
            free(recvs[r].p);
    free(sends);
    free(recvs);
    free(sk);
    free(rkeys);
    if (rc == 0)
        *out = m;
    else
        vt_matches_free(m);
    return rc;
}

/* ------------------------------------------------------------------ accessors */

uint64_t vt_matches_count(const vt_matches *m) { return m ? m->count : 0; }
uint64_t vt_matches_unmatched(const vt_matches *m) { return m ? m->unmatched : 0; }

const vt_match_recv *vt_matches_recvs(const vt_matches *m, uint32_t rank, size_t *n)
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

const vt_match_send *vt_matches_sends(const vt_matches *m, uint32_t rank, size_t *n)
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
