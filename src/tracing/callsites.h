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
extern VT_HIDDEN const void *vt__last_site;
extern VT_HIDDEN uint32_t vt__last_site_index;
extern VT_HIDDEN const void *vt__prev_site;
extern VT_HIDDEN uint32_t vt__prev_site_index;

/* Index of a call site. Loops call from a few sites (a Send's and a Recv's), so the
 * last two looked up in the table are checked first; a hit moves nothing (a ping-pong
 * alternates between its two sites). */
static inline uint32_t vt_callsite_index(const void *addr)
{
    if (VT_LIKELY(addr == vt__last_site))
        return vt__last_site_index;
    if (VT_LIKELY(addr == vt__prev_site))
        return vt__prev_site_index;
    return vt__callsite_slow(addr);
}
/* vt_callsite_index under the buffer's lock, for a caller that does not hold it. */
VT_HIDDEN uint32_t vt_callsite_index_locked(const void *addr);
VT_HIDDEN uint32_t vt_callsites_count(void);
VT_HIDDEN const void *vt_callsite_addr(uint32_t i);

#endif
