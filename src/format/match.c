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
 * Memory: 72 bytes per message (both ends) plus the key table, against about 490 for
 * the former two-pass, sort-based version; the per-rank request, template and probe
 * maps hold only what is in flight.
 *
 * Streaming together with the replay (done: replay.c, "streaming matching"). vt_replay
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
 *   - what is left in the FIFOs are the unmatched entries, reported with this file's
 *     messages (first in key order), as are receives never completed.
 * Results are the same, bit for bit, as replaying with vt_trace_match's result.
 */
#include "vt_config.h"
#include "format/reader.h"
#include "format/match_keys.h"
#include "format/reader_priv.h"
#include "util/codec.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ u64 -> (u64, u64) map */

typedef struct ment {
    uint64_t key; /* 0: empty */
    uint64_t a, b;
} ment;

typedef struct map {
    ment *e;
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

/* active request values: a = pos << 2 | kind (A_*), b = communicator id (pending receives) */
typedef struct orphan {
    size_t pos;       /* a pending receive whose request entry a later call replaced */
    uint64_t request, comm_id;
} orphan;

typedef struct rank_state {
    const vt_trace *t;
    const vt_rank *rk;
    uint32_t rank;
    unsigned flags;
    vt_keytab *keys;
    vt_match_csend *sends;
    vt_match_crecv *recvs;
    size_t ns, nr, caps, capr;
    /* Only when building the full view: per receive, its bytes and sub. */
    int extras;
    uint64_t *rbytes;
    uint32_t *rsub;
    size_t capx;
    tmpl *tmpls;
    size_t ntmpls, captmpls;
    probe *probes;
    size_t nprobes, capprobes;
    orphan *orphans;
    size_t norphans, caporphans;
    map active, templates, probe_map;
    uint64_t unmatched;
    vt_error *err;
} rank_state;

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

static void rank_state_free(rank_state *s)
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
        qsort(x, nx, sizeof *x, cmp_exc);
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
        int bad = s.rk->reduced ? 0 : scan_rank(&s);
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
        int bad = scan_rank(&s) || s.nr != m->nrecvs[r] || s.ns != m->nsends[r];
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
        rank_state_free(&s);
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
