/* The parallel replay's messages out (replay_par.c runs the rounds): what a rank of this
 * process makes that a rank of another process reads. Each message is a few int64
 * words and the nsc differences:
 *   W_SEND   comm src dst tag pos bytes fn index T Tloc seq E, D, X   a released, published send
 *            (E: the send call's exit; X: with an observer that has ext, the byte count
 *            and the bytes of its ext, packed by ext_pack, in whole words)
 *   W_POST   src spos dst T E Tloc seq, D       the posting of a synchronous receive
 *   W_JOIN   comm seq need T rank mseq, D        a member's entry into a collective
 *   W_SETTLE rank                                read rank's receives until one is resolved
 *   W_OBS    n, n bytes in whole words            to process 0: the observer's (vt_observer.take)
 *   W_PUB    rank seq uses, D                     a reduced trace's published difference
 * The share of a slot (and of a send's window entry) that the remote reader would
 * release is released when the value is sent. */
#include "vt_config.h"
#include "analysis/replay_priv.h"

#include <stdlib.h>
#include <string.h>

/* Room for NEED more bytes in the buffer for process q; where they go, or NULL. */
static uint8_t *wroom(replay *R, uint32_t q, size_t need)
{
    struct wbuf *b = &R->out[q];
    if (b->n + need > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + need)
            nc *= 2;
        uint8_t *n = realloc(b->b, nc);
        if (!n) {
            vt_error_set(R->err, "out of memory sending replay values to process %u", q);
            R->failed = 1;
            return NULL;
        }
        b->b = n;
        b->cap = nc;
    }
    uint8_t *at = b->b + b->n;
    b->n += need;
    return at;
}

static int wput(replay *R, uint32_t q, const int64_t *w, size_t nw, const int64_t *d, size_t nd)
{
    uint8_t *at = wroom(R, q, (nw + nd) * sizeof(int64_t));
    if (!at)
        return -1;
    memcpy(at, w, nw * sizeof *w);
    if (nd)
        memcpy(at + nw * sizeof *w, d, nd * sizeof *d);
    return 0;
}

/* A send's observer data: its length in bytes, then them in whole words (the rest of
 * the last one zero). */
static int wput_ext(replay *R, uint32_t q, const uint8_t *ext)
{
    const vt_observer *o = R->obs;
    size_t max = o->ext_pack ? o->ext_wire_max : o->ext_size;
    size_t cap = (max + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
    uint8_t *at = wroom(R, q, sizeof(int64_t) + cap);
    if (!at)
        return -1;
    size_t n = o->ext_pack ? o->ext_pack(ext, at + sizeof(int64_t)) : o->ext_size;
    if (!o->ext_pack)
        memcpy(at + sizeof(int64_t), ext, n);
    size_t nw = (n + sizeof(int64_t) - 1) / sizeof(int64_t);
    int64_t len = (int64_t)n;
    memcpy(at, &len, sizeof len);
    memset(at + sizeof(int64_t) + n, 0, nw * sizeof(int64_t) - n);
    R->out[q].n -= cap - nw * sizeof(int64_t);   /* (the room not used) */
    return 0;
}

/* A slot's last reader is done: a posting's leaves its rank's map (PM), a send's its
 * window entry (the parallel replay streams: send slots live there, replay_full.c). */
static void slot_release(replay *R, rstate *s, posmap *pm, uint32_t pos, uint32_t sl)
{
    if (--vt__rp_slot(R, sl)->uses == 0) {
        if (pm)
            vt__rp_pm_del(pm, pos);
        else
            SX(s, pos)->slot = SLOT_NONE;
        R->freeslots[R->nfree++] = sl;
    }
}

int vt__rp_slot_new(replay *R, rstate *s, posmap *pm, uint32_t rank, uint32_t pos, int post, const int64_t *w,
                    const int64_t *d, const uint8_t *ext, size_t next, uint32_t uses)
{
    uint32_t i = vt__rp_slot_alloc(R);
    if (i == SLOT_NONE)
        return -1;
    if (!pm) {
        SX(s, pos)->slot = i;
    } else if (vt__rp_pm_put(pm, pos, i)) {
        R->freeslots[R->nfree++] = i;
        return -1;
    }
    slot *sl = vt__rp_slot(R, i);
    sl->T = w[0];
    sl->E = w[1];
    sl->Tloc = w[2];
    sl->seq = (uint64_t)w[3];
    sl->uses = uses;
    sl->rank = rank;
    sl->pos = pos;
    sl->post = (uint16_t)post;
    sl->held = 0;
    memcpy(vt__rp_slot_d(R, i), d, sizeof(int64_t) * R->nsc);
    if (ext) {
        uint8_t *to = R->slotext + (size_t)i * R->obs->ext_size;
        if (R->obs->ext_unpack ? R->obs->ext_unpack(ext, next, to) != 0 : next != R->obs->ext_size) {
            R->freeslots[R->nfree++] = i;   /* (the caller fails the replay) */
            return -1;
        }
        if (!R->obs->ext_unpack)
            memcpy(to, ext, next);
    }
    return 0;
}

/* Send entry pos of local rank s to its receiver's process, once it is both released
 * (its order among its key's sends is final) and published (its slot holds T and D).
 * 1 when the window can be trimmed. */
int vt__rp_ship_send(replay *R, rstate *s, size_t pos)
{
    const vt_match_csend *se = SE(s, pos);
    sx *x = SX(s, pos);
    if (se->key >= KEY_SKIP || (x->flags & XF_SHIP) || pos >= s->sm->srel)
        return 0;
    const vt_match_key *k = &R->keys[se->key];
    if (vt__rp_mine(R, k->dst))
        return 0;
    uint32_t sl = x->slot;
    if (sl == SLOT_NONE)
        return 0;
    const slot *sd = vt__rp_slot(R, sl);
    int64_t w[W_SEND_WORDS] = {W_SEND, (int64_t)k->comm_id, k->src, k->dst, k->tag, (int64_t)pos, (int64_t)se->bytes,
                               se->fn, (int64_t)se->index, sd->T, sd->Tloc, (int64_t)sd->seq, sd->E};
    uint32_t q = vt__rp_owner(R, k->dst);
    if (wput(R, q, w, W_SEND_WORDS, vt__rp_slot_d(R, sl), R->nsc) ||
        (vt__rp_ext_wire(R) && wput_ext(R, q, R->slotext + (size_t)sl * R->obs->ext_size)))
        return -1;
    x->flags |= XF_SHIP;
    R->activity++;
    slot_release(R, s, NULL, (uint32_t)pos, sl);
    if (--x->refs == 0) {
        x->flags |= XF_RET;
        return pos == s->sm->slo;
    }
    return 0;
}

/* The posting of receive i of local rank s to its sender's process, once the receive is
 * paired with a synchronous send of a rank there and its posting slot is made. */
int vt__rp_ship_post(replay *R, rstate *s, size_t i)
{
    const vt_match_crecv *rv = RV(s, i);
    if (rv->send_pos == VT_MPOS_NONE || rv->key >= KEY_SKIP || (RX(s, i)->flags & XF_SHIP))
        return 0;
    const vt_match_key *k = &R->keys[rv->key];
    if (vt__rp_mine(R, k->src))
        return 0;
    const rstate *o = &R->rs[k->src];
    const vt_match_csend *se = SE(o, rv->send_pos);
    enum vt_model_kind sk = se->fn >= 0 && (size_t)se->fn < o->nfuncs ? o->skind[se->fn] : VT_MK_SEND;
    if (!vt_model_is_sync(sk, se->bytes, R->p))
        return 0;
    uint32_t pl = vt__rp_pm_get(&s->ps, (uint32_t)i);
    if (pl == SLOT_NONE)
        return 0;
    const slot *po = vt__rp_slot(R, pl);
    /* a proxy's send entry keeps its sender's position in sub */
    int64_t w[8] = {W_POST, k->src, se->sub, s->rank, po->T, po->E, po->Tloc, (int64_t)po->seq};
    if (wput(R, vt__rp_owner(R, k->src), w, 8, vt__rp_slot_d(R, pl), R->nsc))
        return -1;
    RX(s, i)->flags |= XF_SHIP;
    R->activity++;
    slot_release(R, s, &s->ps, (uint32_t)i, pl);
    return 0;
}

/* A local member's entry into collective (comm, seq) to every other process that
 * replays a member of communicator c. */
int vt__rp_ship_join(replay *R, const vt_comm *c, uint64_t comm, uint64_t seq, uint32_t need, int64_t T,
                     const int64_t *D, uint32_t rank, uint64_t mseq)
{
    int64_t w[7] = {W_JOIN, (int64_t)comm, (int64_t)seq, need, T, rank, (int64_t)mseq};
    uint32_t me = (uint32_t)R->par->me, mark = ++R->nstamp;
    for (int side = 0; side < 2; side++) {
        const uint32_t *mem = side ? c->remote_members : c->members;
        uint32_t n = side ? ((c->flags & 1) ? c->remote_size : 0) : c->size;
        for (uint32_t j = 0; mem && j < n; j++) {
            if (mem[j] >= R->nranks)
                continue;
            uint32_t q = vt__rp_owner(R, mem[j]);
            if (q == me || R->stamp[q] == mark)
                continue;
            R->stamp[q] = mark;
            if (wput(R, q, w, 7, D, R->nsc))
                return -1;
            R->activity++;
        }
    }
    return 0;
}

int vt__rp_ship_settle(replay *R, uint32_t rank)
{
    int64_t w[2] = {W_SETTLE, rank};
    return wput(R, vt__rp_owner(R, rank), w, 2, NULL, 0);
}

/* What the observer keeps for process 0 (a forwarding observer, vt_observer.take). */
int vt__rp_ship_obs(replay *R)
{
    const uint8_t *data;
    size_t n;
    R->obs->take(R->obs->arg, &data, &n);
    if (!n)
        return 0;
    size_t nw = (n + sizeof(int64_t) - 1) / sizeof(int64_t);
    int64_t w[2] = {W_OBS, (int64_t)n};
    if (wput(R, 0, w, 2, NULL, 0))
        return -1;
    uint8_t *at = wroom(R, 0, nw * sizeof(int64_t));
    if (!at)
        return -1;
    memcpy(at, data, n);
    memset(at + n, 0, nw * sizeof(int64_t) - n);
    return 0;
}

/* A reduced trace's difference of rank at seq, which USES records of process q read. */
int vt__rp_ship_pub(replay *R, uint32_t q, uint32_t rank, uint64_t seq, uint32_t uses, const int64_t *d)
{
    int64_t w[4] = {W_PUB, rank, (int64_t)seq, uses};
    if (wput(R, q, w, 4, d, R->nsc))
        return -1;
    R->activity++;
    return 0;
}

/* A gate is left by the members this process replays (the others leave theirs). */
int vt__rp_gate_local(replay *R, gate *g, const vt_comm *c)
{
    uint64_t v;
    if (!vt__rp_map_get(&R->commloc, c->id, &v)) {
        v = 1;
        for (uint32_t j = 0; j < c->size; j++)
            v += c->members && vt__rp_mine(R, c->members[j]);
        for (uint32_t j = 0; (c->flags & 1) && j < c->remote_size; j++)
            v += c->remote_members && vt__rp_mine(R, c->remote_members[j]);
        if (vt__rp_map_put(&R->commloc, c->id, v))
            return -1;
    }
    g->left = (uint32_t)(v - 1);
    return 0;
}
