/* Communicator ids, one definition for the run time and the reader (commid.h). */
#include "vt_config.h"
#include "format/commid.h"
#include "util/codec.h"
#include "util/sort.h"

#include <stdlib.h>

uint64_t vt_comm_id_parent(uint64_t parent_id, uint64_t count, uint64_t lowest)
{
    return vt_hash64(vt_hash64(vt_hash64(VT_HASH_INIT, parent_id), count), lowest);
}

static int by_rank(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

uint64_t vt_comm_id_group_key(int64_t *ranks, size_t n, int64_t tag, uint64_t parent_id)
{
    vt_sort(ranks, n, sizeof *ranks, by_rank);
    uint64_t h = VT_HASH_INIT;
    for (size_t i = 0; i < n; i++)
        h = vt_hash64(h, (uint64_t)ranks[i]);
    h = vt_hash64(h, (uint64_t)tag);
    return vt_hash64(h, parent_id);
}

uint64_t vt_comm_id_group(uint64_t key, uint64_t count) { return vt_hash64(vt_hash64(key, count), 0x67); }

uint64_t vt_comm_id_members(const int64_t *ranks, size_t n)
{
    uint64_t h = vt_hash64(VT_HASH_INIT, 0x75);
    for (size_t i = 0; i < n; i++)
        h = vt_hash64(h, (uint64_t)ranks[i]);
    return h;
}

int vt_comm_id_derive(const vt_comm_origin *o, uint32_t rank, int inter, const uint32_t *m, uint32_t n,
                      const uint32_t *rm, uint32_t rn, const uint64_t *parent_id, uint64_t *id)
{
    if (!inter)
        rn = 0;
    switch (o->kind) {
    case VT_CID_EXPLICIT:
        *id = o->id;
        return 0;
    case VT_CID_WORLD:
        *id = 1;
        return 0;
    case VT_CID_SELF:
        *id = VT_CID_SELF_BASE + rank;
        return 0;
    case VT_CID_PARENT: {
        if (!parent_id)
            return VT_CID_ENOPARENT;
        if (n + rn == 0)
            return VT_CID_ENOMEMBERS;
        uint32_t lo = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            lo = m[i] < lo ? m[i] : lo;
        for (uint32_t i = 0; i < rn; i++)
            lo = rm[i] < lo ? rm[i] : lo;
        *id = vt_comm_id_parent(*parent_id, o->count, lo);
        return 0;
    }
    case VT_CID_GROUP:
    case VT_CID_MEMBERS: {
        if (o->kind == VT_CID_GROUP && !inter && !parent_id)
            return VT_CID_ENOPARENT;
        size_t all = (size_t)n + (o->kind == VT_CID_GROUP ? rn : 0);
        int64_t *w = malloc((all ? all : 1) * sizeof *w);
        if (!w)
            return VT_CID_ENOMEM;
        for (size_t i = 0; i < all; i++)
            w[i] = i < n ? m[i] : rm[i - n];
        if (o->kind == VT_CID_MEMBERS)
            *id = vt_comm_id_members(w, all);
        else
            *id = vt_comm_id_group(vt_comm_id_group_key(w, all, o->tag, inter ? 0 : *parent_id), o->count);
        free(w);
        return 0;
    }
    default:
        return VT_CID_EKIND;
    }
}

uint8_t *vt_comm_origin_encode(uint8_t *p, const vt_comm_origin *o)
{
    p = vt_put_uvar(p, o->kind);
    if (o->kind == VT_CID_EXPLICIT)
        p = vt_put_uvar(p, o->id);
    else if (o->kind == VT_CID_GROUP)
        p = vt_put_svar(p, (int64_t)((uint64_t)o->tag - (uint64_t)o->tag_base));
    if (o->kind == VT_CID_PARENT)
        p = vt_put_uvar(p, o->count - o->count_base);
    else if (o->kind == VT_CID_GROUP)
        p = vt_put_uvar(p, o->count);
    return p;
}
