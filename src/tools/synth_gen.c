/* vtrace synth's patterns: each simulated iteration by iteration over all ranks, with
 * times a real run could have had (a receive ends after its message could arrive, a
 * collective after its last member entered), from O(ranks) state. Computation is the
 * gap between calls; its length is drawn from a hash of (seed, rank, iteration), so a
 * trace does not depend on the order ranks are simulated in. */
#include "vt_config.h"
#include "tools/synth.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

/* Durations of the calls themselves, ns. */
#define D_INIT 1000000
#define D_POST 200
#define D_SEND 300
#define D_WAIT 400
#define D_DONE 150
#define D_COLL 1500
#define D_FIN 20000
#define T0 INT64_C(1000000000000)

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* A number in [-1, 1) from (seed, rank, iteration, what). */
static double uniform(const syn_params *p, uint32_t r, uint64_t it, unsigned what)
{
    uint64_t h = mix(p->seed ^ mix(((uint64_t)r << 32) ^ mix(it * 8 + what)));
    return (double)(h >> 11) * 0x1p-52 - 1.0;
}

static int64_t burst(const syn_params *p, uint32_t r, uint64_t it)
{
    double c = (double)p->compute * (1.0 + p->jitter * uniform(p, r, it, 0));
    if ((int64_t)r == p->slow_rank)
        c *= p->slow_factor;
    return c < 1 ? 1 : (int64_t)c;
}

static int64_t lambda(const syn_params *p, uint64_t bytes) { return p->latency + (int64_t)((uint64_t)p->g_ps * bytes / 1000); }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct gen {
    const syn_params *p;
    syn_out *o;
    uint32_t n;
    int64_t *clk;       /* each rank's last exit */
    int64_t *S;         /* enter times of sends: 4 per rank (halo), 1 (master/worker) */
    uint32_t *order;    /* master/worker: workers in the order their results arrive */
    int64_t *t_init, *t_fin;
    uint32_t px, py;    /* halo grid */
} gen;

/* Field writers: the layouts of synth.h's table. */
static uint8_t *put_isend(uint8_t *q, int64_t peer, int64_t tag, uint64_t bytes, uint64_t req)
{
    q = vt_put_uvar(q, 0);
    q = vt_put_svar(q, peer);
    q = vt_put_svar(q, tag);
    q = vt_put_uvar(q, bytes);
    return vt_put_uvar(q, req);
}

static uint8_t *put_compl(uint8_t *q, uint64_t req, int recv, int64_t peer, int64_t tag, uint64_t bytes)
{
    q = vt_put_uvar(q, req);
    q = vt_put_uvar(q, recv ? 1 : 0);
    q = vt_put_svar(q, peer);
    q = vt_put_svar(q, tag);
    return vt_put_uvar(q, bytes);
}

/* A blocking MPI_Send or MPI_Recv (layouts cptb, cPTB). */
static int p2p(gen *g, uint32_t r, enum syn_fn fn, unsigned site, int64_t enter, int64_t exit, uint32_t peer,
               int tag)
{
    uint8_t *q = syn_rec_begin(g->o, r, fn, site, enter, exit);
    q = vt_put_uvar(q, 0);
    q = vt_put_svar(q, peer);
    q = vt_put_svar(q, tag);
    q = vt_put_uvar(q, g->p->bytes);
    g->clk[r] = exit;
    return syn_rec_end(g->o, r, q, g->p->bytes);
}

/* MPI_Allreduce of 8 bytes on every rank, entered after each rank's burst of IT (when
 * BURST) or right away: all leave when the last has entered and the reduction took its
 * time. Two passes: enters, then records. */
static int allreduce(gen *g, uint64_t it, int burst_first)
{
    int64_t last = INT64_MIN;
    for (uint32_t r = 0; r < g->n; r++) {
        g->clk[r] += burst_first ? burst(g->p, r, it) : 100;
        last = max64(last, g->clk[r]);
    }
    int64_t steps = 1;
    while ((UINT64_C(1) << steps) < g->n)
        steps++;
    int64_t out = last + D_COLL + 2 * steps * lambda(g->p, 8);
    for (uint32_t r = 0; r < g->n; r++) {
        uint8_t *q = syn_rec_begin(g->o, r, SYN_ALLREDUCE, SITE_ALLREDUCE, g->clk[r], out);
        q = vt_put_uvar(q, 0);
        q = vt_put_svar(q, -1);
        q = vt_put_uvar(q, syn_coll_seq(g->o, r));
        q = vt_put_uvar(q, 8);
        q = vt_put_uvar(q, 8);
        g->clk[r] = out;
        if (syn_rec_end(g->o, r, q, 16))
            return -1;
    }
    return 0;
}

/* The neighbour of R in direction D (0 -x, 1 +x, 2 -y, 3 +y), or -1 at the edge. */
static int64_t neighbour(const gen *g, uint32_t r, unsigned d)
{
    uint32_t x = r % g->px, y = r / g->px;
    switch (d) {
    case 0: return x > 0 ? (int64_t)r - 1 : -1;
    case 1: return x + 1 < g->px ? (int64_t)r + 1 : -1;
    case 2: return y > 0 ? (int64_t)(r - g->px) : -1;
    default: return y + 1 < g->py ? (int64_t)(r + g->px) : -1;
    }
}

/* One exchange: burst, an MPI_Irecv from each neighbour, an MPI_Isend to each (tag: the
 * direction it travels), MPI_Waitall. Requests are numbered in posting order; rank R's
 * first of exchange IT is 1 + IT * 2 * (its neighbours). */
static int halo(gen *g, uint64_t it)
{
    const syn_params *p = g->p;
    unsigned nd = g->py > 1 ? 4 : 2;
    for (uint32_t r = 0; r < g->n; r++) {
        int64_t t = g->clk[r] + burst(p, r, it);
        unsigned nn = 0;
        for (unsigned d = 0; d < nd; d++)
            nn += neighbour(g, r, d) >= 0;
        uint64_t req = 1 + it * 2 * nn;
        for (unsigned d = 0; d < nd; d++) {
            if (neighbour(g, r, d) < 0)
                continue;
            uint8_t *q = syn_rec_begin(g->o, r, SYN_IRECV, SITE_IRECV, t, t + D_POST);
            q = vt_put_uvar(q, 0);
            q = vt_put_uvar(q, req++);
            t += D_POST;
            if (syn_rec_end(g->o, r, q, 0))
                return -1;
        }
        for (unsigned d = 0; d < nd; d++) {
            int64_t peer = neighbour(g, r, d);
            if (peer < 0)
                continue;
            g->S[(size_t)r * 4 + d] = t;
            uint8_t *q = syn_rec_begin(g->o, r, SYN_ISEND, SITE_ISEND, t, t + D_SEND);
            q = put_isend(q, peer, d, p->bytes, req++);
            t += D_SEND;
            if (syn_rec_end(g->o, r, q, p->bytes))
                return -1;
        }
        g->clk[r] = t;
    }
    for (uint32_t r = 0; r < g->n; r++) {
        int64_t enter = g->clk[r], exit = enter + D_WAIT;
        unsigned nn = 0;
        for (unsigned d = 0; d < nd; d++) {
            int64_t peer = neighbour(g, r, d);
            if (peer < 0)
                continue;
            nn++;
            exit = max64(exit, g->S[(size_t)peer * 4 + (d ^ 1)] + lambda(p, p->bytes) + D_DONE);
        }
        uint64_t req = 1 + it * 2 * nn;
        uint8_t *q = syn_rec_begin(g->o, r, SYN_WAITALL, SITE_WAITALL, enter, exit);
        q = vt_put_uvar(q, 2 * nn);
        for (unsigned d = 0; d < nd; d++)
            if (neighbour(g, r, d) >= 0)
                q = put_compl(q, req++, 1, neighbour(g, r, d), d ^ 1, p->bytes);
        for (unsigned d = 0; d < nd; d++)
            if (neighbour(g, r, d) >= 0)
                q = put_compl(q, req++, 0, neighbour(g, r, d), d, p->bytes);
        g->clk[r] = exit;
        if (syn_rec_end(g->o, r, q, 2 * nn * p->bytes))
            return -1;
    }
    if (p->allreduce_every && (it + 1) % p->allreduce_every == 0)
        return allreduce(g, it, 0);
    return 0;
}

/* Rank 0 produces an item, each rank receives it from the one before, works on it and
 * passes it on (eager MPI_Send, MPI_Recv; tag 0). */
static int pipeline(gen *g, uint64_t it)
{
    const syn_params *p = g->p;
    int64_t sent = 0;
    for (uint32_t r = 0; r < g->n; r++) {
        if (r > 0) {
            int64_t enter = g->clk[r], exit = max64(enter + D_POST, sent + lambda(p, p->bytes) + D_DONE);
            if (p2p(g, r, SYN_RECV, SITE_RECV, enter, exit, r - 1, 0))
                return -1;
        }
        int64_t t = g->clk[r] + burst(p, r, it);
        if (r + 1 < g->n) {
            sent = t;
            if (p2p(g, r, SYN_SEND, SITE_SEND, t, t + D_SEND + (int64_t)((uint64_t)p->g_ps * p->bytes / 1000),
                    r + 1, 0))
                return -1;
        } else
            g->clk[r] = t;
    }
    return 0;
}

static const int64_t *arrival;
static int by_arrival(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return arrival[x] < arrival[y] ? -1 : arrival[x] > arrival[y] ? 1 : (x > y) - (x < y);
}

/* A round: the master (rank 0) sends a task to each worker (tag 1), each works on it and
 * sends its result back (tag 2), and the master receives the results as they arrive. */
static int master_worker(gen *g, uint64_t it)
{
    const syn_params *p = g->p;
    if (g->n == 1) {
        g->clk[0] += burst(p, 0, it);
        return 0;
    }
    for (uint32_t w = 1; w < g->n; w++) {
        int64_t t = g->clk[0] + (w == 1 ? 1000 : 0);
        g->S[w] = t;
        if (p2p(g, 0, SYN_SEND, SITE_TASK_SEND, t, t + D_SEND, w, 1))
            return -1;
    }
    for (uint32_t w = 1; w < g->n; w++) {
        int64_t enter = g->clk[w], exit = max64(enter + D_POST, g->S[w] + lambda(p, p->bytes) + D_DONE);
        if (p2p(g, w, SYN_RECV, SITE_TASK_RECV, enter, exit, 0, 1))
            return -1;
        int64_t t = exit + burst(p, w, it);
        g->S[w] = t;
        if (p2p(g, w, SYN_SEND, SITE_SEND, t, t + D_SEND, 0, 2))
            return -1;
        g->order[w - 1] = w;
    }
    arrival = g->S;
    qsort(g->order, g->n - 1, sizeof *g->order, by_arrival);
    for (uint32_t i = 0; i + 1 < g->n; i++) {
        uint32_t w = g->order[i];
        int64_t enter = g->clk[0], exit = max64(enter + D_POST, g->S[w] + lambda(p, p->bytes) + D_DONE);
        if (p2p(g, 0, SYN_RECV, SITE_RECV, enter, exit, w, 2))
            return -1;
    }
    return 0;
}

int syn_generate(const syn_params *p, syn_out *o)
{
    gen g = {.p = p, .o = o, .n = p->ranks};
    g.clk = malloc(g.n * sizeof *g.clk);
    g.S = malloc((size_t)g.n * 4 * sizeof *g.S);
    g.order = malloc(g.n * sizeof *g.order);
    g.t_init = malloc(g.n * sizeof *g.t_init);
    g.t_fin = malloc(g.n * sizeof *g.t_fin);
    int rc = -1;
    if (!g.clk || !g.S || !g.order || !g.t_init || !g.t_fin)
        goto out;
    g.px = g.n;
    g.py = 1;
    if (p->pattern == SYN_HALO2D) {
        for (uint32_t d = 1; (uint64_t)d * d <= g.n; d++)
            if (g.n % d == 0)
                g.py = d;
        g.px = g.n / g.py;
    }
    for (uint32_t r = 0; r < g.n; r++) {
        int64_t enter = T0 - D_INIT + (int64_t)(50000 * uniform(p, r, 0, 1));
        g.t_init[r] = enter;
        if (syn_rec_end(o, r, syn_rec_begin(o, r, SYN_INIT, SITE_INIT, enter, T0), 0))
            goto out;
        g.clk[r] = T0;
    }
    for (uint64_t it = 0; it < p->iterations; it++) {
        switch (p->pattern) {
        case SYN_HALO1D:
        case SYN_HALO2D: rc = halo(&g, it); break;
        case SYN_ALLREDUCE_P: rc = allreduce(&g, it, 1); break;
        case SYN_PIPELINE: rc = pipeline(&g, it); break;
        case SYN_MASTER_WORKER: rc = master_worker(&g, it); break;
        }
        if (rc)
            goto out;
        rc = -1;
    }
    int64_t last = INT64_MIN;
    for (uint32_t r = 0; r < g.n; r++)
        last = max64(last, g.clk[r] + 1000);
    for (uint32_t r = 0; r < g.n; r++) {
        g.t_fin[r] = last + D_FIN;
        if (syn_rec_end(o, r, syn_rec_begin(o, r, SYN_FINALIZE, SITE_FINALIZE, g.clk[r] + 1000, last + D_FIN), 0))
            goto out;
    }
    rc = syn_out_finish(o, g.t_init, g.t_fin);
out:
    free(g.clk);
    free(g.S);
    free(g.order);
    free(g.t_init);
    free(g.t_fin);
    return rc;
}
