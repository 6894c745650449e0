/* Call sites (return addresses into the application), numbered in order of first use
 * and symbolized once, at finalisation. */
#ifndef VT_CALLSITES_H
#define VT_CALLSITES_H

#include <stdint.h>

#include "state.h"

VT_HIDDEN uint32_t vt__callsite_slow(const void *addr);
extern VT_HIDDEN const void *vt__last_site;
extern VT_HIDDEN uint32_t vt__last_site_index;

/* Index of a call site; loops call from one site, so the last one is checked first. */
static inline uint32_t vt_callsite(const void *addr)
{
    if (VT_LIKELY(addr == vt__last_site))
        return vt__last_site_index;
    return vt__callsite_slow(addr);
}
VT_HIDDEN uint32_t vt_callsites_count(void);
VT_HIDDEN const void *vt_callsite_addr(uint32_t i);

#endif
