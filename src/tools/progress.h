/* Progress of long commands on a terminal: a line on stderr, redrawn at most ten times a
 * second, only when stderr is a terminal and not --quiet; nothing otherwise. */
#ifndef VT_PROGRESS_H
#define VT_PROGRESS_H

#include <stdint.h>

typedef struct vt__progress {
    const char *what;
    uint64_t total;     /* 0: unknown */
    int on;
    int64_t last_ns;
} vt__progress;

void vt__progress_start(vt__progress *p, const char *what, uint64_t total, int quiet);
void vt__progress_update(vt__progress *p, uint64_t done);
void vt__progress_end(vt__progress *p);
/* Shows the progress of this thread's replays (vt_replay_progress) on p, until
 * vt__progress_end. */
void vt__progress_replays(vt__progress *p);

/* With VTRACE_PAR_STATS, process 0 of a parallel analysis says on stderr how its replay
 * went: the rounds of messages (0: process 0 replayed alone), the bytes sent. */
struct vt_par_comm;
void vt__par_stats(const struct vt_par_comm *par, uint64_t rounds, uint64_t bytes, uint64_t events);

#endif
