/* The periodicity detector at run time (seed 000's trace-scaling agent): every call
 * record's (function, call site) goes through dpd.h; iteration boundaries become MARKER
 * records, and with VTRACE_PERIODIC=N only N iterations of each periodic stretch are
 * kept in detail (the trace is then flagged "scaled"). Off unless VTRACE_PERIODIC is set. */
#ifndef VT_PERIOD_H
#define VT_PERIOD_H

#include <stdint.h>

#include "tracing/state.h"

/* MARKER kinds (doc/format.md). */
#define VT_MARK_ITERATION 1   /* an iteration starts here; value: the period in calls */
#define VT_MARK_APERIODIC 2   /* the periodic stretch ended at the call before */
#define VT_MARK_SUSPEND 3     /* detail suspended from here (value: the period) */
#define VT_MARK_RESUME 4      /* detail resumed from here (value: calls not recorded) */

extern VT_HIDDEN int vt__period_on;

/* keep < 0: off. Returns 0, or -1 when out of memory (the detector stays off). */
VT_HIDDEN int vt_period_init(int keep, int window, int max_period);
/* For a call about to be recorded: writes the markers due before it; returns 1 when its
 * record is suspended (counted in the profile only). Caller holds no lock. */
VT_HIDDEN int vt_period_step(unsigned fn, uint64_t callsite, int64_t enter);
/* Whether any record was suspended (the RANKDEFS flag). */
VT_HIDDEN int vt_period_scaled(void);
VT_HIDDEN void vt_period_fini(void);

#endif
