/* An example `vtrace patterns` plug-in (vtrace_pattern.h): MPI_Wait calls (and the other
 * Wait variants) longer than 1 ms, their time summed by rank and call site.
 *
 *     cc -shared -fPIC -I$PREFIX/include -o longwait.so longwait.c
 *     vtrace patterns --plugin ./longwait.so DIR
 *
 * LONGWAIT_MIN_NS=N sets another threshold (ns). Each finding also counts how much of
 * its waits came after the matched partner entered (the message's other end), which
 * the plug-in prints on stderr with LONGWAIT_VERBOSE=1: an example of the partner
 * fields. */
#include <vtrace_pattern.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct state {
    int64_t min_ns;
    int verbose;
    vtrace_pattern_finding *v;
    size_t n, cap;
} state;

static void *lw_begin(uint32_t nranks, const char *config)
{
    (void)nranks, (void)config;
    state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    const char *e = getenv("LONGWAIT_MIN_NS");
    s->min_ns = e && *e ? strtoll(e, NULL, 10) : 1000000;
    e = getenv("LONGWAIT_VERBOSE");
    s->verbose = e && !strcmp(e, "1");
    return s;
}

static void lw_event(void *st, const vtrace_pattern_event *ev)
{
    state *s = st;
    if (!s || strncmp(ev->function, "MPI_Wait", 8))
        return;
    int64_t dur = ev->exit_ns - ev->enter_ns;
    if (dur <= s->min_ns)
        return;
    if (s->verbose && ev->npartners)
        fprintf(stderr, "longwait: rank %" PRIu32 " record %" PRIu64 " %s: %" PRId64 " ns, partner rank %" PRIu32
                        " entered %" PRId64 " ns after the wait began\n",
                ev->rank, ev->index, ev->function, dur, ev->partner_rank, ev->partner_enter_ns - ev->enter_ns);
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].rank == ev->rank && s->v[i].callsite == ev->callsite) {
            s->v[i].severity_ns += dur;
            s->v[i].count++;
            return;
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        vtrace_pattern_finding *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return;
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = (vtrace_pattern_finding){NULL, ev->rank, ev->callsite, dur, 1};
}

static size_t lw_finish(void *st, const vtrace_pattern_finding **out)
{
    state *s = st;
    *out = s ? s->v : NULL;
    return s ? s->n : 0;
}

static void lw_end(void *st)
{
    state *s = st;
    if (s)
        free(s->v);
    free(s);
}

static const vtrace_pattern longwait = {
    VTRACE_PATTERN_API_VERSION, "Long MPI_Wait (> 1 ms)", lw_begin, lw_event, lw_finish, lw_end,
};

const vtrace_pattern *vtrace_pattern_plugin(void)
{
    return &longwait;
}
