/* Choosing and calibrating the layer's clock (vt_now in state.h). */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include "tracing/state.h"

/* One end of the calibration: a TSC read and a CLOCK_MONOTONIC read taken together. */
typedef struct vt_tsc_mark {
    uint64_t tsc;
    int64_t ns;
    uint64_t width;   /* the TSC bracket of the CLOCK_MONOTONIC read, cycles */
    int set;
} vt_tsc_mark;
/* No (TSC, CLOCK_MONOTONIC) pair read within this many TSC cycles: no TSC. */
#define VT_CLOCK_LOOSE_CYCLES 200000
/* Takes the first end, as early as possible (MPI_Init's wrapper, before PMPI_Init). */
VT_HIDDEN void vt_clock_mark(vt_tsc_mark *m);

/* Why vt_clock_calibrate left the TSC alone. */
enum vt_clock_result {
    VT_CLOCK_OK = 0,
    VT_CLOCK_OFF = -1,        /* VTRACE_CLOCK=monotonic, or auto and a clocksource other than tsc */
    VT_CLOCK_VARIANT = -2,    /* VTRACE_CLOCK=tsc and the processor does not say its TSC is invariant */
    VT_CLOCK_UNCALIBRATED = -3 /* no (TSC, CLOCK_MONOTONIC) pair could be read closely enough */
};
/* Measures the TSC against CLOCK_MONOTONIC, from M (or from now when M was not taken)
 * over at least 10 ms, waiting for what is left of them, when CHOICE (enum
 * vt_clock_choice of util/settings.h) allows the TSC here. Returns VT_CLOCK_OK and fills
 * *s, or another enum vt_clock_result (then vt_now stays on clock_gettime). */
VT_HIDDEN int vt_clock_calibrate(const vt_tsc_mark *m, int choice, vt_tsc_scale *s);
/* Switches vt_now to the scale (NULL: clock_gettime). Ranks of one host adopt the same
 * scale, so their clocks stay identical, as CLOCK_MONOTONIC is. */
VT_HIDDEN void vt_clock_use(const vt_tsc_scale *s);
/* With vt_now on the TSC: how far its time (plus SKEW, a test hook) is from
 * CLOCK_MONOTONIC now, in *drift_ns (absolute), and the bound beyond which the TSC did
 * not keep time, in *bound_ns. Returns 0, or -1 when the TSC is not in use or no close
 * pair could be read. */
VT_HIDDEN int vt_clock_check(int64_t skew, int64_t *drift_ns, int64_t *bound_ns);

#endif
