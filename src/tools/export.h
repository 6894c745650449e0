/* Exporters of `vtrace export --format=F DIR OUT` (cmd_export.c), one per source file:
 * export_otf2.c, export_paraver.c, export_perfetto.c. Each reads a full or a reduced
 * trace; in a reduced trace, the stretches between records (merged events) are shown as
 * a region named "vtrace:aggregated". Returns 0, or -1 with err (naming the file).
 * The walks over a trace's records and messages that they share are export_walk.c's. */
#ifndef VT_EXPORT_H
#define VT_EXPORT_H

#include "format/reader.h"
#include "analysis/spill.h"

typedef struct vt__export_opts {
    const char *out;   /* output: a directory (otf2) or a file name prefix/file */
    int quiet;         /* no progress display */
} vt__export_opts;

int vt__export_otf2(const vt_trace *t, const vt__export_opts *o, vt_error *err);
int vt__export_paraver(const vt_trace *t, const vt__export_opts *o, vt_error *err);
int vt__export_perfetto(const vt_trace *t, const vt__export_opts *o, vt_error *err);

/* ------------------------------------------------------------------ export_walk.c */

/* Room for NEED elements of ELEM bytes in *V (capacity *CAP, doubled); 0, or -1 when
 * out of memory. */
int vt__export_grow(void **v, size_t *cap, size_t need, size_t elem);

/* The host of rank R: its hostname, else the global one, else "unknown host". */
const char *vt__export_host(const vt_trace *t, uint32_t r);

/* The messages of a full trace as its calls see them (vt_trace_match, partial). A
 * message's id is 1 + its send's position among all the sends of the trace (rank by
 * rank); a send without receive, or a receive without send, has id 0. */
typedef struct vt__xmsgs {
    vt_matches *m;
    uint64_t *send_base; /* per rank: the sends of the ranks before it */
    uint32_t nranks;
    /* streamed (vt__xmsgs_stream): the matched messages from the replay in temporary
     * files, their sends by (sender, place) and receives by (receiver, completing
     * record, id); the next of each to walk */
    int streamed;
    vt_spill sends, recvs;
    uint64_t si, ri;
} vt__xmsgs;

/* NAME: the name in an out-of-memory error. */
int vt__xmsgs_open(vt__xmsgs *x, const vt_trace *t, const char *name, vt_error *err);
/* The same messages without holding them: a complete trace's come from the replay
 * (vt_replay_observe), which matches them as it goes, and wait in temporary files; an
 * incomplete trace's are matched as vt__xmsgs_open does. A walk of it reports the
 * matched ones only (a send or receive of id 0 is left out) and goes rank by rank,
 * upwards. */
int vt__xmsgs_stream(vt__xmsgs *x, const vt_trace *t, const char *name, vt_error *err);
void vt__xmsgs_close(vt__xmsgs *x);

/* What a walk over one rank's records calls; a callback returning non-zero stops the
 * walk, which returns -1 (the callback has set the error). */
typedef struct vt__xcall_ops {
    int (*record)(void *arg, const vt_event *ev); /* every record, in order */
    /* then each send the record started (POS: in vt_matches_csends, in order) */
    int (*sent)(void *arg, const vt_event *ev, size_t pos, uint64_t id);
    /* and each receive it completed (POS: in vt_matches_crecvs), by id, id 0 last */
    int (*completed)(void *arg, const vt_event *ev, size_t pos, uint64_t id);
    int (*done)(void *arg, const vt_event *ev); /* after them; NULL: none */
} vt__xcall_ops;

/* Walks the records of rank R of the full trace T; 0, or -1 with err. */
int vt__xmsgs_walk(vt__xmsgs *x, const vt_trace *t, uint32_t r, const vt__xcall_ops *ops, void *arg,
                   const char *name, vt_error *err);

/* The records of a reduced trace, rank by rank, and the messages its COMP records name. */
typedef struct vt__xrrec_ops {
    int (*record)(void *arg, uint32_t rank, const vt_rrec *rr); /* every record; NULL: none */
    /* then, for a COMP record, each message whose sender is a rank of the trace; ID counts
     * every message the COMP records name (from 1, rank by rank) */
    int (*message)(void *arg, uint32_t rank, const vt_rrec *rr, const vt_rmsg *msg, uint64_t id);
} vt__xrrec_ops;

/* 0, or -1 with err (a callback returning non-zero stops the walk). */
int vt__xrrecs_walk(const vt_trace *t, const vt__xrrec_ops *ops, void *arg, vt_error *err);

/* The sends of the messages a reduced trace's COMP records name (those whose sender is a
 * rank of the trace), in a temporary file sorted by sender, then by CMP (on two
 * vt__xrsend; a stable sort: ties keep the order of their ids), read back sender by
 * sender, upwards: memory does not grow with the messages. */
typedef struct vt__xrsend {
    uint32_t src, dst;
    uint64_t seq;   /* the send's sequence number on the sender */
    int64_t S;      /* its start (the sender's local ns) */
    uint64_t bytes;
    uint64_t id;    /* as vt__xrrecs_walk counts them */
} vt__xrsend;

typedef struct vt__xrsends {
    vt_spill s;
    uint64_t next;  /* the next send to read */
    int (*cmp)(const void *, const void *);
} vt__xrsends;

/* 0, or -1 with err (NAME: the output, named in an I/O error). */
int vt__xrsends_open(vt__xrsends *x, const vt_trace *t, int (*cmp)(const void *, const void *), const char *name,
                     vt_error *err);
/* The next send of sender R into *out without taking it: 1, 0 when R has none left
 * (the senders before R must have been read out), -1 with err. */
int vt__xrsends_peek(vt__xrsends *x, uint32_t r, vt__xrsend *out, const char *name, vt_error *err);
void vt__xrsends_take(vt__xrsends *x);
void vt__xrsends_close(vt__xrsends *x);

#endif
