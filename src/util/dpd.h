/* Dynamic periodicity detection (seed 000: Freitag, Caubet, Labarta, after Freitag,
 * Corbalan, Labarta, IPDPS 2001) on a stream of event identifiers.
 *
 * For every delay m in 1..M the detector keeps
 *     d(m) = number of i in the last N samples with x[i] != x[i - m]
 * in a FIFO-organised N x M distance matrix (one bit per cell, circular), so a new
 * sample costs O(M) and memory is N x M bits plus the last M samples. The stream is
 * periodic with period p when d(p) = 0 and p is the smallest such delay: the last N
 * samples repeat with shift p. Used offline by `vtrace period` and, with the same code,
 * by the tracer at run time. No allocation after vt_dpd_init. */
#ifndef VT_DPD_H
#define VT_DPD_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt_dpd {
    uint32_t N, M;          /* window and largest delay */
    uint64_t count;         /* samples seen */
    uint32_t *x;            /* the last M samples, circular (x[count % M] is the oldest) */
    uint64_t *bits;         /* N columns of M bits, circular by sample */
    uint32_t words;         /* 64-bit words per column */
    uint32_t *d;            /* d(m), m = 1..M at d[m - 1] */
} vt_dpd;

/* N >= 1, 1 <= M; returns 0, or -1 when out of memory or the sizes are out of range
 * (N, M <= 65536). */
int vt_dpd_init(vt_dpd *p, uint32_t N, uint32_t M);
void vt_dpd_free(vt_dpd *p);

/* Adds a sample; returns the period detected after it (the smallest m with d(m) = 0,
 * once N + m samples have been seen), or 0 when the last N samples are not periodic
 * with any delay up to M. */
uint32_t vt_dpd_push(vt_dpd *p, uint32_t x);

#endif
