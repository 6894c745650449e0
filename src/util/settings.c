#include "util/settings.h"
#include "util/aside.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vt_config.h"
#ifndef VT_DEFAULT_TRDV /* (configure.ac: the MPI's eager limit on one node) */
#define VT_DEFAULT_TRDV 8256
#define VT_DEFAULT_TRDV_STR "8256"
#endif

/* Splits "<number><suffix>" with optional spaces; the number is a non-negative decimal
 * (a fraction allowed). */
static int split_number(const char *s, double *num, const char **suffix)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    *num = v;
    *suffix = end;
    return 0;
}

static int suffix_is(const char *suffix, const char *want)
{
    size_t n = strlen(want);
    if (strncasecmp(suffix, want, n))
        return 0;
    const char *rest = suffix + n;
    while (isspace((unsigned char)*rest))
        rest++;
    return *rest == '\0';
}

int vt_parse_size(const char *s, uint64_t *out)
{
    double v;
    const char *suf;
    if (!s || split_number(s, &v, &suf))
        return -1;
    static const struct { const char *name; double mult; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0}, {"m", 1048576.0},
        {"mb", 1048576.0}, {"mib", 1048576.0}, {"g", 1073741824.0}, {"gb", 1073741824.0},
        {"gib", 1073741824.0},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (suffix_is(suf, units[i].name)) {
            double bytes = v * units[i].mult;
            if (bytes > 1e15)
                return -1;
            *out = (uint64_t)bytes;
            return 0;
        }
    }
    return -1;
}

int vt_parse_duration(const char *s, int64_t *out)
{
    double v;
    const char *suf;
    if (!s || split_number(s, &v, &suf))
        return -1;
    static const struct { const char *name; double ns; } units[] = {
        {"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (suffix_is(suf, units[i].name)) {
            double ns = v * units[i].ns;
            if (ns > 9e18)
                return -1;
            *out = (int64_t)(ns + 0.5);
            return 0;
        }
    }
    return -1;
}

static const char *const mode_names[] = {"off", "full", "reduced", "both"};

const char *vt_mode_name(enum vt_mode m) { return mode_names[m]; }

/* The index of S in NAMES (letters without case), or -1. */
static int name_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcasecmp(s, names[i]))
            return i;
    return -1;
}

int vt_parse_mode(const char *s, enum vt_mode *out)
{
    int i = name_index(s, mode_names, 4);
    if (i < 0)
        return -1;
    *out = (enum vt_mode)i;
    return 0;
}

static const char *const clock_names[] = {"auto", "tsc", "monotonic"};

const char *vt_clock_choice_name(enum vt_clock_choice c) { return clock_names[c]; }

int vt_parse_clock(const char *s, enum vt_clock_choice *out)
{
    int i = name_index(s, clock_names, 3);
    if (i < 0)
        return -1;
    *out = (enum vt_clock_choice)i;
    return 0;
}

int vt_parse_per_byte(const char *s, int64_t *ps)
{
    double v;
    const char *suf;
    if (!s || split_number(s, &v, &suf))
        return -1;
    double mult = suffix_is(suf, "ps") ? 1 : suffix_is(suf, "ns") ? 1000 : suffix_is(suf, "us") ? 1e6 : -1;
    if (mult < 0 || v * mult > 1e12)
        return -1;
    *ps = (int64_t)(v * mult + 0.5);
    return 0;
}

int vt_parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* The test hook's forms, as rtreduce.c reads them. */
static int rt_broken_ok(const char *v)
{
    if (!strcmp(v, "noR3") || !strcmp(v, "nofold") || !strcmp(v, "stale-d"))
        return 1;
    if (strncmp(v, "stop:", 5) || !v[5])
        return 0;
    for (const char *p = v + 5; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

static const char *accepted(const char *name);

int vt_config_load(vt_config *cfg, const char *(*get)(const char *), char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = VT_MODE_FULL;
    cfg->buffer = 32u << 20;
    cfg->threshold_ns = 1000000;
    cfg->compress = 1; /* columns and zstd level 1: doc/format.md, EVENTS_COLS */
    cfg->candidates_all = 1;
    cfg->model_L = -1;
    cfg->model_G_ps = 0;
    cfg->model_trdv = VT_DEFAULT_TRDV;   /* the MPI's same-node eager limit (configure.ac) */
    cfg->model_m = 4;
    cfg->model_K = 8;
    cfg->periodic = -1;
    cfg->period_window = 64;
    cfg->period_max = 64;
    cfg->signals = 1;
    cfg->clock_drift_ns = -1;
    const char *v;
#define BAD(var, val) \
    do { \
        snprintf(err, errlen, "%s='%s' is invalid: expected %s", var, val, accepted(var)); \
        return -1; \
    } while (0)
    if ((v = get("VTRACE_MODE")) && vt_parse_mode(v, &cfg->mode))
        BAD("VTRACE_MODE", v);
    if ((v = get("VTRACE_DIR"))) {
        if (!*v)
            BAD("VTRACE_DIR", v);
        if (strlen(v) >= sizeof cfg->dir - 32)
            BAD("VTRACE_DIR", v);
        strcpy(cfg->dir, v);
    }
    if ((v = get("VTRACE_FILTER"))) {
        /* the file itself is read at MPI_Init (src/tracing/filter.c), which names its lines */
        if (!*v || strlen(v) >= sizeof cfg->filter)
            BAD("VTRACE_FILTER", v);
        strcpy(cfg->filter, v);
    }
    if ((v = get("VTRACE_BUFFER"))) {
        if (vt_parse_size(v, &cfg->buffer))
            BAD("VTRACE_BUFFER", v);
        if (cfg->buffer < 65536 || cfg->buffer > (1u << 30))
            BAD("VTRACE_BUFFER", v);
    }
    if ((v = get("VTRACE_THRESHOLD")) && vt_parse_duration(v, &cfg->threshold_ns))
        BAD("VTRACE_THRESHOLD", v);
    if ((v = get("VTRACE_COMPRESS")) && vt_parse_int(v, 0, 19, &cfg->compress))
        BAD("VTRACE_COMPRESS", v);
    if ((v = get("VTRACE_VERBOSE")) && vt_parse_int(v, 0, 9, &cfg->verbose))
        BAD("VTRACE_VERBOSE", v);
    if ((v = get("VTRACE_CANDIDATES"))) {
        if (!strcmp(v, "all"))
            cfg->candidates_all = 1;
        else if (!strcmp(v, "bursts"))
            cfg->candidates_all = 0;
        else
            BAD("VTRACE_CANDIDATES", v);
    }
    if ((v = get("VTRACE_MODEL_L")) && vt_parse_duration(v, &cfg->model_L))
        BAD("VTRACE_MODEL_L", v);
    if ((v = get("VTRACE_MODEL_G")) && vt_parse_per_byte(v, &cfg->model_G_ps))
        BAD("VTRACE_MODEL_G", v);
    if ((v = get("VTRACE_MODEL_TRDV")) && vt_parse_size(v, &cfg->model_trdv))
        BAD("VTRACE_MODEL_TRDV", v);
    if ((v = get("VTRACE_MODEL_M")) && vt_parse_int(v, 1, 7, &cfg->model_m))
        BAD("VTRACE_MODEL_M", v);
    if ((v = get("VTRACE_MODEL_K")) && vt_parse_int(v, 1, 8, &cfg->model_K))
        BAD("VTRACE_MODEL_K", v);
    if ((v = get("VTRACE_PERIODIC")) && vt_parse_int(v, 0, 1000000, &cfg->periodic))
        BAD("VTRACE_PERIODIC", v);
    if ((v = get("VTRACE_PERIOD_WINDOW")) && vt_parse_int(v, 1, 4096, &cfg->period_window))
        BAD("VTRACE_PERIOD_WINDOW", v);
    if ((v = get("VTRACE_PERIOD_MAX")) && vt_parse_int(v, 1, 4096, &cfg->period_max))
        BAD("VTRACE_PERIOD_MAX", v);
    if ((v = get("VTRACE_FLUSH_INTERVAL")) && strcmp(v, "0") &&
        (vt_parse_duration(v, &cfg->flush_interval_ns) || cfg->flush_interval_ns < 1000000))
        BAD("VTRACE_FLUSH_INTERVAL", v);
    if ((v = get("VTRACE_SIGNALS")) && vt_parse_int(v, 0, 1, &cfg->signals))
        BAD("VTRACE_SIGNALS", v);
    /* read before MPI_Init (src/mpid/pb_env.c); checked here like the others */
    int ucx_inline;
    if ((v = get("VTRACE_UCX_INLINE")) && vt_parse_int(v, 0, 1, &ucx_inline))
        BAD("VTRACE_UCX_INLINE", v);
    if ((v = get("VTRACE_OVERWRITE"))) {
        enum vt_overwrite o;
        if (vt_parse_overwrite(v, &o))
            BAD("VTRACE_OVERWRITE", v);
        cfg->overwrite = (int)o;
    }
    if ((v = get("VTRACE_CLOCK"))) {
        enum vt_clock_choice c;
        if (vt_parse_clock(v, &c))
            BAD("VTRACE_CLOCK", v);
        cfg->clock = (int)c;
    }
    if ((v = get("VTRACE_TEST_CLOCK_SKEW")) && vt_parse_duration(v, &cfg->test_clock_skew_ns))
        BAD("VTRACE_TEST_CLOCK_SKEW", v);
    if ((v = get("VTRACE_TEST_FAIL_AFTER")) && vt_parse_size(v, &cfg->test_fail_after))
        BAD("VTRACE_TEST_FAIL_AFTER", v);
    /* read where it is used (rtreduce.c); checked here like the others */
    if ((v = get("VTRACE_TEST_RT_BROKEN")) && !rt_broken_ok(v))
        BAD("VTRACE_TEST_RT_BROKEN", v);
    if ((v = get("VTRACE_TEST_SHARE_FUNCS")) && strcmp(v, "0") && strcmp(v, "1"))
        BAD("VTRACE_TEST_SHARE_FUNCS", v);
    if ((v = get("VTRACE_TEST_POST_HOOK")) && strcmp(v, "0") && strcmp(v, "1"))
        BAD("VTRACE_TEST_POST_HOOK", v);
    /* read where it is used (format/stored.c, tracing/lifecycle.c); checked here */
    if ((v = get("VTRACE_TEST_STORE")) && strcmp(v, "kill") && strcmp(v, "nospace") && strcmp(v, "readwrite") &&
        strcmp(v, "larger"))
        BAD("VTRACE_TEST_STORE", v);
#undef BAD
    return 0;
}

/* Every VTRACE_* name the project knows, described once: vt_config_load's messages
 * take the accepted forms from here, `vtrace config-vars` prints the table. Settings are
 * read by the layer (vt_config_load; VTRACE_MODE and VTRACE_UCX_INLINE also by src/mpid/pb_env.c
 * before MPI_Init, VTRACE_TEST_RT_BROKEN by rtreduce.c) and are the names offered for a typo; the
 * others belong to vtrace's module file, compiler wrapper and scripts and may be in a
 * traced program's environment. */
static const vt_setting_info known[] = {
    {"VTRACE_MODE", 1, "enum", "full", "one of off, full, reduced, both",
     "What the layer does: off records nothing; full writes every call; reduced writes only what can change a "
     "prediction (the run-time reduction, a 64-byte header on every point-to-point message); both writes DIR/full "
     "and DIR/reduced from one run."},
    {"VTRACE_DIR", 1, "path", "vtrace-YYYYMMDD-HHMMSS-<job id or pid>",
     "a directory path shorter than 4000 characters (unset it for the default name)",
     "The trace directory, created with its parents; the default is made in rank 0's working directory."},
    {"VTRACE_BUFFER", 1, "size", "32M", "a size from 64k to 1G such as 32M or 512k (suffixes k, M, G: powers of 1024)",
     "Per-rank buffer; when full it is written to the rank's file and the write is recorded as a FLUSH event."},
    {"VTRACE_THRESHOLD", 1, "duration", "1ms", "a duration such as 500us, 2ms or 1s (units ns, us, ms, s)",
     "The model's candidate threshold theta: bursts and calls at least this long are candidates of a what-if."},
    {"VTRACE_CANDIDATES", 1, "enum", "all", "all or bursts",
     "Whether long MPI calls are candidates too (all) or only computation bursts (bursts)."},
    {"VTRACE_COMPRESS", 1, "integer", "1", "a zstd level from 0 (off) to 19",
     "zstd level of the trace blocks; above 0 the event blocks are also packed in columns."},
    {"VTRACE_VERBOSE", 1, "integer", "0", "0, 1 or 2",
     "1: rank 0 says where the trace goes; 2: also each rank its records, and those not encoded."},
    {"VTRACE_FILTER", 1, "path", "none",
     "a readable filter file: one MPI function, glob (MPI_Win_*) or site:NAME a line, # comments",
     "Calls of the listed functions and call sites are left out of the trace and counted in the profile only; "
     "their time becomes part of the computation around them (README.vtrace, Filters)."},
    {"VTRACE_MODEL_L", 1, "duration", "half the fastest round trip at MPI_Init",
     "a duration such as 1500ns or 2us (the modelled message latency)", "The model's message latency L."},
    {"VTRACE_MODEL_G", 1, "time per byte", "0ps", "a time per byte such as 0.1ns or 100ps",
     "The model's time per byte G."},
    {"VTRACE_MODEL_TRDV", 1, "size", VT_DEFAULT_TRDV_STR,
     "a size in bytes such as 8256 or 64k (the rendezvous threshold)",
     "Size from which a standard send is modelled as synchronous (the MPI's eager limit on one node: "
     "8256 for MPICH ch4:ucx, 4041 for Open MPI's vader)."},
    {"VTRACE_MODEL_M", 1, "integer", "4", "an integer from 1 to 7",
     "Limit m of the run-time reduction's symbolic differences (terms of a difference)."},
    {"VTRACE_MODEL_K", 1, "integer", "8", "an integer from 1 to 8",
     "Limit K of the run-time reduction's symbolic differences (messages folded into one)."},
    {"VTRACE_PERIODIC", 1, "integer", "off",
     "0 (mark the iterations of periodic stretches) or N > 0 (also keep only N iterations of each in detail)",
     "The run-time periodicity detector: iteration boundaries become MARKER records; N > 0 makes a scaled trace."},
    {"VTRACE_PERIOD_WINDOW", 1, "integer", "64", "an integer from 1 to 4096 (calls the periodicity detector compares)",
     "The periodicity detector's window."},
    {"VTRACE_PERIOD_MAX", 1, "integer", "64", "an integer from 1 to 4096 (the longest period looked for)",
     "The periodicity detector's longest period."},
    {"VTRACE_FLUSH_INTERVAL", 1, "duration", "0", "0 (off) or a duration of at least 1ms such as 10s or 500ms",
     "Write the buffer at least this often, so that a run killed by SIGKILL loses at most this much; each write "
     "adds a FLUSH event and a snapshot of the rank's definitions."},
    {"VTRACE_SIGNALS", 1, "integer", "1", "1 (write the trace when a signal, MPI_Abort or exit ends the run) or 0",
     "1: when a fatal signal, MPI_Abort or exit without MPI_Finalize ends the run, each rank writes its trace first "
     "(README.vtrace, Runs that end early)."},
    {"VTRACE_UCX_INLINE", 1, "integer", "0",
     "0 or 1 (with reduced or both, widen UCX's inline limit by the header; the same on every rank)",
     "1: with VTRACE_MODE=reduced or both on an MPI over UCX (MPICH ch4:ucx, Open MPI), set "
     "UCX_MM_FIFO_ELEM_SIZE=192 (UCX's 128 plus the 64-byte header) before MPI_Init unless it or "
     "UCX_POSIX_FIFO_ELEM_SIZE or UCX_SYSV_FIFO_ELEM_SIZE is set, so that messages stay inline in UCX's "
     "shared-memory FIFO where they did without tracing. Every rank of the job must then run the layer in "
     "the same mode: UCX hangs the job when its processes' element sizes differ."},
    {"VTRACE_OVERWRITE", 1, "enum", "aside", "aside, replace or refuse",
     "When VTRACE_DIR (or the OUT of vtrace reduce, compensate and export) holds a trace already: aside renames "
     "it DIR.old-YYYYMMDD-HHMMSS (the time it was written), replace writes over it, refuse leaves the run "
     "untraced (the tools exit with an error)."},
    {"VTRACE_CLOCK", 1, "enum", "auto", "one of auto, tsc, monotonic",
     "The layer's clock: auto reads the TSC where the kernel's clocksource is tsc, clock_gettime(CLOCK_MONOTONIC) "
     "elsewhere; tsc reads the TSC whatever the clocksource (a VM's kvm-clock, for instance) when the processor says "
     "it is invariant, and checks at MPI_Finalize that it kept time with CLOCK_MONOTONIC; monotonic never reads it."},
    {"VTRACE_TEST_CLOCK_SKEW", 1, "duration", "off", "a duration such as 5ms",
     "Testing only: the check of the TSC at MPI_Finalize sees the TSC this much ahead of CLOCK_MONOTONIC."},
    {"VTRACE_TEST_FAIL_AFTER", 1, "size", "off", "a size",
     "Testing only: trace writes fail as if the disk were full after this many bytes."},
    {"VTRACE_TEST_RT_BROKEN", 1, "enum", "off", "noR3, nofold, stale-d or stop:N",
     "Testing only: breaks a rule of the run-time reduction on purpose, or stops it at call N."},
    {"VTRACE_TEST_SHARE_FUNCS", 1, "flag", "0", "0 or 1",
     "Testing only: 1 puts the function table (from 2 ranks always) and the ranks' definitions' dictionary "
     "(from 8 ranks always) into vtrace.defs (format 1.5) with fewer ranks too."},
    {"VTRACE_TEST_POST_HOOK", 1, "flag", "0", "0 or 1",
     "Testing only: 1 calls the traced program's vtrace_test_post_hook (MPI_THREAD_MULTIPLE) after each MPI_Wait, "
     "MPI_Test, MPI_Waitall or MPI_Testall returned, before the layer records it."},
    {"VTRACE_TEST_STORE", 1, "enum", "off", "kill, nospace, readwrite or larger",
     "Testing only: storing the full trace as the reduced one (doc/format.md, stored reduced traces) dies inside "
     "the copy (kill), fails as on a full disk (nospace) or copies with read and write (readwrite); larger makes "
     "the run take every reduced rank file as larger than the full one."},
    {"VTRACE_ROOT", 0, "path", "-", "-", "Set by the module file: the installation prefix."},
    {"VTRACE_LIB", 0, "path", "-", "-", "Set by the module file: libvtrace.so, for LD_PRELOAD."},
    {"VTRACE_PROFILE", 0, "path", "-", "-", "Set by the module file: the profile for MPICH's mpicc -profile=$VTRACE_PROFILE."},
    {"VTRACE_PAR_STATS", 0, "flag", "-", "-", "vtrace-mpi: process 0 prints the parallel replay's rounds and bytes."},
    {"VTRACE_WRAPPER_SHOW", 0, "flag", "-", "-", "Compiler wrappers: print the command instead of running it."},
    {"VTRACE_CONFIGURE_FLAGS", 0, "string", "-", "-", "maint/run-tests.sh: extra configure options (CI)."},
    {"VTRACE_TEST_JOBS", 0, "integer", "-", "-", "maint/run-tests.sh: parallel test jobs."},
    {"VTRACE_SKIP_DEPS", 0, "flag", "-", "-", "maint/quickstart.sh: do not install dependencies."},
    {"VTRACE_SHARED", 0, "path", "-", "-", "test/model: the shared design directory."},
    {"VTRACE_DEBUG_PATH", 0, "path list", "none", "directories separated by colons",
     "Read by the vtrace command, not the layer: where to look for the call sites' binaries and debug files "
     "(after --debug-dir)."},
};

#define NKNOWN (sizeof known / sizeof known[0])

const vt_setting_info *vt_setting_info_at(size_t i) { return i < NKNOWN ? &known[i] : NULL; }

static const char *accepted(const char *name)
{
    for (size_t i = 0; i < NKNOWN; i++)
        if (!strcmp(known[i].name, name))
            return known[i].accepted;
    return "?";
}

const char *vt_setting_at(size_t i, int *is_setting)
{
    if (i >= NKNOWN)
        return NULL;
    if (is_setting)
        *is_setting = known[i].is_setting;
    return known[i].name;
}

int vt_setting_known(const char *name)
{
    for (size_t i = 0; i < NKNOWN; i++)
        if (!strcmp(name, known[i].name))
            return 1;
    return 0;
}

size_t vt_edit_distance(const char *a, const char *b)
{
    /* Levenshtein, two rows, letters without case (VTRACE_buffer is one mistake from
     * VTRACE_BUFFER, not six); names past 255 characters are compared on their start */
    enum { MAX = 255 };
    size_t la = strnlen(a, MAX), lb = strnlen(b, MAX);
    size_t row[MAX + 1], prev[MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]));
            size_t del = prev[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, row, (lb + 1) * sizeof row[0]);
    }
    return prev[lb];
}

const char *vt_setting_nearest(const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < NKNOWN; i++) {
        if (!known[i].is_setting)
            continue;
        size_t d = vt_edit_distance(name, known[i].name);
        if (d < best_d) {
            best_d = d;
            best = known[i].name;
        }
    }
    return best;
}

int vt_config_unknown(char *const *envp, void (*report)(const char *name, const char *nearest, void *arg), void *arg)
{
    int n = 0;
    for (; envp && *envp; envp++) {
        const char *e = *envp;
        if (strncmp(e, "VTRACE_", 7))
            continue;
        char name[256];
        size_t len = strcspn(e, "=");
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, e, len);
        name[len] = '\0';
        if (vt_setting_known(name))
            continue;
        n++;
        if (report)
            report(name, vt_setting_nearest(name), arg);
    }
    return n;
}

/* VTRACE_CLOCK, the clock the ranks used (VTRACE_CLOCK_USED) and, from MPI_Finalize
 * on, the check of the TSC against CLOCK_MONOTONIC (VTRACE_CLOCK_CHECK); vtrace info
 * shows them. */
static int clock_lines(const vt_config *cfg, char *out, size_t len)
{
    int n = snprintf(out, len, "VTRACE_CLOCK=%s\n", vt_clock_choice_name((enum vt_clock_choice)cfg->clock));
    if (cfg->clock_ranks <= 0 || n < 0 || (size_t)n >= len)
        return n;
    if (cfg->clock_tsc_ranks == cfg->clock_ranks)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_CLOCK_USED=tsc\n");
    else if (cfg->clock_tsc_ranks == 0)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_CLOCK_USED=monotonic\n");
    else
        n += snprintf(out + n, len - (size_t)n, "VTRACE_CLOCK_USED=tsc on %d of %d ranks, monotonic on the others\n",
                      cfg->clock_tsc_ranks, cfg->clock_ranks);
    if (cfg->clock_drift_ns < 0 || n < 0 || (size_t)n >= len)
        return n;
    if (cfg->clock_drift_ns <= cfg->clock_drift_bound_ns)
        n += snprintf(out + n, len - (size_t)n,
                      "VTRACE_CLOCK_CHECK=kept time: the TSC at most %" PRId64 "ns from CLOCK_MONOTONIC at "
                      "MPI_Finalize (bound %" PRId64 "ns)\n", cfg->clock_drift_ns, cfg->clock_drift_bound_ns);
    else
        n += snprintf(out + n, len - (size_t)n,
                      "VTRACE_CLOCK_CHECK=drifted: the TSC %" PRId64 "ns from CLOCK_MONOTONIC at MPI_Finalize on "
                      "rank %d (bound %" PRId64 "ns): the trace's times may be wrong\n", cfg->clock_drift_ns,
                      cfg->clock_drift_rank, cfg->clock_drift_bound_ns);
    return n;
}

int vt_config_format(const vt_config *cfg, char *out, size_t len)
{
    int n = snprintf(out, len,
                    "VTRACE_MODE=%s\nVTRACE_DIR=%s\nVTRACE_BUFFER=%" PRIu64 "\nVTRACE_THRESHOLD=%" PRId64
                    "ns\nVTRACE_CANDIDATES=%s\nVTRACE_COMPRESS=%d\nVTRACE_MODEL_L=%" PRId64
                    "ns\nVTRACE_MODEL_G=%" PRId64 "ps\nVTRACE_MODEL_TRDV=%" PRIu64
                    "\nVTRACE_MODEL_M=%d\nVTRACE_MODEL_K=%d\n",
                    vt_mode_name(cfg->mode), cfg->dir, cfg->buffer, cfg->threshold_ns,
                    cfg->candidates_all ? "all" : "bursts", cfg->compress, cfg->model_L < 0 ? 0 : cfg->model_L,
                    cfg->model_G_ps, cfg->model_trdv, cfg->model_m, cfg->model_K);
    if (cfg->model_pbytes > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_MODEL_PBYTES=%d\nVTRACE_MODEL_CLOCK=init\n",
                      cfg->model_pbytes);
    if (cfg->model_L_rounds > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_MODEL_L_CALIBRATION=min of %d, median %" PRId64 "ns\n",
                      cfg->model_L_rounds, cfg->model_L_median);
    if (cfg->filter[0] && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_FILTER=%s\n", cfg->filter);
    if (n >= 0 && (size_t)n < len)
        n += clock_lines(cfg, out + n, len - (size_t)n);
    if (cfg->periodic >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "VTRACE_PERIODIC=%d\nVTRACE_PERIOD_WINDOW=%d\nVTRACE_PERIOD_MAX=%d\n",
                      cfg->periodic, cfg->period_window, cfg->period_max);
    return n;
}
