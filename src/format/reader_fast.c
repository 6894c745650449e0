/* Records of EVENTS_COLS blocks decoded straight from their columns into the reader's
 * event (vt_cursor_fast): what decode_record() in reader_cursor.c makes of the same
 * record unpacked. The values of a record are those of the last record of its code and
 * call site plus their steps, updated in place in the decoder's table and read from
 * there (no copy). Calls nothing of the reader's other files. */
#include "vt_config.h"
#include "format/evcols_priv.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

/* A record's defaults: a template copy is cheaper than memset and a dozen stores. */
const vt_event vt__ev_none = {.fn = -1, .callsite = -1, .comm = -1, .newcomm = -1, .peer = VT_PEER_NONE,
                              .tag = -1, .rpeer = VT_PEER_NONE, .rtag = -1, .root = VT_PEER_NONE,
                              .collseq = VT_SEQ_NONE, .file = -1, .offset = -1};

/* The defaults (vt__ev_none's) of the fields from comm to before block_offset: the
 * others are all set by vt__fast_next (code to callsite) or its caller (index, callno,
 * block_offset). Pairs of words stored at once (11 stores, not 21; a copy of vt__ev_none's
 * bytes, in a path the compiler deems cold, becomes a rep movs of 42 words). */
typedef int64_t word_pair __attribute__((vector_size(16)));
#define PAIR_AT(first, second)                                                                                  \
    _Static_assert(offsetof(vt_event, second) == offsetof(vt_event, first) + 8, "vt_event's pairs moved")
PAIR_AT(comm, newcomm);
PAIR_AT(peer, tag);
PAIR_AT(bytes, rpeer);
PAIR_AT(rtag, rbytes);
PAIR_AT(root, collseq);
PAIR_AT(request, msg);
PAIR_AT(file, offset);
PAIR_AT(nstarted, started);
PAIR_AT(ndone, done);
PAIR_AT(marker_kind, marker_value);
#undef PAIR_AT
_Static_assert(VT_PEER_NONE == -1 && VT_SEQ_NONE == UINT64_MAX, "event_defaults stores -1 for both");

static inline void pair_store(vt_event *ev, size_t off, word_pair v)
{
    memcpy((char *)ev + off, &v, sizeof v);
}

static inline void event_defaults(vt_event *ev)
{
    _Static_assert(offsetof(vt_event, block_offset) - offsetof(vt_event, comm) == 21 * sizeof(uint64_t) &&
                       offsetof(vt_event, peer) == offsetof(vt_event, newcomm) + 8 &&
                       offsetof(vt_event, bytes) == offsetof(vt_event, tag) + 8 &&
                       offsetof(vt_event, rtag) == offsetof(vt_event, rpeer) + 8 &&
                       offsetof(vt_event, root) == offsetof(vt_event, rbytes) + 8 &&
                       offsetof(vt_event, request) == offsetof(vt_event, collseq) + 8 &&
                       offsetof(vt_event, file) == offsetof(vt_event, msg) + 8 &&
                       offsetof(vt_event, nstarted) == offsetof(vt_event, offset) + 8 &&
                       offsetof(vt_event, ndone) == offsetof(vt_event, started) + 8 &&
                       offsetof(vt_event, marker_kind) == offsetof(vt_event, done) + 8 &&
                       offsetof(vt_event, stop_reason) == offsetof(vt_event, marker_value) + 8,
                   "vt_event's fields changed: event_defaults() sets them all");
    const word_pair none = {-1, -1}, zero = {0, 0};
    pair_store(ev, offsetof(vt_event, comm), none);
    pair_store(ev, offsetof(vt_event, peer), none);
    pair_store(ev, offsetof(vt_event, bytes), (word_pair){0, -1});
    pair_store(ev, offsetof(vt_event, rtag), (word_pair){-1, 0});
    pair_store(ev, offsetof(vt_event, root), none);
    pair_store(ev, offsetof(vt_event, request), zero);
    pair_store(ev, offsetof(vt_event, file), none);
    pair_store(ev, offsetof(vt_event, nstarted), zero);
    pair_store(ev, offsetof(vt_event, ndone), zero);
    pair_store(ev, offsetof(vt_event, marker_kind), zero);
    ev->stop_reason = 0;
}

/* A peer value (zigzag U): a world rank or -1 to -4, as pp_peer reads it. */
static inline int peer_of(uint64_t u, uint32_t nranks, int64_t *out)
{
    int64_t v = vt_unzigzag(u);
    if (v < VT_PEER_ROOT || v >= (int64_t)nranks)
        return 1;
    *out = v;
    return 0;
}

/* get_u() with the two- and three-byte cases inline too (enter times' deltas are
 * mostly three bytes), read before their end is checked: the payload is followed by
 * VT_FAST_SLACK readable bytes (a value of three bytes at most, from before the end),
 * and a value that does not end in its column is read again by get_u, which says so. */
static inline __attribute__((always_inline)) int col_u(cursor *c, uint64_t *v)
{
    _Static_assert(VT_FAST_SLACK >= 3, "col_u reads three bytes from the end");
    const uint8_t *q = vt_get_uvar3(c->p, v);
    if (__builtin_expect(!q || q > c->end, 0))
        return get_u(&c->p, c->end, v);
    c->p = q;
    return 0;
}

/* The entry of (CODE, SITE) in D's table: the one last used for their hash when it is
 * theirs, else looked up (and remembered). */
static inline size_t hint_of(const vt_evcols_dec *d, uint64_t code, uint64_t site)
{
    return (size_t)(code + site * 8) & (sizeof d->hint - 1); /* (one lea) */
}

static inline last *dec_last(vt_evcols_dec *d, uint64_t code, uint64_t site)
{
    size_t h = hint_of(d, code, site);
    if (d->hint[h]) {
        last *l = &d->t.e[d->hint[h] - 1];
        if (l->code == code && l->site == site)
            return l;
    }
    size_t cap = d->t.cap;
    last *l = lasts_get(&d->t, code, site);
    if (!l)
        return NULL;
    if (d->t.cap != cap) { /* grown: the entries moved */
        memset(d->hint, 0, sizeof d->hint);
        memset(d->plan, 0, sizeof d->plan);
    }
    size_t i = (size_t)(l - d->t.e);
    d->hint[h] = i < UINT8_MAX ? (uint8_t)(i + 1) : 0;
    return l;
}

/* The started request ids V[0..u) as the event's list (in the cursor's array). */
static inline int fill_started(vt_event *ev, const uint64_t *v, uint64_t u, uint64_t **started, size_t *started_cap)
{
    if (u > *started_cap) {
        uint64_t *p = realloc(*started, (size_t)u * sizeof *p);
        if (!p)
            return 1;
        *started = p;
        *started_cap = (size_t)u;
    }
    if (u)
        memcpy(*started, v, (size_t)u * sizeof *v);
    ev->nstarted = (size_t)u;
    ev->started = u ? *started : NULL;
    return 0;
}

/* The U completions of V (5 values each) as the event's list (in the cursor's array),
 * their peers checked when CHECK (a plan's were, by the record it was made after). */
static inline int fill_done(vt_event *ev, const uint64_t *v, uint64_t u, uint32_t nranks, int check,
                            vt_completion **done, size_t *done_cap)
{
    if (u > *done_cap) {
        vt_completion *p = realloc(*done, (size_t)u * sizeof *p);
        if (!p)
            return 1;
        *done = p;
        *done_cap = (size_t)u;
    }
    for (uint64_t j = 0; j < u; j++, v += 5) {
        vt_completion *k = &(*done)[j];
        k->request = v[0];
        k->flags = v[1];
        if (check) {
            if (peer_of(v[2], nranks, &k->peer))
                return 1;
        } else {
            k->peer = vt_unzigzag(v[2]);
        }
        k->tag = vt_unzigzag(v[3]);
        k->bytes = v[4];
    }
    ev->ndone = (size_t)u;
    ev->done = u ? *done : NULL;
    return 0;
}

/* The plan slot of the entry of index + 1 E (the plan is the entry's when its l is the
 * entry); NULL for E 0, an entry the hints do not hold. */
static inline fast_plan *plan_at(vt_evcols_dec *d, uint8_t e)
{
    return e ? &d->plan[(e - 1) & (FAST_PLANS - 1)] : NULL;
}

/* The plan slot of (CODE, SITE)'s entry, after dec_last, and that entry's index + 1 in
 * *E (the plan is the entry's when its owner is *E). */
static inline fast_plan *plan_of(vt_evcols_dec *d, uint64_t code, uint64_t site, uint8_t *e)
{
    *e = d->hint[hint_of(d, code, site)];
    return plan_at(d, *e);
}

/* Where a layout letter's value goes in vt_event (byte offset), whether it is a zigzag
 * and whether the reader checks it; 0: a list or not known. */
static int plan_letter(char letter, size_t *off, int *zigzag, int *checked)
{
    *zigzag = *checked = 0;
    switch (letter) {
    case 'c': *off = offsetof(vt_event, comm); *checked = 1; return 1;
    case 'n': *off = offsetof(vt_event, newcomm); *zigzag = *checked = 1; return 1;
    case 'p': *off = offsetof(vt_event, peer); *zigzag = *checked = 1; return 1;
    case 't': *off = offsetof(vt_event, tag); *zigzag = 1; return 1;
    case 'b': *off = offsetof(vt_event, bytes); return 1;
    case 'P': *off = offsetof(vt_event, rpeer); *zigzag = *checked = 1; return 1;
    case 'T': *off = offsetof(vt_event, rtag); *zigzag = 1; return 1;
    case 'B': *off = offsetof(vt_event, rbytes); return 1;
    case 'o': *off = offsetof(vt_event, root); *zigzag = *checked = 1; return 1;
    case 'q': *off = offsetof(vt_event, collseq); return 1;
    case 'r': *off = offsetof(vt_event, request); return 1;
    case 'm': *off = offsetof(vt_event, msg); return 1;
    case 'f': *off = offsetof(vt_event, file); *checked = 1; return 1;
    case 'O': *off = offsetof(vt_event, offset); *zigzag = 1; return 1;
    default: return 0;
    }
}

/* P: the plan of L's next records (L the entry of index + 1 E), after one of LAYOUT
 * decoded (and checked) the long way; unusable when a value checked, or a list's count,
 * can move, or it does not fit. */
static __attribute__((noinline)) void plan_make(fast_plan *p, last *l, uint8_t e, const char *layout,
                                                const vt_event *ev)
{
    *p = (fast_plan){.v = l->v, .code = (uint32_t)l->code, .site = (uint32_t)l->site,
                     .callsite = (int32_t)ev->callsite, .fields = ev->fields, .owner = e,
                     .started_at = FAST_PLAN_NONE, .done_at = FAST_PLAN_NONE};
    const uint64_t *v = l->v, *st = l->step;
    if (l->code != p->code || l->site != p->site || ev->callsite != p->callsite || st < v || st - v > UINT8_MAX)
        return;
    p->stepoff = (uint8_t)(st - v);
    size_t i = 0, off, nzig = 0;
    int zigzag, checked;
    uint8_t zvi[FAST_PLAN_OPS], zat[FAST_PLAN_OPS];
    _Static_assert(sizeof(vt_event) <= UINT8_MAX + 1, "a field's offset is a byte");
    for (const char *c = layout; *c; c++, i++) {
        if (i >= l->n || i >= FAST_PLAN_NONE)
            return;
        if (*c == 'R') {
            if (st[i] || p->started_at != FAST_PLAN_NONE || v[i] > l->n - i - 1)
                return;
            p->started_at = (uint8_t)i;
            i += v[i];
        } else if (*c == 'k') {
            if (st[i] || p->done_at != FAST_PLAN_NONE || v[i] > (l->n - i - 1) / 5)
                return;
            for (size_t j = 0; j < v[i]; j++)
                if (st[i + 1 + 5 * j + 2]) /* a peer */
                    return;
            p->done_at = (uint8_t)i;
            i += 5 * v[i];
        } else {
            if (!plan_letter(*c, &off, &zigzag, &checked) || (checked && st[i]) || p->nops + nzig == FAST_PLAN_OPS)
                return;
            for (size_t j = 0; j < p->nops + nzig; j++) /* (plan_run writes copies, then zigzags) */
                if ((j < p->nops ? p->at[j] : zat[j - p->nops]) == off)
                    return;
            if (zigzag) {
                zvi[nzig] = (uint8_t)i;
                zat[nzig++] = (uint8_t)off;
            } else {
                p->vi[p->nops] = (uint8_t)i;
                p->at[p->nops++] = (uint8_t)off;
            }
        }
    }
    p->nplain = p->nops;
    for (size_t j = 0; j < nzig; j++) { /* (a few bytes: no call of memcpy) */
        p->vi[p->nops + j] = zvi[j];
        p->at[p->nops + j] = zat[j];
    }
    p->nops = (uint8_t)(p->nops + nzig);
    /* (one pass, in locals: the stores of bytes to p may alias l and st for the compiler) */
    size_t n = l->n, nmove = 0;
    for (size_t j = 0; j < n; j++)
        if (st[j]) {
            if (nmove == sizeof p->move || j >= FAST_PLAN_NONE) {
                nmove = FAST_PLAN_NONE;
                break;
            }
            p->move[nmove++] = (uint8_t)j;
        }
    p->nmove = (uint8_t)nmove;
    p->live = i == n ? e : 0;
}

/* Values V moved by their steps STEP (a record as predicted), by plan P's list of the
 * moving ones when P has one. */
static inline void moves_step(uint64_t *v, const uint64_t *step, const fast_plan *p)
{
    const uint8_t *m = p->move; /* (locals: the stores to v may alias the plan's bytes) */
    for (size_t k = 0, n = p->nmove; k < n; k++)
        v[m[k]] += step[m[k]];
}

/* L's values moved by their steps, by its plan P when it has one. */
static inline void values_step(last *l, const fast_plan *p)
{
    if (p && p->nmove != FAST_PLAN_NONE) {
        moves_step(l->v, l->step, p);
        return;
    }
    for (size_t j = 0; j < l->n; j++)
        l->v[j] += l->step[j];
}

/* The fields of a record by its entry's plan P from its values V. */
static inline __attribute__((always_inline)) int plan_run(const fast_plan *p, const uint64_t *v, uint32_t nranks, vt_event *ev,
                           uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap)
{
    const uint8_t *vi = p->vi, *at = p->at; /* (locals: the stores to ev may alias the plan's bytes) */
    size_t o = 0, nplain = p->nplain, nops = p->nops;
    for (; o < nplain; o++)
        memcpy((char *)ev + at[o], &v[vi[o]], sizeof *v);
    for (; o < nops; o++) {
        int64_t z = vt_unzigzag(v[vi[o]]);
        memcpy((char *)ev + at[o], &z, sizeof z);
    }
    unsigned st_at = p->started_at, dn_at = p->done_at;
    if (__builtin_expect((st_at & dn_at) == FAST_PLAN_NONE, 1)) /* (no lists: one test) */
        return 0;
    if (st_at != FAST_PLAN_NONE && fill_started(ev, v + st_at + 1, v[st_at], started, started_cap))
        return 1;
    if (dn_at != FAST_PLAN_NONE && fill_done(ev, v + dn_at + 1, v[dn_at], nranks, 0, done, done_cap))
        return 1;
    return 0;
}

/* A call record of (CODE, SITE) as predicted (TAG_SAME) when their entry has a plan: its
 * code to its fields in EV by the plan. 0 done, 1 error, -1 not such a record (nothing
 * read). Reads the plan's line, not the entry's. */
static inline int record_by_plan(vt_evcols_dec *d, uint64_t code, uint64_t site, uint32_t nranks, vt_event *ev,
                                 uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap)
{
    uint8_t e = d->hint[hint_of(d, code, site)];
    if (!e)
        return -1;
    const fast_plan *p = plan_at(d, e);
    cursor *fc = &d->c[COL_FIELDS];
    if (p->live != e || p->code != code || p->site != site || fc->p >= fc->end ||
        *fc->p != TAG_SAME)
        return -1;
    fc->p++;
    if (p->nmove != FAST_PLAN_NONE)
        moves_step(p->v, p->v + p->stepoff, p);
    else
        values_step(&d->t.e[e - 1], NULL);
    event_defaults(ev);
    ev->code = code;
    ev->fn = (int64_t)(code - VT_CODE_FIRST_FN);
    ev->callsite = p->callsite;
    ev->fields = p->fields;
    return plan_run(p, p->v, nranks, ev, started, started_cap, done, done_cap);
}

/* The fields of a record of LAYOUT from its N values V, each checked. */
static int fields_checked(const char *layout, const uint64_t *v, size_t n, const vt_rank *rk, uint32_t nranks,
                          vt_event *ev, uint64_t **started, size_t *started_cap, vt_completion **done,
                          size_t *done_cap)
{
    size_t i = 0;
    for (const char *l = layout; *l; l++) {
        if (i >= n)
            return 1;
        uint64_t u = v[i++];
        switch (*l) {
        case 'c':
            if (u >= rk->ncomms)
                return 1;
            ev->comm = (int64_t)u;
            break;
        case 'n':
            ev->newcomm = vt_unzigzag(u);
            if (ev->newcomm < -1 || ev->newcomm >= (int64_t)rk->ncomms)
                return 1;
            break;
        case 'p':
            if (peer_of(u, nranks, &ev->peer))
                return 1;
            break;
        case 't': ev->tag = vt_unzigzag(u); break;
        case 'b': ev->bytes = u; break;
        case 'P':
            if (peer_of(u, nranks, &ev->rpeer))
                return 1;
            break;
        case 'T': ev->rtag = vt_unzigzag(u); break;
        case 'B': ev->rbytes = u; break;
        case 'o':
            if (peer_of(u, nranks, &ev->root))
                return 1;
            break;
        case 'q': ev->collseq = u; break;
        case 'r': ev->request = u; break;
        case 'm': ev->msg = u; break;
        case 'f':
            if (u >= rk->nfiles)
                return 1;
            ev->file = (int64_t)u;
            break;
        case 'O': ev->offset = vt_unzigzag(u); break;
        case 'R':
            if (u > n - i || fill_started(ev, v + i, u, started, started_cap))
                return 1;
            i += (size_t)u;
            break;
        case 'k':
            if (u > (n - i) / 5 || fill_done(ev, v + i, u, nranks, 1, done, done_cap))
                return 1;
            i += 5 * (size_t)u;
            break;
        default:
            return 1;
        }
    }
    return i != n;
}

int vt__fast_next(vt_evcols_dec *d, const vt_rank *rk, uint32_t nranks, vt_event *ev, uint64_t *prev,
                  uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap)
{
    cursor *c = d->c;
    uint64_t code, zenter, dur, site = 0;
    if (col_u(&c[COL_CODES], &code) || col_u(&c[COL_ENTERS], &zenter) || col_u(&c[COL_DURS], &dur) ||
        (code >= VT_CODE_FIRST_FN && col_u(&c[COL_SITES], &site)))
        return 1;
    /* the times at once (two registers fewer for the rest; on an error the caller's
     * fallback starts the block's times again) */
    uint64_t enter = *prev + (uint64_t)vt_unzigzag(zenter);
    uint64_t exit_ = enter + dur;
    ev->enter = (int64_t)enter;
    ev->exit = (int64_t)exit_;
    *prev = exit_;
    if (code >= VT_CODE_FIRST_FN) {
        int rc = record_by_plan(d, code, site, nranks, ev, started, started_cap, done, done_cap);
        if (rc >= 0)
            return rc;
    }
    /* a call's layout from the rank's function table, read for the call anyway (the
     * decoder's fn holds the same strings, a line and an array further) */
    const vt_function *f = NULL;
    const char *letters;
    if (code >= VT_CODE_FIRST_FN) {
        uint64_t fn = code - VT_CODE_FIRST_FN;
        if (fn >= rk->nfuncs || !rk->funcs[fn].name[0])
            return 1;
        f = &rk->funcs[fn];
        if (!(letters = f->layout))
            return 1;
    } else if (!(letters = fields_of(code, &d->fn))) {
        return 1;
    }
    /* the values: those of the code and call site's last record plus their steps
     * (TAG_SAME), given, or their differences read */
    uint64_t *v = NULL;
    size_t n = 0;
    last *l = NULL;
    uint64_t tag = TAG_LITERAL;
    if (*letters) {
        cursor *fc = &c[COL_FIELDS];
        if (col_u(fc, &tag) || tag > TAG_DELTA)
            return 1;
        if (!(l = dec_last(d, code, site)))
            return 1;
        if (tag == TAG_LITERAL) {
            d->a->n = 0;
            if (read_fields(letters, &fc->p, fc->end, d->a) || set_values(&d->t, l, d->a->v, d->a->n))
                return 1;
        } else {
            /* set_values() of the predicted values: with as many values as before, a
             * step is the new value less the old one (for TAG_SAME the step itself) */
            if (!l->n)
                return 1;
            if (tag == TAG_SAME) {
                uint8_t e;
                fast_plan *p = plan_of(d, code, site, &e);
                values_step(l, p && p->live == e ? p : NULL);
            }
            for (size_t j = 0; tag != TAG_SAME && j < l->n; j++) {
                uint64_t dd; /* (an svar: its zigzag form, the short ones inline) */
                if (col_u(fc, &dd))
                    return 1;
                l->step[j] += (uint64_t)vt_unzigzag(dd);
                l->v[j] += l->step[j];
            }
        }
        if (tag != TAG_SAME) { /* the steps changed: the entry's plan with them */
            uint8_t e;
            fast_plan *p = plan_of(d, code, site, &e);
            if (p && p->owner == e)
                p->owner = p->live = 0;
        }
        v = l->v;
        n = l->n;
    }
    event_defaults(ev);
    ev->code = code;
    if (code < VT_CODE_FIRST_FN) {
        ev->fn = -1;
        ev->callsite = -1;
        ev->fields = 0;
        if (code == VT_CODE_MARKER && n == 2) {
            ev->marker_kind = v[0];
            ev->marker_value = vt_unzigzag(v[1]);
        } else if (code == VT_CODE_STOPPED && n == 1) {
            ev->stop_reason = v[0];
        } else if (code != VT_CODE_FLUSH || n) {
            return 1;
        }
        return 0;
    }
    ev->fn = (int64_t)(code - VT_CODE_FIRST_FN);
    if (rk->ncallsites == 0 ? site != 0 : site >= rk->ncallsites)
        return 1;
    ev->callsite = rk->ncallsites ? (int64_t)site : -1;
    ev->fields = f->fields | VT_F_CALLSITE;
    uint8_t e = 0;
    fast_plan *p = l && tag == TAG_SAME ? plan_of(d, code, site, &e) : NULL;
    if (p && p->live == e) {
        if (plan_run(p, v, nranks, ev, started, started_cap, done, done_cap))
            return 1;
    } else {
        if (fields_checked(f->layout, v, n, rk, nranks, ev, started, started_cap, done, done_cap))
            return 1;
        if (p && !p->owner) /* (a slot taken stays its entry's: no two entries take turns) */
            plan_make(p, l, e, f->layout, ev);
    }
    return 0;
}
