#include "tracing/callsites.h"
#include "tracing/buffer.h"

#include <stdlib.h>

static const void **addrs;     /* by index */
static uint32_t n, cap;
static uint32_t *slots;        /* open addressing: index + 1, 0 empty */
static uint32_t nslots;
/* (const void *)1: never a return address */
VT_HIDDEN const void *vt__site_addr[1u << VT_SITE_CACHE_BITS] = {[0 ...(1u << VT_SITE_CACHE_BITS) - 1] = (const void *)1};
VT_HIDDEN uint32_t vt__site_index[1u << VT_SITE_CACHE_BITS];
VT_HIDDEN void (*vt__callsite_added)(void);
VT_HIDDEN vt_site_one vt__site_send = {(const void *)1, 0}, vt__site_recv = {(const void *)1, 0};

static uint32_t remember(const void *a, uint32_t i)
{
    uint32_t s = vt_site_slot(a);
    vt__site_addr[s] = a;
    return vt__site_index[s] = i;
}

static uint32_t slot_of(const void *a)
{
    uint64_t x = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 40) & (nslots - 1);
}

static void grow(void)
{
    free(slots);
    nslots = nslots ? nslots * 2 : 256;
    slots = calloc(nslots, sizeof *slots);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = slot_of(addrs[i]);
        while (slots[s])
            s = (s + 1) & (nslots - 1);
        slots[s] = i + 1;
    }
}

uint32_t vt__callsite_slow(const void *a)
{
    if ((n + 1) * 2 > nslots)
        grow();
    uint32_t s = slot_of(a);
    while (slots[s]) {
        if (addrs[slots[s] - 1] == a)
            return remember(a, slots[s] - 1);
        s = (s + 1) & (nslots - 1);
    }
    if (n == cap) {
        cap = cap ? cap * 2 : 64;
        addrs = realloc(addrs, cap * sizeof *addrs);
    }
    addrs[n] = a;
    slots[s] = n + 1;
    uint32_t i = remember(a, n++);
    if (vt__callsite_added)
        vt__callsite_added();
    return i;
}

uint32_t vt_callsites_count(void) { return n; }
const void *vt_callsite_addr(uint32_t i) { return i < n ? addrs[i] : NULL; }

uint32_t vt_callsite_index_locked(const void *addr)
{
    vt_lock();
    uint32_t i = vt_callsite_index(addr);
    vt_unlock();
    return i;
}
