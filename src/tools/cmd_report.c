/* vtrace report DIR -o FILE: one self-contained HTML page (inline CSS and JavaScript,
 * the data as embedded JSON, nothing fetched) with a zoomable timeline per rank (MPI
 * calls, messages, iteration markers, a reduced trace's aggregated stretches; bins of
 * the whole run and every call of a window, in memory that does not grow with the
 * trace), the
 * critical path of the measured run (critpath.h), the domino path (as vtrace domino
 * computes it), the per-function profile and the what-if gains of the longest
 * candidates. The page's CSS and JavaScript are src/tools/report/report.{css,js},
 * turned into C strings at build time (src/tools/report/embed.sh).
 * This file holds the command; report_collect.c gathers the data, report_write.c writes
 * the page (report.h). */
#include "vt_config.h"
#include "tools/report.h"
#include "analysis/symbols.h"
#include "util/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vt__usage_report(FILE *out)
{
    fprintf(out, "usage: vtrace report [OPTIONS] -o FILE DIR\n"
                 "Writes one self-contained HTML page about the trace DIR (full or reduced): a timeline\n"
                 "per rank (MPI calls, messages, iteration markers, aggregated stretches of a reduced\n"
                 "trace) with zoom (wheel) and pan (drag), the critical path of the measured run, the\n"
                 "domino path, the per-function profile and the what-if gains of the longest candidates.\n\n"
                 "  -o, --output FILE       the page ('-': standard output)\n"
                 "      --max-events N      embed every call of a window of the run, at most N of them\n"
                 "                          (default 200000; the rest is drawn from the bins, a few\n"
                 "                          thousand per rank), and at most N messages (of the window),\n"
                 "                          markers, aggregated stretches and path segments; the page\n"
                 "                          says how many were left out\n"
                 "      --detail-from DUR   the window starts DUR after the run's start (default 0)\n"
                 "  -k, --top K             domino steps (default 5; 0: none)\n"
                 "      --whatif N          what-if rows: the N longest candidates, each eliminated alone\n"
                 "                          (default 10; 0: none)\n"
                 "      --max-candidates N  candidates the domino path considers, longest first (400)\n"
                 "      --threshold DUR     override the trace's candidate threshold (e.g. 500us)\n"
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet             no progress display\n");
}

int vt__cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *threshold = NULL, *from = NULL;
    int quiet = 0, rc = VT_EXIT_ERROR;
    report R;
    memset(&R, 0, sizeof R);
    R.max_events = 200000;
    R.top = 5;
    R.nwhatif = 10;
    R.maxc = 400;
    R.measured = -1;
    const vt__opt opts[] = {
        {"-o", "--output", VT_OPT_STRING, .dest = &out, .flags = VT_OPT_EQ},
        {NULL, "--max-events", VT_OPT_COUNT, .dest = &R.max_events},
        {"-k", "--top", VT_OPT_COUNT, .dest = &R.top},
        {NULL, "--whatif", VT_OPT_COUNT, .dest = &R.nwhatif},
        {NULL, "--max-candidates", VT_OPT_POSITIVE, .dest = &R.maxc},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--detail-from", VT_OPT_STRING, .dest = &from},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_report, .opts = opts, .pos = {&dir}};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (!out)
        return vt__usage_error(vt__usage_report, "missing -o FILE (the HTML page to write)");
    if (!dir)
        return vt__usage_error(vt__usage_report, "missing trace directory");
    int64_t theta = 0;
    if (threshold && vt_parse_duration(threshold, &theta))
        return vt__usage_error(vt__usage_report, "--threshold takes a duration such as 500us, not '%s'", threshold);
    if (from && (vt_parse_duration(from, &R.detail_from) || R.detail_from < 0))
        return vt__usage_error(vt__usage_report, "--detail-from takes a duration such as 2s, not '%s'", from);

    /* The output first: an unwritable place is reported before the long part. The page
     * is written to a temporary file beside it and renamed when complete. */
    int to_stdout = !strcmp(out, "-");
    char *tmp = NULL;
    FILE *o = stdout;
    if (!to_stdout) {
        size_t len = strlen(out) + 16;
        tmp = malloc(len);
        if (!tmp) {
            fprintf(stderr, "vtrace: out of memory\n");
            return VT_EXIT_ERROR;
        }
        snprintf(tmp, len, "%s.tmpXXXXXX", out);
        int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            free(tmp);
            return VT_EXIT_ERROR;
        }
        mode_t um = umask(0);
        umask(um);
        if (fchmod(fd, 0666 & ~um) != 0 || !(o = fdopen(fd, "w"))) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return VT_EXIT_ERROR;
        }
    }

    vt_error err;
    R.dir = dir;
    if (vt_trace_open(dir, &R.t, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    vt__note_incomplete(R.t);
    R.nranks = vt_trace_nranks(R.t);
    R.reduced = vt_trace_is_reduced(R.t);
    if (vt__model_params(R.t, dir, NULL, vt__usage_report, &R.p) != VT_ARGS_GO)
        goto out;
    if (threshold)
        R.p.theta = theta;
    if (vt__report_collect(&R, quiet))
        goto out;
    vt__report_write_page(&R, o);
    if (fflush(o) != 0 || ferror(o)) {
        fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", to_stdout ? "standard output" : out,
                strerror(errno));
        goto out;
    }
    if (!to_stdout) {
        int bad = fclose(o) != 0;
        o = NULL;
        if (bad || rename(tmp, out) != 0) {
            fprintf(stderr, "vtrace: %s: cannot write the report: %s\n", out, strerror(errno));
            goto out;
        }
        free(tmp);
        tmp = NULL;
    }
    rc = VT_EXIT_OK;
out:
    if (!to_stdout && o)
        fclose(o);
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    vt__report_free(&R);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(R.t);
    return rc;
}
