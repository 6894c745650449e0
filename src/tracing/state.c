/* The state every handler reads (state.h), defined apart from the life cycle that sets
 * it, so that the handlers, the transport and the run-time reduction call nothing of
 * lifecycle.c. */
#include "vt_config.h"
#include "tracing/state.h"

VT_HIDDEN int vt__active;
VT_HIDDEN __thread int vt__depth __attribute__((tls_model("initial-exec")));
VT_HIDDEN uint64_t vt__calls;
/* VT_REC_CLOCK: vt__use_tsc starts 0 */
VT_HIDDEN unsigned vt__rec_special = VT_REC_CLOCK;
