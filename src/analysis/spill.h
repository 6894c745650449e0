/* A temporary file of fixed-size records for analyses that must not hold O(events) in
 * memory: appended in order, read back by index (backwards in a sweep or at random)
 * through two small caches. The file is unlinked at creation ($TMPDIR, else /tmp), so
 * it disappears with the process. Memory: the write buffer and the caches, a few MB. */
#ifndef VT_SPILL_H
#define VT_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt_spill_cache {
    char *buf;
    uint64_t first, n;      /* records first .. first + n in buf */
    size_t cap;             /* records */
} vt_spill_cache;

typedef struct vt_spill {
    int fd;
    size_t rec;             /* bytes a record */
    uint64_t n;             /* records appended */
    uint64_t flushed;       /* records on disk; n - flushed in wbuf */
    char *wbuf;
    size_t wcap;
    vt_spill_cache sweep, rnd;
} vt_spill;

/* 0, or -1 with errno set (no temporary file, no memory). */
int vt_spill_open(vt_spill *s, size_t rec);
void vt_spill_close(vt_spill *s);
/* Appends one record; 0 or -1 (errno). */
int vt_spill_put(vt_spill *s, const void *rec);
/* Record i (< n) into out. sweep: 1 for a mostly backward sequential reader (large
 * blocks), 0 for random access (small blocks). 0 or -1 (errno). */
int vt_spill_get(vt_spill *s, uint64_t i, void *out, int sweep);

/* Records first .. first + n (<= n in all) into buf, bypassing the caches (for readers
 * that keep their own buffers, such as a merge of sorted runs). 0 or -1 (errno). */
int vt_spill_read(vt_spill *s, uint64_t first, size_t n, void *buf);

/* External sort (spill_sort.c): the records of IN (closed by it) into OUT (opened by it),
 * in CMP's order, stable; runs of at most RUN records are sorted in memory (0: 2^18)
 * and merged. Memory: one run, and a read buffer of a few KB per run. 0, or -1 with
 * errno (IN and OUT are closed then). */
int vt_spill_sort(vt_spill *in, vt_spill *out, int (*cmp)(const void *, const void *), size_t run);

#endif
