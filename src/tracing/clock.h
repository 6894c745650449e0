/* Choosing and calibrating the layer's clock (vt_now in state.h). */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include "tracing/state.h"

/* One end of the calibration: a TSC read and a CLOCK_MONOTONIC read taken together. */
typedef struct vt_tsc_mark {
    uint64_t tsc;
    int64_t ns;
    int set;
} vt_tsc_mark;
/* Takes the first end, as early as possible (MPI_Init's wrapper, before PMPI_Init). */
VT_HIDDEN void vt_clock_mark(vt_tsc_mark *m);
/* Measures the TSC against CLOCK_MONOTONIC when the kernel uses the TSC as its
 * clocksource, from M (or from now when M was not taken) over at least 10 ms, waiting
 * for what is left of them. Returns 0 and fills *s, or -1 (then vt_now stays on
 * clock_gettime). */
VT_HIDDEN int vt_clock_calibrate(const vt_tsc_mark *m, vt_tsc_scale *s);
/* Switches vt_now to the scale (NULL: clock_gettime). Ranks of one host adopt the same
 * scale, so their clocks stay identical, as CLOCK_MONOTONIC is. */
VT_HIDDEN void vt_clock_use(const vt_tsc_scale *s);

#endif
