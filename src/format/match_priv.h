/* Internals of vt_trace_match shared by its files (src/format only; not installed).
 * Each file calls only those listed before it:
 *   match_keys.c   what both matchers share (format/match_keys.h)
 *   match_scan.c   the pass over one rank: its sends and receives, keyed
 *   match.c        pairing, the result and its views, the API
 */
#ifndef VT_MATCH_PRIV_H
#define VT_MATCH_PRIV_H

#include "format/match_keys.h"
#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>

/* u64 -> (u64, u64) map: open addressing, backward-shift deletion. */
typedef struct ment {
    uint64_t key; /* 0: empty */
    uint64_t a, b;
} ment;

typedef struct map {
    ment *e;
    size_t cap, n; /* cap: power of two */
} map;

/* One rank's pass. The caller sets t, rk, rank, flags, keys, err (and extras), the
 * rest zero; the entries are left in sends, recvs (and rbytes, rsub). */
typedef struct rank_state {
    const vt_trace *t;
    const vt_rank *rk;
    uint32_t rank;
    unsigned flags;
    vt_keytab *keys;
    vt_match_csend *sends;
    vt_match_crecv *recvs;
    size_t ns, nr, caps, capr;
    /* Only when building the full view: per receive, its bytes and sub. */
    int extras;
    uint64_t *rbytes;
    uint32_t *rsub;
    size_t capx;
    struct tmpl *tmpls;
    size_t ntmpls, captmpls;
    struct probe *probes;
    size_t nprobes, capprobes;
    struct orphan *orphans;
    size_t norphans, caporphans;
    map active;      /* request -> a = pos << 2 | kind (A_*), b = communicator id (pending receives) */
    map templates, probe_map;
    uint64_t unmatched;
    vt_error *err;
} rank_state;

/* Streams rank s->rank; leaves its entries (skipped ones dropped) in s. 0, or -1 with
 * the error in s->err. */
int vt__match_scan_rank(rank_state *s);
/* Frees the entries left in s. */
void vt__match_rank_free(rank_state *s);

#endif
