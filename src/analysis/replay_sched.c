/* Which rank the serial replay runs next (replay.c's loop). The loop sweeps the ranks
 * in order, each until it blocks. At many ranks a rank's state is out of the caches
 * when the sweep comes back to it, and a sweep moves each rank about one iteration of
 * its program. A step that blocks says which rank it waits for (vt__rp_blocked_on: the
 * sender of a message, the receiver of a synchronous one); the blocked rank is put on
 * that rank's list of waiters, and when that rank moves, its waiters run at once,
 * newest first, while what they read of it is still in the caches. A rank that waits
 * for something no single rank provides (a collective's members) is left to the sweep.
 * Each rank's progress does not depend on the order in which ranks take turns, so this
 * changes no result, only the order; and since the sweep still visits every rank, a
 * wake-up missed here only costs time. */
#include "vt_config.h"
#include "analysis/replay_priv.h"

#include <stdlib.h>

/* A waiter is woken only if it ran within this many turns: what it reads of itself is
 * then likely still in the caches. Unbounded, the wake-ups of a 2-D halo run down
 * chains of ranks whose state is out of them, in an order the hardware prefetcher
 * cannot follow (halo2d at 16K ranks: 20% more CPU time than the sweep; at 500 turns,
 * about 6 MB of rank state, as fast as the sweep, and halo1d twice as fast). */
#define RP_WAKE_RECENT 500u

struct vt_rp_sched {
    uint32_t *head;     /* per rank: the first rank waiting for it */
    uint32_t *next, *prev;
    uint32_t *on;       /* per rank: whose list it is on, WAIT_NONE none */
    uint32_t *stack;    /* woken ranks, each at most once (queued) */
    uint8_t *queued;
    uint32_t nstack;
    uint32_t *last;     /* per rank: the turn it last ran (turns counted in now) */
    uint32_t now;
};

int vt__rp_sched_init(replay *R)
{
    uint32_t n = R->nranks;
    struct vt_rp_sched *q = calloc(1, sizeof *q);
    uint32_t *a = malloc(((size_t)6 * n + 1) * sizeof *a);
    uint8_t *b = calloc((size_t)n + 1, 1);
    if (!q || !a || !b) {
        free(q);
        free(a);
        free(b);
        vt_error_set(R->err, "out of memory");
        return -1;
    }
    q->head = a;
    q->next = a + n;
    q->prev = a + 2 * (size_t)n;
    q->on = a + 3 * (size_t)n;
    q->stack = a + 4 * (size_t)n;
    q->queued = b;
    q->last = a + 5 * (size_t)n;
    for (uint32_t r = 0; r < n; r++) {
        q->head[r] = q->on[r] = WAIT_NONE;
        q->last[r] = 0;
    }
    R->sched = q;
    R->wait_on = WAIT_NONE;
    return 0;
}

void vt__rp_sched_free(replay *R)
{
    if (!R->sched)
        return;
    free(R->sched->head);
    free(R->sched->queued);
    free(R->sched);
    R->sched = NULL;
}

static void unlink_waiter(struct vt_rp_sched *q, uint32_t r)
{
    uint32_t on = q->on[r];
    if (on == WAIT_NONE)
        return;
    if (q->prev[r] == WAIT_NONE)
        q->head[on] = q->next[r];
    else
        q->next[q->prev[r]] = q->next[r];
    if (q->next[r] != WAIT_NONE)
        q->prev[q->next[r]] = q->prev[r];
    q->on[r] = WAIT_NONE;
}

/* After rank r's turn: it MOVED or not; BLOCKED on R->wait_on, or finished. */
void vt__rp_sched_after(replay *R, uint32_t r, int moved, int blocked)
{
    struct vt_rp_sched *q = R->sched;
    q->last[r] = ++q->now;
    uint32_t on = blocked ? R->wait_on : WAIT_NONE;
    if (on >= R->nranks || on == r)
        on = WAIT_NONE;
    if (q->on[r] != on) {
        unlink_waiter(q, r);
        if (on != WAIT_NONE) {
            q->prev[r] = WAIT_NONE;
            q->next[r] = q->head[on];
            if (q->head[on] != WAIT_NONE)
                q->prev[q->head[on]] = r;
            q->head[on] = r;
            q->on[r] = on;
        }
    }
    if (!moved)
        return;
    for (uint32_t w = q->head[r]; w != WAIT_NONE;) {
        uint32_t nx = q->next[w];
        q->on[w] = WAIT_NONE;
        if (!q->queued[w] && q->now - q->last[w] <= RP_WAKE_RECENT) {
            q->queued[w] = 1;
            q->stack[q->nstack++] = w;
        }
        w = nx;
    }
    q->head[r] = WAIT_NONE;
}

/* The next woken rank, or WAIT_NONE. */
uint32_t vt__rp_sched_pop(replay *R)
{
    struct vt_rp_sched *q = R->sched;
    if (!q->nstack)
        return WAIT_NONE;
    uint32_t r = q->stack[--q->nstack];
    q->queued[r] = 0;
    return r;
}
