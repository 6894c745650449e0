/* The pass over one rank of vt_trace_match (doc/format.md, "Sequence numbers and
 * matching"): streams the rank's records once, collecting its sends (in call order)
 * and its receives (in record order, with their posting index) straight into the
 * compact arrays, resolving the source and tag of nonblocking and persistent receives
 * from their completions and of matched receives from their probes; the request,
 * template and probe maps hold only what is in flight. Calls match_keys.c and the
 * reader's API. */
#include "vt_config.h"
#include "format/match_priv.h"
#include "format/reader_priv.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ u64 -> (u64, u64) map */

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
    ment *e = calloc(cap, sizeof *e);
    if (!e)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->e[i].key)
            continue;
        size_t j = map_slot(m->e[i].key, cap);
        while (e[j].key)
            j = (j + 1) & (cap - 1);
        e[j] = m->e[i];
    }
    free(m->e);
    m->e = e;
    m->cap = cap;
    return 0;
}

static size_t map_find(const map *m, uint64_t key)
{
    if (!m->cap || !key)
        return SIZE_MAX;
    size_t j = map_slot(key, m->cap);
    while (m->e[j].key) {
        if (m->e[j].key == key)
            return j;
        j = (j + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

/* key != 0. Returns the slot (its previous values still there when it existed, *had
 * set), or SIZE_MAX without memory. */
static size_t map_slot_for(map *m, uint64_t key, int *had)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m))
        return SIZE_MAX;
    size_t j = map_slot(key, m->cap);
    while (m->e[j].key && m->e[j].key != key)
        j = (j + 1) & (m->cap - 1);
    *had = m->e[j].key != 0;
    if (!*had) {
        m->n++;
        m->e[j].key = key;
    }
    return j;
}

static int map_put(map *m, uint64_t key, uint64_t a, uint64_t b)
{
    int had;
    size_t j = map_slot_for(m, key, &had);
    if (j == SIZE_MAX)
        return -1;
    m->e[j].a = a;
    m->e[j].b = b;
    return 0;
}

static void map_del_slot(map *m, size_t j)
{
    /* backward-shift deletion keeps probe chains intact */
    size_t mask = m->cap - 1;
    m->e[j].key = 0;
    m->n--;
    size_t i = (j + 1) & mask;
    while (m->e[i].key) {
        size_t home = map_slot(m->e[i].key, m->cap);
        /* move entry i to the hole j when j lies cyclically in [home, i) */
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->e[j] = m->e[i];
            m->e[i].key = 0;
            j = i;
        }
        i = (i + 1) & mask;
    }
}

static void map_clear(map *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ the pass over a rank */

typedef struct tmpl {
    uint8_t recv; /* 1 receive template, 0 send template */
    int64_t fn;   /* the *_init function */
    uint64_t comm_id;
    int64_t peer, tag;
    uint64_t bytes;
} tmpl;

typedef struct probe {
    uint64_t index, comm_id;
    int64_t peer, tag;
    uint64_t bytes;
} probe;

typedef struct orphan {
    size_t pos;       /* a pending receive whose request entry a later call replaced */
    uint64_t request, comm_id;
} orphan;

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 256;
    if (c > SIZE_MAX / size)
        return -1;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int nomem(rank_state *s, const vt_event *ev)
{
    return vt__seterr(s->err, s->rk->path, ev->block_offset, "expected memory to match record %llu, found none",
                      (unsigned long long)ev->index);
}

static int toomany(rank_state *s, const vt_event *ev, const char *what)
{
    return vt__seterr(s->err, s->rk->path, ev->block_offset,
                      "expected at most %u %s on rank %u (or %u message keys), found more at record %llu",
                      (unsigned)POS_MAX, what, s->rank, (unsigned)KEY_MAX, (unsigned long long)ev->index);
}

/* 0, or -1 with the error set */
static int add_send(rank_state *s, const vt_event *ev, uint64_t comm_id, int64_t peer, int64_t tag, uint64_t bytes,
                    uint32_t sub, int64_t fn)
{
    if (s->ns >= POS_MAX)
        return toomany(s, ev, "sends");
    if (grow((void **)&s->sends, &s->caps, s->ns, sizeof *s->sends))
        return nomem(s, ev);
    uint32_t key = vt__key_intern(s->keys, comm_id, s->rank, (uint32_t)peer, tag);
    if (key == KEY_PENDING)
        return s->keys->n >= KEY_MAX ? toomany(s, ev, "sends") : nomem(s, ev);
    s->sends[s->ns++] = (vt_match_csend){ev->index, bytes, key, VT_MPOS_NONE, (int32_t)fn, sub};
    return 0;
}

static vt_match_crecv *add_recv(rank_state *s, const vt_event *ev, uint64_t post, uint32_t sub)
{
    if (s->nr >= POS_MAX) {
        toomany(s, ev, "receives");
        return NULL;
    }
    if (grow((void **)&s->recvs, &s->capr, s->nr, sizeof *s->recvs)) {
        nomem(s, ev);
        return NULL;
    }
    if (s->extras) {
        if (s->nr >= s->capx) {
            uint64_t *b = realloc(s->rbytes, s->capr * sizeof *b);
            if (b)
                s->rbytes = b;
            uint32_t *u = b ? realloc(s->rsub, s->capr * sizeof *u) : NULL;
            if (u)
                s->rsub = u;
            if (!b || !u) {
                nomem(s, ev);
                return NULL;
            }
            s->capx = s->capr;
        }
        s->rbytes[s->nr] = 0;
        s->rsub[s->nr] = sub;
    }
    vt_match_crecv *e = &s->recvs[s->nr++];
    *e = (vt_match_crecv){ev->index, post, ev->index, ev->exit, KEY_PENDING, VT_MPOS_NONE};
    return e;
}

static void set_bytes(rank_state *s, size_t pos, uint64_t bytes)
{
    if (s->extras)
        s->rbytes[pos] = bytes;
}

/* 0, or -1 with the error set */
static int resolve_recv(rank_state *s, const vt_event *ev, size_t pos, uint64_t comm_id, int64_t src, int64_t tag,
                        uint64_t bytes)
{
    vt_match_crecv *e = &s->recvs[pos];
    if (src < 0) { /* MPI_PROC_NULL or unknown (cancelled) */
        e->key = KEY_SKIP;
        return 0;
    }
    uint32_t key = vt__key_intern(s->keys, comm_id, (uint32_t)src, s->rank, tag);
    if (key == KEY_PENDING)
        return s->keys->n >= KEY_MAX ? toomany(s, ev, "receives") : nomem(s, ev);
    e->key = key;
    set_bytes(s, pos, bytes);
    return 0;
}

static int set_active(rank_state *s, const vt_event *ev, uint64_t req, size_t pos, unsigned kind, uint64_t comm)
{
    if (req == 0)
        return 0;
    int had;
    size_t j = map_slot_for(&s->active, req, &had);
    if (j == SIZE_MAX)
        return nomem(s, ev);
    if (had && (s->active.e[j].a & 3) == A_RECV) {
        size_t old = (size_t)(s->active.e[j].a >> 2);
        if (s->recvs[old].key == KEY_PENDING) { /* it can never be resolved now */
            if (grow((void **)&s->orphans, &s->caporphans, s->norphans, sizeof *s->orphans))
                return nomem(s, ev);
            s->orphans[s->norphans++] = (orphan){old, req, s->active.e[j].b};
        }
    }
    s->active.e[j].a = ((uint64_t)pos << 2) | kind;
    s->active.e[j].b = comm;
    return 0;
}

static int on_event(rank_state *s, const vt_event *ev, const uint8_t *kinds, const uint8_t *inits)
{
    const vt_rank *rk = s->rk;
    if (ev->fn < 0)
        return 0;
    uint8_t k = kinds[ev->fn];
    uint64_t comm_id = vt__comm_id_of(rk, ev->comm);
    int64_t tag = (ev->fields & VT_F_TAG) ? ev->tag : -1;

    /* the send side of any call with a send peer (not a persistent template) */
    if ((ev->fields & VT_F_PEER) && ev->peer >= 0 && !inits[ev->fn]) {
        if (add_send(s, ev, comm_id, ev->peer, tag, ev->bytes, 0, ev->fn))
            return -1;
        if (k != K_IRECV && set_active(s, ev, ev->request, s->ns - 1, A_SEND, 0))
            return -1;
    }

    switch (k) {
    case K_RECV:
        if (!add_recv(s, ev, ev->index, 0))
            return -1;
        if (resolve_recv(s, ev, s->nr - 1, comm_id, ev->rpeer, (ev->fields & VT_F_RTAG) ? ev->rtag : -1, ev->rbytes))
            return -1;
        break;
    case K_IRECV:
        if (ev->request) {
            if (!add_recv(s, ev, ev->index, 0))
                return -1;
            if (set_active(s, ev, ev->request, s->nr - 1, A_RECV, comm_id))
                return -1;
        }
        break;
    case K_RECV_INIT:
    case K_SEND_INIT:
        if (ev->request) {
            if (grow((void **)&s->tmpls, &s->captmpls, s->ntmpls, sizeof *s->tmpls))
                return nomem(s, ev);
            s->tmpls[s->ntmpls++] = (tmpl){k == K_RECV_INIT, ev->fn, comm_id, ev->peer, tag, ev->bytes};
            if (map_put(&s->templates, ev->request, s->ntmpls - 1, 0))
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
            const tmpl *tp = &s->tmpls[s->templates.e[slot].a];
            if (tp->recv) {
                if (!add_recv(s, ev, ev->index, nrecv++))
                    return -1;
                if (set_active(s, ev, req, s->nr - 1, A_RECV, tp->comm_id))
                    return -1;
            } else if (tp->peer >= 0) {
                if (add_send(s, ev, tp->comm_id, tp->peer, tp->tag, tp->bytes, nsend++, tp->fn))
                    return -1;
                if (set_active(s, ev, req, s->ns - 1, A_SEND, 0))
                    return -1;
            }
        }
        break;
    }
    case K_MPROBE:
        if (ev->msg) {
            if (grow((void **)&s->probes, &s->capprobes, s->nprobes, sizeof *s->probes))
                return nomem(s, ev);
            s->probes[s->nprobes++] =
                (probe){ev->index, comm_id, (ev->fields & VT_F_RPEER) ? ev->rpeer : VT_PEER_UNKNOWN,
                        (ev->fields & VT_F_RTAG) ? ev->rtag : -1, ev->rbytes};
            if (map_put(&s->probe_map, ev->msg, s->nprobes - 1, 0))
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
            return vt__seterr(
                s->err, rk->path, ev->block_offset,
                "expected an MPI_Mprobe or MPI_Improbe of message id %llu before record %llu (rank %u), found none",
                (unsigned long long)ev->msg, (unsigned long long)ev->index, s->rank);
        }
        const probe p = s->probes[s->probe_map.e[slot].a];
        map_del_slot(&s->probe_map, slot);
        /* source and tag from the probe's status; the receive's own as a fallback */
        int64_t src = p.peer, rtag = p.tag;
        if (src == VT_PEER_UNKNOWN && (ev->fields & VT_F_RPEER)) {
            src = ev->rpeer;
            rtag = (ev->fields & VT_F_RTAG) ? ev->rtag : rtag;
        }
        uint64_t comm = p.comm_id ? p.comm_id : comm_id;
        if (!add_recv(s, ev, p.index, 0))
            return -1;
        if (resolve_recv(s, ev, s->nr - 1, comm, src, rtag, (ev->fields & VT_F_RBYTES) ? ev->rbytes : p.bytes))
            return -1;
        if (k == K_IMRECV && s->recvs[s->nr - 1].key != KEY_SKIP &&
            set_active(s, ev, ev->request, s->nr - 1, A_IMRECV, 0))
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
        uint64_t v = s->active.e[slot].a, comm = s->active.e[slot].b;
        map_del_slot(&s->active, slot);
        size_t pos = (size_t)(v >> 2);
        unsigned kind = (unsigned)(v & 3);
        if (kind == A_SEND) {
            if (d->flags & VT_COMPL_CANCELLED)
                s->sends[pos].key = KEY_SKIP;
        } else {
            vt_match_crecv *e = &s->recvs[pos];
            e->done_index = ev->index;
            e->done_exit = ev->exit;
            if (d->flags & VT_COMPL_CANCELLED)
                e->key = KEY_SKIP;
            else if (kind == A_RECV) {
                if (resolve_recv(s, ev, pos, comm, d->peer, d->tag, d->bytes))
                    return -1;
            } else if (d->flags & VT_COMPL_RECV)
                set_bytes(s, pos, d->bytes);
        }
    }
    return 0;
}

/* The request and communicator of pending receive POS, for the message. */
static void pending_info(const rank_state *s, size_t pos, uint64_t *req, uint64_t *comm)
{
    *req = *comm = 0;
    for (size_t i = 0; i < s->active.cap; i++) {
        if (s->active.e[i].key && (s->active.e[i].a & 3) == A_RECV && (s->active.e[i].a >> 2) == pos) {
            *req = s->active.e[i].key;
            *comm = s->active.e[i].b;
            return;
        }
    }
    for (size_t i = 0; i < s->norphans; i++) {
        if (s->orphans[i].pos == pos) {
            *req = s->orphans[i].request;
            *comm = s->orphans[i].comm_id;
            return;
        }
    }
}

static void rank_state_free_temp(rank_state *s)
{
    map_clear(&s->active);
    map_clear(&s->templates);
    map_clear(&s->probe_map);
    free(s->tmpls);
    free(s->probes);
    free(s->orphans);
    s->tmpls = NULL;
    s->probes = NULL;
    s->orphans = NULL;
}

void vt__match_rank_free(rank_state *s)
{
    rank_state_free_temp(s);
    free(s->sends);
    free(s->recvs);
    free(s->rbytes);
    free(s->rsub);
    s->sends = NULL;
    s->recvs = NULL;
    s->rbytes = NULL;
    s->rsub = NULL;
}

/* Streams one rank; leaves its entries (skipped ones dropped) in s. */
int vt__match_scan_rank(rank_state *s)
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
        kinds[i] = vt__match_classify(&rk->funcs[i], &inits[i]);
    if (vt_cursor_open(s->t, s->rank, &c, s->err))
        goto out;
    int got;
    while ((got = vt_cursor_next(c, &ev, s->err)) == 1)
        if (on_event(s, &ev, kinds, inits))
            goto out;
    if (got < 0)
        goto out;
    /* receives never resolved */
    for (size_t i = 0; i < s->nr; i++) {
        vt_match_crecv *e = &s->recvs[i];
        if (e->key != KEY_PENDING)
            continue;
        if (!(s->flags & VT_MATCH_PARTIAL)) {
            uint64_t req, comm;
            pending_info(s, i, &req, &comm);
            vt_cursor_close(c);
            c = NULL;
            vt__match_err_unresolved(s->err, s->t, s->rank, e->index, req, comm);
            goto out;
        }
        e->key = KEY_SKIP;
        s->unmatched++;
    }
    /* drop skipped entries (order is kept) */
    size_t o = 0;
    for (size_t i = 0; i < s->ns; i++)
        if (s->sends[i].key != KEY_SKIP)
            s->sends[o++] = s->sends[i];
    s->ns = o;
    o = 0;
    for (size_t i = 0; i < s->nr; i++) {
        if (s->recvs[i].key >= KEY_SKIP)
            continue;
        if (s->extras) {
            s->rbytes[o] = s->rbytes[i];
            s->rsub[o] = s->rsub[i];
        }
        s->recvs[o++] = s->recvs[i];
    }
    s->nr = o;
    /* give back the slack of the doubling */
    if (s->ns && s->ns < s->caps) {
        vt_match_csend *p = realloc(s->sends, s->ns * sizeof *p);
        if (p) {
            s->sends = p;
            s->caps = s->ns;
        }
    }
    if (s->nr && s->nr < s->capr && !s->extras) {
        vt_match_crecv *p = realloc(s->recvs, s->nr * sizeof *p);
        if (p) {
            s->recvs = p;
            s->capr = s->nr;
        }
    }
    rc = 0;
out:
    vt_cursor_close(c);
    free(kinds);
    free(inits);
    rank_state_free_temp(s);
    return rc;
}

