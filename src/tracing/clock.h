/* Choosing and calibrating the layer's clock (vt_now in state.h). */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include "tracing/state.h"

/* Measures the TSC against CLOCK_MONOTONIC when the kernel uses the TSC as its
 * clocksource. Returns 0 and fills *s, or -1 (then vt_now stays on clock_gettime). */
VT_HIDDEN int vt_clock_calibrate(vt_tsc_scale *s);
/* Switches vt_now to the scale (NULL: clock_gettime). Ranks of one host adopt the same
 * scale, so their clocks stay identical, as CLOCK_MONOTONIC is. */
VT_HIDDEN void vt_clock_use(const vt_tsc_scale *s);

#endif
