/* Progress display (progress.h). */
#include "vt_config.h"
#include "tools/progress.h"
#include "analysis/replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void vt__progress_start(vt__progress *p, const char *what, uint64_t total, int quiet)
{
    p->what = what;
    p->total = total;
    p->on = !quiet && isatty(STDERR_FILENO);
    p->last_ns = 0;
}

void vt__progress_update(vt__progress *p, uint64_t done)
{
    if (!p->on)
        return;
    int64_t t = now_ns();
    if (t - p->last_ns < 100000000)
        return;
    p->last_ns = t;
    if (p->total)
        fprintf(stderr, "\r%s: %3.0f%% (%llu of %llu)", p->what, 100.0 * (double)done / (double)p->total,
                (unsigned long long)done, (unsigned long long)p->total);
    else
        fprintf(stderr, "\r%s: %llu", p->what, (unsigned long long)done);
    fflush(stderr);
}

static void replay_hook(void *arg, uint64_t records) { vt__progress_update(arg, records); }

void vt__progress_replays(vt__progress *p)
{
    if (p->on)
        vt_replay_progress(replay_hook, p);
}

void vt__progress_end(vt__progress *p)
{
    vt_replay_progress(NULL, NULL);
    if (p->on && p->last_ns)
        fprintf(stderr, "\r\033[K");
    p->on = 0;
}

void vt__par_stats(const vt_par_comm *par, uint64_t rounds, uint64_t bytes, uint64_t events)
{
    if (!par || par->me != 0 || !getenv("VTRACE_PAR_STATS"))
        return;
    fprintf(stderr, "vtrace: parallel replay: %d processes, %" PRIu64 " rounds, %" PRIu64 " bytes sent, %" PRIu64
            " model events (%.1f bytes per event)%s\n", par->nproc, rounds, bytes, events,
            events ? (double)bytes / (double)events : 0.0, rounds ? "" : ": replayed by process 0 alone");
}
