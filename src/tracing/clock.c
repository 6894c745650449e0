#include "tracing/clock.h"

#include <stdio.h>
#include <string.h>

VT_HIDDEN int vt__use_tsc;
VT_HIDDEN vt_tsc_scale vt__tsc;

#define CALIBRATION_NS 10000000
#define TIGHT_CYCLES 2000     /* a bracket this narrow is good enough */
#define LOOSE_CYCLES 200000   /* no bracket narrower than this: no TSC */

#if defined(__x86_64__)
static int tight_pair(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < 200 && best > TIGHT_CYCLES; k++) {
        uint64_t a = __rdtsc();
        int64_t n = vt_mono_now();
        uint64_t b = __rdtsc();
        if (b > a && b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
    return best <= LOOSE_CYCLES ? 0 : -1;
}
#endif

void vt_clock_mark(vt_tsc_mark *m)
{
#if defined(__x86_64__)
    m->set = tight_pair(&m->tsc, &m->ns) == 0;
#else
    m->set = 0;
#endif
}

int vt_clock_calibrate(const vt_tsc_mark *m, vt_tsc_scale *s)
{
#if defined(__x86_64__)
    char src[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return -1;
    if (!fgets(src, sizeof src, f))
        src[0] = '\0';
    fclose(f);
    if (strncmp(src, "tsc", 3) != 0)
        return -1;
    /* Each end of the measurement is a (tsc, ns) pair read between two TSC reads; the
     * tightest of several brackets wins, so a rank descheduled in the middle of one (a
     * loaded machine: 10 ms and more) cannot skew the scale. The first end is M when it
     * was taken (before PMPI_Init: MPI's start-up then makes the interval, no wait). */
    vt_tsc_mark first = *m;
    if (!first.set)
        vt_clock_mark(&first);
    if (!first.set)
        return -1;
    uint64_t t0 = first.tsc, t1;
    int64_t n0 = first.ns, n1;
    while (vt_mono_now() - n0 < CALIBRATION_NS)
        ;
    if (tight_pair(&t1, &n1))
        return -1;
    if (t1 <= t0 || n1 <= n0)
        return -1;
    s->tsc0 = t0;
    s->ns0 = n0;
    s->mult = (uint64_t)(((unsigned __int128)(uint64_t)(n1 - n0) << 32) / (t1 - t0));
    return 0;
#else
    (void)m;
    (void)s;
    return -1;
#endif
}

void vt_clock_use(const vt_tsc_scale *s)
{
    if (s) {
        vt__tsc = *s;
        vt__use_tsc = 1;
        vt_rec_special_set(VT_REC_CLOCK, 0);
    } else {
        vt_rec_special_set(VT_REC_CLOCK, 1);
        vt__use_tsc = 0;
    }
}
