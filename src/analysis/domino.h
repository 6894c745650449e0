/* Seed 002's domino path (PerWiz): greedily the candidate event whose elimination gives
 * the shortest predicted run time, then the next given the first, and so on; beside it
 * the naive choice of the k longest waits, and every candidate's gain eliminated alone
 * (the first step's pass). Each step is one replay pass evaluating every remaining
 * candidate at once. Used by `vtrace domino` and `vtrace report`. */
#ifndef VT_DOMINO_H
#define VT_DOMINO_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "format/reader.h"

typedef struct vt_domino_cand {
    uint32_t rank;
    uint64_t seq;
    int64_t dur;
    int call;               /* an MPI call (else a computation burst) */
    char fn[64];            /* its function, or "(computation)" */
    int chosen;
    int64_t alone;          /* predicted run time with it eliminated alone; -1 not computed */
} vt_domino_cand;

typedef struct vt_domino {
    vt_domino_cand *c;      /* the candidates considered: longest first, MPI_Init left out */
    size_t n, cap;
    size_t *order;          /* the chosen candidate of each step */
    int64_t *pred;          /* the predicted run time after each step */
    size_t nsteps;
    size_t *waits;          /* the naive choice: the longest candidate calls, up to `top` */
    int64_t *naive;         /* predicted run time with the first k waits eliminated, k = 0..nwaits */
    size_t nwaits;
    int64_t measured;       /* the measured run (from the start), as the replay reproduces it */
    uint64_t messages, clock_violations;   /* of the baseline replay */
} vt_domino;

/* TOP steps over the MAXC longest candidates (TOP 0: only the gains of each candidate
 * alone). A trace without candidates gives n == 0 after a baseline replay (whose errors
 * are reported). Returns 0, or -1 with err. */
int vt_domino_run(const vt_trace *t, const vt_model_params *p, size_t top, size_t maxc, vt_domino *d, vt_error *err);
void vt_domino_free(vt_domino *d);

#endif
