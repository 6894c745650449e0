/* External sort of a temporary record file (spill.h): sorted runs written to a second
 * file, then merged by a linear scan of the runs' heads (a few hundred runs for 10^8
 * records) into the output. Stable: equal records keep the order they were put in (a
 * run's sort compares positions last, the merge prefers the earlier run). */
#include "vt_config.h"
#include "analysis/spill.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RUN (1u << 18)
#define READ_BYTES 4096

typedef struct stable_ctx {
    int (*cmp)(const void *, const void *);
    size_t rec;
} stable_ctx;

/* qsort_r with the position as the last key: records carry their index in a trailer. */
static int cmp_stable(const void *a, const void *b, void *arg)
{
    const stable_ctx *c = arg;
    int r = c->cmp(a, b);
    if (r)
        return r;
    uint64_t x, y;
    memcpy(&x, (const char *)a + c->rec, sizeof x);
    memcpy(&y, (const char *)b + c->rec, sizeof y);
    return (x > y) - (x < y);
}

typedef struct run {
    uint64_t at, end;
    char *buf;
    size_t n, i;
} run;

static int run_fill(vt_spill *s, run *r, size_t cap)
{
    size_t k = r->end - r->at < cap ? (size_t)(r->end - r->at) : cap;
    if (k && vt_spill_read(s, r->at, k, r->buf))
        return -1;
    r->at += k;
    r->n = k;
    r->i = 0;
    return 0;
}

static int merge(vt_spill *runs, uint64_t total, size_t R, vt_spill *out, int (*cmp)(const void *, const void *))
{
    size_t rec = runs->rec, nruns = (size_t)((total + R - 1) / R);
    size_t cap = READ_BYTES / rec ? READ_BYTES / rec : 1;
    run *rv = calloc(nruns ? nruns : 1, sizeof *rv);
    char *bufs = malloc((nruns ? nruns : 1) * cap * rec);
    int rc = -1;
    if (!rv || !bufs) {
        errno = ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < nruns; k++) {
        rv[k].at = (uint64_t)k * R;
        rv[k].end = rv[k].at + R < total ? rv[k].at + R : total;
        rv[k].buf = bufs + k * cap * rec;
        if (run_fill(runs, &rv[k], cap))
            goto out;
    }
    for (;;) {
        run *best = NULL;
        for (size_t k = 0; k < nruns; k++)
            if (rv[k].i < rv[k].n && (!best || cmp(rv[k].buf + rv[k].i * rec, best->buf + best->i * rec) < 0))
                best = &rv[k];
        if (!best)
            break;
        if (vt_spill_put(out, best->buf + best->i++ * rec))
            goto out;
        if (best->i == best->n && run_fill(runs, best, cap))
            goto out;
    }
    rc = 0;
out:
    free(rv);
    free(bufs);
    return rc;
}

int vt_spill_sort(vt_spill *in, vt_spill *out, int (*cmp)(const void *, const void *), size_t R)
{
    size_t rec = in->rec, wide = rec + sizeof(uint64_t);
    uint64_t total = in->n;
    vt_spill runs = {.fd = -1};
    char *buf = NULL;
    int rc = -1, e = 0;
    if (!R)
        R = DEFAULT_RUN;
    if (vt_spill_open(out, rec))
        goto fail;
    if (total <= R) { /* one run: sorted in memory straight into OUT */
        R = total ? (size_t)total : 1;
    } else if (vt_spill_open(&runs, rec)) {
        goto fail;
    }
    buf = malloc(R * wide);
    if (!buf) {
        errno = ENOMEM;
        goto fail;
    }
    stable_ctx ctx = {cmp, rec};
    for (uint64_t at = 0; at < total; at += R) {
        size_t n = total - at < R ? (size_t)(total - at) : R;
        /* read in place at the buffer's end, then spread out to make room for positions */
        char *raw = buf + R * wide - n * rec;
        if (vt_spill_read(in, at, n, raw))
            goto fail;
        for (size_t i = 0; i < n; i++) {
            uint64_t pos = at + i;
            memmove(buf + i * wide, raw + i * rec, rec);
            memcpy(buf + i * wide + rec, &pos, sizeof pos);
        }
        qsort_r(buf, n, wide, cmp_stable, &ctx);
        vt_spill *to = runs.fd >= 0 ? &runs : out;
        for (size_t i = 0; i < n; i++)
            if (vt_spill_put(to, buf + i * wide))
                goto fail;
    }
    free(buf);
    buf = NULL;
    vt_spill_close(in);
    if (runs.fd >= 0 && merge(&runs, total, R, out, cmp))
        goto fail;
    rc = 0;
    goto done;
fail:
    e = errno;
    vt_spill_close(in);
    vt_spill_close(out);
done:
    free(buf);
    vt_spill_close(&runs);
    if (rc)
        errno = e;
    return rc;
}
