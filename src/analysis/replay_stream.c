/* Matching messages while replaying a full trace (see the comment in replay_priv.h). */
#include "vt_config.h"
#include "analysis/replay_priv.h"
#include "util/grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Rings start small: at 16K ranks and more, per-rank memory is what the caches hold.
 * With no more room than the entries a turn makes (halo2d: 4 sends, 4 receives), a
 * turn's new entries take the lines of the last turn's, which this turn's step and trim
 * have just read, and a ring of postings is one line. */
#define RING_MIN 4

/* Doubles a ring of entries [lo, hi) from cap (a power of two) to 2 cap (at a line
 * boundary: a window entry is a line). */
static void *ring_grow(vt_blockpool *pool, void *ring, size_t cap, size_t size, uint64_t lo, uint64_t hi)
{
    size_t nc = cap ? 2 * cap : RING_MIN;
    char *n = vt_blockpool_alloc(pool, nc * size);
    if (!n)
        return NULL;
    for (uint64_t i = lo; i < hi; i++)
        memcpy(n + (size_t)(i & (nc - 1)) * size, (char *)ring + (size_t)(i & (cap - 1)) * size, size);
    vt_blockpool_free(pool, ring, cap * size);
    return n;
}

/* key_intern's way for a key not in the rank's cache: the trace's table, then the cache. */
static __attribute__((noinline)) uint32_t key_intern_new(replay *R, rstate *s, uint64_t comm, uint32_t src,
                                                         uint32_t dst, int64_t tag)
{
    uint32_t id = vt__key_intern(&R->kt, comm, src, dst, tag);
    if (id == KEY_PENDING)
        return KEY_PENDING;
    R->keys = R->kt.k;
    if (id >= R->capkq) {
        size_t cap = R->kt.cap;
        struct kq *q = realloc(R->kq, cap * sizeof *q);
        if (!q)
            return KEY_PENDING;
        memset(q + R->capkq, 0, (cap - R->capkq) * sizeof *q); /* no entry waits for a new key */
        R->kq = q;
        R->capkq = cap;
    }
    R->kq[id].src = src;
    R->kq[id].dst = dst;
    unsigned n = s->knext++;
    s->khit = (uint16_t)(n & 7);
    s->kcache[n & 7] = id + 1;
    /* until it holds 8 keys, the cache repeats its keys in their order: the scan from
     * the entry after the last found then meets the next key at once, not empty entries */
    if (n < 7)
        for (unsigned i = n + 1; i < 8; i++)
            s->kcache[i] = s->kcache[i % (n + 1)];
    return id;
}

/* The key id of (comm, src, dst, tag), added when new, with room for it in the FIFO
 * arrays; KEY_PENDING without memory. */
static inline uint32_t key_intern(replay *R, rstate *s, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    /* a rank uses few keys over and over (its neighbours): its own recent ones first,
     * where the table's would be another rank's; from the one after the last found, since
     * an iteration names its keys in the order the first one cached them (an entry
     * holds one key, so where the scan starts changes no result) */
    for (unsigned c = s->khit + 1u, e = c + 8; c != e; c++) {
        uint32_t k = s->kcache[c & 7];
        if (k && R->kt.k[k - 1].comm_id == comm && R->kt.k[k - 1].src == src && R->kt.k[k - 1].dst == dst &&
            R->kt.k[k - 1].tag == tag) {
            s->khit = (uint16_t)(c & 7);
            return k - 1;
        }
    }
    return key_intern_new(R, s, comm, src, dst, tag);
}

int vt__rp_sm_err(replay *R, const char *path, uint64_t off, const char *fmt, ...)
{
    int n = snprintf(R->err->msg, sizeof R->err->msg, "%s: offset %" PRIu64 ": ", path ? path : "?", off);
    if (n >= 0 && (size_t)n < sizeof R->err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(R->err->msg + n, sizeof R->err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    R->failed = 1;
    return -1;
}

static int sm_nomem(replay *R, rstate *s, const vt_event *ev)
{
    return vt__rp_sm_err(R, vt_trace_rank(R->t, s->rank)->path, ev->block_offset,
                  "expected memory to match record %" PRIu64 ", found none", ev->index);
}

static int sm_toomany(replay *R, rstate *s, const vt_event *ev, const char *what)
{
    return vt__rp_sm_err(R, vt_trace_rank(R->t, s->rank)->path, ev->block_offset,
                  "expected at most %u %s on rank %u (or %u message keys), found more at record %" PRIu64,
                  (unsigned)POS_MAX, what, s->rank, (unsigned)KEY_MAX, ev->index);
}

/* A message paired once its send's slot is filled (here, or at the fill, slot_fill): the
 * receive entry takes the slot and
 * whether it is synchronous, and the send entry loses its reader (its sender trims it, at
 * its next record, when nothing else holds it), so that the receiver reads nothing of
 * the sender's at its completion. Not with an observer (it reads the send entry) nor in
 * parallel (proxies' entries are shipped). */
static inline void hand_over(const replay *R, rstate *snd, uint32_t spos, rstate *rcv, uint32_t rpos)
{
    sx *x = SX(snd, spos);
    if (R->obs || R->par || x->slot == SLOT_NONE)
        return;
    rx *r = RX(rcv, rpos);
    r->slot = x->slot;
    r->flags |= XF_HELD | (x->flags & XF_SYNC);
    if (--x->refs == 0)
        x->flags |= XF_RET;
}

void vt__rp_hand_over(const replay *R, rstate *snd, uint32_t spos, rstate *rcv, uint32_t rpos)
{
    hand_over(R, snd, spos, rcv, rpos);
}

/* Pairs a released send or receive with the head of its key's FIFO of the other side,
 * or queues it there. */
static void pair_recv(replay *R, rstate *s, uint32_t pos)
{
    uint32_t k = RV(s, pos)->key;
    struct kq *q = &R->kq[k];
    if (q->side == 2) {
        rstate *o = &R->rs[q->src];
        uint32_t h = q->head;
        SE(o, h)->recv_pos = pos;
        RV(s, pos)->send_pos = h;
        q->head = SX(o, h)->next;
        if (q->head == VT_MPOS_NONE)
            q->side = 0;
        hand_over(R, o, h, s, pos);
        if (R->par)
            (void)vt__rp_ship_post(R, s, pos);  /* (out of memory: R->failed) */
        return;
    }
    RX(s, pos)->next = VT_MPOS_NONE;
    if (q->side == 0) {
        q->head = q->tail = pos;
        q->side = 1;
    } else {
        RX(s, q->tail)->next = pos;
        q->tail = pos;
    }
}

static inline __attribute__((always_inline)) void pair_send(replay *R, rstate *s, uint32_t pos)
{
    uint32_t k = SE(s, pos)->key;
    struct kq *q = &R->kq[k];
    if (R->par && !vt__rp_mine(R, q->dst)) {
        /* its receiver's process pairs it (released sends reach it in order) */
        if (vt__rp_ship_send(R, s, pos) == 1)
            vt__rp_sm_trim(s);
        return;
    }
    if (q->side == 1) {
        rstate *o = &R->rs[q->dst];
        uint32_t h = q->head;
        RV(o, h)->send_pos = pos;
        SE(s, pos)->recv_pos = h;
        q->head = RX(o, h)->next;
        if (q->head == VT_MPOS_NONE)
            q->side = 0;
        hand_over(R, s, pos, o, h);
        if (R->par)
            (void)vt__rp_ship_post(R, o, h);
        return;
    }
    SX(s, pos)->next = VT_MPOS_NONE;
    if (q->side == 0) {
        q->head = q->tail = pos;
        q->side = 2;
    } else {
        SX(s, q->tail)->next = pos;
        q->tail = pos;
    }
}

/* send_room's way when the ring is full: doubled; -1 without memory. */
static __attribute__((noinline)) int send_grow(replay *R, rstate *s)
{
    smatch *m = s->sm;
    vt_match_csend *a = ring_grow(R->blocks, s->sw, m->scap, WIN_ENTRY, m->slo, m->shi);
    if (!a)
        return -1;
    s->sw = a;
    m->scap = m->scap ? 2 * m->scap : RING_MIN;
    s->smask = (uint32_t)(m->scap - 1);
    s->sstride = WIN_ENTRY;
    return 0;
}

/* Room for one more send in rank s's window; -1 without memory. */
static inline int send_room(replay *R, rstate *s)
{
    smatch *m = s->sm;
    return m->shi - m->slo < m->scap ? 0 : send_grow(R, s);
}

/* sm_release's loops. */
static void sm_release_some(replay *R, rstate *s)
{
    smatch *m = s->sm;
    m->wake = 0;
    if (m->qrel == m->qhi && m->srel == m->shi)
        return;
    while (m->qrel < m->qhi) {
        uint64_t e = m->rq[m->qrel & (m->qcap - 1)].e;
        if (e == RQ_DROP) {
            m->qrel++;
            m->rdirty = 1;
            continue;
        }
        if ((e & RQ_PH) || RV(s, e)->key == KEY_PENDING)
            break;
        m->qrel++;
        m->rdirty = 1;
        RX(s, e)->flags |= XF_REL;
        if (RV(s, e)->key == KEY_SKIP)
            RX(s, e)->flags |= XF_RET;
        else
            pair_recv(R, s, (uint32_t)e);
    }
    while (m->srel < m->shi && (SX(s, m->srel)->flags & XF_RES)) {
        uint64_t p = m->srel++;
        if (SE(s, p)->key == KEY_SKIP)
            SX(s, p)->flags |= XF_RET;
        else
            pair_send(R, s, (uint32_t)p);
    }
}

/* Releases what can be: receives in posting order while resolved, sends in call order
 * while known not cancelled. Only when what the last release stopped at may have
 * changed (smatch.wake): most records (a nonblocking send or receive posted) change
 * nothing of it. */
static inline void sm_release(replay *R, rstate *s)
{
    if (s->sm->wake)
        sm_release_some(R, s);
}

static inline __attribute__((always_inline)) int rq_push(replay *R, rstate *s, uint64_t v, uint64_t post)
{
    smatch *m = s->sm;
    if (m->qhi - m->qlo == m->qcap) {
        struct rqe *a = ring_grow(R->blocks, m->rq, m->qcap, sizeof *a, m->qlo, m->qhi);
        if (!a)
            return -1;
        m->rq = a;
        m->qcap = m->qcap ? 2 * m->qcap : RING_MIN;
    }
    m->rq[m->qhi & (m->qcap - 1)] = (struct rqe){v, post};
    m->qhi++;
    return 0;
}

static inline __attribute__((always_inline)) int sm_add_send(replay *R, rstate *s, const vt_event *ev, uint64_t comm, int64_t peer, int64_t tag,
                       uint64_t bytes, uint32_t sub, int64_t fn, int resolved)
{
    smatch *m = s->sm;
    if (m->shi >= POS_MAX)
        return sm_toomany(R, s, ev, "sends");
    if (send_room(R, s))
        return sm_nomem(R, s, ev);
    uint32_t key = key_intern(R, s, comm, s->rank, (uint32_t)peer, tag);
    if (key == KEY_PENDING)
        return R->kt.n >= KEY_MAX ? sm_toomany(R, s, ev, "sends") : sm_nomem(R, s, ev);
    enum vt_model_kind sk = fn >= 0 && (size_t)fn < s->nfuncs ? s->skind[fn] : VT_MK_SEND;
    *SE(s, m->shi) = (vt_match_csend){ev->index, bytes, key, VT_MPOS_NONE, (int32_t)fn, sub};
    int sync = vt_model_is_sync(sk, bytes, R->p);
    *SX(s, m->shi) = (sx){VT_MPOS_NONE, (uint16_t)((resolved ? XF_RES : 0) | (sync ? XF_SYNC : 0)), (uint16_t)(1 + sync),
                          SLOT_NONE};
    m->wake |= resolved;
    s->nsends = ++m->shi;
    return 0;
}

/* Parallel replay: a send of a rank of another process to a rank of this one (W_SEND,
 * replay_wire.c) enters the sender's proxy window, released, with its slot, and is
 * paired as a local one would be. Its sender's position is kept in sub. */
int vt__rp_remote_send(replay *R, const int64_t *w, const int64_t *d, const uint8_t *ext, size_t next)
{
    uint32_t src = (uint32_t)w[2], dst = (uint32_t)w[3];
    rstate *s = &R->rs[src];
    smatch *m = s->sm;
    if (m->shi >= POS_MAX) {
        vt_error_set(R->err, "expected at most %u sends of rank %u, found more", (unsigned)POS_MAX, src);
        R->failed = 1;
        return -1;
    }
    if (send_room(R, s))
        goto nomem;
    uint32_t key = key_intern(R, s, (uint64_t)w[1], src, dst, w[4]);
    if (key == KEY_PENDING)
        goto nomem;
    uint64_t pos = m->shi;
    *SE(s, pos) = (vt_match_csend){(uint64_t)w[8], (uint64_t)w[6], key, VT_MPOS_NONE, (int32_t)w[7], (uint32_t)w[5]};
    int32_t fn = (int32_t)w[7];
    enum vt_model_kind sk = fn >= 0 && (size_t)fn < s->nfuncs ? s->skind[fn] : VT_MK_SEND;
    *SX(s, pos) = (sx){VT_MPOS_NONE, (uint16_t)(XF_RES | (vt_model_is_sync(sk, (uint64_t)w[6], R->p) ? XF_SYNC : 0)), 1,
                       SLOT_NONE};
    if (vt__rp_slot_new(R, s, NULL, src, (uint32_t)pos, 0, (const int64_t[]){w[9], w[12], w[10], w[11]}, d, ext, next, 1))
        goto nomem;
    s->nsends = ++m->shi;
    m->srel = m->shi;
    pair_send(R, s, (uint32_t)pos);
    R->activity++;
    return R->failed ? -1 : 0;
nomem:
    vt_error_set(R->err, "out of memory receiving a send of rank %u", src);
    R->failed = 1;
    return -1;
}

/* Adds a receive named by EV, posted at POST; its position in *pos. */
static inline __attribute__((always_inline)) int sm_add_recv(replay *R, rstate *s, const vt_event *ev, uint64_t post, uint64_t *pos)
{
    smatch *m = s->sm;
    if (m->rhi >= POS_MAX)
        return sm_toomany(R, s, ev, "receives");
    if (m->rhi - m->rlo == m->rcap) {
        vt_match_crecv *a = ring_grow(R->blocks, s->rw, m->rcap, WIN_ENTRY, m->rlo, m->rhi);
        if (!a)
            return sm_nomem(R, s, ev);
        s->rw = a;
        m->rcap = m->rcap ? 2 * m->rcap : RING_MIN;
        s->rmask = (uint32_t)(m->rcap - 1);
        s->rstride = WIN_ENTRY;
    }
    *pos = m->rhi;
    *RV(s, m->rhi) = (vt_match_crecv){ev->index, post, ev->index, ev->exit, KEY_PENDING, VT_MPOS_NONE};
    *RX(s, m->rhi) = (rx){0, VT_MPOS_NONE, 0, 0, SLOT_NONE};
    s->nrecvs = ++m->rhi;
    return 0;
}

static inline __attribute__((always_inline)) int sm_resolve(replay *R, rstate *s, const vt_event *ev, uint64_t pos, uint64_t comm, int64_t src, int64_t tag)
{
    s->sm->wake = 1;
    if (src < 0) { /* MPI_PROC_NULL or unknown (cancelled) */
        RV(s, pos)->key = KEY_SKIP;
        return 0;
    }
    uint32_t key = key_intern(R, s, comm, (uint32_t)src, s->rank, tag);
    if (key == KEY_PENDING)
        return R->kt.n >= KEY_MAX ? sm_toomany(R, s, ev, "receives") : sm_nomem(R, s, ev);
    RV(s, pos)->key = key;
    RX(s, pos)->src = (uint32_t)src;
    return 0;
}

#define ACT_FEW 8
_Static_assert(sizeof ((smatch *)0)->act / sizeof ((smatch *)0)->act[0] == ACT_FEW, "act holds ACT_FEW");

/* The active requests' entry of REQ, added when absent (*fresh: 1): in act while it has
 * room, else in the map; NULL without memory. */
static inline __attribute__((always_inline)) struct u64ent *act_at(smatch *m, uint64_t req, int *fresh)
{
    uint64_t k = req + 1;
    for (unsigned i = 0; i < m->nact; i++)
        if (m->act[i].k == k) {
            *fresh = 0;
            return &m->act[i];
        }
    if (m->active.n) {
        size_t j = vt__rp_map_slot(&m->active, req);
        if (j != SIZE_MAX) {
            *fresh = 0;
            return &m->active.e[j];
        }
    }
    if (m->nact < ACT_FEW) {
        *fresh = 1;
        m->act[m->nact].k = k;
        return &m->act[m->nact++];
    }
    return vt__rp_map_at(&m->active, req, fresh);
}

/* Removes REQ from the active requests: 1 and its value in *v, 0 when absent. */
static inline __attribute__((always_inline)) int act_take(smatch *m, uint64_t req, uint64_t *v)
{
    uint64_t k = req + 1;
    for (unsigned i = 0; i < m->nact; i++)
        if (m->act[i].k == k) {
            *v = m->act[i].v;
            m->act[i] = m->act[--m->nact];
            return 1;
        }
    return m->active.n && vt__rp_map_take(&m->active, req, v);
}

static inline int act_get(const smatch *m, uint64_t req, uint64_t *v)
{
    for (unsigned i = 0; i < m->nact; i++)
        if (m->act[i].k == req + 1) {
            *v = m->act[i].v;
            return 1;
        }
    return vt__rp_map_get(&m->active, req, v);
}

static inline __attribute__((always_inline)) int sm_active(replay *R, rstate *s, const vt_event *ev, uint64_t req, uint64_t pos, unsigned kind, uint64_t comm)
{
    smatch *m = s->sm;
    if (req == 0)
        return 0;
    int fresh;
    struct u64ent *a = act_at(m, req, &fresh);
    if (!a)
        return sm_nomem(R, s, ev);
    if (!fresh) {
        uint64_t old = a->v, op = old >> 2;
        switch ((unsigned)(old & 3)) {
        case A_RECV:
            if (RV(s, op)->key == KEY_PENDING) { /* it can never be resolved now */
                if (m->norph == m->caporph) {
                    size_t nc = m->caporph ? 2 * m->caporph : 8;
                    struct orph *o = realloc(m->orph, nc * sizeof *o);
                    if (!o)
                        return sm_nomem(R, s, ev);
                    m->orph = o;
                    m->caporph = nc;
                }
                m->orph[m->norph++] = (struct orph){op, req, RX(s, op)->comm};
            }
            break;
        case A_SEND:
            SX(s, op)->flags |= XF_RES; /* never completed: not cancelled */
            m->wake = 1;
            break;
        default:
            RX(s, op)->flags |= XF_DONE; /* never completed: done at its record */
            break;
        }
    }
    if (kind != A_SEND)
        RX(s, pos)->comm = comm;
    a->v = pos << 2 | kind;
    return 0;
}

/* A record's communicator id and tag, read where a kind needs them (a completion does
 * not). */
static inline uint64_t ev_comm_id(const vt_rank *rk, const vt_event *ev) { return vt__comm_id_of(rk, ev->comm); }
static inline int64_t ev_tag(const vt_event *ev) { return (ev->fields & VT_F_TAG) ? ev->tag : -1; }

/* match.c's on_event() on the windows. */
static int match(replay *R, rstate *s, const vt_event *ev)
{
    smatch *m = s->sm;
    if (ev->fn < 0 || (size_t)ev->fn >= s->nfuncs)
        return 0;
    const vt_rank *rk = s->rk;
    uint8_t k = m->kinds[ev->fn];
    uint64_t pos = 0;

    if ((ev->fields & VT_F_PEER) && ev->peer >= 0 && !m->inits[ev->fn]) {
        int tracked = k != K_IRECV && ev->request;
        if (sm_add_send(R, s, ev, ev_comm_id(rk, ev), ev->peer, ev_tag(ev), ev->bytes, 0, ev->fn, !tracked))
            return -1;
        if (tracked && sm_active(R, s, ev, ev->request, m->shi - 1, A_SEND, 0))
            return -1;
    }

    switch (k) {
    case K_RECV:
        if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(R, s, pos, ev->index))
            return R->failed ? -1 : sm_nomem(R, s, ev);
        RX(s, pos)->flags |= XF_DONE;
        if (sm_resolve(R, s, ev, pos, ev_comm_id(rk, ev), ev->rpeer, (ev->fields & VT_F_RTAG) ? ev->rtag : -1))
            return -1;
        break;
    case K_IRECV:
        if (ev->request) {
            if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(R, s, pos, ev->index))
                return R->failed ? -1 : sm_nomem(R, s, ev);
            if (sm_active(R, s, ev, ev->request, pos, A_RECV, ev_comm_id(rk, ev)))
                return -1;
        }
        break;
    case K_RECV_INIT:
    case K_SEND_INIT:
        if (ev->request) {
            if (m->ntmpls == m->captmpls) {
                size_t nc = m->captmpls ? 2 * m->captmpls : 16;
                stmpl *t = realloc(m->tmpls, nc * sizeof *t);
                if (!t)
                    return sm_nomem(R, s, ev);
                m->tmpls = t;
                m->captmpls = nc;
            }
            m->tmpls[m->ntmpls++] = (stmpl){k == K_RECV_INIT, ev->fn, ev_comm_id(rk, ev), ev->peer, ev_tag(ev), ev->bytes};
            if (vt__rp_map_put(&m->templates, ev->request, m->ntmpls - 1))
                return sm_nomem(R, s, ev);
        }
        break;
    case K_START: {
        uint32_t nsend = 0;
        for (size_t i = 0; i < ev->nstarted; i++) {
            uint64_t req = ev->started[i], ti;
            if (!vt__rp_map_get(&m->templates, req, &ti))
                continue; /* persistent collective, or a request we know nothing of */
            const stmpl *tp = &m->tmpls[ti];
            if (tp->recv) {
                if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(R, s, pos, ev->index))
                    return R->failed ? -1 : sm_nomem(R, s, ev);
                if (sm_active(R, s, ev, req, pos, A_RECV, tp->comm_id))
                    return -1;
            } else if (tp->peer >= 0) {
                if (sm_add_send(R, s, ev, tp->comm_id, tp->peer, tp->tag, tp->bytes, nsend++, tp->fn, 0) ||
                    sm_active(R, s, ev, req, m->shi - 1, A_SEND, 0))
                    return -1;
            }
        }
        break;
    }
    case K_MPROBE:
        if (ev->msg) {
            uint32_t pi;
            if (m->nprfree) {
                pi = m->prfree[--m->nprfree];
            } else {
                if (m->npr == m->cappr) {
                    size_t nc = m->cappr ? 2 * m->cappr : 8;
                    sprobe *p = realloc(m->pr, nc * sizeof *p);
                    uint32_t *f = p ? realloc(m->prfree, nc * sizeof *f) : NULL;
                    if (p)
                        m->pr = p;
                    if (!f)
                        return sm_nomem(R, s, ev);
                    m->prfree = f;
                    m->cappr = nc;
                }
                pi = (uint32_t)m->npr++;
            }
            m->pr[pi] = (sprobe){ev->index, ev_comm_id(rk, ev), ev->rbytes, m->qhi,
                                 (ev->fields & VT_F_RPEER) ? ev->rpeer : VT_PEER_UNKNOWN,
                                 (ev->fields & VT_F_RTAG) ? ev->rtag : -1};
            /* its receive is posted here (the MPI_Mrecv fills the place) */
            if (rq_push(R, s, RQ_PH | pi, ev->index))
                return sm_nomem(R, s, ev);
            uint64_t was;
            if (vt__rp_map_get(&m->probes, ev->msg, &was)) { /* the id again: the earlier one is not received */
                m->rq[m->pr[was].rq & (m->qcap - 1)].e = RQ_DROP;
                m->wake = 1;
                m->prfree[m->nprfree++] = (uint32_t)was;
            }
            if (vt__rp_map_put(&m->probes, ev->msg, pi))
                return sm_nomem(R, s, ev);
        }
        break;
    case K_MRECV:
    case K_IMRECV: {
        if (!ev->msg)
            break; /* MPI_MESSAGE_NO_PROC */
        uint64_t pi;
        if (!vt__rp_map_get(&m->probes, ev->msg, &pi))
            return vt__rp_sm_err(R, rk->path, ev->block_offset,
                          "expected an MPI_Mprobe or MPI_Improbe of message id %" PRIu64
                          " before record %" PRIu64 " (rank %u), found none",
                          ev->msg, ev->index, s->rank);
        const sprobe p = m->pr[pi];
        vt__rp_map_del(&m->probes, ev->msg);
        m->prfree[m->nprfree++] = (uint32_t)pi;
        int64_t src = p.peer, rtag = p.tag;
        if (src == VT_PEER_UNKNOWN && (ev->fields & VT_F_RPEER)) {
            src = ev->rpeer;
            rtag = (ev->fields & VT_F_RTAG) ? ev->rtag : rtag;
        }
        uint64_t comm = p.comm_id ? p.comm_id : ev_comm_id(rk, ev);
        if (sm_add_recv(R, s, ev, p.index, &pos))
            return -1;
        m->rq[p.rq & (m->qcap - 1)].e = pos;
        if (sm_resolve(R, s, ev, pos, comm, src, rtag))
            return -1;
        if (k == K_IMRECV && RV(s, pos)->key != KEY_SKIP && ev->request) {
            if (sm_active(R, s, ev, ev->request, pos, A_IMRECV, 0))
                return -1;
        } else {
            RX(s, pos)->flags |= XF_DONE;
        }
        break;
    }
    case K_FREE: {
        uint64_t v;
        if (ev->request && act_get(m, ev->request, &v) && (v & 3) == A_SEND) {
            SX(s, v >> 2)->flags |= XF_RES; /* freed: it is never cancelled */
            m->wake = 1;
            (void)act_take(m, ev->request, &v);
        }
        break;
    }
    default:
        break;
    }

    for (size_t i = 0; i < ev->ndone; i++) {
        const vt_completion *d = &ev->done[i];
        uint64_t v;
        if (!act_take(m, d->request, &v))
            continue;
        uint64_t p = v >> 2;
        unsigned kind = (unsigned)(v & 3);
        if (kind == A_SEND) {
            if (d->flags & VT_COMPL_CANCELLED)
                SE(s, p)->key = KEY_SKIP;
            SX(s, p)->flags |= XF_RES;
            m->wake = 1;
        } else {
            vt_match_crecv *e = RV(s, p);
            e->done_index = ev->index;
            e->done_exit = ev->exit;
            RX(s, p)->flags |= XF_DONE;
            if (d->flags & VT_COMPL_CANCELLED) {
                e->key = KEY_SKIP;
                m->wake = 1;
            } else if (kind == A_RECV && sm_resolve(R, s, ev, p, RX(s, p)->comm, d->peer, d->tag))
                return -1;
        }
    }
    sm_release(R, s);
    return 0;
}

/* The end of a rank's records: receives never resolved are an error; the rest is final. */
static int sm_finish(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->eof)
        return 0;
    m->eof = 1;
    for (uint64_t i = m->rlo; i < m->rhi; i++) {
        if (RV(s, i)->key != KEY_PENDING) {
            RX(s, i)->flags |= XF_DONE;
            continue;
        }
        uint64_t req = 0, comm = RX(s, i)->comm;
        for (size_t j = 0; j < m->active.cap; j++)
            if (m->active.e[j].k && m->active.e[j].v == (i << 2 | A_RECV))
                req = m->active.e[j].k - 1;
        for (unsigned j = 0; j < m->nact; j++)
            if (m->act[j].v == (i << 2 | A_RECV))
                req = m->act[j].k - 1;
        for (size_t j = 0; j < m->norph; j++)
            if (m->orph[j].pos == i) {
                req = m->orph[j].req;
                comm = m->orph[j].comm;
            }
        vt__match_err_unresolved(R->err, R->t, s->rank, RV(s, i)->index, req, comm);
        R->failed = 1;
        return -1;
    }
    for (uint64_t q = m->qrel; q < m->qhi; q++)
        if (m->rq[q & (m->qcap - 1)].e & RQ_PH)
            m->rq[q & (m->qcap - 1)].e = RQ_DROP; /* an MPI_Mprobe's message nobody received */
    for (uint64_t i = m->srel; i < m->shi; i++)
        SX(s, i)->flags |= XF_RES;
    sm_release_some(R, s);
    return 0;
}

/* A new chunk of the read-ahead pool (R->ra), its entries free: one of them, or NULL
 * (no memory). */
static __attribute__((noinline)) brec *ra_grow(replay *R)
{
    void *ra = R->ra, *rafree = R->rafree;
    int bad = vt_grow(&ra, &R->capra, R->nra + 1, sizeof *R->ra);
    R->ra = ra;
    bad = bad || vt_grow(&rafree, &R->caprafree, (R->nra + 1) * RA_CHUNK, sizeof *R->rafree);
    R->rafree = rafree;
    if (bad)
        return NULL;
    brec *c = calloc(RA_CHUNK, sizeof *c);
    if (!c)
        return NULL;
    R->ra[R->nra++] = c;
    for (size_t i = RA_CHUNK - 1; i > 0; i--) /* (the first ones taken first) */
        R->rafree[R->nrafree++] = &c[i];
    return &c[0];
}

static inline brec *ra_get(replay *R) { return R->nrafree ? R->rafree[--R->nrafree] : ra_grow(R); }

static inline void ra_put(replay *R, brec *b) { R->rafree[R->nrafree++] = b; }

void vt__rp_ra_free(replay *R)
{
    for (size_t k = 0; k < R->nra; k++) {
        for (size_t i = 0; i < RA_CHUNK; i++) {
            free(R->ra[k][i].st);
            free(R->ra[k][i].dn);
        }
        free(R->ra[k]);
    }
    free(R->ra);
    free(R->rafree);
}

/* Reads one record ahead on rank s (matching it, keeping it for the replay): 1, 0 at
 * the end of the rank's records, -1 on error (R->failed). In line where a loop reads
 * several (one call for them all). */
static inline __attribute__((always_inline)) int more_record(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->eof)
        return 0;
    if (m->bhi - m->blo == m->bcap) {
        size_t nc = m->bcap ? 2 * m->bcap : 8;
        brec **n = vt_blockpool_alloc(R->blocks, nc * sizeof *n);
        if (!n)
            return sm_nomem(R, s, s->record);
        for (uint64_t i = m->blo; i < m->bhi; i++)
            n[i & (nc - 1)] = m->buf[i & (m->bcap - 1)];
        vt_blockpool_free(R->blocks, m->buf, m->bcap * sizeof *m->buf);
        m->buf = n;
        m->bcap = nc;
    }
    /* the record is decoded into its entry (no copy of it), and its lists become the
     * entry's (no copy of them; the current record's, in its own entry, stay) */
    brec *b = ra_get(R);
    if (!b)
        return sm_nomem(R, s, s->record);
    vt_event *ev = &b->ev;
    b->sfirst = (uint32_t)m->shi;
    b->rfirst = (uint32_t)m->rhi;
    int rc = vt_cursor_next(s->cur, ev, R->err);
    if (rc < 0)
        R->failed = 1;
    else if (rc > 0 && match(R, s, ev))
        rc = -1;
    if (rc <= 0 || ev->fn < 0) {
        ra_put(R, b);
        if (rc == 0)
            return sm_finish(R, s) ? -1 : 0;
        return rc; /* -1, or 1: special records are no model events, the replay skips them */
    }
    /* (most records have no lists: the entry's arrays then unread) */
    if (ev->nstarted || ev->ndone)
        vt_cursor_take_lists(s->cur, &b->st, &b->capst, &b->dn, &b->capdn);
    m->buf[m->bhi & (m->bcap - 1)] = b;
    m->bhi++;
    return 1;
}

int vt__rp_more(replay *R, rstate *s)
{
    return more_record(R, s);
}

/* The replay's next record of rank s: the records read ahead first, replayed where they
 * were decoded (s->record; their entry held until the next record, its lists with it).
 * s->send_ptr and post_ptr: where its window entries start, as match made them. */
int vt__rp_next_record(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->blo < m->bhi) {
        brec *b = m->buf[m->blo & (m->bcap - 1)];
        m->blo++;
        if (m->held)
            ra_put(R, m->held);
        m->held = b;
        s->record = &b->ev;
        s->send_ptr = b->sfirst;
        s->post_ptr = b->rfirst;
        return 1;
    }
    /* (at the end, or on an error, the last record stays s->record: the messages name it) */
    if (m->eof)
        return 0;
    /* decoded in place of the current record (as without streaming, rstate.ev): into
     * its entry, which this turn read, not into rstate.ev, out of the caches since the
     * rank's last turn */
    brec *b = m->held;
    if (!b && !(b = m->held = ra_get(R)))
        return sm_nomem(R, s, s->record);
    int rc = vt_cursor_next(s->cur, &b->ev, R->err);
    if (rc < 0) {
        R->failed = 1;
        return -1;
    }
    if (rc == 0)
        return sm_finish(R, s) ? -1 : 0;
    s->record = &b->ev;
    s->send_ptr = m->shi;
    s->post_ptr = m->rhi;
    if (b->ev.nstarted || b->ev.ndone)
        vt_cursor_take_lists(s->cur, &b->st, &b->capst, &b->dn, &b->capdn);
    return match(R, s, &b->ev) ? -1 : 1;
}

int vt__rp_read_to_recv(replay *R, rstate *s, size_t i)
{
    while (RV(s, i)->key == KEY_PENDING || !(RX(s, i)->flags & XF_DONE)) {
        int rc = more_record(R, s);
        if (rc < 0)
            return -1;
        if (rc == 0 && (RV(s, i)->key == KEY_PENDING || !(RX(s, i)->flags & XF_DONE)))
            return vt__rp_sm_err(R, vt_trace_rank(R->t, s->rank)->path, 0,
                                 "expected the completion of receive record %" PRIu64 ", found none", RV(s, i)->index);
    }
    return 0;
}

int vt__rp_ensure_send(replay *R, rstate *s, size_t i)
{
    while (!(SX(s, i)->flags & XF_RES)) {
        int rc = vt__rp_more(R, s);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
    }
    return 0;
}

/* Reads ahead on rank s while the first receive it has not released is unresolved. */
int vt__rp_settle(replay *R, rstate *s)
{
    smatch *m = s->sm;
    while (!m->eof && m->qrel < m->qhi) {
        uint64_t e = m->rq[m->qrel & (m->qcap - 1)].e;
        if (e != RQ_DROP && !(e & RQ_PH) && RV(s, e)->key != KEY_PENDING)
            break;
        if (vt__rp_more(R, s) < 0)
            return -1;
    }
    return 0;
}

/* probe_target() of replay_full.c on the windows: the receives posted from the probe on, in posting
 * order (the posting queue), reading ahead until one fits. SIZE_MAX: none (or an error,
 * R->failed). */
size_t vt__rp_probe_target_stream(replay *R, rstate *s)
{
    smatch *m = s->sm;
    const vt_event *ev = s->record;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    int can_match = c && ev->rpeer >= 0;
    uint64_t x = ev->index;
    uint64_t lo = m->qlo, hi = m->qhi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->rq[mid & (m->qcap - 1)].post < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t q = lo;; q++) {
        while (q >= m->qhi) {
            /* later records post later: only a matched probe looks further */
            if (!can_match)
                return SIZE_MAX;
            int rc = vt__rp_more(R, s);
            if (rc <= 0)
                return SIZE_MAX;
        }
        uint64_t post = m->rq[q & (m->qcap - 1)].post;
        if (!can_match && post > x)
            return SIZE_MAX;
        uint64_t e;
        while ((e = m->rq[q & (m->qcap - 1)].e) != RQ_DROP &&
               ((e & RQ_PH) || (e >= m->rlo && RV(s, e)->key == KEY_PENDING))) {
            int rc = vt__rp_more(R, s);
            if (rc < 0)
                return SIZE_MAX;
            if (rc == 0 && (e & RQ_PH))
                break;
        }
        if (e == RQ_DROP || (e & RQ_PH) || e < m->rlo)
            continue;
        const vt_match_crecv *rv = RV(s, e);
        if (rv->key >= KEY_SKIP || vt__rp_probed_get(s, (uint32_t)e) != SLOT_NONE)
            continue;
        if (post == x)
            return (size_t)e;
        if (can_match && R->kt.k[rv->key].comm_id == c->id && R->kt.k[rv->key].src == (uint32_t)ev->rpeer &&
            R->kt.k[rv->key].tag == ev->rtag)
            return (size_t)e;
    }
}

/* A posting slot made for a message that turns out not synchronous. */
int vt__rp_drop_post(replay *R, rstate *s, size_t i)
{
    uint32_t pl = vt__rp_pm_get(&s->ps, (uint32_t)i);
    if (pl != SLOT_NONE) {
        vt__rp_pm_del(&s->ps, (uint32_t)i);
        R->freeslots[R->nfree++] = pl;
    }
    return 0;
}

int vt__rp_note_send(replay *R, uint32_t rank, uint32_t pos)
{
    return vt__rp_push_u64(&R->used_sends, &R->nused_sends, &R->capused_sends, (uint64_t)rank << 32 | pos);
}

/* Drops the entries the replay is done with from the front of the windows. */
void vt__rp_sm_trim(rstate *s)
{
    smatch *m = s->sm;
    /* (the receive side stopped at entries that have not changed since: nothing to drop
     * there; called for a send the receiver read, this reads none of it) */
    if (m->rdirty) {
        m->rdirty = 0;
        while (m->rlo < m->rhi && (RX(s, m->rlo)->flags & XF_RET))
            m->rlo++;
        while (m->qlo < m->qrel) {
            uint64_t e = m->rq[m->qlo & (m->qcap - 1)].e;
            if (e != RQ_DROP && e >= m->rlo && !(RX(s, e)->flags & XF_RET))
                break;
            m->qlo++;
        }
    }
    while (m->slo < m->srel && (SX(s, m->slo)->flags & XF_RET))
        m->slo++;
}

void vt__rp_sm_free(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (!m)
        return;
    vt__rp_map_free(&m->active);
    vt__rp_map_free(&m->templates);
    vt__rp_map_free(&m->probes);
    free(m->tmpls);
    free(m->pr);
    free(m->prfree);
    vt_blockpool_free(R->blocks, m->rq, m->qcap * sizeof *m->rq);
    vt_blockpool_free(R->blocks, m->buf, m->bcap * sizeof *m->buf); /* (its entries: vt__rp_ra_free) */
    free(m->orph);
    vt_blockpool_free(R->blocks, s->rw, m->rcap * WIN_ENTRY);
    vt_blockpool_free(R->blocks, s->sw, m->scap * WIN_ENTRY);
    s->sm = NULL;
}

