/* A rank's definitions (doc/format.md, RANKDEFS): call sites, communicators, files,
 * profile, placement and how the run ended. Encoded at MPI_Finalize, as snapshots after
 * the blocks flushed during the run (1.4), and by the crash paths (crash.h), where the
 * encoding goes into memory reserved beforehand and calls nothing that is not
 * async-signal-safe. */
#ifndef VT_RANKDEFS_H
#define VT_RANKDEFS_H

#include <stddef.h>
#include <stdint.h>

#include "tracing/state.h"
#include "tracing/topo.h"

/* Bytes being encoded: grown with realloc, or (fixed) never: what does not fit sets
 * overflow and the encoding is unusable. */
typedef struct vt_growbuf {
    uint8_t *p, *base;
    size_t cap;
    int fixed, overflow;
} vt_growbuf;

VT_HIDDEN void vt_growbuf_uvar(vt_growbuf *g, uint64_t v);
VT_HIDDEN void vt_growbuf_svar(vt_growbuf *g, int64_t v);
VT_HIDDEN void vt_growbuf_str(vt_growbuf *g, const char *s);
VT_HIDDEN void vt_growbuf_bytes(vt_growbuf *g, const void *p, size_t n);

/* What the RANKDEFS says beside the tables the layer keeps. */
typedef struct vt_rankdefs_end {
    const vt_placement *pl;
    int64_t t_init, t_fin;     /* t_fin: MPI_Finalize, or the last record of a snapshot or crash */
    unsigned flags;            /* VT_RANK_* */
    uint64_t overhead_ps;
    unsigned reason;           /* enum vt_end */
    int64_t detail;
    uint64_t write_errno;      /* a write of the trace failed (0: none) ... */
    uint64_t write_at;         /* ... with this many bytes in the file */
    int (*named)(unsigned fn); /* profile only these functions (NULL: all called) */
} vt_rankdefs_end;

/* The payload into g (g->base NULL and not fixed: allocated). */
VT_HIDDEN void vt_rankdefs_encode(vt_growbuf *g, const vt_rankdefs_end *e);
/* Names the call sites seen since the last call (their modules, modules.h): the
 * encoding uses these names, as signal handlers cannot look them up. Not
 * async-signal-safe. */
VT_HIDDEN void vt_rankdefs_resolve_sites(void);

#endif
