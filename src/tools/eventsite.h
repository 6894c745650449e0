/* The call site of an event RANK:SEQ as the commands show it (analysis/symbols.h): a
 * call's own, a computation burst's the call that ends it. */
#ifndef VT_EVENTSITE_H
#define VT_EVENTSITE_H

#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>

/* out[i]: the name of event (rank[i], seq[i])'s call site, "" unknown; valid until
 * vt_symbols_reset. One pass over each rank named. 0, or -1 with err. */
int vt__event_sites(const vt_trace *t, size_t n, const uint32_t *rank, const uint64_t *seq, const char **out,
                    vt_error *err);

#endif
