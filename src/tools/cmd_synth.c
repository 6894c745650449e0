/* vtrace synth: writes a synthetic trace of a regular MPI pattern (synth.h); the
 * reduced one through vtrace reduce's own reduction (analysis/reduce.h), so that it is
 * byte for byte what `vtrace reduce` makes of the full one. */
#include "vt_config.h"
#include "tools/tools.h"
#include "tools/synth.h"
#include "tools/progress.h"
#include "analysis/reduce.h"
#include "format/rrec.h"
#include "util/settings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vt__usage_synth(FILE *out)
{
    fprintf(out,
            "usage: vtrace synth [OPTIONS] OUT\n"
            "Writes a synthetic trace of a regular MPI pattern into the directory OUT, as a run\n"
            "traced with vtrace would have (format 1.5), at any rank count and length.\n\n"
            "  -p, --pattern NAME     halo1d, halo2d (default), allreduce, pipeline, master-worker\n"
            "  -n, --ranks N          ranks (default 4)\n"
            "  -i, --iterations N     iterations (halo: exchanges; pipeline: items; master-worker:\n"
            "                         rounds of one task per worker) (default 100)\n"
            "      --compute DUR      computation per iteration (default 100us)\n"
            "      --jitter F         each burst varies by up to F of it, 0-1 (default 0.1)\n"
            "      --slow-rank R      rank R computes --slow-factor times longer (default: none)\n"
            "      --slow-factor F    (default 2)\n"
            "      --bytes N          bytes per message (default 1024)\n"
            "      --allreduce-every N  halo: an MPI_Allreduce after every N-th exchange (default 0)\n"
            "      --latency DUR      message latency, the model's L (default 1us)\n"
            "      --per-byte DUR     time per byte, the model's G (default 100ps)\n"
            "      --threshold DUR    the trace's candidate threshold (default: half of --compute)\n"
            "      --seed S           seed of the jitter (default 1)\n"
            "  -m, --mode MODE        full (default), reduced (OUT is the reduced trace), both\n"
            "                         (OUT/full and OUT/reduced, as VTRACE_MODE=both)\n"
            "      --no-compress      raw blocks (default: columns and zstd, as the run time)\n"
            "      --json             the summary as one JSON object\n"
            "  -q, --quiet            no progress display on a terminal\n");
}

static int parse_dur(const char *opt, const char *s, int64_t *out)
{
    if (s && (vt_parse_duration(s, out) || *out < 0))
        return vt__usage_error(vt__usage_synth, "%s takes a duration (e.g. 100us), not '%s'", opt, s);
    return VT_ARGS_GO;
}

/* The reduced trace of the full trace FULL into OUT, as `vtrace reduce FULL OUT`. */
static int reduce_into(const char *full, const char *out, int zstd_level, int quiet, vt_reduce_stats *st)
{
    vt_trace *t = NULL;
    vt_model_params mp;
    vt__progress pr = {0};
    vt_error err;
    int rc = vt__replay_open(full, NULL, quiet, vt__usage_synth, &t, &pr, &mp);
    if (rc == VT_ARGS_GO) {
        vt_reduce_opts o = {.out_dir = out, .zstd_level = zstd_level};
        rc = vt_reduce(t, NULL, &mp, NULL, 0, &o, st, &err) ? vt__fail(&err) : VT_EXIT_OK;
    }
    vt__progress_end(&pr);
    vt_trace_close(t);
    return rc;
}

/* Removes the trace directory DIR that synth wrote (its files only). */
static void remove_trace(const char *dir, uint32_t ranks)
{
    char path[4300];
    for (uint32_t r = 0; r < ranks; r++) {
        snprintf(path, sizeof path, "%.4100s/rank-%06" PRIu32 ".vte", dir, r);
        unlink(path);
    }
    snprintf(path, sizeof path, "%.4100s/vtrace.defs", dir);
    unlink(path);
    snprintf(path, sizeof path, "%.4100s/config.txt", dir);
    unlink(path);
    rmdir(dir);
}

int vt__cmd_synth(int argc, char **argv)
{
    const char *outdir = NULL, *pattern = "halo2d", *mode = "full", *compute = NULL, *latency = NULL,
               *per_byte = NULL, *threshold = NULL, *slow_rank = NULL;
    uint32_t ranks = 4, iterations = 100, every = 0, bytes = 1024, seed = 1;
    double jitter = 0.1, slow_factor = 2.0;
    int nocompress = 0, json = 0, quiet = 0;
    const vt__opt opts[] = {
        {"-p", "--pattern", VT_OPT_STRING, .dest = &pattern},
        {"-n", "--ranks", VT_OPT_POSITIVE, .dest = &ranks},
        {"-i", "--iterations", VT_OPT_COUNT, .dest = &iterations},
        {NULL, "--compute", VT_OPT_STRING, .dest = &compute},
        {NULL, "--jitter", VT_OPT_NUMBER, .dest = &jitter, .lo = 0, .hi = 1},
        {NULL, "--slow-rank", VT_OPT_STRING, .dest = &slow_rank},
        {NULL, "--slow-factor", VT_OPT_NUMBER, .dest = &slow_factor, .lo = 0, .hi = 1e6},
        {NULL, "--bytes", VT_OPT_COUNT, .dest = &bytes},
        {NULL, "--allreduce-every", VT_OPT_COUNT, .dest = &every},
        {NULL, "--latency", VT_OPT_STRING, .dest = &latency},
        {NULL, "--per-byte", VT_OPT_STRING, .dest = &per_byte},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--seed", VT_OPT_COUNT, .dest = &seed, .what = "a number"},
        {"-m", "--mode", VT_OPT_STRING, .dest = &mode},
        {NULL, "--no-compress", VT_OPT_FLAG, .dest = &nocompress},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {0},
    };
    const vt__args args = {.usage = vt__usage_synth, .opts = opts, .pos = {&outdir},
                           .missing = "expected the output directory OUT", .extra = "one output directory only"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    static const char *const names[] = {"halo1d", "halo2d", "allreduce", "pipeline", "master-worker"};
    syn_params p = {.ranks = ranks, .iterations = iterations, .allreduce_every = every, .compute = 100000,
                    .jitter = jitter, .slow_rank = -1, .slow_factor = slow_factor, .bytes = bytes,
                    .latency = 1000, .g_ps = 100, .seed = seed, .zstd_level = nocompress ? 0 : 1};
    size_t pi = 0;
    while (pi < 5 && strcmp(pattern, names[pi]))
        pi++;
    if (pi == 5)
        return vt__usage_error(vt__usage_synth,
                               "--pattern takes halo1d, halo2d, allreduce, pipeline or master-worker, not '%s'",
                               pattern);
    p.pattern = (enum syn_pattern)pi;
    int full = !strcmp(mode, "full"), reduced = !strcmp(mode, "reduced"), both = !strcmp(mode, "both");
    if (!full && !reduced && !both)
        return vt__usage_error(vt__usage_synth, "--mode takes full, reduced or both, not '%s'", mode);
    if ((go = parse_dur("--compute", compute, &p.compute)) != VT_ARGS_GO ||
        (go = parse_dur("--latency", latency, &p.latency)) != VT_ARGS_GO)
        return go;
    if (per_byte && vt_parse_per_byte(per_byte, &p.g_ps))
        return vt__usage_error(vt__usage_synth, "--per-byte takes a time per byte (e.g. 100ps), not '%s'", per_byte);
    p.threshold = p.compute / 2;
    if ((go = parse_dur("--threshold", threshold, &p.threshold)) != VT_ARGS_GO)
        return go;
    if (slow_rank) {
        uint32_t r;
        if (vt__parse_u32(slow_rank, &r) || r >= ranks)
            return vt__usage_error(vt__usage_synth, "--slow-rank takes a rank below %" PRIu32 ", not '%s'", ranks,
                                   slow_rank);
        p.slow_rank = r;
    }
    char fulldir[4100], reddir[4100], err[1024];
    if (strlen(outdir) > 4000)
        return vt__usage_error(vt__usage_synth, "OUT is too long");
    if (both) {
        if (mkdir(outdir, 0755) && errno != EEXIST) {
            fprintf(stderr, "vtrace: %s: cannot create the directory (%s)\n", outdir, strerror(errno));
            return VT_EXIT_ERROR;
        }
        snprintf(fulldir, sizeof fulldir, "%.4000s/full", outdir);
        snprintf(reddir, sizeof reddir, "%.4000s/reduced", outdir);
    } else if (reduced) {
        snprintf(fulldir, sizeof fulldir, "%.4000s.synth-full-%ld", outdir, (long)getpid());
        snprintf(reddir, sizeof reddir, "%.4000s", outdir);
    } else
        snprintf(fulldir, sizeof fulldir, "%.4000s", outdir);
    syn_out *o = syn_out_open(fulldir, &p, err, sizeof err);
    if (!o) {
        fprintf(stderr, "vtrace: %s\n", err);
        return VT_EXIT_ERROR;
    }
    int rc = VT_EXIT_OK;
    if (syn_generate(&p, o)) {
        fprintf(stderr, "vtrace: %s\n", syn_out_error(o));
        rc = VT_EXIT_ERROR;
    }
    uint64_t records = syn_out_records(o), fbytes = syn_out_bytes(o);
    syn_out_free(o);
    vt_reduce_stats st = {0};
    if (rc == VT_EXIT_OK && !full)
        rc = reduce_into(fulldir, reddir, nocompress ? 0 : VT_RREC_ZSTD_LEVEL, quiet, &st);
    if (reduced)
        remove_trace(fulldir, ranks);
    if (rc != VT_EXIT_OK)
        return rc;
    if (json)
        printf("{\"pattern\":\"%s\",\"ranks\":%" PRIu32 ",\"iterations\":%" PRIu32 ",\"records\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"reduced_records\":%" PRIu64 ",\"reduced_bytes\":%" PRIu64 "}\n",
               names[pi], ranks, iterations, records, fbytes, st.records_stored, st.bytes_out);
    else {
        printf("%s: %" PRIu32 " ranks, %" PRIu32 " iterations: %" PRIu64 " records, %" PRIu64 " bytes\n", names[pi],
               ranks, iterations, records, fbytes);
        if (!full)
            printf("reduced: %" PRIu64 " records stored, %" PRIu64 " bytes\n", st.records_stored, st.bytes_out);
    }
    return VT_EXIT_OK;
}
