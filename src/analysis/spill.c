/* Temporary record files (spill.h). */
#include "vt_config.h"
#include "analysis/spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WBYTES (1u << 20)
#define SWEEP_BYTES (1u << 20)
#define RND_BYTES (1u << 12)

int vt_spill_open(vt_spill *s, size_t rec)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->rec = rec;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/vtrace-spill-XXXXXX", dir && *dir ? dir : "/tmp");
    s->fd = mkstemp(path);
    if (s->fd < 0)
        return -1;
    unlink(path);
    s->wcap = WBYTES / rec ? WBYTES / rec : 1;
    s->sweep.cap = SWEEP_BYTES / rec ? SWEEP_BYTES / rec : 1;
    s->rnd.cap = RND_BYTES / rec ? RND_BYTES / rec : 1;
    s->wbuf = malloc(s->wcap * rec);
    s->sweep.buf = malloc(s->sweep.cap * rec);
    s->rnd.buf = malloc(s->rnd.cap * rec);
    if (!s->wbuf || !s->sweep.buf || !s->rnd.buf) {
        vt_spill_close(s);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void vt_spill_close(vt_spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->wbuf);
    free(s->sweep.buf);
    free(s->rnd.buf);
    s->wbuf = s->sweep.buf = s->rnd.buf = NULL;
}

static int full_pwrite(int fd, const char *p, size_t len, off_t at)
{
    while (len) {
        ssize_t k = pwrite(fd, p, len, at);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        len -= (size_t)k;
        at += k;
    }
    return 0;
}

static int flush(vt_spill *s)
{
    size_t k = (size_t)(s->n - s->flushed);
    if (k && full_pwrite(s->fd, s->wbuf, k * s->rec, (off_t)(s->flushed * s->rec)))
        return -1;
    s->flushed = s->n;
    return 0;
}

int vt_spill_put(vt_spill *s, const void *rec)
{
    if (s->n - s->flushed == s->wcap && flush(s))
        return -1;
    memcpy(s->wbuf + (size_t)(s->n - s->flushed) * s->rec, rec, s->rec);
    s->n++;
    return 0;
}

int vt_spill_get(vt_spill *s, uint64_t i, void *out, int sweep)
{
    if (i >= s->n) {
        errno = EINVAL;
        return -1;
    }
    if (i >= s->flushed) {
        memcpy(out, s->wbuf + (size_t)(i - s->flushed) * s->rec, s->rec);
        return 0;
    }
    vt_spill_cache *c = sweep ? &s->sweep : &s->rnd, *o = sweep ? &s->rnd : &s->sweep;
    if (i >= o->first && i < o->first + o->n)
        c = o;
    else if (!(i >= c->first && i < c->first + c->n)) {
        /* A sweep goes backwards: the block ends at i; a random read is aligned. */
        uint64_t first = sweep ? (i + 1 > c->cap ? i + 1 - c->cap : 0) : i - i % c->cap;
        uint64_t n = s->flushed - first < c->cap ? s->flushed - first : c->cap;
        size_t len = (size_t)n * s->rec, got = 0;
        while (got < len) {
            ssize_t k = pread(s->fd, c->buf + got, len - got, (off_t)(first * s->rec + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                if (k == 0)
                    errno = EIO;
                c->n = 0;
                return -1;
            }
            got += (size_t)k;
        }
        c->first = first;
        c->n = n;
    }
    memcpy(out, c->buf + (size_t)(i - c->first) * s->rec, s->rec);
    return 0;
}

int vt_spill_read(vt_spill *s, uint64_t first, size_t n, void *buf)
{
    if (first > s->n || n > s->n - first) {
        errno = EINVAL;
        return -1;
    }
    char *out = buf;
    while (n && first < s->flushed) {
        size_t k = s->flushed - first < n ? (size_t)(s->flushed - first) : n;
        size_t len = k * s->rec, got = 0;
        while (got < len) {
            ssize_t r = pread(s->fd, out + got, len - got, (off_t)(first * s->rec + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                if (r == 0)
                    errno = EIO;
                return -1;
            }
            got += (size_t)r;
        }
        out += len;
        first += k;
        n -= k;
    }
    if (n)
        memcpy(out, s->wbuf + (size_t)(first - s->flushed) * s->rec, n * s->rec);
    return 0;
}
