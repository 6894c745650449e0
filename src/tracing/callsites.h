/* Call sites (return addresses into the application), numbered in order of first use
 * and symbolized once, at finalisation. */
#ifndef VT_CALLSITES_H
#define VT_CALLSITES_H

#include <stdint.h>

#include "state.h"

VT_HIDDEN uint32_t vt_callsite(const void *addr);
VT_HIDDEN uint32_t vt_callsites_count(void);
VT_HIDDEN const void *vt_callsite_addr(uint32_t i);

#endif
