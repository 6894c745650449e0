#include "tracing/clock.h"
#include "util/settings.h"

#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

VT_HIDDEN int vt__use_tsc;
VT_HIDDEN vt_tsc_scale vt__tsc;

#define CALIBRATION_NS 10000000
#define TIGHT_CYCLES 2000     /* a bracket this narrow is good enough */

#if defined(__x86_64__)
static int tight_pair(uint64_t *tsc, int64_t *ns, uint64_t *width)
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
    if (width)
        *width = best;
    return best <= VT_CLOCK_LOOSE_CYCLES ? 0 : -1;
}

static int clocksource_is_tsc(void)
{
    char src[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    if (!fgets(src, sizeof src, f))
        src[0] = '\0';
    fclose(f);
    return strncmp(src, "tsc", 3) == 0;
}

/* Whether the processor says its TSC ticks at one rate in every P-, C- and T-state:
 * cpuid 0x80000007 EDX bit 8, or (a hypervisor may hide the leaf) Linux's flags
 * constant_tsc and nonstop_tsc, which it sets from the leaf or its own knowledge. */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d >> 8 & 1))
        return 1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}
#endif

void vt_clock_mark(vt_tsc_mark *m)
{
#if defined(__x86_64__)
    m->set = tight_pair(&m->tsc, &m->ns, &m->width) == 0;
#else
    m->set = 0;
#endif
}

int vt_clock_calibrate(const vt_tsc_mark *m, int choice, vt_tsc_scale *s)
{
#if defined(__x86_64__)
    if (choice == VT_CLOCK_MONOTONIC || (choice == VT_CLOCK_AUTO && !clocksource_is_tsc()))
        return VT_CLOCK_OFF;
    if (choice == VT_CLOCK_TSC && !tsc_invariant())
        return VT_CLOCK_VARIANT;
    /* Each end of the measurement is a (tsc, ns) pair read between two TSC reads; the
     * tightest of several brackets wins, so a rank descheduled in the middle of one (a
     * loaded machine: 10 ms and more) cannot skew the scale. The first end is M when it
     * was taken (before PMPI_Init: MPI's start-up then makes the interval, no wait). */
    vt_tsc_mark first = *m;
    if (!first.set)
        vt_clock_mark(&first);
    if (!first.set)
        return VT_CLOCK_UNCALIBRATED;
    uint64_t t0 = first.tsc, t1, w1;
    int64_t n0 = first.ns, n1;
    while (vt_mono_now() - n0 < CALIBRATION_NS)
        ;
    if (tight_pair(&t1, &n1, &w1))
        return VT_CLOCK_UNCALIBRATED;
    if (t1 <= t0 || n1 <= n0)
        return VT_CLOCK_UNCALIBRATED;
    s->tsc0 = t0;
    s->ns0 = n0;
    s->mult = (uint64_t)(((unsigned __int128)(uint64_t)(n1 - n0) << 32) / (t1 - t0));
    /* each end pairs its CLOCK_MONOTONIC read with the middle of its bracket, half a
     * bracket off at most: the scale is off by at most their sum over the interval */
    uint64_t half = first.width / 2 + w1 / 2;
    s->ppb = (uint64_t)((unsigned __int128)half * 1000000000u / (t1 - t0));
    return VT_CLOCK_OK;
#else
    (void)m;
    (void)choice;
    (void)s;
    return VT_CLOCK_OFF;
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

/* The bound of vt_clock_check: 100 us, plus 100 ppm of the time since the calibration,
 * plus the calibration's own uncertainty over that time. 100 us covers the two reads of
 * the check (a bracket up to VT_CLOCK_LOOSE_CYCLES, 100 us at 2 GHz, is accepted) and of the
 * calibration; 100 ppm covers NTP's or chrony's slewing of CLOCK_MONOTONIC, which the
 * TSC does not follow (corrections of a disciplined clock stay below this; the kernel
 * allows 500 ppm, which a clock just set far off may use for a while, and a run then may
 * warn wrongly, an error that says what it measured). What the check is for is larger
 * by orders of magnitude: a VM snapshotted or migrated mid-run can make the TSC jump by
 * the pause (milliseconds to seconds), or run at another host's rate. */
#define CHECK_FLOOR_NS 100000
#define CHECK_PPM 100

int vt_clock_check(int64_t skew, int64_t *drift_ns, int64_t *bound_ns)
{
#if defined(__x86_64__)
    if (!vt__use_tsc)
        return -1;
    uint64_t tsc;
    int64_t ns;
    if (tight_pair(&tsc, &ns, NULL))
        return -1;
    int64_t tsc_ns = vt__tsc.ns0 + (int64_t)(((unsigned __int128)(tsc - vt__tsc.tsc0) * vt__tsc.mult) >> 32) + skew;
    int64_t d = tsc_ns - ns;
    *drift_ns = d < 0 ? -d : d;
    uint64_t since = ns > vt__tsc.ns0 ? (uint64_t)(ns - vt__tsc.ns0) : 0;
    uint64_t ppb = CHECK_PPM * 1000u + vt__tsc.ppb;
    *bound_ns = CHECK_FLOOR_NS + (int64_t)((unsigned __int128)since * ppb / 1000000000u);
    return 0;
#else
    (void)skew;
    (void)drift_ns;
    (void)bound_ns;
    return -1;
#endif
}
