/* Aggregation shared by the wait-state analyses (patterns.c keeps every record in memory,
 * patterns_stream.c streams): pattern categories, per-rank sums and result entries. */
#include "analysis/patterns_priv.h"

#include <stdlib.h>
#include <string.h>

int vt_pattern_is_wait(enum vt_pattern_id id)
{
    return id <= VT_PAT_LATE_BCAST;
}

enum vt__pat_ctype vt__pat_coll_type(const char *name)
{
    char b[64];
    size_t n = strlen(name);
    if (n >= sizeof b || strncmp(name, "MPI_", 4))
        return C_OTHER;
    memcpy(b, name + 4, n - 3);
    n -= 4;
    if (n > 2 && !strcmp(b + n - 2, "_c"))
        b[n - 2] = '\0';
    static const char *const nxn[] = {"Allreduce", "Allgather", "Allgatherv", "Alltoall", "Alltoallv",
                                      "Alltoallw", "Reduce_scatter", "Reduce_scatter_block"};
    if (!strcmp(b, "Barrier"))
        return C_BARRIER;
    for (size_t i = 0; i < sizeof nxn / sizeof nxn[0]; i++)
        if (!strcmp(b, nxn[i]))
            return C_NXN;
    if (!strcmp(b, "Reduce") || !strcmp(b, "Gather") || !strcmp(b, "Gatherv"))
        return C_TOROOT;
    if (!strcmp(b, "Bcast") || !strcmp(b, "Scatter") || !strcmp(b, "Scatterv"))
        return C_FROMROOT;
    return C_OTHER;
}

/* Cost category of a call: VT_PAT_P2P_COMM, _COLL_COMM, _SYNC, or -1 (not communication). */
int vt__pat_cost_of(enum vt_model_kind k, enum vt__pat_ctype c)
{
    switch (k) {
    case VT_MK_SEND: case VT_MK_SSEND: case VT_MK_BSEND: case VT_MK_ISEND: case VT_MK_ISSEND:
    case VT_MK_IBSEND: case VT_MK_RECV: case VT_MK_IRECV: case VT_MK_SENDRECV: case VT_MK_PROBE:
    case VT_MK_COMPLETION: case VT_MK_START:
        return VT_PAT_P2P_COMM;
    case VT_MK_COLL:
        return c == C_BARRIER ? VT_PAT_SYNC : VT_PAT_COLL_COMM;
    case VT_MK_ICOLL:
        return VT_PAT_COLL_COMM;
    default:
        return -1;
    }
}

int vt__pat_ent_add(entries *e, int pat, uint32_t rank, int64_t cs, int64_t sev, uint64_t count)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 256;
        vt_pattern_result_entry *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return -1;
        e->v = v, e->cap = cap;
    }
    e->v[e->n++] = (vt_pattern_result_entry){pat, rank, cs, sev, count};
    return 0;
}

int vt__pat_cmp_key(const void *a, const void *b)
{
    const vt_pattern_result_entry *x = a, *y = b;
    if (x->pattern != y->pattern)
        return x->pattern < y->pattern ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->callsite < y->callsite ? -1 : x->callsite > y->callsite;
}

int vt__pat_cmp_sev(const void *a, const void *b)
{
    const vt_pattern_result_entry *x = a, *y = b;
    if (x->severity_ns != y->severity_ns)
        return x->severity_ns > y->severity_ns ? -1 : 1;
    return vt__pat_cmp_key(a, b);
}

int vt__pat_agg_init(agg *a, size_t ncs)
{
    a->ncs = ncs + 1;
    a->sev = calloc(a->ncs * VT_PAT_NBUILTIN, sizeof *a->sev);
    a->cnt = calloc(a->ncs * VT_PAT_NBUILTIN, sizeof *a->cnt);
    return a->sev && a->cnt ? 0 : -1;
}

void vt__pat_agg_add(agg *a, int pat, int64_t cs, int64_t sev)
{
    size_t c = cs >= 0 && (size_t)cs + 1 < a->ncs ? (size_t)cs + 1 : 0;
    a->sev[c * VT_PAT_NBUILTIN + pat] += sev;
    a->cnt[c * VT_PAT_NBUILTIN + pat]++;
}

int vt__pat_agg_flush(agg *a, uint32_t rank, entries *e)
{
    int rc = 0;
    for (size_t c = 0; c < a->ncs && !rc; c++)
        for (int p = 0; p < VT_PAT_NBUILTIN && !rc; p++)
            if (a->cnt[c * VT_PAT_NBUILTIN + p] && (a->sev[c * VT_PAT_NBUILTIN + p] > 0 || vt_pattern_is_wait(p) == 0))
                rc = vt__pat_ent_add(e, p, rank, (int64_t)c - 1, a->sev[c * VT_PAT_NBUILTIN + p],
                             a->cnt[c * VT_PAT_NBUILTIN + p]);
    free(a->sev);
    free(a->cnt);
    a->sev = NULL, a->cnt = NULL;
    return rc;
}

