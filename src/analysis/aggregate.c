/* What to fix first, by aggregate (aggregate.h). */
#include "vt_config.h"
#include "analysis/aggregate.h"
#include "analysis/replay.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const by_names[] = {"rank", "site", "function", "mpi"};

int vt_agg_by_parse(const char *s)
{
    for (size_t i = 0; i < sizeof by_names / sizeof by_names[0]; i++)
        if (!strcmp(s, by_names[i]))
            return (int)i;
    return -1;
}

const char *vt_agg_by_name(enum vt_agg_by by) { return by_names[by]; }

/* Candidates grouped by their selector: the rows and an open-addressing index. */
typedef struct grouping {
    const vt_trace *t;
    enum vt_agg_by by;
    vt_agg *a;
    size_t *slots;      /* row index + 1, 0 empty */
    size_t nslots;
    int oom;
} grouping;

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int grow(grouping *g)
{
    size_t nn = g->nslots ? g->nslots * 2 : 256;
    size_t *ns = calloc(nn, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < g->a->n; i++) {
        size_t h = (size_t)hash(g->a->rows[i].selector) & (nn - 1);
        while (ns[h])
            h = (h + 1) & (nn - 1);
        ns[h] = i + 1;
    }
    free(g->slots);
    g->slots = ns;
    g->nslots = nn;
    return 0;
}

/* The row of SELECTOR, made with LABEL when new; NULL when out of memory. */
static vt_agg_row *row_of(grouping *g, const char *selector, const char *label)
{
    vt_agg *a = g->a;
    if ((a->n + 1) * 2 > g->nslots && grow(g))
        return NULL;
    size_t h = (size_t)hash(selector) & (g->nslots - 1);
    for (; g->slots[h]; h = (h + 1) & (g->nslots - 1))
        if (!strcmp(a->rows[g->slots[h] - 1].selector, selector))
            return &a->rows[g->slots[h] - 1];
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        vt_agg_row *nr = realloc(a->rows, nc * sizeof *nr);
        if (!nr)
            return NULL;
        a->rows = nr;
        a->cap = nc;
    }
    vt_agg_row *r = &a->rows[a->n];
    memset(r, 0, sizeof *r);
    r->selector = strdup(selector);
    r->label = strdup(label);
    if (!r->selector || !r->label) {
        free(r->selector);
        free(r->label);
        return NULL;
    }
    r->site = -1;
    g->slots[h] = ++a->n;
    return r;
}

static void collect(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname, int64_t cs)
{
    grouping *g = arg;
    char sel[600], label[300], site[256];
    const char *sym = NULL;
    (void)seq;
    if (g->oom)
        return;
    switch (g->by) {
    case VT_AGG_RANK:
        snprintf(sel, sizeof sel, "rank:%" PRIu32, rank);
        snprintf(label, sizeof label, "rank %" PRIu32, rank);
        break;
    case VT_AGG_MPI:
        /* start-up is no work a programmer can shorten (as in the domino path) */
        if (!fname || !strncmp(fname, "MPI_Init", 8))
            return;
        snprintf(sel, sizeof sel, "fn:%s", fname);
        snprintf(label, sizeof label, "%s", fname);
        break;
    case VT_AGG_SITE:
    case VT_AGG_FUNCTION:
        /* what a site: selector shortens: computation before a known call site */
        if (fname || cs < 0)
            return;
        vt_site_key(g->t, rank, cs, site, sizeof site, &sym);
        if (!strcmp(site, "?"))
            return;
        if (g->by == VT_AGG_FUNCTION && sym && *sym) {
            snprintf(sel, sizeof sel, "site:%s", sym);
            snprintf(label, sizeof label, "%s", sym);
        } else {
            snprintf(sel, sizeof sel, "site:%s", site);
            snprintf(label, sizeof label, "%s", site);
        }
        break;
    default:
        return;
    }
    vt_agg_row *r = row_of(g, sel, label);
    if (!r) {
        g->oom = 1;
        return;
    }
    if (r->site < 0 && cs >= 0 && !fname) {
        r->site_rank = rank;
        r->site = cs;
    }
    r->count++;
    r->dur += dur;
    if (!fname)
        r->comp += dur;
}

/* Before the replay: the longest first (computation first, which is what a rank's own
 * work is; its waits follow from the others'). */
static int by_weight(const void *x, const void *y)
{
    const vt_agg_row *a = x, *b = y;
    if (a->comp != b->comp)
        return a->comp > b->comp ? -1 : 1;
    return a->dur > b->dur ? -1 : a->dur < b->dur;
}

/* The ranking: the shortest predicted run, then the longest duration, then the name. */
static int by_gain(const void *x, const void *y)
{
    const vt_agg_row *a = x, *b = y;
    if (a->pred != b->pred)
        return a->pred < b->pred ? -1 : 1;
    if (a->dur != b->dur)
        return a->dur > b->dur ? -1 : 1;
    return strcmp(a->selector, b->selector);
}

int vt_agg_run(const vt_trace *t, const vt_model_params *p, enum vt_agg_by by, const char *shortening, size_t maxg,
               vt_agg *a, vt_error *err)
{
    memset(a, 0, sizeof *a);
    grouping g = {.t = t, .by = by, .a = a};
    vt_scenario *sc = NULL;
    size_t nsc = 0;
    char msg[512];
    int rc = -1;
    if (vt_replay_candidates(t, p, collect, &g, err))
        goto out;
    if (g.oom) {
        vt_error_set(err, "out of memory grouping the candidates");
        goto out;
    }
    a->ngroups = a->n;
    vt_sort(a->rows, a->n, sizeof *a->rows, by_weight);
    for (size_t i = maxg; i < a->n; i++) {
        free(a->rows[i].selector);
        free(a->rows[i].label);
    }
    if (a->n > maxg)
        a->n = maxg;
    /* the baseline, then one scenario per aggregate */
    sc = calloc(a->n + 1, sizeof *sc);
    if (!sc) {
        vt_error_set(err, "out of memory");
        goto out;
    }
    if (vt_scenario_parse("", &sc[nsc], msg, sizeof msg)) {
        vt_error_set(err, "%s", msg);
        goto out;
    }
    nsc++;
    for (size_t i = 0; i < a->n; i++, nsc++) {
        vt_agg_row *r = &a->rows[i];
        size_t len = strlen(r->selector) + strlen(shortening) + 2;
        r->scenario = malloc(len);
        if (!r->scenario) {
            vt_error_set(err, "out of memory");
            goto out;
        }
        snprintf(r->scenario, len, "%s=%s", r->selector, shortening);
        if (vt_scenario_parse(r->scenario, &sc[nsc], msg, sizeof msg)) {
            vt_error_set(err, "%s", msg);
            goto out;
        }
    }
    vt_replay_result res;
    if (vt_replay(t, NULL, p, sc, nsc, &res, err))
        goto out;
    a->measured = res.total[0] - res.start;
    for (size_t i = 0; i < a->n; i++)
        a->rows[i].pred = res.total[i + 1] - res.start;
    a->messages = res.messages;
    a->clock_violations = res.clock_violations;
    vt_replay_result_free(&res);
    vt_sort(a->rows, a->n, sizeof *a->rows, by_gain);
    rc = 0;
out:
    for (size_t i = 0; i < nsc; i++)
        vt_scenario_free(&sc[i]);
    free(sc);
    free(g.slots);
    if (rc)
        vt_agg_free(a);
    return rc;
}

void vt_agg_free(vt_agg *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->rows[i].selector);
        free(a->rows[i].scenario);
        free(a->rows[i].label);
    }
    free(a->rows);
    memset(a, 0, sizeof *a);
}
