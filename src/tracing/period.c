/* The periodicity detector at run time (period.h). */
#include "vt_config.h"
#include "tracing/period.h"
#include "tracing/buffer.h"
#include "util/dpd.h"

VT_HIDDEN int vt__period_on;

static vt_dpd det;
static int keep;            /* iterations kept in detail per stretch (0: all) */
static uint32_t period;     /* current period, 0 none */
static uint64_t since;      /* calls since the current stretch was detected */
static uint64_t kept_iters; /* iterations marked in the current stretch */
static int suspended;
static uint64_t skipped;    /* calls not recorded in the current suspension */
static int scaled;

int vt_period_init(int keep_iterations, int window, int max_period)
{
    vt__period_on = 0;
    vt__rec_special &= ~(unsigned)VT_REC_PERIOD;
    if (keep_iterations < 0)
        return 0;
    if (vt_dpd_init(&det, (uint32_t)window, (uint32_t)max_period))
        return -1;
    keep = keep_iterations;
    vt__period_on = 1;
    vt__rec_special |= VT_REC_PERIOD;
    return 0;
}

static void marker(uint64_t kind, int64_t value, int64_t at)
{
    uint8_t *p = vt_rec_begin(5 * VT_UVAR_MAX);
    if (!p)
        return;
    p = vt_put_uvar(p, VT_CODE_MARKER);
    p = vt_put_svar(p, at - vt__buf.prev_exit);
    p = vt_put_uvar(p, 0);
    p = vt_put_uvar(p, kind);
    p = vt_put_svar(p, value);
    vt_rec_end(p, at);
}

int vt_period_step(unsigned fn, uint64_t callsite, int64_t enter)
{
    uint32_t p = vt_dpd_push(&det, (uint32_t)fn << 20 ^ (uint32_t)callsite);
    if (p != period) {
        if (suspended) {
            suspended = 0;
            marker(VT_MARK_RESUME, (int64_t)skipped, enter);
        }
        if (period)
            marker(VT_MARK_APERIODIC, 0, enter);
        period = p;
        since = 0;
        kept_iters = 0;
    }
    if (period && since++ % period == 0) {
        marker(VT_MARK_ITERATION, period, enter);
        if (keep && !suspended && ++kept_iters > (uint64_t)keep) {
            suspended = 1;
            skipped = 0;
            scaled = 1;
            marker(VT_MARK_SUSPEND, period, enter);
        }
    }
    if (suspended)
        skipped++;
    return suspended;
}

int vt_period_scaled(void) { return scaled; }

void vt_period_fini(void)
{
    if (vt__period_on)
        vt_dpd_free(&det);
    vt__period_on = 0;
    vt__rec_special &= ~(unsigned)VT_REC_PERIOD;
}
