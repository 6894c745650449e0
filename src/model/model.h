/* The prediction model of ../shared/design/model.md, in one place: its parameters,
 * what each MPI call is to the model (§3), transfer time λ, and the one completion
 * rule of §2 with the candidate rule. The offline replay applies the rule to numbers;
 * the run-time reduction applies the same rule to polynomials (poly.h). */
#ifndef VT_MODEL_H
#define VT_MODEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt_model_params {
    int64_t theta;       /* candidate threshold θ, ns */
    int cand_calls;      /* 1: θ applies to MPI calls too; 0: bursts only */
    int64_t L;           /* λ(s) = L + G s: latency, ns */
    int64_t G_ps;        /* ... and time per byte, in picoseconds (λ = L + G_ps s / 1000) */
    int64_t T_rdv;       /* bytes from which a standard send is synchronous */
    int m, K;            /* polynomial limits before overflow to an atom */
    int pbytes;          /* room for the difference in a message header, bytes (0: no limit):
                          * a longer one overflows to an atom too (doc/model-notes.md) */
} vt_model_params;

/* Defaults, then KEY=value lines of a trace's configuration text (VTRACE_THRESHOLD,
 * VTRACE_CANDIDATES, VTRACE_MODEL_L, _G, _TRDV, _M, _K, _PBYTES). Returns 0, or -1 with a
 * message naming the bad line. */
void vt_model_defaults(vt_model_params *p);
int vt_model_params_parse(vt_model_params *p, const char *config_text, char *err, size_t errlen);

/* What a call is to the model (§3). */
enum vt_model_kind {
    VT_MK_LOCAL,        /* local event: d changes only by its own δ */
    VT_MK_SEND,         /* blocking send: eager (local) or synchronous (completion) by size */
    VT_MK_SSEND,        /* MPI_Ssend: always synchronous */
    VT_MK_BSEND,        /* buffered: always eager */
    VT_MK_ISEND,        /* non-blocking send; synchronous by size; completes at a Wait */
    VT_MK_ISSEND,       /* always synchronous */
    VT_MK_IBSEND,       /* always eager */
    VT_MK_RECV,         /* blocking receive completion (Recv, Mrecv) */
    VT_MK_IRECV,        /* posts a receive; completes at a Wait/Test */
    VT_MK_SENDRECV,     /* send half + receive completion */
    VT_MK_PROBE,        /* completion of the message it matched */
    VT_MK_COMPLETION,   /* Wait/Test family */
    VT_MK_COLL,         /* blocking collective: a gate over the communicator */
    VT_MK_ICOLL,        /* non-blocking collective: contributes at initiation */
    VT_MK_START,        /* Start/Startall: persistent sends are sends here */
    VT_MK_END,          /* MPI_Finalize: the rank's end event */
};
enum vt_model_kind vt_model_kind_of(const char *mpi_function_name);
/* The send kind of a function that sends (persistent *_init templates and Sendrecv
 * included), for vt_model_is_sync; VT_MK_SEND when only the size decides. */
enum vt_model_kind vt_model_send_kind(const char *mpi_function_name);

/* Whether a message of `bytes` sent by a call of `kind` is synchronous (§3). */
static inline int vt_model_is_sync(enum vt_model_kind kind, uint64_t bytes, const vt_model_params *p)
{
    switch (kind) {
    case VT_MK_SSEND:
    case VT_MK_ISSEND:
        return 1;
    case VT_MK_BSEND:
    case VT_MK_IBSEND:
        return 0;
    default:
        return (int64_t)bytes >= p->T_rdv;
    }
}

/* vt_model_is_sync as a threshold (it depends on the size only through T_rdv): a message
 * of kind's calls is synchronous exactly when its bytes (below 2^63) are at least this;
 * UINT64_MAX: never. One compare per message where the tables of the tracer hold it. */
static inline uint64_t vt_model_sync_from(enum vt_model_kind kind, const vt_model_params *p)
{
    return vt_model_is_sync(kind, 0, p) ? 0 : !vt_model_is_sync(kind, UINT64_MAX >> 1, p) ? UINT64_MAX : (uint64_t)p->T_rdv;
}

/* λ_m = min(λ(s), E - S): the message's modelled transfer time, capped by the time
 * between the send's start S and the receiving call's exit E (§3). */
static inline int64_t vt_model_lambda(const vt_model_params *p, uint64_t bytes, int64_t S, int64_t E)
{
    int64_t gb, l;
    /* the 128-bit division is a library call: only when the product needs it */
    if (!__builtin_mul_overflow(p->G_ps, (int64_t)bytes, &gb))
        l = p->L + gb / 1000;
    else
        l = p->L + (int64_t)(((__int128)p->G_ps * (int64_t)bytes) / 1000);
    return l < E - S ? l : E - S;
}

/* A contributor to a completion: ready time T and, for each scenario, the difference D
 * of whoever made it ready. */
typedef struct vt_contrib {
    int64_t T;
    const int64_t *D;
} vt_contrib;

/* Over n scenarios: out[s] = D[s] + gap; out[s] = min(out[s], D[s] + gap); d[s] =
 * min(base[s] + delta[s], d[s] + span) (the candidate rule below). Vectorised where the
 * processor has AVX2 (model.c): hundreds of scenarios in one replay (vtrace report). */
void vt_model_shifted(int64_t *restrict out, const int64_t *restrict D, int64_t gap, size_t n);
void vt_model_min_shifted(int64_t *restrict out, const int64_t *restrict D, int64_t gap, size_t n);
void vt_model_candidates(int64_t *restrict d, const int64_t *restrict base, const int64_t *restrict delta,
                         int64_t span, size_t n);

/* The completion rule of §2, the one place it is written: M = max T_k and, for every
 * scenario s, out[s] = min_k (D_k[s] + (M - T_k)). Returns M; n >= 1. */
static inline int64_t vt_model_complete(const vt_contrib *c, size_t n, size_t nscen, int64_t *out)
{
    int64_t M = c[0].T;
    for (size_t k = 1; k < n; k++)
        if (c[k].T > M)
            M = c[k].T;
    /* contributor by contributor: each D is read in order (many scenarios: a row of a
     * few KB per contributor, rather than n rows at once) */
    vt_model_shifted(out, c[0].D, M - c[0].T, nscen);
    for (size_t k = 1; k < n; k++)
        vt_model_min_shifted(out, c[k].D, M - c[k].T, nscen);
    return M;
}

/* The candidate rule of §2: a completion that is itself a candidate cannot end before
 * it starts: min(d_after + δ, d_before + (E - R)). */
static inline int64_t vt_model_candidate(int64_t d_after, int64_t delta, int64_t d_before, int64_t E, int64_t R)
{
    int64_t a = d_after + delta, b = d_before + (E - R);
    return a < b ? a : b;
}

#endif
