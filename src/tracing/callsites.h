/* Call sites (return addresses into the application), numbered in order of first use
 * and named (module, offset, symbol: rankdefs.h) when first seen. */
#ifndef VT_CALLSITES_H
#define VT_CALLSITES_H

#include <stdint.h>

#include "tracing/state.h"

VT_HIDDEN uint32_t vt__callsite_slow(const void *addr);
/* Called after a site is added to the table (NULL: nothing), outside signal handlers:
 * names it while that is safe, so that the crash paths' definitions name the sites of
 * a rank killed before its first flush too. */
extern VT_HIDDEN void (*vt__callsite_added)(void);

/* A direct-mapped cache of the table, by a hash of the address: a loop's sites (a
 * ping-pong's Send and Recv, a halo exchange's Irecvs, Isends and Waitall) each keep
 * their entry, where a cache of the last two sites missed on every call of a loop of
 * three. A colliding site costs the table's lookup only. */
#define VT_SITE_CACHE_BITS 8
extern VT_HIDDEN const void *vt__site_addr[1u << VT_SITE_CACHE_BITS];
extern VT_HIDDEN uint32_t vt__site_index[1u << VT_SITE_CACHE_BITS];

static inline uint32_t vt_site_slot(const void *addr)
{
    /* the address's low 32 bits suffice to spread a program's sites (a 32-bit multiply) */
    return ((uint32_t)(uintptr_t)addr * 0x9e3779b1u) >> (32 - VT_SITE_CACHE_BITS);
}

/* Index of a call site. */
static inline uint32_t vt_callsite_index(const void *addr)
{
    uint32_t s = vt_site_slot(addr);
    if (VT_LIKELY(vt__site_addr[s] == addr))
        return vt__site_index[s];
    return vt__callsite_slow(addr);
}

/* A one-entry cache of a call site of its own: the blocking MPI_Send's and MPI_Recv's
 * (handlers_p2p.h), whose ping-pong calls each from one site. A hit is one compare with
 * a fixed address, where the shared cache hashes the address first (issue 18); a miss
 * takes vt_callsite_index and keeps its answer. Under the buffer's lock, as the table. */
typedef struct vt_site_one {
    const void *addr;
    uint32_t index;
} vt_site_one;
extern VT_HIDDEN vt_site_one vt__site_send, vt__site_recv;

static inline uint32_t vt_callsite_index_one(vt_site_one *o, const void *addr)
{
    if (VT_LIKELY(o->addr == addr))
        return o->index;
    uint32_t i = vt_callsite_index(addr);
    o->addr = addr;
    o->index = i;
    return i;
}

/* vt_callsite_index under the buffer's lock, for a caller that does not hold it. */
VT_HIDDEN uint32_t vt_callsite_index_locked(const void *addr);
VT_HIDDEN uint32_t vt_callsites_count(void);
VT_HIDDEN const void *vt_callsite_addr(uint32_t i);

#endif
