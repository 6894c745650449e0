/* Dynamic periodicity detection (dpd.h). */
#include "vt_config.h"
#include "util/dpd.h"

#include <stdlib.h>
#include <string.h>

int vt_dpd_init(vt_dpd *p, uint32_t N, uint32_t M)
{
    memset(p, 0, sizeof *p);
    if (N < 1 || M < 1 || N > 65536 || M > 65536)
        return -1;
    p->N = N;
    p->M = M;
    p->words = (M + 63) / 64;
    p->x = calloc(M, sizeof *p->x);
    p->bits = calloc((size_t)N * p->words, sizeof *p->bits);
    p->d = calloc(M, sizeof *p->d);
    if (!p->x || !p->bits || !p->d) {
        vt_dpd_free(p);
        return -1;
    }
    return 0;
}

void vt_dpd_free(vt_dpd *p)
{
    free(p->x);
    free(p->bits);
    free(p->d);
    memset(p, 0, sizeof *p);
}

uint32_t vt_dpd_push(vt_dpd *p, uint32_t x)
{
    uint64_t i = p->count;
    uint64_t *col = p->bits + (size_t)(i % p->N) * p->words;
    /* the column of sample i - N leaves the window */
    if (i >= p->N) {
        for (uint32_t w = 0; w < p->words; w++) {
            uint64_t b = col[w];
            while (b) {
                unsigned k = (unsigned)__builtin_ctzll(b);
                p->d[w * 64 + k]--;
                b &= b - 1;
            }
        }
    }
    memset(col, 0, p->words * sizeof *col);
    /* distances of the new sample to the M before it (no history counts as different);
     * x[] is circular: the sample m before sits at (i - m) mod M, walked down without
     * a division */
    uint32_t at = (uint32_t)(i % p->M), j = at;
    for (uint32_t m = 1; m <= p->M; m++) {
        j = j ? j - 1 : p->M - 1;
        if (i < m || p->x[j] != x) {
            col[(m - 1) >> 6] |= UINT64_C(1) << ((m - 1) & 63);
            p->d[m - 1]++;
        }
    }
    p->x[at] = x;
    p->count = i + 1;
    for (uint32_t m = 1; m <= p->M && p->count >= (uint64_t)p->N + m; m++)
        if (p->d[m - 1] == 0)
            return m;
    return 0;
}
