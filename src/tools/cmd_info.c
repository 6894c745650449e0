/* vtrace info: summary of a trace. */
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/progress.h"
#include "util/codec.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_info(FILE *out)
{
    fprintf(out, "usage: vtrace info [--json] [--no-match] [--quiet] DIR\n\n"
                 "Summary of the trace in DIR: ranks, duration (global time from the first enter to\n"
                 "the last exit), records, trace bytes, matched messages, host and binding of each\n"
                 "rank, flags, and the profile of every function summed over the ranks, sorted by\n"
                 "time. Reading every record validates the whole trace.\n\n"
                 "  --json      one JSON object instead of text\n"
                 "  --no-match  do not match messages (faster)\n"
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet no progress display on a terminal\n"
                 "  -h, --help  this text\n");
}

typedef struct fsum {
    const char *name;
    uint64_t calls, time_ns, bytes, records;
} fsum;

typedef struct rank_sum {
    uint64_t events;
    int64_t first, last; /* global ns */
    int any;
} rank_sum;

static int cmp_name(const void *a, const void *b) { return strcmp(((const fsum *)a)->name, ((const fsum *)b)->name); }

static int cmp_time(const void *pa, const void *pb)
{
    const fsum *a = pa, *b = pb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? 1 : -1;
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* Sums entries of the same name; returns the new count, sorted by time. */
static size_t merge_sort(fsum *v, size_t n)
{
    if (n == 0)
        return 0;
    vt_sort(v, n, sizeof *v, cmp_name);
    size_t o = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(v[i].name, v[o].name) == 0) {
            v[o].calls += v[i].calls;
            v[o].time_ns += v[i].time_ns;
            v[o].bytes += v[i].bytes;
            v[o].records += v[i].records;
        } else {
            v[++o] = v[i];
        }
    }
    n = o + 1;
    vt_sort(v, n, sizeof *v, cmp_time);
    return n;
}

/* Profile of one rank (all ranks when rank == UINT32_MAX), merged by name. */
static fsum *profile(const vt_trace *t, uint32_t rank, size_t *n)
{
    uint32_t lo = rank == UINT32_MAX ? 0 : rank, hi = rank == UINT32_MAX ? vt_trace_nranks(t) : rank + 1;
    size_t total = 0;
    for (uint32_t r = lo; r < hi; r++)
        total += vt_trace_rank(t, r)->nprofile;
    fsum *v = calloc(total ? total : 1, sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (uint32_t r = lo; r < hi; r++) {
        const vt_rank *rk = vt_trace_rank(t, r);
        for (size_t i = 0; i < rk->nprofile; i++) {
            const vt_profile *p = &rk->profile[i];
            v[k++] = (fsum){rk->funcs[p->fn].name, p->calls, p->time_ns, p->bytes, p->records};
        }
    }
    *n = merge_sort(v, k);
    return v;
}

/* The value of KEY= in the configuration text, "" when it is not there. */
static const char *config_value(const char *config, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    size_t kl = strlen(key);
    for (const char *p = config; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t ll = nl ? (size_t)(nl - p) : strlen(p);
        if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t n = ll - kl - 1 < len - 1 ? ll - kl - 1 : len - 1;
            memcpy(out, p + kl + 1, n);
            out[n] = '\0';
            break;
        }
        p = nl ? nl + 1 : NULL;
    }
    return out;
}

/* The model's parameters the analyses use, and how L was obtained. */
static void print_model(const vt_trace *t)
{
    const char *c = vt_trace_config(t);
    char L[64], G[64], trdv[64], theta[64], cal[128];
    config_value(c, "VTRACE_MODEL_L", L, sizeof L);
    config_value(c, "VTRACE_MODEL_G", G, sizeof G);
    config_value(c, "VTRACE_MODEL_TRDV", trdv, sizeof trdv);
    config_value(c, "VTRACE_THRESHOLD", theta, sizeof theta);
    config_value(c, "VTRACE_MODEL_L_CALIBRATION", cal, sizeof cal);
    if (!*L)
        return; /* a configuration without the model's (a synthetic trace) */
    printf("model:     latency L %s (%s%s), time per byte G %s, synchronous from %s bytes, candidate threshold %s\n",
           *L ? L : "?", *cal ? "measured at MPI_Init, half the round trip: " : "set by VTRACE_MODEL_L, or by a "
           "vtrace that did not record how it was measured", cal, *G ? G : "?", *trdv ? trdv : "?", *theta ? theta : "?");
}

/* The clock the layer read (VTRACE_CLOCK_USED; traces of an older layer say nothing)
 * and whether the TSC kept time with CLOCK_MONOTONIC to the end. */
static void print_clock(const vt_trace *t)
{
    const char *c = vt_trace_config(t);
    char asked[64], used[128], check[256];
    config_value(c, "VTRACE_CLOCK", asked, sizeof asked);
    config_value(c, "VTRACE_CLOCK_USED", used, sizeof used);
    config_value(c, "VTRACE_CLOCK_CHECK", check, sizeof check);
    if (!*used)
        return;
    printf("clock:     %s (VTRACE_CLOCK=%s)%s%s\n", !strcmp(used, "monotonic") ? "monotonic (clock_gettime)" : used,
           *asked ? asked : "?", *check ? "; " : "", check);
}

static void rank_flags(FILE *out, uint64_t f, int json)
{
    static const char *const names[] = {"incomplete", "late_init", "exit_finalize", "scaled"};
    int first = 1;
    if (json)
        putc('[', out);
    for (int i = 0; i < 4; i++) {
        if (!(f & (1u << i)))
            continue;
        if (json)
            fprintf(out, "%s\"%s\"", first ? "" : ",", names[i]);
        else
            fprintf(out, "%s%s", first ? "" : ",", names[i]);
        first = 0;
    }
    if (json)
        putc(']', out);
    else if (first)
        putc('-', out);
}

static void json_functions(FILE *out, const fsum *v, size_t n)
{
    int first = 1;
    putc('{', out);
    for (size_t i = 0; i < n; i++) {
        vt__json_key(out, &first, v[i].name);
        fprintf(out,
                "{\"calls\":%" PRIu64 ",\"time_ns\":%" PRIu64 ",\"mean_ns\":%" PRIu64 ",\"bytes\":%" PRIu64
                ",\"events\":%" PRIu64 "}",
                v[i].calls, v[i].time_ns, v[i].calls ? v[i].time_ns / v[i].calls : 0, v[i].bytes, v[i].records);
    }
    putc('}', out);
}

static void text_int(FILE *out, int width, int64_t v)
{
    if (v < 0)
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, " %*" PRId64, width, v);
}

int vt__cmd_info(int argc, char **argv)
{
    int json = 0, no_match = 0, quiet = 0;
    const char *dir = NULL;
    vt__progress pr = {0};
    const vt__opt opts[] = {
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {NULL, "--no-match", VT_OPT_FLAG, .dest = &no_match},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_info, .opts = opts, .pos = {&dir}, .missing = "missing trace directory",
                           .extra = "more than one trace directory", .extra_plain = 1, .prefix = "info: ",
                           .dashdash = 1};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;

    vt_error err;
    vt_trace *t;
    vt_matches *m = NULL;
    rank_sum *rs = NULL;
    fsum *all = NULL;
    int rc = VT_EXIT_ERROR;
    if (vt_trace_open(dir, &t, &err))
        return vt__fail(&err);
    uint32_t nranks = vt_trace_nranks(t);
    rs = calloc(nranks, sizeof *rs);
    if (!rs) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }

    /* every record: counts, duration, and full validation */
    uint64_t events = 0;
    int64_t first = 0, last = 0;
    int any = 0;
    uint64_t incomplete = vt_trace_flags(t) & 1u, late = 0, scaled = 0;
    uint64_t ev_stored = 0, ev_decoded = 0;
    vt__progress_start(&pr, "reading", vt_trace_nrecords(t), quiet);
    for (uint32_t r = 0; r < nranks; r++) {
        vt_cursor *c;
        vt_event ev;
        int got;
        if (vt_cursor_open(t, r, &c, &err)) {
            vt__fail(&err);
            goto out;
        }
        const int reduced = vt_trace_rank(t, r)->reduced;
        vt_rrec rr;
        while ((got = reduced ? vt_cursor_next_reduced(c, &rr, &err) : vt_cursor_next(c, &ev, &err)) == 1) {
            int64_t e = vt_global_time(t, r, reduced ? rr.enter : ev.enter);
            int64_t x = vt_global_time(t, r, reduced ? rr.exit : ev.exit);
            if (!rs[r].any || e < rs[r].first)
                rs[r].first = e;
            if (!rs[r].any || x > rs[r].last)
                rs[r].last = x;
            rs[r].any = 1;
            rs[r].events++;
            if (__builtin_expect((rs[r].events & 0xffff) == 0, 0))
                vt__progress_update(&pr, events + rs[r].events);
        }
        uint64_t st, de;
        vt_cursor_bytes(c, &st, &de);
        ev_stored += st;
        ev_decoded += de;
        vt_cursor_close(c);
        if (got < 0) {
            vt__fail(&err);
            goto out;
        }
        events += rs[r].events;
        if (rs[r].any) {
            if (!any || rs[r].first < first)
                first = rs[r].first;
            if (!any || rs[r].last > last)
                last = rs[r].last;
            any = 1;
        }
        const vt_rank *rk = vt_trace_rank(t, r);
        incomplete |= rk->flags & VT_RANK_INCOMPLETE;
        scaled |= rk->flags & VT_RANK_SCALED;
        late |= rk->flags & VT_RANK_LATE_INIT;
    }
    vt__progress_end(&pr);
    /* a scaled trace lacks records too: match what is there */
    if (!no_match && vt_trace_match(t, incomplete || scaled ? VT_MATCH_PARTIAL : 0, &m, &err)) {
        vt__fail(&err);
        goto out;
    }
    int64_t duration = any ? (int64_t)((uint64_t)last - (uint64_t)first) : 0;
    uint64_t bytes = vt_trace_bytes(t);
    double bpe = events ? (double)bytes / (double)events : 0.0;
    size_t nall = 0;
    all = profile(t, UINT32_MAX, &nall);
    if (!all) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }

    size_t nsites, nlines, ncheck;
    vt_symbols_summary(t, &nsites, &nlines, &ncheck);
    if (json) {
        int f1 = 1;
        putchar('{');
        vt__json_key(stdout, &f1, "trace");
        vt__json_str(stdout, dir);
        vt__json_key(stdout, &f1, "version");
        vt__json_str(stdout, vt_trace_version(t));
        vt__json_key(stdout, &f1, "mpi_version");
        vt__json_str(stdout, vt_trace_mpi_version(t));
        vt__json_key(stdout, &f1, "kind");
        vt__json_str(stdout, vt_trace_is_reduced(t) ? "reduced" : "full");
        vt__json_key(stdout, &f1, "stored");
        fputs(vt_trace_flags(t) & VT_GLOBAL_STORED ? "true" : "false", stdout);
        vt__json_key(stdout, &f1, "ranks");
        printf("%" PRIu32, nranks);
        vt__json_key(stdout, &f1, "events");
        printf("%" PRIu64, events);
        vt__json_key(stdout, &f1, "duration_ns");
        printf("%" PRId64, duration);
        vt__json_key(stdout, &f1, "bytes");
        printf("%" PRIu64, bytes);
        vt__json_key(stdout, &f1, "bytes_per_event");
        printf("%.2f", bpe);
        vt__json_key(stdout, &f1, "stored_records");
        printf("%" PRIu64, vt_trace_nrecords(t));
        vt__json_key(stdout, &f1, "event_bytes_stored");
        printf("%" PRIu64, ev_stored);
        vt__json_key(stdout, &f1, "event_bytes_decoded");
        printf("%" PRIu64, ev_decoded);
        vt__json_key(stdout, &f1, "messages");
        if (m)
            printf("%" PRIu64, vt_matches_count(m));
        else
            fputs("null", stdout);
        vt__json_key(stdout, &f1, "unmatched");
        if (m)
            printf("%" PRIu64, vt_matches_unmatched(m));
        else
            fputs("null", stdout);
        vt__json_key(stdout, &f1, "incomplete");
        fputs(incomplete ? "true" : "false", stdout);
        vt__json_key(stdout, &f1, "running");
        fputs(vt_trace_flags(t) & VT_GLOBAL_RUNNING ? "true" : "false", stdout);
        vt__json_key(stdout, &f1, "late_init");
        fputs(late ? "true" : "false", stdout);
        vt__json_key(stdout, &f1, "call_sites");
        printf("%zu", nsites);
        vt__json_key(stdout, &f1, "call_sites_with_lines");
        printf("%zu", nlines);
        vt__json_key(stdout, &f1, "functions");
        json_functions(stdout, all, nall);
        vt__json_key(stdout, &f1, "per_rank");
        putchar('[');
        for (uint32_t r = 0; r < nranks; r++) {
            const vt_rank *rk = vt_trace_rank(t, r);
            int f2 = 1;
            size_t n;
            fsum *v = profile(t, r, &n);
            if (!v) {
                fprintf(stderr, "vtrace: out of memory\n");
                goto out;
            }
            printf("%s{", r ? "," : "");
            vt__json_key(stdout, &f2, "rank");
            printf("%" PRIu32, r);
            vt__json_key(stdout, &f2, "host");
            vt__json_str(stdout, rk->hostname);
            vt__json_key(stdout, &f2, "core");
            printf("%" PRId64, rk->core);
            vt__json_key(stdout, &f2, "numa");
            printf("%" PRId64, rk->numa);
            vt__json_key(stdout, &f2, "binding");
            vt__json_str(stdout, rk->binding);
            vt__json_key(stdout, &f2, "events");
            printf("%" PRIu64, rs[r].events);
            vt__json_key(stdout, &f2, "bytes");
            printf("%" PRIu64, rk->file_bytes);
            vt__json_key(stdout, &f2, "flags");
            rank_flags(stdout, rk->flags, 1);
            char why[512];
            vt_rank_status(t, r, why, sizeof why);
            vt__json_key(stdout, &f2, "ended");
            vt__json_str(stdout, why);
            vt__json_key(stdout, &f2, "calls_not_recorded");
            printf("%" PRIu64, rk->calls_not_recorded);
            if (rk->has_overhead) { /* format 1.2: measured at MPI_Init */
                vt__json_key(stdout, &f2, "overhead_ps");
                printf("%" PRIu64, rk->overhead_ps);
                vt__json_key(stdout, &f2, "copy_ps_per_byte");
                printf("%" PRIu64, rk->copy_ps_per_byte);
            }
            vt__json_key(stdout, &f2, "functions");
            json_functions(stdout, v, n);
            putchar('}');
            free(v);
        }
        fputs("]}\n", stdout);
    } else {
        printf("trace:     %s\n", dir);
        printf("version:   vtrace %s, %s\n", vt_trace_version(t), vt_trace_mpi_version(t));
        printf("kind:      %s\n", vt_trace_is_reduced(t) ? "reduced (only what can change a prediction; "
                                                             "the profile below counts every call)"
                                         : vt_trace_flags(t) & VT_GLOBAL_STORED
                                               ? "full, stored as a reduced trace (reducing it did not make it "
                                                 "smaller: its records and rank files are the full trace's)"
                                               : "full");
        printf("ranks:     %" PRIu32 "\n", nranks);
        printf("duration:  %.9f s (%" PRId64 " ns)\n", (double)duration / 1e9, duration);
        if (vt_trace_nrecords(t) != events)
            printf("events:    %" PRIu64 " records (%" PRIu64 " stored: START, END and candidate bursts go "
                   "into other records)\n", events, vt_trace_nrecords(t));
        else
            printf("events:    %" PRIu64 " records\n", events);
        printf("bytes:     %" PRIu64 " on disk, %.2f a record; event blocks %" PRIu64 " bytes, decoded %" PRIu64
               " (%.1fx)\n", bytes, bpe, ev_stored, ev_decoded,
               ev_stored ? (double)ev_decoded / (double)ev_stored : 0.0);
        if (vt_trace_is_reduced(t))
            printf("messages:  named by the completions that record them (no matching needed)\n");
        else if (!m)
            printf("messages:  not matched (--no-match)\n");
        else if (vt_matches_unmatched(m))
            printf("messages:  %" PRIu64 " matched, %" PRIu64 " unmatched (trace incomplete)\n", vt_matches_count(m),
                   vt_matches_unmatched(m));
        else
            printf("messages:  %" PRIu64 " matched\n", vt_matches_count(m));
        /* the same text with and without libdw for a trace without build-ids */
        printf("sites:     %zu call sites, %zu with function, file and line%s\n", nsites, nlines,
               nlines >= ncheck           ? ""
               : vt_symbols_available() ? " (for the others: no debug information found, or another build; "
                                          "--debug-dir)"
                                        : " (this vtrace was built without libdw)");
        printf("flags:     %s%s%s\n", incomplete ? "incomplete (the analyses cover its readable part)" : "complete",
               scaled ? ", scaled (VTRACE_PERIODIC kept some iterations in detail only)" : "",
               late ? ", initialised late" : "");
        print_model(t);
        print_clock(t);
        if (vt_trace_flags(t) & VT_GLOBAL_RUNNING)
            printf("run:       wrote no end (vtrace.defs is the one written at MPI_Init): it was killed, or is "
                   "still running\n");
        /* how each incomplete rank ended; the first ones, and how many more */
        for (uint32_t r = 0, shown = 0, more = 0; r < nranks; r++) {
            char why[512];
            if (!vt_rank_status(t, r, why, sizeof why))
                continue;
            if (shown < 16)
                printf("%s rank %" PRIu32 ": %s\n", shown++ ? "          " : "ended:    ", r, why);
            else
                more++;
            if (r + 1 == nranks && more)
                printf("           ... and %" PRIu32 " more ranks (--json lists all)\n", more);
        }

        int hw = 4, bw = 7;
        for (uint32_t r = 0; r < nranks; r++) {
            const vt_rank *rk = vt_trace_rank(t, r);
            int l = (int)strlen(rk->hostname);
            hw = l > hw ? l : hw;
            l = (int)strlen(rk->binding);
            bw = l > bw ? l : bw;
        }
        printf("\n%6s %-*s %5s %5s %-*s %10s  %s\n", "rank", hw, "host", "core", "numa", bw, "binding", "events",
               "flags");
        for (uint32_t r = 0; r < nranks; r++) {
            const vt_rank *rk = vt_trace_rank(t, r);
            printf("%6" PRIu32 " %-*s", r, hw, rk->hostname);
            text_int(stdout, 5, rk->core);
            text_int(stdout, 5, rk->numa);
            printf(" %-*s %10" PRIu64 "  ", bw, *rk->binding ? rk->binding : "-", rs[r].events);
            rank_flags(stdout, rk->flags, 0);
            putchar('\n');
        }
        /* format 1.2: the layer's cost measured at MPI_Init (vtrace compensate removes it) */
        for (uint32_t r = 0, head = 0; r < nranks; r++) {
            const vt_rank *rk = vt_trace_rank(t, r);
            if (!rk->has_overhead)
                continue;
            if (!head++)
                printf("\n%6s %16s %16s\n", "rank", "overhead/event", "copy/byte");
            printf("%6" PRIu32 " %13.3f ns %13.3f ps\n", r, (double)rk->overhead_ps / 1000.0,
                   (double)rk->copy_ps_per_byte);
        }

        int nw = 8;
        for (size_t i = 0; i < nall; i++) {
            int l = (int)strlen(all[i].name);
            nw = l > nw ? l : nw;
        }
        uint64_t total = 0;
        for (size_t i = 0; i < nall; i++)
            total += all[i].time_ns;
        /* the shares say of what: the time in MPI, and the run time of all ranks */
        double run = (double)duration * (double)nranks;
        printf("\n%-*s %10s %14s %12s %6s %6s %14s %10s\n", nw, "function", "calls", "time_ns", "mean_ns", "%mpi",
               "%run", "bytes", "events");
        for (size_t i = 0; i < nall; i++) {
            printf("%-*s %10" PRIu64 " %14" PRIu64 " %12" PRIu64 " %6.2f %6.2f %14" PRIu64 " %10" PRIu64 "\n", nw,
                   all[i].name, all[i].calls, all[i].time_ns, all[i].calls ? all[i].time_ns / all[i].calls : 0,
                   total ? 100.0 * (double)all[i].time_ns / (double)total : 0.0,
                   run > 0 ? 100.0 * (double)all[i].time_ns / run : 0.0, all[i].bytes, all[i].records);
        }
        printf("(%%mpi: share of the time in MPI calls, %.6f s summed over ranks; %%run: share of the run\n"
               "time of all ranks, %.6f s = duration x %" PRIu32 " ranks; time_ns summed over ranks)\n",
               total / 1e9, run / 1e9, nranks);
    }
    rc = VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    free(all);
    free(rs);
    vt_matches_free(m);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    return rc;
}
