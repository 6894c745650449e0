/* vtrace reduce --polys in rank order (reduce_polys.h). A line is stored as parts of
 * fixed size (the temporary file's records), consecutive and of one rank: a stable sort
 * by rank keeps each rank's parts in order. */
#include "vt_config.h"
#include "analysis/reduce_polys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PART_TEXT 59
typedef struct part {
    uint32_t rank;
    uint8_t len;
    char text[PART_TEXT];
} part;   /* (64 bytes) */

#define CHUNK (1u << 20)    /* bytes of text a process sends process 0 in a round */
#define BATCH 1024          /* parts read at once */

int vt__polys_open(vt__polys *ps)
{
    memset(ps, 0, sizeof *ps);
    if (vt_spill_open(&ps->sp, sizeof(part)))
        return -1;
    ps->open = 1;
    return 0;
}

void vt__polys_close(vt__polys *ps)
{
    if (ps->open)
        vt_spill_close(&ps->sp);
    ps->open = 0;
}

int vt__polys_put(vt__polys *ps, uint32_t rank, const char *line, size_t len)
{
    if (rank < ps->last)
        ps->unsorted = 1;
    ps->last = rank;
    ps->bytes += len;
    while (len) {
        part p;
        memset(&p, 0, sizeof p);
        p.rank = rank;
        p.len = (uint8_t)(len < PART_TEXT ? len : PART_TEXT);
        memcpy(p.text, line, p.len);
        if (vt_spill_put(&ps->sp, &p))
            return -1;
        line += p.len;
        len -= p.len;
    }
    return 0;
}

static int cmp_rank(const void *a, const void *b)
{
    uint32_t x = ((const part *)a)->rank, y = ((const part *)b)->rank;
    return (x > y) - (x < y);
}

/* A reader of the parts in order: text into buf, up to cap bytes (whole parts). */
typedef struct reader {
    vt__polys *ps;
    part *batch;
    uint64_t next;          /* the first part not in batch */
    size_t n, i;            /* parts in batch, the next one to take */
} reader;

static long pull(reader *r, char *buf, size_t cap)
{
    size_t k = 0;
    for (;;) {
        if (r->i == r->n) {
            uint64_t left = r->ps->sp.n - r->next;
            if (!left)
                break;
            r->n = left < BATCH ? (size_t)left : BATCH;
            if (vt_spill_read(&r->ps->sp, r->next, r->n, r->batch))
                return -1;
            r->next += r->n;
            r->i = 0;
        }
        const part *p = &r->batch[r->i];
        if (k + p->len > cap)
            break;
        memcpy(buf + k, p->text, p->len);
        k += p->len;
        r->i++;
    }
    return (long)k;
}

typedef struct sink {
    FILE *out;
    int failed;
} sink;

static int take(void *arg, int from, const uint8_t *data, size_t len)
{
    (void)from;
    sink *s = arg;
    if (len && fwrite(data, 1, len, s->out) != len)
        s->failed = 1;
    return 0;
}

int vt__polys_write(vt__polys *ps, FILE *out, const vt_par_comm *pc, uint64_t *rounds, uint64_t *bytes,
                    vt_error *err)
{
    int me = pc ? pc->me : 0;
    size_t P = pc ? (size_t)pc->nproc : 1;
    reader r = {ps, malloc(BATCH * sizeof(part)), 0, 0, 0};
    char *buf = malloc(CHUNK);
    int64_t *size = calloc(P + 1, sizeof *size);
    uint8_t **bufs = calloc(P, sizeof *bufs);
    size_t *lens = calloc(P, sizeof *lens);
    int bad = !r.batch || !buf || !size || !bufs || !lens;
    sink s = {out, 0};
    if (!bad && ps->unsorted) {
        vt_spill sorted;
        ps->open = 0;   /* (closed by the sort, failed or not) */
        if (vt_spill_sort(&ps->sp, &sorted, cmp_rank, 0))
            bad = 1;
        else {
            ps->sp = sorted;
            ps->open = 1;
            ps->unsorted = 0;
        }
    }
    if (size) {
        size[me] = (int64_t)ps->bytes;
        size[P] = bad;
    }
    if (pc && (!size || pc->sum(pc->arg, size, P + 1)))
        bad = 1;
    if (size && size[P])
        bad = 1;
    long k;
    if (!bad && me == 0)   /* process 0's own lines first */
        while ((k = pull(&r, buf, CHUNK)) > 0)
            if (fwrite(buf, 1, (size_t)k, out) != (size_t)k)
                s.failed = 1;
    /* then the others', process by process, a chunk a round */
    for (size_t q = 1; !bad && q < P; q++) {
        for (int64_t left = size[q]; left > 0;) {
            memset(lens, 0, P * sizeof *lens);
            if ((size_t)me == q) {
                k = pull(&r, buf, CHUNK);
                bufs[0] = (uint8_t *)buf;
                lens[0] = k > 0 ? (size_t)k : 0;
                s.failed |= k <= 0;   /* (fewer bytes than said: process 0 stops waiting) */
            }
            int64_t n[1] = {(size_t)me == q ? (int64_t)lens[0] : 0};
            if (pc->exchange(pc->arg, bufs, lens, take, &s) || pc->sum(pc->arg, n, 1) || n[0] <= 0) {
                bad = 1;
                break;
            }
            left -= n[0];
            *rounds += 1;
            *bytes += (uint64_t)n[0];
        }
    }
    if (pc) {
        int64_t v = bad || s.failed;
        if (pc->sum(pc->arg, &v, 1))
            v = 1;
        bad = v != 0;
    } else
        bad |= s.failed;
    if (bad)
        vt_error_set(err, "cannot write the polynomial file: %s", errno ? strerror(errno) : "an exchange failed");
    free(r.batch);
    free(buf);
    free(size);
    free(bufs);
    free(lens);
    return bad ? -1 : 0;
}
