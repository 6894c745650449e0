/* The OUT directory of reduce, compensate and export --format=otf2: a trace there
 * already is moved aside, written over or kept, as VTRACE_OVERWRITE says (util/aside.h),
 * as the run-time layer does with VTRACE_DIR. */
#include "tools/tools.h"
#include "util/aside.h"

#include <stdio.h>
#include <stdlib.h>

int vt__make_room(const char *out)
{
    enum vt_overwrite policy;
    if (vt_overwrite_from_env(&policy)) {
        fprintf(stderr, "vtrace: VTRACE_OVERWRITE='%s' is invalid: expected aside, replace or refuse\n",
                getenv("VTRACE_OVERWRITE"));
        return -1;
    }
    char moved[4400], why[4400];
    int rc = vt_make_room(out, policy, moved, sizeof moved, why, sizeof why);
    if (rc > 0)
        fprintf(stderr, "vtrace: note: %s held a trace: it is now %s (VTRACE_OVERWRITE=aside; replace writes over "
                        "it)\n", out, moved);
    else if (rc < 0)
        fprintf(stderr, "vtrace: %s\n", why);
    return rc < 0 ? -1 : 0;
}
