/* A pool of small line-aligned blocks (doc/replay-scale.md, "A pool for the per-rank
 * blocks"): carved from large mappings that may be backed by transparent huge pages,
 * so that starting one of thousands of ranks calls no malloc. A freed block goes to the
 * free list of its size class and is handed out again before new memory is carved, so
 * the pool holds at most the peak of each class. Not thread-safe: one pool per trace or
 * per replay, used by one thread. Includes nothing of vtrace. */
#ifndef VT_UTIL_BLOCKPOOL_H
#define VT_UTIL_BLOCKPOOL_H

#include <stddef.h>

typedef struct vt_blockpool vt_blockpool;

vt_blockpool *vt_blockpool_new(void);
/* Unmaps every block at once. */
void vt_blockpool_destroy(vt_blockpool *p);

/* A block of N bytes or more at a 64-byte boundary; NULL without memory. With P NULL,
 * or N above the largest class, it comes from aligned_alloc. Free it with the same N. */
void *vt_blockpool_alloc(vt_blockpool *p, size_t n);
void *vt_blockpool_calloc(vt_blockpool *p, size_t n);
void vt_blockpool_free(vt_blockpool *p, void *b, size_t n);
/* B (of OLD bytes, NULL when OLD is 0) moved to a block of NEW bytes, its first
 * min(OLD, NEW) bytes kept; NULL without memory (B is then unchanged). */
void *vt_blockpool_grow(vt_blockpool *p, void *b, size_t old, size_t new_size);

#endif
