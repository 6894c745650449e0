/* An index of the caller's array by hash: it holds indices and their 32-bit hashes, the
 * caller holds the keys and compares them. For definition tables that grow with the
 * ranks (strings, communicators), where a linear search would be O(P^2).
 *     vt_ixhash h = {0};
 *     size_t pos = VT_IXHASH_START;
 *     for (uint32_t i; (i = vt_ixhash_next(&h, hash, &pos)) != VT_IXHASH_NONE;)
 *         if (equal(key, array[i])) ...found...
 *     vt_ixhash_add(&h, hash, n);  (array[n] the new key)
 *     vt_ixhash_free(&h); */
#ifndef VT_IXHASH_H
#define VT_IXHASH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VT_IXHASH_START SIZE_MAX
#define VT_IXHASH_NONE UINT32_MAX

typedef struct vt_ixhash {
    uint64_t *slot; /* hash << 32 | index + 1; 0 empty */
    size_t cap, n;  /* cap a power of two, at most half full */
} vt_ixhash;

static inline uint32_t vt_ixhash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static inline uint32_t vt_ixhash_u64(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return (uint32_t)v;
}

/* The next index whose hash is HASH, from *POS (VT_IXHASH_START the first time), or
 * VT_IXHASH_NONE. */
static inline uint32_t vt_ixhash_next(const vt_ixhash *h, uint32_t hash, size_t *pos)
{
    if (!h->cap)
        return VT_IXHASH_NONE;
    size_t mask = h->cap - 1, i = *pos == VT_IXHASH_START ? hash & mask : (*pos + 1) & mask;
    for (; h->slot[i]; i = (i + 1) & mask)
        if ((uint32_t)(h->slot[i] >> 32) == hash) {
            *pos = i;
            return (uint32_t)h->slot[i] - 1;
        }
    return VT_IXHASH_NONE;
}

static inline void vt__ixhash_put(uint64_t *slot, size_t mask, uint64_t v)
{
    size_t i = (size_t)(v >> 32) & mask;
    while (slot[i])
        i = (i + 1) & mask;
    slot[i] = v;
}

/* Adds INDEX (below UINT32_MAX - 1) under HASH: 0, or -1 (no memory; nothing changed). */
static inline int vt_ixhash_add(vt_ixhash *h, uint32_t hash, uint32_t index)
{
    if (2 * (h->n + 1) > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        uint64_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < h->cap; i++)
            if (h->slot[i])
                vt__ixhash_put(slot, cap - 1, h->slot[i]);
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    vt__ixhash_put(h->slot, h->cap - 1, (uint64_t)hash << 32 | ((uint64_t)index + 1));
    h->n++;
    return 0;
}

static inline void vt_ixhash_free(vt_ixhash *h)
{
    free(h->slot);
    memset(h, 0, sizeof *h);
}

#endif
