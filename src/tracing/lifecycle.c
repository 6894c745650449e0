/* Starting and finishing the layer: configuration, trace directory, clock
 * synchronisation, and the definitions written at MPI_Finalize. */
#include "vt_config.h"
#include "tracing/buffer.h"
#include "tracing/period.h"
#include "tracing/callsites.h"
#include "tracing/comms.h"
#include "tracing/handlers.h"
#include "mpid/piggyback.h"
#include "tracing/rtreduce.h"
#include "tracing/filter.h"
#include "tracing/log.h"
#include "util/settings.h"
#include "tracing/topo.h"
#include "format/blockio.h"
#include "tracing/clock.h"

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
static MPI_Comm own_comm = MPI_COMM_NULL;  /* ours: clock synchronisation, definitions */
static vt_config cfg;
static char rank_path[4200];
static int64_t t_init, fin_enter = -1;
static const void *fin_site;
static int64_t sync_at[2], sync_off[2];
static int64_t min_rtt = INT64_MAX;     /* rank 0: the fastest ping-pong seen */
static int keyval = MPI_KEYVAL_INVALID;
static char reduced_dir[4200];          /* VTRACE_MODE=reduced, both: where the run-time reduction writes */
static char base_dir[4200];             /* ... and the directory the user named */
static int rt_ok;                       /* ... and it wrote this rank's reduced trace */
static uint64_t overhead_ps;            /* measured at MPI_Init (measure_overhead) */

#define SYNC_ROUNDS 20
#define HOST_LEN 64

static const char *env(const char *name) { return getenv(name); }

extern char **environ;

static void unknown_setting(const char *name, const char *nearest, void *arg)
{
    (void)arg;
    fprintf(stderr, "vtrace: warning: unknown setting %s (did you mean %s?)\n", name, nearest);
}

/* Offset of each rank's clock to rank 0's, from the ping-pong with the smallest round
 * trip. Rank 0 is the reference (offset 0). */
static void clock_sync(int which)
{
    int rank;
    PMPI_Comm_rank(own_comm, &rank);
    int64_t at = vt_now(), off = 0;
    if (rank == 0) {
        for (int k = 1; k < world_size; k++) {
            int64_t best = INT64_MAX, res[2] = {0, 0};
            for (int i = 0; i < SYNC_ROUNDS; i++) {
                int64_t t0 = vt_now(), tk;
                PMPI_Send(&t0, 1, MPI_INT64_T, k, 1, own_comm);
                PMPI_Recv(&tk, 1, MPI_INT64_T, k, 2, own_comm, MPI_STATUS_IGNORE);
                int64_t t1 = vt_now();
                if (t1 - t0 < min_rtt)
                    min_rtt = t1 - t0;
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    res[0] = tk;
                    res[1] = t0 + (t1 - t0) / 2 - tk;
                }
            }
            PMPI_Send(res, 2, MPI_INT64_T, k, 3, own_comm);
        }
    } else {
        for (int i = 0; i < SYNC_ROUNDS; i++) {
            int64_t t0, tk;
            PMPI_Recv(&t0, 1, MPI_INT64_T, 0, 1, own_comm, MPI_STATUS_IGNORE);
            tk = vt_now();
            PMPI_Send(&tk, 1, MPI_INT64_T, 0, 2, own_comm);
        }
        int64_t res[2];
        PMPI_Recv(res, 2, MPI_INT64_T, 0, 3, own_comm, MPI_STATUS_IGNORE);
        at = res[0];
        off = res[1];
    }
    sync_at[which] = at;
    sync_off[which] = off;
}

static int mkdirs(const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) && errno != EEXIST)
        return -errno;
    return 0;
}

static void default_dir(char *out, size_t len)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *job = getenv("SLURM_JOB_ID");
    if (!job)
        job = getenv("PBS_JOBID");
    if (!job)
        job = getenv("LSB_JOBID");
    if (job)
        snprintf(out, len, "vtrace-%s-%s", stamp, job);
    else
        snprintf(out, len, "vtrace-%s-%ld", stamp, (long)getpid());
}

static int finish_cb(MPI_Comm comm, int kv, void *val, void *extra);

/* Rank 0 calibrates the TSC; the ranks of its host take the same scale (their clocks
 * then agree exactly, offsets stay 0), the others calibrate their own. */
static void choose_clock(int rank)
{
    struct {
        vt_tsc_scale s;
        int ok;
        char host[HOST_LEN];
    } root;
    memset(&root, 0, sizeof root);
    if (rank == 0) {
        root.ok = vt_clock_calibrate(&root.s) == 0;
        gethostname(root.host, sizeof root.host - 1);
    }
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, own_comm);
    char host[HOST_LEN] = {0};
    gethostname(host, sizeof host - 1);
    if (strcmp(host, root.host) == 0) {
        vt_clock_use(root.ok ? &root.s : NULL);
    } else {
        vt_tsc_scale s;
        vt_clock_use(vt_clock_calibrate(&s) == 0 ? &s : NULL);
    }
}

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
            prof.records++;
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
    PMPI_Comm_dup(MPI_COMM_WORLD, &own_comm);
    if (rank == 0 && !cfg.dir[0])
        default_dir(cfg.dir, sizeof cfg.dir);
    PMPI_Bcast(cfg.dir, (int)sizeof cfg.dir, MPI_CHAR, 0, own_comm);
    int rc = 0;
    if (reducing) {
        /* DIR/full and DIR/reduced: the full trace is written too in this version (the
         * run-time reduction stops, with a warning, at the calls it does not handle yet) */
        rc = mkdirs(cfg.dir);
        snprintf(reduced_dir, sizeof reduced_dir, "%s/reduced", cfg.dir);
        snprintf(base_dir, sizeof base_dir, "%s", cfg.dir);
        strcat(cfg.dir, "/full");
        if (!rc)
            rc = mkdirs(reduced_dir);
    }
    if (!rc)
        rc = mkdirs(cfg.dir);
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
    choose_clock(rank);
    overhead_ps = measure_overhead(); /* with the clock the records will use */
    clock_sync(0);
    sync_at[1] = sync_at[0];
    sync_off[1] = sync_off[0];
    /* The model's message latency L, unless given: half the fastest round trip of the
     * clock synchronisation (rank 0 writes the configuration). */
    if (cfg.model_L < 0)
        cfg.model_L = min_rtt < INT64_MAX ? min_rtt / 2 : 0;
    /* every rank models with rank 0's value (the run-time reduction decides with it) */
    PMPI_Bcast(&cfg.model_L, 1, MPI_INT64_T, 0, own_comm);
    if (reducing) {
        char text[8192];
        vt_config_format(&cfg, text, sizeof text);
        if (cfg.periodic >= 0) {
            if (rank == 0)
                vt_warn("VTRACE_MODE=%s: the run-time reduction does not take VTRACE_PERIODIC's scaled "
                        "traces; only the full trace is written", vt_mode_name(cfg.mode));
        } else if (vt_rt_start(reduced_dir, rank, world_size, sync_off[0], text)) {
            vt_buffer_need_file();
        }
    }
    if (rank == 0) {
        char text[8192], path[4200];
        vt_config_format(&cfg, text, sizeof text);
        snprintf(path, sizeof path, "%s/config.txt", cfg.dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(text, f);
            fclose(f);
        }
        vt_info("tracing to %s", cfg.dir);
    }

    /* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works:
     * the trace is finished there, whether the program calls MPI_Finalize or (as
     * mpi_f08 does) PMPI_Finalize directly. */
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finish_cb, &keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
    t_init = vt_now();
    vt__active = 1;
    return 0;
}

static void record_call(unsigned fn, int64_t enter, int64_t exit, const void *site)
{
    vt_call c = {.enter = enter, .site = site, .fn = fn};
    uint8_t *p = vt_rec_begin(4 * VT_UVAR_MAX);
    if (p) {
        p = vt_put_uvar(p, VT_CODE_FIRST_FN + fn);
        p = vt_put_svar(p, enter - vt__buf.prev_exit);
        p = vt_put_uvar(p, (uint64_t)(exit - enter));
        p = vt_put_uvar(p, vt_callsite_index(site));
        vt__profile[fn].calls++;
        vt__profile[fn].time_ns += (uint64_t)(exit - enter);
        vt__profile[fn].records++;
        if (vt__rt)
            vt_rt_call(&c, exit, vt_callsite_index(site));
        vt__calls++;
        vt_rec_end(p, exit);
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

typedef struct growbuf {
    uint8_t *p, *base;
    size_t cap;
} growbuf;

static uint8_t *room(growbuf *g, size_t need)
{
    size_t used = (size_t)(g->p - g->base);
    if (used + need > g->cap) {
        size_t cap = (g->cap ? g->cap * 2 : 4096) + need;
        uint8_t *nb = realloc(g->base, cap);
        if (!nb)
            return NULL;
        g->base = nb;
        g->p = nb + used;
        g->cap = cap;
    }
    return g->p;
}

static void put_uvar(growbuf *g, uint64_t v)
{
    if (room(g, VT_UVAR_MAX))
        g->p = vt_put_uvar(g->p, v);
}

static void put_svar(growbuf *g, int64_t v) { put_uvar(g, vt_zigzag(v)); }

static void put_str(growbuf *g, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > 65535)
        n = 65535;
    if (room(g, n + VT_UVAR_MAX))
        g->p = vt_put_str(g->p, s ? s : "", n);
}

static int member(const int *w, int i) { return w ? w[i] : i; }

/* Whether the lists A and B of N world ranks are the same. */
static int same_members(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (member(a, i) != member(b, i))
            return 0;
    return 1;
}

/* A member list, compact (doc/format.md, RANKDEFS; the communicator's flags bit 1): a
 * range of world ranks (world, self, most splits) as its first rank and stride, a list
 * that an earlier communicator of the table has as its index, any other rank by rank.
 * So a trace's definitions grow with the ranks, not with their square. */
static void put_members(growbuf *g, const int *w, int n, uint32_t before)
{
    put_uvar(g, (uint64_t)n);
    if (n == 0)
        return;
    int64_t first = member(w, 0), stride = n > 1 ? (int64_t)member(w, 1) - first : 0;
    int range = 1;
    for (int i = 2; i < n && range; i++)
        range = member(w, i) == first + i * stride;
    if (range && n > 2) {
        put_uvar(g, 1);
        put_uvar(g, (uint64_t)first);
        put_svar(g, stride);
        return;
    }
    for (uint32_t j = 0; j < before && n > 2; j++) {
        const vt_comm *e = vt_comm_at(j);
        if (e->size == n && same_members(e->world, w, n)) {
            put_uvar(g, 2);
            put_uvar(g, j);
            return;
        }
    }
    put_uvar(g, 0);
    for (int i = 0; i < n; i++)
        put_uvar(g, (uint64_t)member(w, i));
}

static int write_rankdefs(const vt_placement *pl, int64_t t_fin, unsigned flags)
{
    growbuf g = {0};
    uint32_t n = vt_callsites_count();
    put_uvar(&g, n);
    for (uint32_t i = 0; i < n; i++) {
        const void *a = vt_callsite_addr(i);
        Dl_info di;
        memset(&di, 0, sizeof di);
        int found = dladdr(a, &di) != 0;
        put_uvar(&g, (uint64_t)(uintptr_t)a);
        put_str(&g, found && di.dli_fname ? di.dli_fname : "");
        put_uvar(&g, found ? (uint64_t)((uintptr_t)a - (uintptr_t)di.dli_fbase) : 0);
        put_str(&g, found && di.dli_sname ? di.dli_sname : "");
    }
    uint32_t nc = vt_comms_count();
    put_uvar(&g, nc);
    for (uint32_t i = 0; i < nc; i++) {
        vt_comm *c = vt_comm_at(i);
        put_uvar(&g, c->gid);
        put_uvar(&g, (uint64_t)c->inter | VT_COMM_COMPACT);
        put_members(&g, c->world, c->size, i);
        put_members(&g, c->rworld, c->inter ? c->rsize : 0, i);
        put_svar(&g, c->parent);
        put_str(&g, c->how);
    }
    uint32_t nf = vt_files_count();
    put_uvar(&g, nf);
    for (uint32_t i = 0; i < nf; i++) {
        int32_t comm;
        const char *name = vt_file_name(i, &comm);
        put_str(&g, name);
        put_uvar(&g, (uint64_t)comm);
    }
    uint32_t np = 0;
    for (int i = 0; i < VT_NFN; i++)
        np += vt__profile[i].calls > 0;
    put_uvar(&g, np);
    for (int i = 0; i < VT_NFN; i++) {
        const vt_profile_entry *e = &vt__profile[i];
        if (!e->calls)
            continue;
        put_uvar(&g, (uint64_t)i);
        put_uvar(&g, e->calls);
        put_uvar(&g, e->time_ns);
        put_uvar(&g, e->bytes);
        put_uvar(&g, e->records);
    }
    put_str(&g, pl->host);
    put_svar(&g, pl->core);
    put_svar(&g, pl->numa);
    put_str(&g, pl->binding);
    put_uvar(&g, flags);
    put_uvar(&g, vt__buf.records);
    put_uvar(&g, vt__buf.lost);
    put_svar(&g, t_init);
    put_svar(&g, t_fin);
    /* 1.2: the measured overhead per recorded call, and the copy cost per byte: 0, the
     * layer copies no message data (it records sizes and peers only). */
    put_uvar(&g, overhead_ps);
    put_uvar(&g, 0);
    int rc = g.base ? vt_buffer_write_block(VT_BLOCK_RANKDEFS, g.base, (size_t)(g.p - g.base)) : -ENOMEM;
    if (reduced_dir[0] && g.base)
        rt_ok = vt_rt_finish(g.base, (size_t)(g.p - g.base)) == 0;
    free(g.base);
    return rc;
}

static void write_global(const char *dir, const int64_t *clk, const char *hosts, unsigned flags)
{
    growbuf g = {0};
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    char text[8192];
    vt_config_format(&cfg, text, sizeof text);
    put_str(&g, PACKAGE_VERSION);
    put_str(&g, lib);
    put_str(&g, text);
    put_uvar(&g, (uint64_t)world_size);
    for (int r = 0; r < world_size; r++) {
        const int64_t *c = clk + 4 * r;
        const char *h = hosts + (size_t)r * HOST_LEN;
        put_svar(&g, c[0]);
        put_svar(&g, c[1]);
        put_svar(&g, c[2]);
        put_svar(&g, c[3]);
        put_uvar(&g, strncmp(h, hosts, HOST_LEN) == 0);
        put_str(&g, h);
    }
    put_uvar(&g, flags);
    char path[4200];
    snprintf(path, sizeof path, "%s/vtrace.defs", dir);
    int fd = -1, rc = g.base ? 0 : -ENOMEM;
    if (!rc) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        rc = fd < 0 ? -errno : 0;
    }
    if (!rc)
        rc = vt_file_header_write(fd, VT_MAGIC_DEFS, (uint32_t)world_size);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, g.base, (size_t)(g.p - g.base), 0, 0);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, "", 0, 0, 0);
    if (fd >= 0 && close(fd) && !rc)
        rc = -errno;
    if (rc)
        vt_warn("cannot write %s (%s): the trace has no global definitions", path, strerror(-rc));
    free(g.base);
}

/* VTRACE_MODE=reduced writes DIR/full and DIR/reduced during the run. At the end each rank
 * moves its file of KEEP (one of the two, or NULL: none) up into DIR and removes its full
 * one, and rank 0 moves config.txt up (removes it without KEEP) and removes the two
 * directories. Returns 1 on rank 0, after all ranks moved their files. */
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
    }
    PMPI_Barrier(own_comm);
    if (rank != 0)
        return 0;
    snprintf(from, sizeof from, "%s/config.txt", cfg.dir);
    snprintf(to, sizeof to, "%s/config.txt", base_dir);
    if (keep)
        rename(from, to);
    else
        unlink(from);
    rmdir(reduced_dir);
    rmdir(cfg.dir);
    return 1;
}

/* VTRACE_MODE=reduced: DIR holds the reduced trace alone; when the run-time reduction
 * stopped on some rank, the full trace instead (with a warning). */
static void finish_reduced_only(int rank, int rt_all, const int64_t *clk, const char *hosts, unsigned flags)
{
    if (!dissolve_staging(rank, rt_all ? reduced_dir : cfg.dir))
        return;
    if (clk && hosts)
        write_global(base_dir, clk, hosts, flags | (rt_all ? VT_GLOBAL_REDUCED : 0));
    if (!rt_all)
        vt_warn("the run-time reduction stopped (see above): %s holds the full trace; `vtrace reduce` reduces it",
                base_dir);
    else if (flags)
        vt_warn("the trace in %s is incomplete (a rank could not write all of it)", base_dir);
    else
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
        /* a rank whose reduction stopped needs every rank's full trace */
        int healthy = vt__rt, all_healthy = 0;
        PMPI_Allreduce(&healthy, &all_healthy, 1, MPI_INT, MPI_MIN, own_comm);
        if (!all_healthy)
            vt_buffer_need_file();
    }
    record_call(VT_FN_MPI_Finalize, direct ? t : fin_enter, t, direct ? NULL : fin_site);
    vt__active = 0;
    clock_sync(1);
    vt_placement pl;
    vt_placement_get(&pl);
    unsigned flags = (vt__buf.stopped ? VT_RANK_INCOMPLETE : 0) | (late_init ? VT_RANK_LATE_INIT : 0) |
                     (direct ? VT_RANK_EXIT_FINALIZE : 0) | (vt_period_scaled() ? VT_RANK_SCALED : 0);
    vt_period_fini();
    int rc = write_rankdefs(&pl, t, flags);
    if (!rc)
        rc = vt_buffer_write_block(VT_BLOCK_END, "", 0);
    vt_buffer_close();
    /* Rank 0 collects what the global definitions need. */
    int rank;
    PMPI_Comm_rank(own_comm, &rank);
    int64_t mine[4] = {sync_at[0], sync_off[0], sync_at[1], sync_off[1]};
    int64_t *clk = rank == 0 ? malloc(sizeof(int64_t) * 4 * (size_t)world_size) : NULL;
    char host[HOST_LEN] = {0};
    memcpy(host, pl.host, HOST_LEN - 1);
    char *hosts = rank == 0 ? calloc((size_t)world_size, HOST_LEN) : NULL;
    int bad = (flags & VT_RANK_INCOMPLETE) || rc, anybad = 0;
    PMPI_Gather(mine, 4, MPI_INT64_T, clk, 4, MPI_INT64_T, 0, own_comm);
    PMPI_Gather(host, HOST_LEN, MPI_CHAR, hosts, HOST_LEN, MPI_CHAR, 0, own_comm);
    PMPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, own_comm);
    int rt_all = 0;
    if (reduced_dir[0]) {
        /* a reduced trace of every rank, or none */
        PMPI_Allreduce(&rt_ok, &rt_all, 1, MPI_INT, MPI_MIN, own_comm);
        if (!rt_all) {
            char path[4300];
            snprintf(path, sizeof path, "%s/rank-%06d.vte", reduced_dir, rank);
            unlink(path);
        }
    }
    int full_all = 1;
    if (reduced_dir[0] && !rt_all) {
        /* ... and then a full trace of every rank, or none */
        int whole = !vt__buf.dropped;
        PMPI_Allreduce(&whole, &full_all, 1, MPI_INT, MPI_MIN, own_comm);
    }
    if (!full_all) {
        no_trace(rank);
    } else if (cfg.mode == VT_MODE_REDUCED) {
        finish_reduced_only(rank, rt_all, clk, hosts, anybad ? 1u : 0u);
    } else if (rank == 0) {
        if (reduced_dir[0] && !rt_all) {
            PMPI_Barrier(own_comm);   /* every rank removed its file */
            rmdir(reduced_dir);
        }
        if (clk && hosts)
            write_global(cfg.dir, clk, hosts, anybad ? 1u : 0u);
        if (clk && hosts && rt_all)
            write_global(reduced_dir, clk, hosts, (anybad ? 1u : 0u) | VT_GLOBAL_REDUCED);
        else if (reduced_dir[0])
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
