/* A RANKDEFS payload of a file before 2.0 in 2.0's form, for the tools that copy their
 * input's definitions into the files they write (vtrace reduce, vtrace compensate):
 * only the communicator table changed, each entry's 64-bit id becoming what it is
 * derived from (format/commid.h). Calls reader_io.c only. */
#include "vt_config.h"
#include "format/commid.h"
#include "format/reader.h"
#include "format/reader_priv.h"

#include <stdlib.h>
#include <string.h>

/* The origin of entry I of RK's table that gives its id: world, self, its members or
 * its parent and a creation count, when one does (the inputs 1.x did not store,
 * recovered by trying them), else the id itself. NEXT[p]: the count after the last one
 * found over parent p (communicators are in the table in the order they were made). */
static vt_comm_origin origin_of(const vt_rank *rk, size_t i, uint64_t *next)
{
    const vt_comm *c = &rk->comms[i];
    const uint64_t *pid = c->parent >= 0 && (size_t)c->parent < i ? &rk->comms[c->parent].id : NULL;
    vt_comm_origin o = {.kind = VT_CID_WORLD};
    uint64_t id;
    int inter = (c->flags & 1) != 0;
#define GIVES(o)                                                                                                \
    (vt_comm_id_derive(&(o), rk->rank, inter, c->members, c->size, c->remote_members, c->remote_size, pid,     \
                       &id) == 0 &&                                                                             \
     id == c->id)
    if (GIVES(o))
        return o;
    o.kind = VT_CID_SELF;
    if (GIVES(o))
        return o;
    o.kind = VT_CID_MEMBERS;
    if (GIVES(o))
        return o;
    /* made over its parent: calls that gave this rank MPI_COMM_NULL counted too */
    o.kind = VT_CID_PARENT;
    o.count_base = pid ? next[c->parent] : 0; /* what 2.0 stores the count's difference to */
    for (o.count = o.count_base; pid && o.count <= o.count_base + 64; o.count++)
        if (GIVES(o)) {
            next[c->parent] = o.count + 1;
            return o;
        }
#undef GIVES
    return (vt_comm_origin){.kind = VT_CID_EXPLICIT, .id = c->id};
}

static int skip_members(pp *r, int compact)
{
    uint64_t n, form = 0, v;
    if (pp_uvar(r, &n, "communicator size"))
        return -1;
    if (n && compact && pp_uvar(r, &form, "member list form"))
        return -1;
    uint64_t k = form == 0 ? n : form == 1 ? 2 : 1;
    for (uint64_t j = 0; j < k; j++)
        if (pp_uvar(r, &v, "member"))
            return -1;
    return 0;
}

int vt_trace_rankdefs_upgrade(const vt_trace *t, uint32_t rank, uint8_t **payload, size_t *len, vt_error *err)
{
    if (!t || rank >= t->nranks)
        return vt__seterr(err, "(trace)", 0, "expected an open trace and a rank of it");
    const vt_rank *rk = &t->ranks[rank];
    if (rk->version >= VT_VERSION(2, 0))
        return 0;
    const uint8_t *in = *payload;
    pp r;
    pp_init(&r, in, *len, rk->path, 0, 0, err);
    uint64_t n;
    if (rk->comms_at > *len)
        return vt__seterr(err, rk->path, 0, "expected a RANKDEFS payload of at least %zu bytes, found %zu",
                          rk->comms_at, *len);
    r.p = in + rk->comms_at;
    if (pp_uvar(&r, &n, "number of communicators"))
        return -1;
    if (n != rk->ncomms)
        return vt__seterr(err, rk->path, 0, "expected %zu communicators in RANKDEFS, as when it was read, found %llu",
                          rk->ncomms, (unsigned long long)n);
    uint8_t *out = malloc(*len + rk->ncomms * VT_CID_ORIGIN_MAX + 1);
    uint64_t *next = calloc(rk->ncomms + 1, sizeof *next);
    if (!out || !next) {
        free(out);
        free(next);
        return vt__seterr(err, rk->path, 0, "expected memory for the definitions, found none");
    }
    memcpy(out, in, rk->comms_at);
    uint8_t *w = vt_put_uvar(out + rk->comms_at, n);
    for (size_t i = 0; i < rk->ncomms; i++) {
        uint64_t id, flags, slen;
        int64_t parent;
        if (pp_uvar(&r, &id, "communicator id"))
            goto bad;
        const uint8_t *rest = r.p;
        if (pp_uvar(&r, &flags, "communicator flags") || skip_members(&r, (flags & VT_COMM_COMPACT) != 0) ||
            skip_members(&r, (flags & VT_COMM_COMPACT) != 0) || pp_svar(&r, &parent, "parent communicator index") ||
            pp_count(&r, &slen, 1, "communicator origin"))
            goto bad;
        r.p += slen;
        vt_comm_origin o = origin_of(rk, i, next);
        w = vt_comm_origin_encode(w, &o);
        memcpy(w, rest, (size_t)(r.p - rest));
        w += r.p - rest;
    }
    memcpy(w, r.p, pp_left(&r));
    w += pp_left(&r);
    free(next);
    free(*payload);
    *payload = out;
    *len = (size_t)(w - out);
    return 0;
bad:
    free(next);
    free(out);
    return -1;
}
