/* Scenario lists shared by the subcommands: from the command line, from files, and
 * random ones over the candidates (the same for every trace of a run). */
#include "vt_config.h"
#include "tools/tools.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__cand_collect(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname, int64_t callsite)
{
    (void)callsite;
    vt__cands *c = arg;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 256;
        vt__cand *n = realloc(c->v, nc * sizeof *n);
        if (!n) {
            c->oom = 1;
            return;
        }
        c->v = n;
        c->cap = nc;
    }
    vt__cand *x = &c->v[c->n++];
    x->rank = rank;
    x->seq = seq;
    x->dur = dur;
    snprintf(x->fn, sizeof x->fn, "%s", fname ? fname : "(computation)");
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

int vt__scenario_add(vt__scenarios *l, const char *text, char *err, size_t errlen)
{
    vt_scenario *nv = realloc(l->v, (l->n + 1) * sizeof *l->v);
    if (!nv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->v = nv;
    size_t b = strspn(text, " \t"), e = strlen(text);
    while (e > b && strchr(" \t\r\n", text[e - 1]))
        e--;
    if (e - b == 7 && !strncmp(text + b, "balance", 7)) {
        /* made from the trace before the replay (vt__scenarios_expand) */
        memset(&nv[l->n], 0, sizeof nv[l->n]);
        if (!(nv[l->n].text = strdup(VT__BALANCE))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        l->n++;
        return 0;
    }
    if (vt_scenario_parse(text, &nv[l->n], err, errlen))
        return -1;
    l->n++;
    return 0;
}

void vt__scenarios_free(vt__scenarios *l)
{
    for (size_t i = 0; i < l->n; i++)
        vt_scenario_free(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int vt__opt_scenario(void *list, const char *text, char *msg, size_t len)
{
    char err[1024];
    if (vt__scenario_add(list, text, err, sizeof err)) {
        snprintf(msg, len, "scenario %s", err);
        return VT_EXIT_USAGE;
    }
    return 0;
}

int vt__opt_scenario_file(void *list, const char *path, char *msg, size_t len)
{
    char err[1024];
    if (vt__scenario_read_file(path, list, err, sizeof err)) {
        snprintf(msg, len, "%s", err);
        return VT_EXIT_ERROR;
    }
    return 0;
}

int vt__scenario_read_file(const char *path, vt__scenarios *l, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the scenario file", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    int rc = 0;
    /* getline: a random scenario over many candidates is a long line. */
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        char e[512];
        if (vt__scenario_add(l, line, e, sizeof e)) {
            snprintf(err, errlen, "%s: line %u: %s", path, lineno, e);
            rc = -1;
            break;
        }
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

int vt__scenario_random(const vt__cands *cs, uint32_t count, uint32_t seed, vt__scenarios *l, char *err,
                        size_t errlen)
{
    if (cs->oom) {
        snprintf(err, errlen, "out of memory listing the candidates");
        return -1;
    }
    uint64_t state = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0xbf58476d1ce4e5b9ull);
    for (uint32_t k = 0; k < count; k++) {
        /* Each candidate joins with probability q (itself random per scenario); its
         * shortening is elimination or a random amount up to its duration. */
        uint64_t q = rnd(&state) % 1000;
        size_t len = 0, cap = 256;
        char *text = malloc(cap);
        if (!text) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        text[0] = '\0';
        for (size_t i = 0; i < cs->n; i++) {
            if (rnd(&state) % 1000 >= q)
                continue;
            char item[96];
            if (rnd(&state) % 2)
                snprintf(item, sizeof item, "%s%u:%" PRIu64 "=elim", len ? " " : "", cs->v[i].rank, cs->v[i].seq);
            else
                snprintf(item, sizeof item, "%s%u:%" PRIu64 "=-%" PRIu64 "ns", len ? " " : "", cs->v[i].rank,
                         cs->v[i].seq, rnd(&state) % (uint64_t)(cs->v[i].dur + 1));
            size_t il = strlen(item);
            if (len + il + 1 > cap) {
                cap = (len + il + 1) * 2;
                char *nt = realloc(text, cap);
                if (!nt) {
                    free(text);
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                text = nt;
            }
            memcpy(text + len, item, il + 1);
            len += il;
        }
        int bad = vt__scenario_add(l, text, err, errlen);
        free(text);
        if (bad)
            return -1;
    }
    return 0;
}

int vt__scenarios_expand(vt__scenarios *l, const vt_trace *t, const vt_model_params *p, vt_imbalance_stats *st,
                         vt_error *err)
{
    int found = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].text, VT__BALANCE))
            continue;
        vt_scenario sc;
        if (vt_imbalance_scenario(t, p, VT__BALANCE, &sc, st, err))
            return -1;
        vt_scenario_free(&l->v[i]);
        l->v[i] = sc;
        found = 1;
    }
    return found;
}
