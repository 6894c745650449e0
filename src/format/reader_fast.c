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
 * mostly three bytes). */
static inline int col_u(cursor *c, uint64_t *v)
{
    const uint8_t *q = vt_get_uvar_short(c->p, c->end, v);
    if (q) {
        c->p = q;
        return 0;
    }
    return get_u(&c->p, c->end, v);
}

/* The entry of (CODE, SITE) in D's table: the one last used for their hash when it is
 * theirs, else looked up (and remembered). */
static inline last *dec_last(vt_evcols_dec *d, uint64_t code, uint64_t site)
{
    size_t h = (size_t)(code + site * 17) & (sizeof d->hint - 1);
    if (d->hint[h]) {
        last *l = &d->t.e[d->hint[h] - 1];
        if (l->code == code && l->site == site)
            return l;
    }
    size_t cap = d->t.cap;
    last *l = lasts_get(&d->t, code, site);
    if (!l)
        return NULL;
    if (d->t.cap != cap) /* grown: the entries moved */
        memset(d->hint, 0, sizeof d->hint);
    size_t i = (size_t)(l - d->t.e);
    d->hint[h] = i < UINT8_MAX ? (uint8_t)(i + 1) : 0;
    return l;
}

int vt__fast_next(vt_evcols_dec *d, const vt_rank *rk, uint32_t nranks, vt_event *ev, uint64_t *prev,
                  uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap)
{
    cursor *c = d->c;
    uint64_t code, zenter, dur, site = 0;
    if (col_u(&c[COL_CODES], &code) || col_u(&c[COL_ENTERS], &zenter) || col_u(&c[COL_DURS], &dur) ||
        (code >= VT_CODE_FIRST_FN && col_u(&c[COL_SITES], &site)))
        return 1;
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
    /* the values: those of the code and call site's last record plus their steps (for
     * TAG_SAME added as each is taken: SAME), given, or their differences read */
    uint64_t *v = NULL, *st = NULL;
    size_t n = 0, i = 0;
    int same = 0;
    if (*letters) {
        cursor *fc = &c[COL_FIELDS];
        uint64_t tag;
        if (col_u(fc, &tag) || tag > TAG_DELTA)
            return 1;
        last *l = dec_last(d, code, site);
        if (!l)
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
            same = tag == TAG_SAME;
            for (size_t j = 0; !same && j < l->n; j++) {
                uint64_t dd; /* (an svar: its zigzag form, the short ones inline) */
                if (col_u(fc, &dd))
                    return 1;
                l->step[j] += (uint64_t)vt_unzigzag(dd);
                l->v[j] += l->step[j];
            }
        }
        v = l->v;
        st = l->step;
        n = l->n;
    }
    /* the defaults of the fields from comm to before block_offset: the others are all
     * set here (code to callsite) or by the caller (index, callno, block_offset) */
    memcpy((char *)ev + offsetof(vt_event, comm), (const char *)&vt__ev_none + offsetof(vt_event, comm),
           offsetof(vt_event, block_offset) - offsetof(vt_event, comm));
    ev->code = code;
    uint64_t enter = *prev + (uint64_t)vt_unzigzag(zenter);
    uint64_t exit_ = enter + dur;
    ev->enter = (int64_t)enter;
    ev->exit = (int64_t)exit_;
    if (code < VT_CODE_FIRST_FN) {
        for (size_t j = 0; same && j < n; j++)
            v[j] += st[j];
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
        *prev = exit_;
        return 0;
    }
    ev->fn = (int64_t)(code - VT_CODE_FIRST_FN);
    if (rk->ncallsites == 0 ? site != 0 : site >= rk->ncallsites)
        return 1;
    ev->callsite = rk->ncallsites ? (int64_t)site : -1;
    ev->fields = f->fields | VT_F_CALLSITE;
    for (const char *l = f->layout; *l; l++) {
        if (i >= n)
            return 1;
        uint64_t u = same ? (v[i] += st[i]) : v[i];
        i++;
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
            if (u > n - i)
                return 1;
            for (size_t j = i; same && j < i + u; j++)
                v[j] += st[j];
            if (u > *started_cap) {
                uint64_t *p = realloc(*started, (size_t)u * sizeof *p);
                if (!p)
                    return 1;
                *started = p;
                *started_cap = (size_t)u;
            }
            if (u)
                memcpy(*started, v + i, (size_t)u * sizeof *v);
            i += (size_t)u;
            ev->nstarted = (size_t)u;
            ev->started = u ? *started : NULL;
            break;
        case 'k':
            if (u > (n - i) / 5)
                return 1;
            for (size_t j = i; same && j < i + 5 * u; j++)
                v[j] += st[j];
            if (u > *done_cap) {
                vt_completion *p = realloc(*done, (size_t)u * sizeof *p);
                if (!p)
                    return 1;
                *done = p;
                *done_cap = (size_t)u;
            }
            for (uint64_t j = 0; j < u; j++, i += 5) {
                vt_completion *k = &(*done)[j];
                k->request = v[i];
                k->flags = v[i + 1];
                if (peer_of(v[i + 2], nranks, &k->peer))
                    return 1;
                k->tag = vt_unzigzag(v[i + 3]);
                k->bytes = v[i + 4];
            }
            ev->ndone = (size_t)u;
            ev->done = u ? *done : NULL;
            break;
        default:
            return 1;
        }
    }
    if (i != n)
        return 1;
    *prev = exit_;
    return 0;
}

