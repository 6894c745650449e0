/* The candidates of a critical path in order of slack (critpath.h): collected during the
 * backward sweep into a buffer of cp->crun (2^18); a full buffer is sorted and written to a
 * temporary file as a run, and the runs are merged when read. A trace whose candidates
 * fit in one buffer never touches the file. Memory: one buffer, then a small read buffer
 * per run. */
#include "vt_config.h"
#include "analysis/critpath_priv.h"
#include "util/sort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CAND_READ 512

static int cmp_cand(const void *a, const void *b)
{
    const vt_cp_cand *x = a, *y = b;
    if (x->slack != y->slack)
        return x->slack < y->slack ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int spill_run(vt_critpath *cp, vt_error *err)
{
    vt_sort(cp->cbuf, cp->ncbuf, sizeof *cp->cbuf, cmp_cand);
    if (!cp->copen) {
        if (vt_spill_open(&cp->cands, sizeof(vt_cp_cand)))
            return vt__cp_err(err, "critical path: cannot create a temporary file: %s", strerror(errno));
        cp->copen = 1;
    }
    for (size_t i = 0; i < cp->ncbuf; i++)
        if (vt_spill_put(&cp->cands, &cp->cbuf[i]))
            return vt__cp_err(err, "critical path: temporary file: %s", strerror(errno));
    cp->ncbuf = 0;
    return 0;
}

int vt__cp_cand_add(vt_critpath *cp, const vt_cp_cand *c, vt_error *err)
{
    if (cp->ncbuf == cp->crun && spill_run(cp, err))
        return -1;
    if (vt__cp_grow((void **)&cp->cbuf, &cp->capcbuf, cp->ncbuf + 1, sizeof *cp->cbuf))
        return vt__cp_err(err, "critical path: out of memory");
    cp->cbuf[cp->ncbuf++] = *c;
    cp->res.ncands++;
    return 0;
}

int vt__cp_cand_end(vt_critpath *cp, vt_error *err)
{
    if (cp->copen && cp->ncbuf)
        return spill_run(cp, err);
    vt_sort(cp->cbuf, cp->ncbuf, sizeof *cp->cbuf, cmp_cand);
    return 0;
}

typedef struct run {
    uint64_t at, end;       /* next record to read into buf, the run's end */
    vt_cp_cand buf[CAND_READ];
    size_t n, i;
} run;

static int run_fill(vt_spill *s, run *r)
{
    size_t k = r->end - r->at < CAND_READ ? (size_t)(r->end - r->at) : CAND_READ;
    if (k && vt_spill_read(s, r->at, k, r->buf))
        return -1;
    r->at += k;
    r->n = k;
    r->i = 0;
    return 0;
}

int vt_critpath_cands(vt_critpath *cp, size_t max, vt_cp_cand_fn fn, void *arg, vt_error *err)
{
    if (!cp->finished)
        return vt__cp_err(err, "critical path: not finished");
    if (!cp->copen) {
        for (size_t i = 0; i < cp->ncbuf && i < max; i++)
            if (fn(arg, &cp->cbuf[i]))
                return -1;
        return 0;
    }
    const size_t R = cp->crun;
    size_t nruns = (size_t)((cp->cands.n + R - 1) / R);
    run *runs = malloc(nruns * sizeof *runs);
    if (!runs)
        return vt__cp_err(err, "critical path: out of memory");
    int rc = 0;
    for (size_t k = 0; k < nruns; k++) {
        runs[k].at = (uint64_t)k * R;
        runs[k].end = runs[k].at + R < cp->cands.n ? runs[k].at + R : cp->cands.n;
        if (run_fill(&cp->cands, &runs[k])) {
            rc = vt__cp_err(err, "critical path: temporary file: %s", strerror(errno));
            goto out;
        }
    }
    /* A linear scan of the runs' heads: a few hundred runs at most for 10^8 candidates. */
    for (size_t done = 0; done < max; done++) {
        run *best = NULL;
        for (size_t k = 0; k < nruns; k++)
            if (runs[k].i < runs[k].n && (!best || cmp_cand(&runs[k].buf[runs[k].i], &best->buf[best->i]) < 0))
                best = &runs[k];
        if (!best)
            break;
        if (fn(arg, &best->buf[best->i++])) {
            rc = -1;
            goto out;
        }
        if (best->i == best->n && run_fill(&cp->cands, best)) {
            rc = vt__cp_err(err, "critical path: temporary file: %s", strerror(errno));
            goto out;
        }
    }
out:
    free(runs);
    return rc;
}
