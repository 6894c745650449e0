/* DBSCAN in one dimension over points on disk (clusters_priv.h). Three passes over
 * temporary files of fixed-size records: forward (core points and their clusters, each
 * point with the nearest core point on its left), backward (the nearest on its right:
 * border points labelled), backward again (the points in their order, to the caller).
 * Memory: the files' buffers and one sorted run, whatever the number of points. */
#include "vt_config.h"
#include "analysis/clusters_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FWD_RECORDS 2048

/* A forward reader of a spill (positions never go back). */
typedef struct fwd {
    vt_spill *s;
    uint64_t first;
    size_t n;
    vt__cl_ent buf[FWD_RECORDS];
} fwd;

static int fwd_get(fwd *f, uint64_t i, vt__cl_ent *out)
{
    if (i < f->first || i >= f->first + f->n) {
        size_t k = f->s->n - i < FWD_RECORDS ? (size_t)(f->s->n - i) : FWD_RECORDS;
        if (vt_spill_read(f->s, i, k, f->buf))
            return -1;
        f->first = i;
        f->n = k;
    }
    *out = f->buf[i - f->first];
    return 0;
}

static int ent_cmp(const void *a, const void *b)
{
    const vt__cl_ent *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->x != y->x)
        return x->x < y->x ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A point after the forward pass: its core label (or -1) and the core point before it
 * in its group. */
typedef struct cent {
    vt__cl_ent e;
    double lx;
    int32_t llabel;
    int32_t core, hasleft;
    int32_t pad;
} cent;

/* Core points: a point is one when its eps-range [lo, hi) holds minpts points; a
 * cluster is a run of core points with gaps of at most eps. */
static int forward(vt_spill *S, vt_spill *C, double eps, uint32_t minpts, uint32_t *ncl)
{
    fwd *cur = malloc(sizeof *cur), *lo = malloc(sizeof *lo), *hi = malloc(sizeof *hi);
    int rc = -1;
    if (!cur || !lo || !hi) {
        errno = ENOMEM;
        goto out;
    }
    *cur = *lo = *hi = (fwd){.s = S};
    uint64_t n = S->n, L = 0, H = 0, group = 0;
    uint32_t base = 0;
    int64_t c = -1;
    double last = 0, lx = 0;
    int hasleft = 0;
    int32_t ll = -1;
    for (uint64_t i = 0; i < n; i++) {
        vt__cl_ent e, el, eh;
        if (fwd_get(cur, i, &e))
            goto out;
        if (i == 0 || e.group != group) {
            if (i)
                base += (uint32_t)(c + 1);
            group = e.group;
            c = -1;
            last = 0;
            L = H = i;
            hasleft = 0;
        }
        if (fwd_get(lo, L, &el))
            goto out;
        while (e.x - el.x > eps)
            if (fwd_get(lo, ++L, &el))
                goto out;
        if (H < i + 1)
            H = i + 1;
        for (; H < n; H++) {
            if (fwd_get(hi, H, &eh))
                goto out;
            if (eh.group != e.group || eh.x - e.x > eps)
                break;
        }
        int core = H - L >= minpts;
        e.label = -1;
        if (core) {
            if (c < 0 || e.x - last > eps)
                c++;
            e.label = (int32_t)(base + (uint32_t)c);
            last = e.x;
        }
        cent ce = {e, lx, ll, core, hasleft, 0};
        if (vt_spill_put(C, &ce))
            goto out;
        if (core) {
            hasleft = 1;
            lx = e.x;
            ll = e.label;
        }
    }
    *ncl = base + (uint32_t)(c + 1);
    rc = 0;
out:
    free(cur);
    free(lo);
    free(hi);
    return rc;
}

/* Border points: the nearest core point within eps (the left one on a tie); written to
 * F in reverse order. */
static int backward(vt_spill *C, vt_spill *F, double eps)
{
    uint64_t n = C->n;
    int hasright = 0;
    double rx = 0;
    int32_t rl = -1;
    uint64_t group = 0;
    for (uint64_t j = n; j-- > 0;) {
        cent ce;
        if (vt_spill_get(C, j, &ce, 1))
            return -1;
        if (j == n - 1 || ce.e.group != group) {
            group = ce.e.group;
            hasright = 0;
        }
        if (ce.core) {
            hasright = 1;
            rx = ce.e.x;
            rl = ce.e.label;
        } else {
            double dl = ce.hasleft ? ce.e.x - ce.lx : eps + 1, dr = hasright ? rx - ce.e.x : eps + 1;
            if (dl <= eps && dl <= dr)
                ce.e.label = ce.llabel;
            else if (dr <= eps)
                ce.e.label = rl;
        }
        if (vt_spill_put(F, &ce.e))
            return -1;
    }
    return 0;
}

int vt__cl_dbscan(vt_spill *in, double eps, uint32_t minpts, const vt__cl_visit *v)
{
    vt_spill S, C, F;
    uint32_t ncl = 0;
    if (vt_spill_sort(in, &S, ent_cmp, 0))
        return -1;
    if (vt_spill_open(&C, sizeof(cent))) {
        vt_spill_close(&S);
        return -1;
    }
    int rc = forward(&S, &C, eps, minpts, &ncl);
    vt_spill_close(&S);
    if (rc || vt_spill_open(&F, sizeof(vt__cl_ent))) {
        vt_spill_close(&C);
        return -1;
    }
    rc = backward(&C, &F, eps);
    vt_spill_close(&C);
    if (!rc)
        rc = v->start(v->arg, ncl);
    for (uint64_t j = F.n; !rc && j-- > 0;) {
        vt__cl_ent e;
        rc = vt_spill_get(&F, j, &e, 1) ? -1 : v->point(v->arg, &e);
    }
    vt_spill_close(&F);
    return rc;
}
