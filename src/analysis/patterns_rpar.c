/* vtrace patterns of a reduced trace over several processes (patterns.c's
 * analyze_reduced, each process its block of ranks): after each has read its ranks'
 * synchronous receive posts and collective entries, one exchange sends a post to the
 * process of its sender (whose rank's completions read it) and every gate entry to every
 * process (a gate's waits need all its members' entries), as the serial pass keeps them.
 * The records travel as they are in memory (the same binary everywhere). */
#include "vt_config.h"
#include "analysis/patterns_priv.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

typedef struct share {
    syncp **sp;
    size_t *nsp, *capsp;
    rgent **gv;
    size_t *ng, *capg;
    int failed;
} share;

/* A message: (number of posts, then the posts, then the gate entries). */
static int take(void *arg, int from, const uint8_t *data, size_t len)
{
    (void)from;
    share *s = arg;
    uint64_t n;
    if (len < sizeof n)
        goto bad;
    memcpy(&n, data, sizeof n);
    if (n > (len - sizeof n) / sizeof(syncp) || (len - sizeof n - n * sizeof(syncp)) % sizeof(rgent))
        goto bad;
    size_t ng = (len - sizeof n - n * sizeof(syncp)) / sizeof(rgent);
    if (vt_grow((void **)s->sp, s->capsp, *s->nsp + n, sizeof(syncp)) ||
        vt_grow((void **)s->gv, s->capg, *s->ng + ng, sizeof(rgent)))
        goto bad;
    memcpy(*s->sp + *s->nsp, data + sizeof n, n * sizeof(syncp));
    *s->nsp += n;
    memcpy(*s->gv + *s->ng, data + sizeof n + n * sizeof(syncp), ng * sizeof(rgent));
    *s->ng += ng;
    return 0;
bad:
    s->failed = 1;
    return 0;
}

int vt__pat_rshare(const vt_par_comm *pc, uint32_t nranks, syncp **sp, size_t *nsp, size_t *capsp, rgent **gv,
                   size_t *ng, size_t *capg, uint64_t *bytes)
{
    const size_t P = (size_t)pc->nproc;
    uint8_t **out = calloc(P, sizeof *out);
    size_t *len = calloc(P, sizeof *len), *cnt = calloc(P, sizeof *cnt);
    share s = {sp, nsp, capsp, gv, ng, capg, 0};
    int rc = -1;
    if (!out || !len || !cnt)
        goto done;
    /* the posts per process of their sender (this process's stay) */
    for (size_t i = 0; i < *nsp; i++)
        cnt[vt_replay_par_owner(pc, nranks, (*sp)[i].src)]++;
    for (size_t q = 0; q < P; q++) {
        if (q == (size_t)pc->me)
            continue;
        len[q] = sizeof(uint64_t) + cnt[q] * sizeof(syncp) + *ng * sizeof(rgent);
        if (!(out[q] = malloc(len[q]))) {
            s.failed = 1;   /* (an empty message: the others still finish the exchange) */
            len[q] = 0;
            continue;
        }
        uint64_t n = cnt[q];
        memcpy(out[q], &n, sizeof n);
        memcpy(out[q] + sizeof n + cnt[q] * sizeof(syncp), *gv, *ng * sizeof(rgent));
        cnt[q] = 0;   /* (now the posts written) */
        *bytes += len[q];
    }
    size_t keep = 0;
    for (size_t i = 0; i < *nsp; i++) {
        size_t q = vt_replay_par_owner(pc, nranks, (*sp)[i].src);
        if (q == (size_t)pc->me)
            (*sp)[keep++] = (*sp)[i];
        else if (out[q])
            memcpy(out[q] + sizeof(uint64_t) + cnt[q]++ * sizeof(syncp), &(*sp)[i], sizeof(syncp));
    }
    *nsp = keep;
    rc = pc->exchange(pc->arg, out, len, take, &s) || s.failed ? -1 : 0;
done:
    for (size_t q = 0; out && q < P; q++)
        free(out[q]);
    free(out);
    free(len);
    free(cnt);
    return rc;
}
