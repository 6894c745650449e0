/* The messages of a Paraver export (export_prvmsgs.c): one communication record per
 * message, sorted per sender by logical send time (then receiver, logical receive, the
 * sending call), in a temporary file, and the trace's first enter and last exit. */
#ifndef VT_EXPORT_PRVMSGS_H
#define VT_EXPORT_PRVMSGS_H

#include "format/reader.h"
#include "analysis/spill.h"

#include <stdint.h>

typedef struct vt__prv_comm {
    int64_t ls, ps, lr, pr; /* global ns (not shifted by t0) */
    uint32_t src, dst;
    uint64_t bytes;
    int64_t tag;
    uint64_t seq;           /* the sending call (ties) */
} vt__prv_comm;

typedef struct vt__prv_msgs {
    vt_spill sorted;        /* sender by sender */
    uint64_t *first;        /* nranks + 1: sender r's messages are first[r] .. first[r + 1] */
    int64_t t0, tend;
} vt__prv_msgs;

/* A full trace that ended well streams through the replay (memory: the messages in
 * flight); an incomplete one is matched as a whole (vt_trace_match, partial); a reduced
 * trace gives the messages its COMP records name. NAME: for errors. 0, or -1 with err. */
int vt__prv_msgs_collect(vt__prv_msgs *m, const vt_trace *t, const char *name, vt_error *err);
void vt__prv_msgs_free(vt__prv_msgs *m);

#endif
