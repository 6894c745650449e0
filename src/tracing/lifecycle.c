/* Starting and finishing the layer: configuration, trace directory, clock
 * synchronisation, and the definitions written at MPI_Init and MPI_Finalize (or when the
 * run ends otherwise: crash.h). */
#include "vt_config.h"
#include "tracing/buffer.h"
#include "tracing/period.h"
#include "tracing/callsites.h"
#include "tracing/modules.h"
#include "tracing/comms.h"
#include "tracing/handlers.h"
#include "mpid/piggyback.h"
#include "tracing/rtreduce.h"
#include "tracing/filter.h"
#include "tracing/log.h"
#include "util/settings.h"
#include "tracing/topo.h"
#include "format/blockio.h"
#include "format/stored.h"
#include "tracing/clock.h"
#include "tracing/clocksync.h"
#include "tracing/crash.h"
#include "tracing/rankdefs.h"
#include "tracing/tracedir.h"
#include "util/aside.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int started;             /* initialisation was attempted */
static int finished;
static int late_init;
static int world_size;
/* From this many ranks the trace's function table goes into vtrace.defs (1.5): at
 * MPI_Finalize it names the functions some rank used only (share_used_functions), which
 * costs less than a FUNCS block in each rank file from 2 ranks on. From SHARE_DICT_RANKS
 * on the ranks' last RANKDEFS are compressed against rank 0's (share_dict): below, the
 * dictionary (about 270 bytes for the halo example) costs more than it saves. */
#define SHARE_FUNCS_RANKS 2
#define SHARE_DICT_RANKS 8
static int force_share;                 /* VTRACE_TEST_SHARE_FUNCS=1: both from 1 rank on */
static MPI_Comm own_comm = MPI_COMM_NULL;  /* ours: clock synchronisation, definitions */
static vt_config cfg;
static char rank_path[4200];
static int64_t t_init, fin_enter = -1;
static const void *fin_site;
static vt_clocksync cs = {.min_rtt = INT64_MAX}; /* clock synchronisation (own_comm) */
static int keyval = MPI_KEYVAL_INVALID;
static char reduced_dir[4200];          /* VTRACE_MODE=reduced, both: where the run-time reduction writes */
static char base_dir[4200];             /* ... and the directory the user named */
static int rt_ok;                       /* ... and it wrote this rank's reduced trace */
static uint64_t overhead_ps;            /* measured at MPI_Init (measure_overhead) */
/* The dictionary the last RANKDEFS of every rank compress against (share_dict); at most
 * DICT_MAX bytes */
#define DICT_MAX (16u << 10)
static uint8_t dict[DICT_MAX];
static size_t dict_len;

/* Memory the crash paths encode into beyond the definitions' own size: all function
 * names (about 8 KB) and what comes until the next snapshot */
#define CRASH_RESERVE (128u << 10)
#define HOST_LEN 64

static const char *env(const char *name) { return getenv(name); }

extern char **environ;

static void unknown_setting(const char *name, const char *nearest, void *arg)
{
    (void)arg;
    fprintf(stderr, "vtrace: warning: unknown setting %s (did you mean %s?)\n", name, nearest);
}


static int finish_cb(MPI_Comm comm, int kv, void *val, void *extra);
static vt_placement placement;   /* at MPI_Init, for the snapshots and the crash paths */
static int write_global(const char *dir, const int64_t *clk, const char *hosts, unsigned flags);
static void gather_ranks(int rank, const char *myhost, int64_t **clk, char **hosts);
static void snapshot(void);

/* The effective configuration, with the directory the user named (VTRACE_MODE=reduced
 * and both write into DIR/full and DIR/reduced). */
static void config_text(char *text, size_t cap)
{
    vt_config c = cfg;
    if (base_dir[0])
        snprintf(c.dir, sizeof c.dir, "%.*s", (int)sizeof c.dir - 1, base_dir);
    vt_config_format(&c, text, cap);
}

static void write_config(const char *dir, const char *text)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/config.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void end_abnormally(unsigned reason, int64_t detail, int in_signal);


/* The cost one recorded call adds (seed 001's O, for vtrace compensate): the recording
 * path of a call (two clock reads, the record encoded, the profile updated) timed on
 * dummy records written into a scratch buffer, never the trace. The best of a few short
 * rounds, so that a preemption does not count: about 5 x 256 records, some tens of
 * microseconds in MPI_Init. What it leaves out (the wrapper's depth test and the call
 * into the handler, a flush of a full buffer) is either a few cycles or recorded
 * separately (FLUSH records). */
#define OVH_ROUNDS 5
#define OVH_RECORDS 256
static uint64_t measure_overhead(void)
{
    static uint8_t scratch[OVH_RECORDS * 48];
    vt_profile_entry prof = {0, 0, 0, 0};
    int64_t best = INT64_MAX;
    for (int round = 0; round < OVH_ROUNDS; round++) {
        int64_t prev = vt_now(), t0 = prev;
        uint8_t *p = scratch;
        for (int i = 0; i < OVH_RECORDS; i++) {
            int64_t enter = vt_now(); /* VT_ENTER's clock read */
            int64_t exit = vt_now();  /* the handler's */
            p = vt_put_uvar(p, VT_CODE_FIRST_FN + (uint64_t)(i & 63));
            p = vt_put_svar(p, enter - prev);
            p = vt_put_uvar(p, (uint64_t)(exit - enter));
            p = vt_put_uvar(p, (uint64_t)i & 7);    /* call site */
            p = vt_put_uvar(p, 0);                  /* c */
            p = vt_put_svar(p, i & 1);              /* p */
            p = vt_put_svar(p, 7);                  /* t */
            p = vt_put_uvar(p, (uint64_t)i * 64);   /* b */
            prof.calls++;
            prof.time_ns += (uint64_t)(exit - enter);
            prev = exit;
        }
        int64_t t1 = vt_now();
        /* keep the encoding from being optimised away */
        __asm__ __volatile__("" : : "r"(p), "r"(&prof) : "memory");
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best > 0 && best < INT64_MAX ? (uint64_t)best * 1000u / OVH_RECORDS : 0;
}

static int64_t init_begin_time;

int64_t vt_init_begin(void)
{
    vt_clock_mark(&cs.mark);
    vt_pb_before_init();
    vt__depth++;
    return init_begin_time = vt_now();
}

/* Sets the layer up once MPI runs. Returns 0, or -1 when recording is off. */
static int start(int provided)
{
    int rank;
    started = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    vt__rank = rank;
    char err[512];
    int bad = vt_config_load(&cfg, env, err, sizeof err) ? rank : world_size, first_bad = world_size;
    if (bad == world_size && cfg.filter[0] && vt_filter_load(cfg.filter, err, sizeof err))
        bad = rank;
    if (bad == world_size) {
        /* every rank must run the same mode: headers on some messages only would corrupt them;
         * and the same filter: a collective left out on some ranks only has no partners */
        int fd = (int)(vt_filter_digest() & 0x3fffffff);
        int modes[4] = {(int)cfg.mode, -(int)cfg.mode, fd, -fd}, agreed[4];
        PMPI_Allreduce(modes, agreed, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (agreed[0] != -agreed[1]) {
            bad = rank;
            snprintf(err, sizeof err, "VTRACE_MODE differs between ranks (%s here; %s and %s are in use): every "
                     "rank must run the same mode", vt_mode_name(cfg.mode), vt_mode_name((enum vt_mode)-agreed[1]),
                     vt_mode_name((enum vt_mode)agreed[0]));
        } else if (agreed[2] != -agreed[3]) {
            bad = rank;
            snprintf(err, sizeof err, "VTRACE_FILTER differs between ranks (%.300s here): every rank must read the "
                     "same entries", cfg.filter[0] ? cfg.filter : "none");
        }
    } else {
        int dummy[4] = {INT_MIN, INT_MIN, INT_MIN, INT_MIN}, agreed[4];
        PMPI_Allreduce(dummy, agreed, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    /* The lowest rank with an invalid setting says why, before anyone aborts (an
     * early abort of another rank could end the job before the message is out). */
    PMPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad < world_size) {
        if (rank == first_bad) {
            fprintf(stderr, "vtrace: %s\n", err);
            fflush(stderr);
        }
        /* Every rank ends normally with status 1: an MPI_Abort here could end the job
         * before mpiexec has forwarded the message (seen once in a dozen runs). */
        PMPI_Barrier(MPI_COMM_WORLD);
        PMPI_Finalize();
        exit(1);
    }
    /* a misspelt setting is ignored: say so once (rank 0), whatever the mode */
    if (rank == 0 && vt_config_unknown(environ, unknown_setting, NULL))
        fflush(stderr);
    vt__verbose = cfg.verbose;
    if (cfg.mode == VT_MODE_OFF)
        return -1;
    int reducing = cfg.mode == VT_MODE_REDUCED || cfg.mode == VT_MODE_BOTH;
    if (reducing) {
        /* every message carries the header from here on (src/mpid/piggyback.h) */
        vt_pb_start_transport((int64_t)cfg.model_trdv);
        cfg.model_pbytes = VT_RT_POLY_ROOM;
    }
    vt__mt = provided == MPI_THREAD_MULTIPLE;
    vt_rec_special_set(VT_REC_MT, vt__mt);
    /* test hook: the program's vtrace_test_post_hook, if it has one */
    const char *post_hook = getenv("VTRACE_TEST_POST_HOOK");
    if (vt__mt && post_hook && !strcmp(post_hook, "1"))
        vt__test_post = vtrace_test_post_hook;
    PMPI_Comm_dup(MPI_COMM_WORLD, &own_comm);
    if (rank == 0 && !cfg.dir[0])
        vt_default_dir(cfg.dir, sizeof cfg.dir);
    if (rank == 0)
        vt_spawned_subdir(cfg.dir, sizeof cfg.dir);
    /* a trace there already: moved aside, written over or kept (VTRACE_OVERWRITE) */
    int room = 0;
    if (rank == 0) {
        char moved[4400], why[4400];
        room = vt_make_room(cfg.dir, (enum vt_overwrite)cfg.overwrite, moved, sizeof moved, why, sizeof why);
        if (room > 0)
            vt_warn("%s held a trace: it is now %s (VTRACE_OVERWRITE=aside; replace writes over it)", cfg.dir,
                    moved);
        else if (room < 0)
            vt_warn("%s: tracing is off for this run", why);
    }
    PMPI_Bcast(&room, 1, MPI_INT, 0, own_comm);
    if (room < 0)
        return -1;
    PMPI_Bcast(cfg.dir, (int)sizeof cfg.dir, MPI_CHAR, 0, own_comm);
    int rc = 0;
    if (reducing) {
        /* DIR/full and DIR/reduced: the full trace is written too in this version (the
         * run-time reduction stops, with a warning, at the calls it does not handle yet) */
        rc = vt_mkdirs(cfg.dir);
        snprintf(reduced_dir, sizeof reduced_dir, "%s/reduced", cfg.dir);
        snprintf(base_dir, sizeof base_dir, "%s", cfg.dir);
        strcat(cfg.dir, "/full");
        if (!rc)
            rc = vt_mkdirs(reduced_dir);
    }
    if (!rc)
        rc = vt_mkdirs(cfg.dir);
    /* one function table for the trace, in vtrace.defs (1.5), when every rank has the
     * same (one build): the rank files then carry none. */
    const char *force = getenv("VTRACE_TEST_SHARE_FUNCS");
    force_share = force && !strcmp(force, "1");
    uint64_t want = world_size >= SHARE_FUNCS_RANKS || force_share ? vt_buffer_functions_hash() : 0;
    uint64_t fh[3] = {want, ~want, (uint64_t)force_share}, fall[3];
    PMPI_Allreduce(fh, fall, 3, MPI_UINT64_T, MPI_MIN, own_comm);
    force_share = fall[2] == 1;   /* every rank's (share_dict is collective) */
    if (want && fall[0] == want && ~fall[1] == want)
        vt_buffer_share_functions();
    if (rc == 0) {
        snprintf(rank_path, sizeof rank_path, "%s/rank-%06d.vte", cfg.dir, rank);
        /* VTRACE_MODE=reduced keeps the full trace only as long as it may still be needed
         * whole (buffer.h): a second thread's call would stop the run-time reduction */
        int keep_full = cfg.mode != VT_MODE_REDUCED || vt__mt || cfg.periodic >= 0;
        rc = vt_buffer_open(rank_path, rank, cfg.buffer, cfg.compress, cfg.test_fail_after, keep_full);
    }
    int ok = rc == 0, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, own_comm);
    if (!ok)
        vt_warn("cannot write the trace in %s (%s): tracing is off for this run", cfg.dir, strerror(-rc));
    if (!all_ok) {
        vt_buffer_close();
        return -1;
    }
    if (cfg.periodic >= 0 && vt__mt) {
        if (rank == 0)
            vt_warn("VTRACE_PERIODIC is ignored under MPI_THREAD_MULTIPLE (one stream of calls per rank is "
                    "needed)");
    } else if (vt_period_init(cfg.periodic, cfg.period_window, cfg.period_max)) {
        vt_warn("VTRACE_PERIODIC: no memory for the periodicity detector; it is off");
    }
    vt_comms_init(rank, world_size);
    cs.comm = own_comm;
    cs.size = world_size;
    cs.choice = cfg.clock;
    vt_clocksync_choose(&cs, rank);
    /* the clock the ranks use, as the configuration says it (vtrace info) */
    int on_tsc = vt__use_tsc;
    PMPI_Allreduce(&on_tsc, &cfg.clock_tsc_ranks, 1, MPI_INT, MPI_SUM, own_comm);
    cfg.clock_ranks = world_size;
    overhead_ps = measure_overhead(); /* with the clock the records will use */
    vt_clocksync_run(&cs, 0);
    cs.at[1] = cs.at[0];
    cs.off[1] = cs.off[0];
    /* The model's message latency L, unless given: half the fastest round trip of the
     * clock synchronisation (rank 0 writes the configuration). */
    if (cfg.model_L < 0) {
        cfg.model_L = cs.min_rtt < INT64_MAX ? cs.min_rtt / 2 : 0;
        /* how it was calibrated, in the configuration (vtrace info shows it) */
        cfg.model_L_median = cs.rtt_median / 2;
        cfg.model_L_rounds = cs.rtt_rounds;
        if (rank == 0 && cfg.model_L > 2 * VT_SYNC_GOOD_RTT)
            vt_warn("the message latency L measured at MPI_Init is %.1f us (half the fastest of %d round trips "
                    "with rank 1, whose median is %.1f us): the machine looks oversubscribed or noisy, and every "
                    "prediction assumes this L; set VTRACE_MODEL_L (e.g. to the latency of a calm run) to override "
                    "it", (double)cfg.model_L / 1e3, cs.rtt_rounds, (double)cs.rtt_median / 2e3);
    }
    /* every rank models with rank 0's value (the run-time reduction decides with it) */
    PMPI_Bcast(&cfg.model_L, 1, MPI_INT64_T, 0, own_comm);
    if (reducing) {
        char text[8192];
        config_text(text, sizeof text);
        if (cfg.periodic >= 0) {
            if (rank == 0)
                vt_warn("VTRACE_MODE=%s: the run-time reduction does not take VTRACE_PERIODIC's scaled "
                        "traces; only the full trace is written", vt_mode_name(cfg.mode));
        } else if (vt_rt_start(reduced_dir, rank, world_size, cs.off[0], text)) {
            vt_buffer_need_file();
        }
    }
    /* vtrace.defs now, so that a run that never reaches MPI_Finalize stays readable */
    vt_placement_get(&placement);
    int64_t *clk;
    char *hosts;
    gather_ranks(rank, placement.host, &clk, &hosts);
    if (hosts && (cs.same_clock = malloc((size_t)world_size)))
        for (int r = 0; r < world_size; r++)
            cs.same_clock[r] = strncmp(hosts + (size_t)r * HOST_LEN, hosts, HOST_LEN) == 0;
    if (clk && hosts) {
        if (cfg.mode != VT_MODE_REDUCED || vt__buf.fd >= 0)
            write_global(cfg.dir, clk, hosts, VT_GLOBAL_RUNNING);
        if (vt__rt)
            write_global(reduced_dir, clk, hosts, VT_GLOBAL_RUNNING | VT_GLOBAL_REDUCED);
    }
    free(clk);
    free(hosts);
    vt__buffer_flushed = snapshot;
    vt__callsite_added = vt_rankdefs_resolve_sites;
    vt_rankdefs_resolve_sites();
    /* room for the crash paths before the first snapshot: definitions and function names */
    vt_crash_reserve(CRASH_RESERVE, NULL);
    vt_crash_start(end_abnormally, cfg.signals, cfg.flush_interval_ns);
    if (rank == 0) {
        /* in each directory that holds a trace (VTRACE_MODE=reduced: DIR/reduced's
         * goes up into DIR at the end, whichever trace is kept) */
        char text[8192];
        config_text(text, sizeof text);
        if (cfg.mode != VT_MODE_REDUCED)
            write_config(cfg.dir, text);
        if (reduced_dir[0])
            write_config(reduced_dir, text);
        vt_info("tracing to %s", reduced_dir[0] ? base_dir : cfg.dir);
    }

    /* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works:
     * the trace is finished there, whether the program calls MPI_Finalize or (as
     * mpi_f08 does) PMPI_Finalize directly. */
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finish_cb, &keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
    /* the ranks leave MPI_Init together: rank 0's files above would otherwise make the
     * others wait in their first call, and their traces would show that wait there */
    PMPI_Barrier(own_comm);
    t_init = vt_now();
    vt__active = 1;
    return 0;
}

static void record_call(unsigned fn, int64_t enter, int64_t exit, const void *site)
{
    vt_call c = {.enter = enter, .site = site, .fn = fn};
    /* counted even when recording stopped (a failed write), as every call is */
    vt__profile[fn].calls++;
    vt__profile[fn].time_ns += (uint64_t)(exit - enter);
    uint8_t *p = vt_rec_begin(4 * VT_UVAR_MAX);
    if (p) {
        p = vt_put_uvar(p, VT_CODE_FIRST_FN + fn);
        p = vt_put_svar(p, enter - vt__buf.prev_exit);
        p = vt_put_uvar(p, (uint64_t)(exit - enter));
        p = vt_put_uvar(p, vt_callsite_index(site));
        if (vt__rt)
            vt_rt_call(&c, exit);
        vt__calls++;
        vt_rec_end(p, exit);
    } else {
        vt__profile[fn].unrecorded++;
    }
}

void vt_init_end(unsigned fn, int64_t enter, const void *site, int rc, int provided)
{
    if (rc == MPI_SUCCESS && !started && start(provided) == 0)
        record_call(fn, enter, vt_now(), site);
    vt__depth--;
}

int vt__enter_slow(vt_call *c, unsigned fn, const void *site)
{
    if (vt__depth || started)
        return 0;
    /* MPI was initialised without our MPI_Init (mpi_f08 calls PMPI_Init): start now. */
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
        return 0;
    vt__depth = 1;
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    if (start(provided)) {
        vt__depth = 0;
        return 0;
    }
    late_init = 1;
    c->fn = fn;
    c->site = site;
    c->nreq = 0;
    c->enter = vt_now();
    return 1;
}

void vt_finalize_begin(unsigned fn, const void *site)
{
    (void)fn;
    if (!vt__depth)
        vt_pb_finalize();
    if (vt__active && !vt__depth) {
        fin_enter = vt_now();
        fin_site = site;
    }
    vt__depth++;
}

void vt_finalize_end(int rc)
{
    (void)rc;
    vt__depth--;
}

/* ------------------------------------------------------------------ definitions */

static vt_rankdefs_end rank_end(unsigned reason, int64_t detail, int64_t t_fin, unsigned flags)
{
    vt_rankdefs_end e = {
        .pl = &placement, .t_init = t_init, .t_fin = t_fin, .overhead_ps = overhead_ps,
        .flags = flags | (vt__buf.stopped ? VT_RANK_INCOMPLETE : 0) | (late_init ? VT_RANK_LATE_INIT : 0) |
                 (vt_period_scaled() ? VT_RANK_SCALED : 0),
        .reason = reason, .detail = detail,
        .write_errno = (uint64_t)vt__buf.fail_errno, .write_at = vt__buf.fail_errno ? vt__buf.fail_at : 0,
    };
    return e;
}

/* The rank's last RANKDEFS and END (and the reduced trace's); not in a signal handler. */
static int write_rankdefs(const vt_rankdefs_end *e)
{
    vt_rankdefs_resolve_sites();
    vt_growbuf g = {0};
    vt_rankdefs_encode(&g, e);
    int rc = g.overflow ? -ENOMEM : vt_buffer_write_block(VT_BLOCK_RANKDEFS, g.base, (size_t)(g.p - g.base));
    if (reduced_dir[0] && !g.overflow)
        rt_ok = vt_rt_finish(g.base, (size_t)(g.p - g.base), dict, dict_len) == 0;
    free(g.base);
    return rc;
}

/* After a block flushed during the run: the definitions so far, so that a run that
 * ends without a word (SIGKILL, a node lost) stays readable up to here. The caller
 * holds the buffer's lock. */
static void snapshot(void)
{
    if (!vt__active)
        return;
    vt_rankdefs_resolve_sites();
    vt_rankdefs_end e = rank_end(VT_END_RUNNING, 0, vt__buf.prev_exit, 0);
    vt_growbuf g = {0};
    vt_rankdefs_encode(&g, &e);
    if (!g.overflow) {
        int rc = vt_buffer_put_block(VT_BLOCK_RANKDEFS, g.base, (size_t)(g.p - g.base), cfg.compress ? 3 : 0, 0);
        if (rc)
            vt_buffer_fail(rc);
        if (reduced_dir[0])
            vt_rt_snapshot(g.base, (size_t)(g.p - g.base));
        /* room for the crash paths' encoding, with what may come until the next flush */
        vt_crash_reserve(2 * (size_t)(g.p - g.base) + CRASH_RESERVE, NULL);
    }
    free(g.base);
}

/* The run ends without MPI_Finalize (crash.h): what the buffer holds and definitions
 * that say how it ended, in the full and reduced trace files. */
static void end_abnormally(unsigned reason, int64_t detail, int in_signal)
{
    if (finished || !vt__active)
        return;
    finished = 1;
    vt__active = 0;
    vt__depth++;
    static const char *const why[] = {"", "", "signal", "MPI_Abort", "exit without MPI_Finalize"};
    int ok = 0;
    if (in_signal) {
        /* write(2) only, into memory reserved beforehand */
        size_t cap = 0;
        uint8_t *mem = vt_crash_reserve(0, &cap);
        if (mem) {
            vt_rankdefs_end e = rank_end(reason, detail, vt__buf.prev_exit, 0);
            e.named = vt_buffer_fn_named;
            vt_growbuf g = {mem, mem, cap, 1, 0};
            if (vt_buffer_write_raw_events() == 0 && vt_buffer_name_profiled_in_signal(mem, cap) == 0) {
                vt_rankdefs_encode(&g, &e);
                ok = !g.overflow && vt_buffer_put_block(VT_BLOCK_RANKDEFS, mem, (size_t)(g.p - g.base), 0, 1) == 0 &&
                     vt_buffer_put_block(VT_BLOCK_END, "", 0, 0, 1) == 0;
            }
            if (reduced_dir[0]) {
                /* the reduced file names other functions */
                e.named = vt_rt_fn_named;
                g = (vt_growbuf){mem, mem, cap, 1, 0};
                if (vt_rt_flush_in_signal(mem, cap) == 0) {
                    vt_rankdefs_encode(&g, &e);
                    if (!g.overflow)
                        vt_rt_end_in_signal(mem, (size_t)(g.p - g.base));
                }
            }
        }
        static const char msg[] = "vtrace: a fatal signal ends the run: this rank's trace ends here "
                                  "(`vtrace info` says what it holds)\n";
        static const char lost[] = "vtrace: a fatal signal ends the run: this rank's trace could not be ended "
                                   "(`vtrace info` reads it up to its last flushed block)\n";
        ssize_t w = write(2, ok ? msg : lost, ok ? sizeof msg - 1 : sizeof lost - 1);
        (void)w;
        return;
    }
    vt_crash_stop();
    vt_period_fini();
    vt_buffer_write_pending();
    vt_rankdefs_end e = rank_end(reason, detail, vt_now(), 0);
    ok = write_rankdefs(&e) == 0;
    ok = vt_buffer_write_block(VT_BLOCK_END, "", 0) == 0 && ok;
    vt_buffer_close();
    vt_warn("%s%s%lld: the trace in %s ends here, marked incomplete%s", why[reason],
            reason == VT_END_ABORT ? " with code " : " with status ", (long long)detail,
            reduced_dir[0] ? base_dir : cfg.dir, ok ? "" : " (its end could not be written)");
    vt__depth--;
}

/* vtrace.defs in DIR: written by rank 0 at MPI_Init (flag VT_GLOBAL_RUNNING, both clock
 * synchronisations the first one) so that a run that never finishes leaves a readable
 * trace, and again at the end, through a temporary file and rename(2), so that the file
 * is always whole. */
static int write_global(const char *dir, const int64_t *clk, const char *hosts, unsigned flags)
{
    vt_growbuf g = {0};
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    char text[8192];
    config_text(text, sizeof text);
    vt_growbuf_str(&g, PACKAGE_VERSION);
    vt_growbuf_str(&g, lib);
    vt_growbuf_str(&g, text);
    vt_growbuf_uvar(&g, (uint64_t)world_size);
    for (int r = 0; r < world_size; r++) {
        const int64_t *c = clk + 4 * r;
        const char *h = hosts + (size_t)r * HOST_LEN;
        vt_growbuf_svar(&g, c[0]);
        vt_growbuf_svar(&g, c[1]);
        vt_growbuf_svar(&g, c[2]);
        vt_growbuf_svar(&g, c[3]);
        vt_growbuf_uvar(&g, strncmp(h, hosts, HOST_LEN) == 0);
        vt_growbuf_str(&g, h);
    }
    vt_growbuf_uvar(&g, flags);
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/vtrace.defs", dir);
    snprintf(tmp, sizeof tmp, "%s/.vtrace.defs.tmp", dir);
    int fd = -1, rc = g.overflow ? -ENOMEM : 0;
    if (!rc) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        rc = fd < 0 ? -errno : 0;
    }
    if (!rc)
        rc = vt_file_header_write(fd, VT_MAGIC_DEFS, (uint32_t)world_size);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, g.base, (size_t)(g.p - g.base), 0, 0);
    /* the trace's function table (its rank files have none: 1.5) */
    if (!rc && vt_buffer_functions_shared())
        rc = vt_buffer_write_functions(fd);
    if (!rc && dict_len)
        rc = vt_block_write(fd, VT_BLOCK_DICT, dict, dict_len, 0, 3);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, "", 0, 0, 0);
    if (fd >= 0 && close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc) {
        unlink(tmp);
        vt_warn("cannot write %s (%s): the trace has no global definitions", path, strerror(-rc));
    }
    free(g.base);
    return rc;
}

/* From SHARE_DICT_RANKS ranks on (when the function table is shared), the last RANKDEFS
 * of every rank is compressed against a dictionary (codec 2, 1.5): rank 0's own, which
 * the others resemble (call sites, modules, communicators, the profile's functions and
 * counts). It goes into vtrace.defs before any rank uses it, so that a run killed from
 * here on stays readable; the definitions of the end then cost what differs (examples/
 * halo on 16 ranks: a RANKDEFS block of 129 bytes instead of 303). Collective over
 * own_comm. */
static void share_dict(int rank, const vt_rankdefs_end *e, const int64_t *clk, const char *hosts)
{
    if (!vt_buffer_functions_shared() || (world_size < SHARE_DICT_RANKS && !force_share))
        return;
    uint64_t len = 0;
    /* (uncompressed full traces have no use for it; the reduced trace is compressed) */
    if (rank == 0 && clk && hosts && (cfg.compress || vt__rt)) {
        vt_rankdefs_resolve_sites();
        vt_growbuf g = {0};
        vt_rankdefs_encode(&g, e);
        size_t n = (size_t)(g.p - g.base);
        if (!g.overflow && n) {
            dict_len = n < DICT_MAX ? n : DICT_MAX;
            memcpy(dict, g.base, dict_len);
            /* into each directory that holds a trace, as at MPI_Init */
            int full = cfg.mode != VT_MODE_REDUCED || vt__buf.fd >= 0;
            int rc = full ? write_global(cfg.dir, clk, hosts, VT_GLOBAL_RUNNING) : 0;
            if (!rc && vt__rt)
                rc = write_global(reduced_dir, clk, hosts, VT_GLOBAL_RUNNING | VT_GLOBAL_REDUCED);
            len = rc || !(full || vt__rt) ? 0 : dict_len;
        }
        free(g.base);
    }
    PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, own_comm);
    if (len)
        PMPI_Bcast(dict, (int)len, MPI_BYTE, 0, own_comm);
    dict_len = (size_t)len;
    vt_buffer_set_dict(dict, dict_len);
}

/* With the trace's function table in vtrace.defs: from here on (no more records) it names
 * only the functions some rank called, the others left empty (doc/format.md 1.3), so a
 * small trace does not pay for the whole table (7.5 KB, 2 KB compressed: about 150 bytes
 * for the halo example's 10 functions). Collective over own_comm. */
static void share_used_functions(void)
{
    if (!vt_buffer_functions_shared())
        return;
    uint8_t mine[VT_NFN], all[VT_NFN];
    vt_buffer_functions_mine(mine);
    PMPI_Allreduce(mine, all, VT_NFN, MPI_UNSIGNED_CHAR, MPI_BOR, own_comm);
    vt_buffer_functions_used(all);
}

/* The clocks and hosts of all ranks, on rank 0 (NULL elsewhere or without memory). */
static void gather_ranks(int rank, const char *myhost, int64_t **clk, char **hosts)
{
    int64_t mine[4] = {cs.at[0], cs.off[0], cs.at[1], cs.off[1]};
    *clk = rank == 0 ? malloc(sizeof(int64_t) * 4 * (size_t)world_size) : NULL;
    char host[HOST_LEN] = {0};
    memcpy(host, myhost, HOST_LEN - 1);
    *hosts = rank == 0 ? calloc((size_t)world_size, HOST_LEN) : NULL;
    PMPI_Gather(mine, 4, MPI_INT64_T, *clk, 4, MPI_INT64_T, 0, own_comm);
    PMPI_Gather(host, HOST_LEN, MPI_CHAR, *hosts, HOST_LEN, MPI_CHAR, 0, own_comm);
}

/* VTRACE_MODE=reduced writes DIR/full and DIR/reduced during the run. At the end each rank
 * moves its file of KEEP (one of the two, or NULL: none) up into DIR and removes its full
 * one, and rank 0 moves config.txt (DIR/reduced's) up (removes it without KEEP) and
 * removes the two directories. Returns 1 on rank 0, after all ranks moved their files. */
static int dissolve_staging(int rank, const char *keep)
{
    char from[4300], to[4300];
    if (keep) {
        snprintf(from, sizeof from, "%s/rank-%06d.vte", keep, rank);
        snprintf(to, sizeof to, "%s/rank-%06d.vte", base_dir, rank);
        if (rename(from, to))
            vt_warn("cannot move %s to %s (%s)", from, to, strerror(errno));
    }
    if (keep != cfg.dir) {
        snprintf(from, sizeof from, "%s/rank-%06d.vte", cfg.dir, rank);
        unlink(from);
    } else if (keep) {   /* (stored: the reduced one goes) */
        snprintf(from, sizeof from, "%s/rank-%06d.vte", reduced_dir, rank);
        unlink(from);
    }
    PMPI_Barrier(own_comm);
    if (rank != 0)
        return 0;
    snprintf(from, sizeof from, "%s/config.txt", reduced_dir);
    snprintf(to, sizeof to, "%s/config.txt", base_dir);
    if (keep)
        rename(from, to);
    else
        unlink(from);
    /* the definitions written at MPI_Init (DIR's own are written next) */
    snprintf(from, sizeof from, "%s/vtrace.defs", reduced_dir);
    unlink(from);
    snprintf(from, sizeof from, "%s/vtrace.defs", cfg.dir);
    unlink(from);
    rmdir(reduced_dir);
    rmdir(cfg.dir);
    return 1;
}

/* VTRACE_MODE=both, rank 0: DIR/reduced is larger than DIR/full (SIZES: rank files'
 * bytes, full [2] and reduced [3]; records [4], [5]): it becomes the full trace, marked
 * stored. */
static void say_stored(const char *dir, const int64_t *sizes)
{
    vt_info("%s holds the full trace, marked stored: the reduced trace's rank files took %lld bytes and %lld "
            "records, the full one's %lld and %lld", dir, (long long)sizes[3], (long long)sizes[5],
            (long long)sizes[2], (long long)sizes[4]);
}

static void store_full(const int64_t *sizes)
{
    char why[4600];
    if (vt_trace_store(cfg.dir, reduced_dir, NULL, why, sizeof why))
        vt_warn("%s: %s keeps the reduced trace, larger than the full one", why, reduced_dir);
    else
        say_stored(reduced_dir, sizes);
}

/* VTRACE_MODE=reduced: DIR holds the reduced trace alone; when the run-time reduction
 * stopped on some rank, the full trace instead (with a warning). */
static void finish_reduced_only(int rank, int rt_all, int stored, const int64_t *sizes, const int64_t *clk,
                                const char *hosts, unsigned flags)
{
    if (!dissolve_staging(rank, rt_all && !stored ? reduced_dir : cfg.dir))
        return;
    if (clk && hosts)
        write_global(base_dir, clk, hosts, flags | (stored ? VT_GLOBAL_STORED : rt_all ? VT_GLOBAL_REDUCED : 0));
    if (stored)
        say_stored(base_dir, sizes);
    else if (!rt_all)
        vt_warn("the run-time reduction stopped (see above): %s holds the full trace%s; `vtrace reduce` reduces it",
                base_dir, flags ? ", incomplete (a rank could not write all of it)" : "");
    else if (flags)
        vt_warn("the trace in %s is incomplete (a rank could not write all of it)", base_dir);
    else if (sizes[1] == 0)
        vt_info("reduced trace written to %s: its rank files took %lld bytes and %lld records, the full trace's "
                "%lld and %lld", base_dir, (long long)sizes[3], (long long)sizes[5], (long long)sizes[2],
                (long long)sizes[4]);
    else   /* (the full trace was dropped during the run: no sizes to compare) */
        vt_info("reduced trace written to %s", base_dir);
}

/* VTRACE_MODE=reduced, when the run-time reduction stopped on a rank after the full
 * trace had been dropped (buffer.h): nothing usable is left; the directories go. */
static void no_trace(int rank)
{
    if (!dissolve_staging(rank, NULL))
        return;
    static const char why[] = "no trace of this run: the run-time reduction stopped (see the warnings) after "
                              "VTRACE_MODE=reduced had dropped the full trace; VTRACE_MODE=both (or full) keeps "
                              "the full trace as well";
    /* the directory says so itself (vtrace's commands find no vtrace.defs in it) */
    char path[4300];
    snprintf(path, sizeof path, "%s/NO-TRACE.txt", base_dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", why);
        fclose(f);
    }
    vt_warn("%s: %s", base_dir, why);
}

/* Whether the TSC kept time with CLOCK_MONOTONIC on the ranks that read it (clock.h):
 * rank 0 keeps the largest drift, or the worst beyond its bound, for the configuration,
 * and warns of the latter. Collective over own_comm. */
static void check_clock(void)
{
    int64_t mine[2] = {-1, 0}, *all = NULL;
    int rank;
    PMPI_Comm_rank(own_comm, &rank);
    if (vt_clock_check(cfg.test_clock_skew_ns, &mine[0], &mine[1]))
        mine[0] = -1;
    if (rank == 0)
        all = malloc(sizeof(int64_t) * 2 * (size_t)world_size);
    PMPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, own_comm);
    if (!all)
        return;
    int worst = -1;
    for (int r = 0; r < world_size; r++) {
        const int64_t *c = all + 2 * r, *w = worst < 0 ? NULL : all + 2 * worst;
        if (c[0] < 0)
            continue;
        /* beyond the bound first, then the largest drift */
        int over = c[0] > c[1], w_over = w && w[0] > w[1];
        if (!w || over > w_over || (over == w_over && c[0] > w[0]))
            worst = r;
    }
    if (worst >= 0) {
        cfg.clock_drift_ns = all[2 * worst];
        cfg.clock_drift_bound_ns = all[2 * worst + 1];
        cfg.clock_drift_rank = worst;
        if (cfg.clock_drift_ns > cfg.clock_drift_bound_ns)
            vt_warn("the TSC did not keep time: on rank %d it was %.3f ms from CLOCK_MONOTONIC at MPI_Finalize "
                    "(bound %.3f ms; a VM paused, snapshotted or migrated mid-run?): the trace's times may be wrong, "
                    "its configuration says so (vtrace info); VTRACE_CLOCK=monotonic avoids the TSC",
                    worst, (double)cfg.clock_drift_ns / 1e6, (double)cfg.clock_drift_bound_ns / 1e6);
    }
    free(all);
}

/* Called from inside PMPI_Finalize (MPI_COMM_SELF's attribute is deleted first). */
static int finish_cb(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm, (void)kv, (void)val, (void)extra;
    if (finished || !vt__active)
        return MPI_SUCCESS;
    finished = 1;
    int64_t t = vt_now();
    int direct = fin_enter < 0;
    vt__depth++;
    if (reduced_dir[0]) {
        /* a rank whose reduction stopped needs every rank's full trace; and while every
         * rank holds all its full records (VTRACE_MODE=reduced drops them at the first
         * full block), they are written too, for the comparison below (stored.h) */
        int mine = (vt__rt ? 1 : 0) | (!vt__buf.dropped && !vt__buf.stopped ? 2 : 0), all = 0;
        PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_BAND, own_comm);
        if (!(all & 1) || (all & 2))
            vt_buffer_need_file();
    }
    record_call(VT_FN_MPI_Finalize, direct ? t : fin_enter, t, direct ? NULL : fin_site);
    vt__active = 0;
    vt_crash_stop();
    vt_clocksync_run(&cs, 1);
    check_clock();
    free(cs.same_clock);
    cs.same_clock = NULL;
    vt_placement_refresh(&placement);
    vt_period_fini();
    vt_buffer_write_pending();
    vt__callsite_added = NULL;
    vt_rankdefs_end e = rank_end(VT_END_FINALIZE, 0, t, direct ? VT_RANK_EXIT_FINALIZE : 0);
    /* Rank 0 collects what the global definitions need. */
    int rank;
    PMPI_Comm_rank(own_comm, &rank);
    int64_t *clk;
    char *hosts;
    gather_ranks(rank, placement.host, &clk, &hosts);
    share_used_functions();
    share_dict(rank, &e, clk, hosts);
    int rc = write_rankdefs(&e);
    vt_modules_free();
    /* END even after a failed write: the definitions say what is missing */
    int rc_end = vt_buffer_write_block(VT_BLOCK_END, "", 0);
    rc = rc ? rc : rc_end;
    int full_whole = !vt__buf.dropped && !vt__buf.stopped;
    uint64_t full_records = vt_buffer_records();
    if (vt__verbose >= 2)
        vt_info("%llu records, %llu of them not encoded (the full trace was dropped; %zu bytes each to its "
                "blocks' clock)", (unsigned long long)full_records, (unsigned long long)vt__buf.skipped,
                vt__buf.skip_est);
    vt_buffer_close();
    /* one exchange: whether some rank's trace is incomplete; (reduced and both) whether
     * every rank wrote its reduced trace (a reduced trace of every rank, or none) and,
     * where the reduced trace is larger than the whole full trace, the full one instead
     * (stored.h). The two vtrace.defs are one writer's, the same length: the rank files
     * decide, as `vtrace reduce` decides on all files. */
    char rpath[4300];
    snprintf(rpath, sizeof rpath, "%s/rank-%06d.vte", reduced_dir, rank);
    uint64_t fb = reduced_dir[0] ? vt_file_bytes(rank_path) : 0;
    int64_t mine[7] = {(e.flags & VT_RANK_INCOMPLETE) || rc, !reduced_dir[0] || !rt_ok, !full_whole || !fb,
                       (int64_t)fb, reduced_dir[0] ? (int64_t)vt_file_bytes(rpath) : 0, (int64_t)full_records,
                       reduced_dir[0] ? (int64_t)vt_rt_records_stored() : 0};
    /* test hook: the reduced rank file takes more bytes than the full one, whatever this
     * machine's timings compress to (test/mpi/stored.sh) */
    const char *hook = getenv("VTRACE_TEST_STORE");
    if (hook && !strcmp(hook, "larger") && mine[4] && mine[4] <= mine[3])
        mine[4] = mine[3] + 1;
    int64_t sums[7] = {0};
    PMPI_Allreduce(mine, sums, 7, MPI_INT64_T, MPI_SUM, own_comm);
    int anybad = sums[0] > 0, rt_all = sums[1] == 0;
    int stored = reduced_dir[0] && rt_all && sums[2] == 0 && (sums[4] > sums[3] || sums[6] > sums[5]);
    int64_t sizes[6] = {sums[1], sums[2], sums[3], sums[4], sums[5], sums[6]};
    if (reduced_dir[0] && !rt_all)
        unlink(rpath);
    int full_all = 1;
    if (reduced_dir[0] && !rt_all) {
        /* ... and then a full trace of every rank, or none */
        int whole = !vt__buf.dropped;
        PMPI_Allreduce(&whole, &full_all, 1, MPI_INT, MPI_MIN, own_comm);
    }
    if (!full_all) {
        no_trace(rank);
    } else if (cfg.mode == VT_MODE_REDUCED) {
        finish_reduced_only(rank, rt_all, stored, sizes, clk, hosts, anybad ? 1u : 0u);
    } else if (rank == 0) {
        if (reduced_dir[0] && !rt_all) {
            PMPI_Barrier(own_comm);   /* every rank removed its file */
            char path[4300];
            snprintf(path, sizeof path, "%s/vtrace.defs", reduced_dir);
            unlink(path);
            rmdir(reduced_dir);
        }
        if (clk && hosts)
            write_global(cfg.dir, clk, hosts, anybad ? 1u : 0u);
        if (clk && hosts && rt_all) {
            write_global(reduced_dir, clk, hosts, (anybad ? 1u : 0u) | VT_GLOBAL_REDUCED);
            if (stored)
                store_full(sizes);
        } else if (reduced_dir[0])
            vt_warn("no reduced trace in %s (see the warnings above); the full trace in %s holds the run",
                    reduced_dir, cfg.dir);
        if (anybad)
            vt_warn("the trace in %s is incomplete (a rank could not write all of it)", cfg.dir);
        else
            vt_info("trace written to %s", cfg.dir);
    } else if (reduced_dir[0] && !rt_all) {
        PMPI_Barrier(own_comm);
    }
    free(clk);
    free(hosts);
    PMPI_Comm_free(&own_comm);
    vt__depth--;
    return MPI_SUCCESS;
}
