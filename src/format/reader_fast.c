/* Records of EVENTS_COLS blocks filled straight from their columns (vt_cursor_fast):
 * what decode_record() in reader_cursor.c makes of the same record unpacked. Calls
 * nothing of the reader's other files. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/evcols.h"
#include "format/reader_priv.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

/* A record's defaults: a template copy is cheaper than memset and a dozen stores. */
const vt_event vt__ev_none = {.fn = -1, .callsite = -1, .comm = -1, .newcomm = -1, .peer = VT_PEER_NONE,
                              .tag = -1, .rpeer = VT_PEER_NONE, .rtag = -1, .root = VT_PEER_NONE,
                              .collseq = VT_SEQ_NONE, .file = -1, .offset = -1};

/* A peer value (zigzag U): a world rank or -1 to -4, as pp_peer reads it. */
static int peer_of(uint64_t u, uint32_t nranks, int64_t *out)
{
    int64_t v = vt_unzigzag(u);
    if (v < VT_PEER_ROOT || v >= (int64_t)nranks)
        return 1;
    *out = v;
    return 0;
}

int vt__fast_fill(const vt_rank *rk, uint32_t nranks, const vt_evcols_rec *x, vt_event *ev, uint64_t *prev,
                  uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap)
{
    const uint64_t *v = x->v;
    size_t n = x->n, i = 0;
    *ev = vt__ev_none;
    ev->code = x->code;
    uint64_t enter = *prev + (uint64_t)vt_unzigzag(x->enter);
    uint64_t exit_ = enter + x->dur;
    ev->enter = (int64_t)enter;
    ev->exit = (int64_t)exit_;
    if (x->code < VT_CODE_FIRST_FN) {
        if (x->code == VT_CODE_MARKER && n == 2) {
            ev->marker_kind = v[0];
            ev->marker_value = vt_unzigzag(v[1]);
        } else if (x->code == VT_CODE_STOPPED && n == 1) {
            ev->stop_reason = v[0];
        } else if (x->code != VT_CODE_FLUSH || n) {
            return 1;
        }
        *prev = exit_;
        return 0;
    }
    uint64_t fn = x->code - VT_CODE_FIRST_FN;
    if (fn >= rk->nfuncs || !rk->funcs[fn].name[0])
        return 1;
    ev->fn = (int64_t)fn;
    const vt_function *f = &rk->funcs[fn];
    if (rk->ncallsites == 0 ? x->site != 0 : x->site >= rk->ncallsites)
        return 1;
    if (rk->ncallsites)
        ev->callsite = (int64_t)x->site;
    ev->fields = f->fields | VT_F_CALLSITE;
    for (const char *l = f->layout; *l; l++) {
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
            if (u > n - i)
                return 1;
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
            if (u > *done_cap) {
                vt_completion *p = realloc(*done, (size_t)u * sizeof *p);
                if (!p)
                    return 1;
                *done = p;
                *done_cap = (size_t)u;
            }
            for (uint64_t j = 0; j < u; j++, i += 5) {
                vt_completion *d = &(*done)[j];
                d->request = v[i];
                d->flags = v[i + 1];
                if (peer_of(v[i + 2], nranks, &d->peer))
                    return 1;
                d->tag = vt_unzigzag(v[i + 3]);
                d->bytes = v[i + 4];
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

