/* Call sites (return addresses into the application), numbered in order of first use
 * and symbolized once, at finalisation. */
#ifndef VT_CALLSITES_H
#define VT_CALLSITES_H

#include <stdint.h>

#include "tracing/state.h"

VT_HIDDEN uint32_t vt__callsite_slow(const void *addr);
extern VT_HIDDEN const void *vt__last_site;
extern VT_HIDDEN uint32_t vt__last_site_index;
extern VT_HIDDEN const void *vt__prev_site;
extern VT_HIDDEN uint32_t vt__prev_site_index;

/* Index of a call site. Loops call from a few sites (a Send's and a Recv's), so the
 * last two are checked before the table. */
static inline uint32_t vt_callsite_index(const void *addr)
{
    if (VT_LIKELY(addr == vt__last_site))
        return vt__last_site_index;
    if (addr == vt__prev_site) {
        const void *a = vt__last_site;
        uint32_t i = vt__last_site_index;
        vt__last_site = vt__prev_site;
        vt__last_site_index = vt__prev_site_index;
        vt__prev_site = a;
        vt__prev_site_index = i;
        return vt__last_site_index;
    }
    return vt__callsite_slow(addr);
}
/* vt_callsite_index under the buffer's lock, for a caller that does not hold it. */
VT_HIDDEN uint32_t vt_callsite_index_locked(const void *addr);
VT_HIDDEN uint32_t vt_callsites_count(void);
VT_HIDDEN const void *vt_callsite_addr(uint32_t i);

#endif
