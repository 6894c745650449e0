/* VTRACE_* environment variables: typed values, parsed once at initialisation. */
#ifndef VT_SETTINGS_H
#define VT_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

enum vt_mode { VT_MODE_OFF, VT_MODE_FULL, VT_MODE_REDUCED, VT_MODE_BOTH };
/* VTRACE_CLOCK: the TSC where the kernel's clocksource is tsc (auto), wherever the CPU
 * says it is invariant (tsc), or never (monotonic). */
enum vt_clock_choice { VT_CLOCK_AUTO, VT_CLOCK_TSC, VT_CLOCK_MONOTONIC };

typedef struct vt_config {
    enum vt_mode mode;
    char dir[4096];          /* empty: the default name is made at initialisation */
    uint64_t buffer;         /* bytes */
    int64_t threshold_ns;    /* the model's candidate threshold theta */
    int candidates_all;      /* VTRACE_CANDIDATES: 1 all (bursts and calls), 0 bursts */
    int64_t model_L;         /* ns; -1: calibrated at MPI_Init */
    int64_t model_L_median;  /* ... then the median of the round trips' halves */
    int model_L_rounds;      /* ... and their number (0: L was given) */
    int64_t model_G_ps;      /* picoseconds per byte */
    uint64_t model_trdv;     /* bytes */
    int model_m, model_K;
    int model_pbytes;      /* room for the difference in a message header (modes reduced, both) */
    int compress;            /* zstd level, 0 = none */
    int verbose;
    int periodic;            /* VTRACE_PERIODIC: -1 off; 0 mark iterations; N keep N iterations */
    int period_window;       /* VTRACE_PERIOD_WINDOW: samples the detector compares */
    int period_max;          /* VTRACE_PERIOD_MAX: longest period looked for */
    int64_t flush_interval_ns; /* VTRACE_FLUSH_INTERVAL: write the buffer at least this often; 0: only when full */
    int signals;             /* VTRACE_SIGNALS: write the buffer when a fatal signal, MPI_Abort or exit ends the run */
    uint64_t test_fail_after;
    char filter[4096];       /* VTRACE_FILTER: the filter file, empty for none */
    int overwrite;           /* VTRACE_OVERWRITE: enum vt_overwrite (util/aside.h) */
    int clock;               /* VTRACE_CLOCK: enum vt_clock_choice */
    int64_t test_clock_skew_ns; /* VTRACE_TEST_CLOCK_SKEW: added to the TSC's side of the end check */
    /* The clock the run used, for the configuration text (0 ranks: not known yet) */
    int clock_ranks, clock_tsc_ranks;
    /* ... and the check at the end (clock.h): the largest |TSC - CLOCK_MONOTONIC| of the
     * ranks on the TSC, its rank and bound; clock_drift_ns < 0: not checked */
    int64_t clock_drift_ns, clock_drift_bound_ns;
    int clock_drift_rank;
} vt_config;

/* Parsers of one value; each returns 0, or -1 and leaves *out alone. */
int vt_parse_size(const char *s, uint64_t *out);
int vt_parse_duration(const char *s, int64_t *out);
int vt_parse_mode(const char *s, enum vt_mode *out);
int vt_parse_int(const char *s, int lo, int hi, int *out);
/* A time per byte such as 0.25ns or 250ps, in picoseconds. */
int vt_parse_per_byte(const char *s, int64_t *ps);
const char *vt_mode_name(enum vt_mode m);
int vt_parse_clock(const char *s, enum vt_clock_choice *out);
const char *vt_clock_choice_name(enum vt_clock_choice c);

/* Reads the environment through getenv_fn (getenv in the library, a table in tests).
 * Returns 0, or -1 with a message naming the variable and the accepted forms; a variable
 * that is set but empty (VTRACE_BUFFER=) is invalid too. */
int vt_config_load(vt_config *cfg, const char *(*getenv_fn)(const char *), char *err, size_t errlen);

/* One VTRACE_* name of the project's one table (settings.c): vt_config_load's messages
 * and `vtrace config-vars` come from it. */
typedef struct vt_setting_info {
    const char *name;
    int is_setting;          /* 1 read by the layer; 0 a name of vtrace's scripts, module file, wrapper */
    const char *type;
    const char *def;         /* the default, as a user would write it (or what happens unset) */
    const char *accepted;    /* the accepted forms (the "expected ..." of an error) */
    const char *what;        /* one sentence */
} vt_setting_info;
/* i-th entry, NULL past the end. */
const vt_setting_info *vt_setting_info_at(size_t i);

/* The VTRACE_* names the project knows (one table, settings.c): i-th name, NULL past the
 * end; *is_setting (may be NULL): 1 for a setting the layer reads, 0 for a name of
 * vtrace's scripts, module file or compiler wrapper. */
const char *vt_setting_at(size_t i, int *is_setting);
int vt_setting_known(const char *name);
/* Levenshtein distance (insertions, deletions, substitutions), letters without case. */
size_t vt_edit_distance(const char *a, const char *b);
/* The setting nearest to name by edit distance (the first of the table on a tie). */
const char *vt_setting_nearest(const char *name);
/* Calls report for every VTRACE_* variable of envp ("NAME=value" strings, NULL-terminated)
 * whose name is not known, with the nearest setting. Returns how many there were. */
int vt_config_unknown(char *const *envp, void (*report)(const char *name, const char *nearest, void *arg),
                      void *arg);

/* The effective configuration as KEY=value lines. */
int vt_config_format(const vt_config *cfg, char *out, size_t len);

#endif
