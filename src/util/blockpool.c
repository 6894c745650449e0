/* The pool of small blocks (blockpool.h). Size classes: 1 to 16 lines of 64 bytes,
 * then four a doubling up to 64 KiB, so that a block wastes at most a line or a fifth.
 * Mappings start at 256 KiB and double up to 2 MiB; those of 2 MiB are aligned to
 * 2 MiB and advised MADV_HUGEPAGE (transparent huge pages in `madvise` mode). */
#define _DEFAULT_SOURCE
#include "util/blockpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LINE 64u
#define NCLASS 40
#define MAX_BLOCK ((size_t)64 << 10)
#define HUGE_MAP ((size_t)2 << 20)
#define FIRST_MAP ((size_t)256 << 10)

typedef struct mapping {
    struct mapping *next;
    size_t len;
} mapping;

struct vt_blockpool {
    void *free[NCLASS];     /* each free block's first word: the next */
    unsigned char *at, *end; /* what is left of the newest mapping */
    mapping *maps;          /* in the first line of each mapping */
    size_t mapped;
};

/* The class of a block of N bytes (1 <= N <= MAX_BLOCK), and its size in lines. */
static unsigned class_of(size_t n, size_t *lines)
{
    size_t l = (n + LINE - 1) / LINE;
    if (l <= 16) {
        *lines = l;
        return (unsigned)l - 1;
    }
    unsigned b = 4; /* l in (2^b, 2^(b+1)] */
    while (l > (size_t)2 << b)
        b++;
    size_t q = (l - ((size_t)1 << b) + ((size_t)1 << (b - 2)) - 1) >> (b - 2); /* 1..4 */
    *lines = ((size_t)1 << b) + (q << (b - 2));
    return 16 + (b - 4) * 4 + (unsigned)q - 1;
}

vt_blockpool *vt_blockpool_new(void)
{
    return calloc(1, sizeof(vt_blockpool));
}

void vt_blockpool_destroy(vt_blockpool *p)
{
    if (!p)
        return;
    for (mapping *m = p->maps, *next; m; m = next) {
        next = m->next;
        munmap(m, m->len);
    }
    free(p);
}

static void *map_aligned(size_t len, size_t align)
{
    size_t span = len + align - (size_t)4096;
    unsigned char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    unsigned char *start = (unsigned char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    if (raw + span > start + len)
        munmap(start + len, (size_t)(raw + span - (start + len)));
    return start;
}

/* A new mapping to carve from; 0, or -1 without memory. */
static int more(vt_blockpool *p)
{
    size_t len = p->mapped < FIRST_MAP ? FIRST_MAP : p->mapped < HUGE_MAP ? p->mapped : HUGE_MAP;
    mapping *m = map_aligned(len, len == HUGE_MAP ? HUGE_MAP : 4096);
    if (!m)
        return -1;
#ifdef MADV_HUGEPAGE
    if (len == HUGE_MAP)
        madvise(m, len, MADV_HUGEPAGE);
#endif
    m->len = len;
    m->next = p->maps;
    p->maps = m;
    p->mapped += len;
    p->at = (unsigned char *)m + LINE;
    p->end = (unsigned char *)m + len;
    return 0;
}

void *vt_blockpool_alloc(vt_blockpool *p, size_t n)
{
    if (!p || n > MAX_BLOCK)
        return aligned_alloc(LINE, n ? (n + LINE - 1) & ~(size_t)(LINE - 1) : LINE);
    size_t lines;
    unsigned c = class_of(n ? n : 1, &lines);
    void *b = p->free[c];
    if (b) {
        memcpy(&p->free[c], b, sizeof(void *));
        return b;
    }
    size_t bytes = lines * LINE;
    if ((size_t)(p->end - p->at) < bytes && more(p))
        return NULL;
    b = p->at;
    p->at += bytes;
    return b;
}

void *vt_blockpool_calloc(vt_blockpool *p, size_t n)
{
    void *b = vt_blockpool_alloc(p, n);
    if (b)
        memset(b, 0, n);
    return b;
}

void vt_blockpool_free(vt_blockpool *p, void *b, size_t n)
{
    if (!b)
        return;
    if (!p || n > MAX_BLOCK) {
        free(b);
        return;
    }
    size_t lines;
    unsigned c = class_of(n ? n : 1, &lines);
    memcpy(b, &p->free[c], sizeof(void *));
    p->free[c] = b;
}

void *vt_blockpool_grow(vt_blockpool *p, void *b, size_t old, size_t new_size)
{
    void *n = vt_blockpool_alloc(p, new_size);
    if (!n)
        return NULL;
    if (b) {
        memcpy(n, b, old < new_size ? old : new_size);
        vt_blockpool_free(p, b, old);
    }
    return n;
}
