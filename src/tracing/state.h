/* Run-time state of the recording layer and the fast path every wrapper takes. */
#ifndef VT_STATE_H
#define VT_STATE_H

#include <mpi.h>
#include <stdint.h>
#include <time.h>

#include "mpi/vt_fn.h"

#define VT_HIDDEN __attribute__((visibility("hidden")))
#define VT_EXPORT __attribute__((visibility("default")))
#define VT_LIKELY(x) __builtin_expect(!!(x), 1)
#define VT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VT_SITE() __builtin_return_address(0)
/* For the per-message work the compiler would otherwise call (many arguments, a frame). */
#define VT_ALWAYS_INLINE inline __attribute__((always_inline))

typedef struct vt_call {
    int64_t enter;
    const void *site;
    unsigned fn;
    /* Request handles saved before a Wait/Test family call (MPI nulls them). */
    int nreq;
    MPI_Request *saved;
    MPI_Request *live;         /* the user's array: MPI nulls the handles it frees */
    MPI_Status *statuses;      /* statuses the call writes (ours when the user ignores them) */
    int own_statuses;          /* statuses points to our allocation */
    MPI_Request inline_saved[4];
    MPI_Status inline_statuses[4];
    /* MPI_THREAD_MULTIPLE: the layer's entries of the saved requests, claimed before the
     * call (requests.h); NULL otherwise, or when a claim was taken over (completed) */
    struct vt_req **reqs;
    struct vt_req *inline_reqs[4];
} vt_call;

/* Call records written so far on this rank: the model sequence number of the call being
 * made is 2 vt__calls + 1 (doc/format.md), which the piggyback header carries. */
extern VT_HIDDEN uint64_t vt__calls;

/* Nonzero while recording (between initialisation and finalisation, mode not off). */
extern VT_HIDDEN int vt__active;
/* Nonzero on a thread while it is inside the layer: MPI calls made by the MPI library
 * itself (ROMIO calls MPI_ functions) or by us go straight through. */
extern VT_HIDDEN __thread int vt__depth __attribute__((tls_model("initial-exec")));

/* The layer's clock, in integer nanoseconds of CLOCK_MONOTONIC. Where the TSC is the
 * kernel's clocksource (constant and synchronised across cores), or VTRACE_CLOCK=tsc
 * asks for it on an invariant TSC, it is read directly and scaled, which costs a third
 * of clock_gettime (half of it on a kvm-clock VM); see clock.c. */
typedef struct vt_tsc_scale {
    uint64_t tsc0;
    int64_t ns0;
    uint64_t mult;   /* ns per tick, fixed point << 32 */
    uint64_t ppb;    /* the calibration's uncertainty, parts per billion (clock.c) */
} vt_tsc_scale;
extern VT_HIDDEN int vt__use_tsc;
extern VT_HIDDEN vt_tsc_scale vt__tsc;

static inline int64_t vt_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
/* vt_now where vt__use_tsc is known to be set. */
static inline int64_t vt_tsc_now(void)
{
    uint64_t d = __rdtsc() - vt__tsc.tsc0;
    return vt__tsc.ns0 + (int64_t)(((unsigned __int128)d * vt__tsc.mult) >> 32);
}

static inline int64_t vt_now(void)
{
    if (VT_LIKELY(vt__use_tsc))
        return vt_tsc_now();
    return vt_mono_now();
}
#else
static inline int64_t vt_tsc_now(void) { return vt_mono_now(); }
static inline int64_t vt_now(void) { return vt_mono_now(); }
#endif

/* Bits of vt__rec_special, which sends a handler's record off its fast path (rec_open,
 * handlers_priv.h): one word tested per call for all three (VT_REC_RECORD). The other
 * bits mirror the modes the blocking send's and receive's handlers test after the call
 * (handlers_p2p.h): with the word 0 they take a path that tests none of them (issue 18):
 * VT_REC_MT vt__mt (the buffer's lock), VT_REC_RT vt__rt (the run-time reduction),
 * VT_REC_CLOCK !vt__use_tsc (vt_now's clock_gettime). Set with vt_rec_special_set. */
enum { VT_REC_FILTER = 1, VT_REC_PERIOD = 2, VT_REC_SKIP = 4, VT_REC_MT = 8, VT_REC_RT = 16, VT_REC_CLOCK = 32 };
enum { VT_REC_RECORD = VT_REC_FILTER | VT_REC_PERIOD | VT_REC_SKIP };
extern VT_HIDDEN unsigned vt__rec_special;
static inline void vt_rec_special_set(unsigned bits, int on)
{
    if (on)
        __atomic_fetch_or(&vt__rec_special, bits, __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(&vt__rec_special, ~bits, __ATOMIC_RELAXED);
}

VT_HIDDEN int vt__enter_slow(vt_call *c, unsigned fn, const void *site);

/* Fast path: returns 1 (and marks the thread inside the layer) when the call is to be
 * recorded; 0 when it must go straight to the MPI library. callsite is the call site to
 * record: the generated bodies (src/mpi/wrappers.c) get it from their entry point, which
 * passes VT_SITE() (a C entry point) or its own return address (an mpi_f08 one). */
#define VT_ENTER(c, f, callsite) \
    (VT_LIKELY(vt__active && !vt__depth) \
         ? (vt__depth = 1, (c)->fn = (f), (c)->site = (callsite), (c)->nreq = 0, (c)->enter = vt_now(), 1) \
         : vt__enter_slow((c), (f), (callsite)))

#endif
