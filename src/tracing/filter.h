/* VTRACE_FILTER: a file naming MPI functions and call sites whose calls are left out of
 * the trace. A filtered call is counted in the profile; its time becomes part of the
 * computation burst around it, in the full trace and in the run-time reduction alike.
 * Only calls that no other rank's record refers to can be filtered (vt_filter_allowed):
 * messages and requests are matched between ranks and calls, so point-to-point calls,
 * completions, non-blocking calls and communicator or file creation are refused. */
#ifndef VT_FILTER_H
#define VT_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "tracing/state.h"

extern VT_HIDDEN int vt__filter_on;
/* Per function: 0 recorded, 1 left out, 2 left out at the filtered call sites only. */
extern VT_HIDDEN unsigned char vt__filter_fn[VT_NFN];

/* Whether fn's calls may be left out: 0 no, 1 by function only (a blocking collective:
 * every rank leaves it out, as every rank reads the same file), 2 also by call site. */
VT_HIDDEN int vt_filter_allowed(unsigned fn);
/* Reads the filter file. Returns 0, or -1 with "FILE:LINE: what was expected" in err. */
VT_HIDDEN int vt_filter_load(const char *path, char *err, size_t errlen);
/* A digest of the entries, which every rank must agree on. */
VT_HIDDEN uint32_t vt_filter_digest(void);
VT_HIDDEN int vt__filter_site(const void *site);

/* Whether a call of fn from site is left out of the trace. */
static inline int vt_filter_drop(unsigned fn, const void *site)
{
    unsigned char v = vt__filter_fn[fn];
    return v == 2 ? vt__filter_site(site) : v;
}

#endif
