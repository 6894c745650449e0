/* The what-if replay's building blocks, shared by the replay of full traces
 * (replay_full.c, replay_stream.c) and of reduced traces (replay_reduced.c): hash maps,
 * slots, the contributors of a completion, the application of one model event to every
 * scenario (model.md §2, §6) and the collective gates. They call nothing of the other
 * replay files. */
#include "vt_config.h"
#include "analysis/replay_priv.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x) { return vt__rp_mix(x); }

int vt__rp_map_grow(u64map *m)
{
    size_t nc = m->cap ? m->cap * 2 : 16;
    struct u64ent *ne = calloc(nc, sizeof *ne);
    if (!ne)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->e[i].k)
            continue;
        size_t j = mix(m->e[i].k) & (nc - 1);
        while (ne[j].k)
            j = (j + 1) & (nc - 1);
        ne[j] = m->e[i];
    }
    free(m->e);
    m->e = ne;
    m->cap = nc;
    return 0;
}

void vt__rp_map_free(u64map *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

static size_t pm_home(uint32_t pos, size_t cap) { return (size_t)mix((uint64_t)pos + 1) & (cap - 1); }

int vt__rp_pm_put(posmap *m, uint32_t pos, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        uint64_t *ne = calloc(nc, sizeof *ne);
        if (!ne)
            return -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i])
                continue;
            size_t j = pm_home((uint32_t)((m->e[i] >> 32) - 1), nc);
            while (ne[j])
                j = (j + 1) & (nc - 1);
            ne[j] = m->e[i];
        }
        free(m->e);
        m->e = ne;
        m->cap = nc;
    }
    uint64_t k = (uint64_t)pos + 1;
    size_t j = pm_home(pos, m->cap);
    while (m->e[j] && m->e[j] >> 32 != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->e[j])
        m->n++;
    m->e[j] = k << 32 | val;
    return 0;
}

void vt__rp_pm_del(posmap *m, uint32_t pos)
{
    if (!m->n)
        return;
    uint64_t k = (uint64_t)pos + 1;
    size_t mask = m->cap - 1, j = pm_home(pos, m->cap);
    while (m->e[j] && m->e[j] >> 32 != k)
        j = (j + 1) & mask;
    if (!m->e[j])
        return;
    m->e[j] = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->e[i]; i = (i + 1) & mask) {
        size_t home = pm_home((uint32_t)((m->e[i] >> 32) - 1), m->cap);
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->e[j] = m->e[i];
            m->e[i] = 0;
            j = i;
        }
    }
}



/* Out of line: the push functions' growing. */
int vt__rp_grow_u32(uint32_t **v, size_t *cap)
{
    size_t nc = *cap ? *cap * 2 : 16;
    uint32_t *p = realloc(*v, nc * sizeof *p);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

int vt__rp_grow_u64(uint64_t **v, size_t *cap)
{
    size_t nc = *cap ? *cap * 2 : 16;
    uint64_t *p = realloc(*v, nc * sizeof *p);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

/* A free slot (its fields are the caller's to set), or SLOT_NONE without memory. */
uint32_t vt__rp_slot_alloc(replay *R)
{
    if (R->nfree)
        return R->freeslots[--R->nfree];
    if (R->nslots == R->capslots) {
        size_t nc = R->capslots ? R->capslots * 2 : 64;
        if (!R->slotsz)
            R->slotsz = (sizeof(slot) + R->nsc * sizeof(int64_t) + 63) & ~(size_t)63;
        unsigned char *ns = aligned_alloc(64, nc * R->slotsz);
        if (!ns)
            return SLOT_NONE;
        if (R->nslots)
            memcpy(ns, R->slotmem, R->nslots * R->slotsz);
        free(R->slotmem);
        R->slotmem = ns;
        uint32_t *nf = realloc(R->freeslots, nc * sizeof *nf);
        if (!nf)
            return SLOT_NONE;
        R->freeslots = nf;
        if (R->obs && R->obs->ext_size) {
            uint8_t *ne = realloc(R->slotext, nc * R->obs->ext_size);
            if (!ne)
                return SLOT_NONE;
            R->slotext = ne;
        }
        R->capslots = nc;
    }
    return (uint32_t)R->nslots++;
}

/* Adds a contributor; with an observer also who it is (kind, rank, seq), the rest of
 * which the caller fills in through *oc (NULL without an observer). */
int vt__rp_add_con_slow(replay *R, int64_t T, const int64_t *D, enum vt_con_kind kind, uint32_t rank, uint64_t seq,
                        vt_obs_con **oc)
{
    if (R->ncons == R->capcons) {
        size_t nc = R->capcons ? R->capcons * 2 : 16;
        vt_contrib *n = realloc(R->cons, nc * sizeof *n);
        if (!n)
            return -1;
        R->cons = n;
        R->capcons = nc;
        if (R->obs) {
            vt_obs_con *o = realloc(R->ocons, nc * sizeof *o);
            if (!o)
                return -1;
            R->ocons = o;
            R->capocons = nc;
        }
    }
    R->cons[R->ncons].T = T;
    R->cons[R->ncons].D = D;
    if (R->obs) {
        vt_obs_con *o = &R->ocons[R->ncons];
        memset(o, 0, sizeof *o);
        o->kind = kind;
        o->T = T;
        o->D = D;
        o->rank = rank;
        o->seq = seq;
        if (oc)
            *oc = o;
    } else if (oc) {
        *oc = NULL;
    }
    R->ncons++;
    return 0;
}


/* ------------------------------------------------------------------ scenario items */

static shortening shortening_of(const vt_shorten *it)
{
    switch (it->how) {
    case VT_SHORT_NS:
        return (shortening){1000000, it->value};
    case VT_SHORT_PPM:
        return (shortening){it->value, INT64_MAX};
    case VT_SHORT_ELIM:
    default:
        return (shortening){1000000, INT64_MAX};
    }
}

static int64_t shorten(shortening f, int64_t dur)
{
    int64_t p, v;
    if (!__builtin_mul_overflow(dur, f.ppm, &p))
        v = p / 1000000;
    else
        v = (int64_t)(((__int128)dur * f.ppm) / 1000000);
    return v < f.cap ? v : f.cap;
}

enum plan_class { PC_NONE, PC_ALL, PC_RANK, PC_FUNC, PC_SITE };

static enum plan_class plan_class(const replay *R, const vt_shorten *it)
{
    if (it->sel == VT_SEL_EVENT)
        return PC_NONE;
    if (it->rank >= 0)
        return it->rank < (int64_t)R->nranks ? PC_RANK : PC_NONE;
    switch (it->sel) {
    case VT_SEL_ALL:
        return PC_ALL;
    case VT_SEL_FUNC:
        return PC_FUNC;
    case VT_SEL_SITE:
        return PC_SITE;
    default:
        return PC_NONE;
    }
}

static int gitem_by_rank(const void *a, const void *b)
{
    int64_t x = ((const gitem *)a)->it->rank, y = ((const gitem *)b)->it->rank;
    return (x > y) - (x < y);
}

static int gitem_by_name(const void *a, const void *b)
{
    return strcmp(((const gitem *)a)->it->name, ((const gitem *)b)->it->name);
}

/* The items of class `c` in groups: one per rank (nranks, empty ones too), per name, or
 * one group of all. */
static int plan_group(replay *R, enum plan_class c, item_groups *G)
{
    size_t n = 0;
    for (size_t k = 0; k < R->nsc; k++)
        for (size_t i = 0; i < R->sc[k].nitems; i++)
            n += plan_class(R, &R->sc[k].items[i]) == c;
    if (!n)
        return 0;
    size_t maxg = c == PC_RANK ? R->nranks : n;
    G->items = malloc(n * sizeof *G->items);
    G->first = calloc(maxg + 1, sizeof *G->first);
    if (!G->items || !G->first)
        return -1;
    n = 0;
    for (size_t k = 0; k < R->nsc; k++)
        for (size_t i = 0; i < R->sc[k].nitems; i++)
            if (plan_class(R, &R->sc[k].items[i]) == c)
                G->items[n++] = (gitem){shortening_of(&R->sc[k].items[i]), k, &R->sc[k].items[i]};
    if (c == PC_ALL) {
        G->first[1] = (uint32_t)n;
        G->ngroups = 1;
        return 0;
    }
    if (c == PC_RANK) {
        vt_sort(G->items, n, sizeof *G->items, gitem_by_rank);
        for (size_t i = 0; i < n; i++)
            G->first[G->items[i].it->rank + 1]++;
        for (size_t r = 0; r < maxg; r++)
            G->first[r + 1] += G->first[r];
        G->ngroups = maxg;
        return 0;
    }
    vt_sort(G->items, n, sizeof *G->items, gitem_by_name);
    for (size_t i = 0; i < n; i++)
        if (!i || strcmp(G->items[i].it->name, G->items[i - 1].it->name))
            G->first[G->ngroups++] = (uint32_t)i;
    G->first[G->ngroups] = (uint32_t)n;
    return 0;
}

/* Whether each scenario has at most one `all` item: then they are the dense vector. */
static int plan_dense(replay *R)
{
    scen_plan *P = &R->plan;
    size_t nall = 0;
    for (size_t k = 0; k < R->nsc; k++) {
        size_t here = 0;
        for (size_t i = 0; i < R->sc[k].nitems; i++)
            here += plan_class(R, &R->sc[k].items[i]) == PC_ALL;
        if (here > 1)
            return 0;
        nall += here;
    }
    if (!nall)
        return 0;
    P->dense = malloc(R->nsc * sizeof *P->dense);
    P->dense_it = calloc(R->nsc, sizeof *P->dense_it);
    if (!P->dense || !P->dense_it)
        return -1;
    uint64_t maxppm = 0;
    for (size_t k = 0; k < R->nsc; k++) {
        P->dense[k] = (shortening){0, INT64_MAX};
        for (size_t i = 0; i < R->sc[k].nitems; i++)
            if (plan_class(R, &R->sc[k].items[i]) == PC_ALL) {
                P->dense[k] = shortening_of(&R->sc[k].items[i]);
                P->dense_it[k] = &R->sc[k].items[i];
            }
        uint64_t m = P->dense[k].ppm < 0 ? -(uint64_t)P->dense[k].ppm : (uint64_t)P->dense[k].ppm;
        if (m > maxppm)
            maxppm = m;
    }
    P->dense_safe = maxppm ? (int64_t)((uint64_t)INT64_MAX / maxppm) : INT64_MAX;
    P->dense_plain = 1;
    for (size_t k = 0; k < R->nsc; k++)
        if (P->dense[k].ppm < 0 || P->dense[k].cap != INT64_MAX)
            P->dense_plain = 0;
    return 1;
}

/* Sorts the scenarios' items (but R:S ones, rstate.evitems) by what selects them. */
int vt__rp_plan_items(replay *R)
{
    scen_plan *P = &R->plan;
    memset(P, 0, sizeof *P);
    int dense = plan_dense(R);
    if (dense < 0 || (!dense && plan_group(R, PC_ALL, &P->all)) || plan_group(R, PC_RANK, &P->by_rank) ||
        plan_group(R, PC_FUNC, &P->by_func) || plan_group(R, PC_SITE, &P->by_site)) {
        vt_error_set(R->err, "out of memory");
        return -1;
    }
    P->fast = dense && P->dense_plain && R->nsc <= VT_RP_FAST_NSC && !P->by_rank.ngroups && !P->by_func.ngroups &&
              !P->by_site.ngroups && !R->obs;
    return 0;
}

static void groups_free(item_groups *G)
{
    free(G->items);
    free(G->first);
}

void vt__rp_plan_free(scen_plan *P)
{
    free(P->dense);
    free(P->dense_it);
    groups_free(&P->all);
    groups_free(&P->by_rank);
    groups_free(&P->by_func);
    groups_free(&P->by_site);
    memset(P, 0, sizeof *P);
}

/* A dense item shortens every candidate: its hits are the candidates, counted once. */
void vt__rp_plan_fold_hits(replay *R)
{
    for (size_t k = 0; R->plan.dense_it && k < R->nsc; k++)
        if (R->plan.dense_it[k])
            R->plan.dense_it[k]->hits += R->res->candidates;
}

static void dense_deltas(int64_t *restrict delta, const shortening *restrict f, size_t nsc, int64_t dur,
                         int64_t safe, int plain)
{
    if (plain && dur >= 0 && dur <= safe) {
        /* no cap, nothing negative: an unsigned division (a multiplication and a shift) */
        for (size_t k = 0; k < nsc; k++)
            delta[k] = (int64_t)((uint64_t)dur * (uint64_t)f[k].ppm / 1000000u);
        return;
    }
    if (dur >= 0 && dur <= safe) {
        for (size_t k = 0; k < nsc; k++) {
            int64_t v = dur * f[k].ppm / 1000000;
            v = v < f[k].cap ? v : f[k].cap;
            delta[k] = v > 0 ? v : 0;
        }
        return;
    }
    for (size_t k = 0; k < nsc; k++) {
        int64_t v = shorten(f[k], dur);
        delta[k] = v > 0 ? v : 0;
    }
}

static void group_deltas(int64_t *delta, const item_groups *G, size_t g, int64_t dur)
{
    for (uint32_t i = G->first[g]; i < G->first[g + 1]; i++) {
        const gitem *x = &G->items[i];
        int64_t v = shorten(x->f, dur);
        if (v > delta[x->scen])
            delta[x->scen] = v;
        x->it->hits++;
    }
}

static int item_matches(const replay *R, const rstate *s, vt_site_view *site, const vt_shorten *it,
                        const char *func, int64_t cs)
{
    switch (it->sel) {
    case VT_SEL_RANK:
        return 1;
    case VT_SEL_FUNC:
        return func && !strcmp(func, it->name);
    case VT_SEL_SITE:
        return !func && cs >= 0 && vt_site_matches(site, R->t, s->rank, cs, it->name);
    default:
        return 0;
    }
}

static void rank_deltas(replay *R, const rstate *s, vt_site_view *site, int64_t dur, const char *func, int64_t cs)
{
    const item_groups *G = &R->plan.by_rank;
    for (uint32_t i = G->first[s->rank]; i < G->first[s->rank + 1]; i++) {
        const gitem *x = &G->items[i];
        if (!item_matches(R, s, site, x->it, func, cs))
            continue;
        int64_t v = shorten(x->f, dur);
        if (v > R->delta[x->scen])
            R->delta[x->scen] = v;
        x->it->hits++;
    }
}

/* The fn: group of a function name (SIZE_MAX none); names are the trace's strings, so
 * a name's pointer finds its group again. */
static size_t func_group(scen_plan *P, const char *func)
{
    size_t h = ((uintptr_t)func >> 3 ^ (uintptr_t)func >> 9) & 63;
    if (P->fcache[h].name == func)
        return (size_t)P->fcache[h].group - 1;
    const item_groups *G = &P->by_func;
    size_t lo = 0, hi = G->ngroups, found = SIZE_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(func, G->items[G->first[mid]].it->name);
        if (!c) {
            found = mid;
            break;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    P->fcache[h].name = func;
    P->fcache[h].group = (uint32_t)(found + 1);
    return found;
}

/* δ of every scenario for a candidate event; `func` and the call site `cs` feed the
 * selectors. */
static void deltas(replay *R, rstate *s, uint64_t seq, int64_t dur, const char *func, int64_t cs)
{
    scen_plan *P = &R->plan;
    if (P->dense)
        dense_deltas(R->delta, P->dense, R->nsc, dur, P->dense_safe, P->dense_plain);
    else
        memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    for (size_t i = s->evptr; i < s->nevitems && s->evitems[i].seq == seq; i++) {
        int64_t v = shorten(shortening_of(s->evitems[i].it), dur);
        if (v > R->delta[s->evitems[i].scen])
            R->delta[s->evitems[i].scen] = v;
        s->evitems[i].it->hits++;
    }
    if (P->all.ngroups)
        group_deltas(R->delta, &P->all, 0, dur);
    vt_site_view site;
    site.have_key = site.have_loc = 0;
    if (P->by_rank.ngroups)
        rank_deltas(R, s, &site, dur, func, cs);
    if (func && P->by_func.ngroups) {
        size_t g = func_group(P, func);
        if (g != SIZE_MAX)
            group_deltas(R->delta, &P->by_func, g, dur);
    }
    if (!func && cs >= 0)
        for (size_t g = 0; g < P->by_site.ngroups; g++)
            if (vt_site_matches(&site, R->t, s->rank, cs, P->by_site.items[P->by_site.first[g]].it->name))
                group_deltas(R->delta, &P->by_site, g, dur);
}

static void add_deltas(int64_t *restrict d, const int64_t *restrict delta, size_t nsc)
{
    for (size_t k = 0; k < nsc; k++)
        d[k] += delta[k];
}

/* Marks the scenario items that name event `seq` as seen. */
static void see_event(rstate *s, uint64_t seq, int64_t dur)
{
    while (s->evptr < s->nevitems && s->evitems[s->evptr].seq < seq)
        s->evptr++;
    for (size_t i = s->evptr; i < s->nevitems && s->evitems[i].seq == seq; i++) {
        s->evitems[i].it->seen = 1;
        s->evitems[i].it->seen_dur = dur;
    }
}

/* A local event or the candidate rule after a completion: d = d_after (+ δ, capped).
 * With an observer, reports the event (M and the contributors in R->cons/ocons when
 * base is not NULL). Returns 0, or -1 when the observer stops the replay. */
int vt__rp_apply_event(replay *R, rstate *s, uint64_t seq, int64_t start, int64_t end, const int64_t *base, int64_t M,
                       const char *func, int64_t cs, enum vt_model_kind kind)
{
    int64_t dur = end - start;
    if (s->evptr < s->nevitems)
        see_event(s, seq, dur);
    int cand = dur >= R->p->theta && (func == NULL || R->p->cand_calls);
    R->res->events++;
    if (R->obs)
        memcpy(R->dbefore, s->d, sizeof(int64_t) * R->nsc);
    if (!cand) {
        if (base)
            memcpy(s->d, base, sizeof(int64_t) * R->nsc);
        if (R->obs)
            memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    } else {
        R->res->candidates++;
        deltas(R, s, seq, dur, func, cs);
        if (base)
            vt_model_candidates(s->d, base, R->delta, end - start, R->nsc);
        else
            add_deltas(s->d, R->delta, R->nsc);
    }
    if (!R->obs || !R->obs->event)
        return 0;
    /* a local contributor carries d before the call, which s->d no longer holds */
    if (base)
        for (size_t i = 0; i < R->ncons; i++)
            if (R->ocons[i].kind == VT_CON_LOCAL)
                R->ocons[i].D = R->dbefore;
    vt_obs_event e = {
        .rank = s->rank,
        .seq = seq,
        .is_call = func != NULL,
        .rec = R->reduced ? NULL : s->record,
        .func = func,
        .fn = func ? s->record->fn : -1,
        .callsite = cs,
        .kind = kind,
        .start = start,
        .end = end,
        .candidate = cand,
        .delta = R->delta,
        .d_before = R->dbefore,
        .d_after = s->d,
        .cons = base ? R->ocons : NULL,
        .ncons = base ? R->ncons : 0,
        .M = M,
        .base = base,
    };
    if (func) {
        e.probed_by = R->probed_by;
        e.nprobed = R->nprobed_by;
        if (kind == VT_MK_ICOLL && s->nbc_joined) {
            e.initiates_nbc = 1;
            e.nbc_comm = s->nbc_comm;
            e.nbc_seq = s->record->collseq;
        }
    }
    return R->obs->event(R->obs->arg, &e, R->err) ? -1 : 0;
}

/* ------------------------------------------------------------------ collective gates */

size_t vt__rp_gate_home(uint64_t comm, uint64_t seq, size_t cap)
{
    return (size_t)mix(comm ^ mix(seq + 0x9e3779b97f4a7c15ull)) & (cap - 1);
}

gate *vt__rp_gate_by_id(const replay *R, uint64_t id)
{
    size_t i = (size_t)(id & 0xffffffffu);
    if (i >= R->ngates)
        return NULL;
    gate *g = R->gates[i];
    return g->live && (g->gen & 0xffffffu) == (uint32_t)(id >> 32) ? g : NULL;
}

uint64_t vt__rp_gate_id(const replay *R, size_t i) { return (uint64_t)(R->gates[i]->gen & 0xffffffu) << 32 | i; }

static int gate_table_put(replay *R, uint32_t gi)
{
    if ((R->ngate_of + 1) * 2 > R->capgate_of) {
        size_t nc = R->capgate_of ? R->capgate_of * 2 : 64;
        uint32_t *n = calloc(nc, sizeof *n);
        if (!n)
            return -1;
        for (size_t i = 0; i < R->capgate_of; i++) {
            if (!R->gate_of[i])
                continue;
            const gate *g = R->gates[R->gate_of[i] - 1];
            size_t j = vt__rp_gate_home(g->comm, g->seq, nc);
            while (n[j])
                j = (j + 1) & (nc - 1);
            n[j] = R->gate_of[i];
        }
        free(R->gate_of);
        R->gate_of = n;
        R->capgate_of = nc;
    }
    const gate *g = R->gates[gi];
    size_t j = vt__rp_gate_home(g->comm, g->seq, R->capgate_of);
    while (R->gate_of[j])
        j = (j + 1) & (R->capgate_of - 1);
    R->gate_of[j] = gi + 1;
    R->ngate_of++;
    return 0;
}

static void gate_table_del(replay *R, uint32_t gi)
{
    size_t mask = R->capgate_of - 1;
    const gate *g = R->gates[gi];
    size_t j = vt__rp_gate_home(g->comm, g->seq, R->capgate_of);
    while (R->gate_of[j] && R->gate_of[j] != gi + 1)
        j = (j + 1) & mask;
    if (!R->gate_of[j])
        return;
    R->gate_of[j] = 0;
    R->ngate_of--;
    for (size_t i = (j + 1) & mask; R->gate_of[i]; i = (i + 1) & mask) {
        const gate *h = R->gates[R->gate_of[i] - 1];
        size_t home = vt__rp_gate_home(h->comm, h->seq, R->capgate_of);
        if (((i - home) & mask) >= ((i - j) & mask)) {
            R->gate_of[j] = R->gate_of[i];
            R->gate_of[i] = 0;
            j = i;
        }
    }
}

/* The live gate of (comm, seq), made when there is none; its pool index in *gi. */
gate *vt__rp_gate_get(replay *R, uint64_t comm, uint64_t seq, uint32_t need, size_t *gi)
{
    if (R->ngate_of) {
        for (size_t j = vt__rp_gate_home(comm, seq, R->capgate_of);; j = (j + 1) & (R->capgate_of - 1)) {
            if (!R->gate_of[j])
                break;
            gate *g = R->gates[R->gate_of[j] - 1];
            if (g->comm == comm && g->seq == seq) {
                *gi = R->gate_of[j] - 1;
                return g;
            }
        }
    }
    size_t i;
    gate *g;
    if (R->nfreegates) {
        i = R->freegates[--R->nfreegates];
        g = R->gates[i];
        g->gen++;
    } else {
        if (R->ngates == R->capgates) {
            size_t nc = R->capgates ? R->capgates * 2 : 64;
            gate **n = realloc(R->gates, nc * sizeof *n);
            if (!n)
                return NULL;
            R->gates = n;
            uint32_t *f = realloc(R->freegates, nc * sizeof *f);
            if (!f)
                return NULL;
            R->freegates = f;
            R->capgates = nc;
        }
        g = calloc(1, sizeof *g);
        if (!g)
            return NULL;
        g->base = malloc(sizeof(int64_t) * (R->nsc ? R->nsc : 1));
        if (!g->base) {
            free(g);
            return NULL;
        }
        i = R->ngates;
        R->gates[R->ngates++] = g;
    }
    if (g->capneed < need) {
        int64_t *T = realloc(g->T, sizeof(int64_t) * need);
        if (T)
            g->T = T;
        int64_t *D = T ? realloc(g->D, sizeof(int64_t) * need * (R->nsc ? R->nsc : 1)) : NULL;
        if (D)
            g->D = D;
        uint32_t *mr = D ? realloc(g->mrank, sizeof(uint32_t) * need) : NULL;
        if (mr)
            g->mrank = mr;
        uint64_t *ms = mr ? realloc(g->mseq, sizeof(uint64_t) * need) : NULL;
        if (ms)
            g->mseq = ms;
        if (!T || !D || !mr || !ms) {
            R->freegates[R->nfreegates++] = (uint32_t)i;
            return NULL;
        }
        g->capneed = need;
    }
    g->comm = comm;
    g->seq = seq;
    g->need = g->left = need;
    g->arrived = 0;
    g->live = 1;
    g->complete = 0;
    if (gate_table_put(R, (uint32_t)i)) {
        g->live = 0;
        R->freegates[R->nfreegates++] = (uint32_t)i;
        return NULL;
    }
    *gi = i;
    return g;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* An observer sees a complete gate's members by rank: the order they arrived in is the
 * schedule's (serial or parallel, which differ), their rank order is the trace's. */
static int sort_members(replay *R, gate *g)
{
    uint32_t n = g->need;
    size_t nsc = R->nsc;
    uint64_t *key = malloc(sizeof *key * n);
    int64_t *T = malloc(sizeof *T * n), *D = malloc(sizeof *D * n * (nsc ? nsc : 1));
    uint64_t *ms = malloc(sizeof *ms * n);
    int rc = -1;
    if (key && T && D && ms) {
        for (uint32_t k = 0; k < n; k++)
            key[k] = (uint64_t)g->mrank[k] << 32 | k;
        vt_sort(key, n, sizeof *key, u64_cmp);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t k = (uint32_t)key[j];
            T[j] = g->T[k];
            ms[j] = g->mseq[k];
            memcpy(D + (size_t)j * nsc, g->D + (size_t)k * nsc, sizeof(int64_t) * nsc);
        }
        for (uint32_t j = 0; j < n; j++)
            g->mrank[j] = (uint32_t)(key[j] >> 32);
        memcpy(g->T, T, sizeof *T * n);
        memcpy(g->mseq, ms, sizeof *ms * n);
        memcpy(g->D, D, sizeof(int64_t) * n * nsc);
        rc = 0;
    }
    free(key);
    free(T);
    free(D);
    free(ms);
    return rc;
}

void vt__rp_gate_join(replay *R, gate *g, int64_t T, const int64_t *D, uint32_t rank, uint64_t seq)
{
    if (g->need == 0 || g->arrived >= g->need)
        return;
    g->mrank[g->arrived] = rank;
    g->mseq[g->arrived] = seq;
    g->T[g->arrived] = T;
    memcpy(g->D + (size_t)g->arrived * R->nsc, D, sizeof(int64_t) * R->nsc);
    g->arrived++;
    if (g->arrived < g->need)
        return;
    if (R->obs && g->need > 1 && sort_members(R, g))
        return;   /* stays incomplete: the replay reports that it cannot order the trace */
    vt_contrib small[16] = {{0, NULL}}, *c = g->need <= 16 ? small : malloc(sizeof *c * g->need);
    if (!c)
        return;   /* stays incomplete: the replay reports that it cannot order the trace */
    for (uint32_t k = 0; k < g->need; k++)
        c[k] = (vt_contrib){g->T[k], g->D + (size_t)k * R->nsc};
    g->M = vt_model_complete(c, g->need, R->nsc, g->base);
    if (c != small)
        free(c);
    g->complete = 1;
}

void vt__rp_gate_leave(replay *R, uint64_t id)
{
    gate *g = vt__rp_gate_by_id(R, id);
    if (g && --g->left == 0) {
        size_t i = (size_t)(id & 0xffffffffu);
        gate_table_del(R, (uint32_t)i);
        g->live = 0;
        R->freegates[R->nfreegates++] = (uint32_t)i;
    }
}


int vt__rp_note_gate(replay *R, uint64_t id)
{
    return vt__rp_push_u64(&R->used_gates, &R->nused_gates, &R->capused_gates, id);
}

/* A collective's gate as one contributor (M, base); with an observer, its members. */
int vt__rp_add_gate_con(replay *R, const gate *g, int nonblocking)
{
    vt_obs_con *oc;
    if (vt__rp_add_con_obs(R, g->M, g->base, VT_CON_GATE, 0, 0, &oc))
        return -1;
    if (!oc)
        return 0;
    /* The members of every gate of this completion go to R->members; the pointers are
     * set once they are all there (fix_members), since the array may move. */
    if (R->capmembers < R->nmembers + g->need) {
        size_t nc = 2 * (R->nmembers + g->need);
        vt_obs_member *m = realloc(R->members, nc * sizeof *m);
        if (!m)
            return -1;
        R->members = m;
        R->capmembers = nc;
    }
    for (uint32_t k = 0; k < g->need; k++)
        R->members[R->nmembers + k] = (vt_obs_member){g->T[k], g->D + (size_t)k * R->nsc, g->mrank[k], g->mseq[k]};
    oc->nonblocking = nonblocking;
    oc->gate_comm = g->comm;
    oc->gate_seq = g->seq;
    oc->members_at = R->nmembers;
    oc->nmembers = g->need;
    R->nmembers += g->need;
    return 0;
}

void vt__rp_fix_members(replay *R)
{
    for (size_t i = 0; i < R->ncons; i++)
        if (R->ocons[i].kind == VT_CON_GATE)
            R->ocons[i].members = R->members + R->ocons[i].members_at;
}
