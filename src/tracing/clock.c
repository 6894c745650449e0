#include "clock.h"

#include <stdio.h>
#include <string.h>

VT_HIDDEN int vt__use_tsc;
VT_HIDDEN vt_tsc_scale vt__tsc;

#define CALIBRATION_NS 4000000

int vt_clock_calibrate(vt_tsc_scale *s)
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
    /* Pairs (tsc, ns) read back to back; the tighter bracket of two reads wins. */
    uint64_t a0 = __rdtsc();
    int64_t n0 = vt_mono_now();
    uint64_t a1 = __rdtsc();
    int64_t n1;
    uint64_t b0, b1;
    do {
        b0 = __rdtsc();
        n1 = vt_mono_now();
        b1 = __rdtsc();
    } while (n1 - n0 < CALIBRATION_NS);
    uint64_t t0 = a0 + (a1 - a0) / 2, t1 = b0 + (b1 - b0) / 2;
    if (t1 <= t0)
        return -1;
    s->tsc0 = t0;
    s->ns0 = n0;
    s->mult = (uint64_t)(((unsigned __int128)(uint64_t)(n1 - n0) << 32) / (t1 - t0));
    return 0;
#else
    (void)s;
    return -1;
#endif
}

void vt_clock_use(const vt_tsc_scale *s)
{
    if (s) {
        vt__tsc = *s;
        vt__use_tsc = 1;
    } else {
        vt__use_tsc = 0;
    }
}
