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

static int64_t shorten_by(const vt_shorten *it, int64_t dur)
{
    switch (it->how) {
    case VT_SHORT_ELIM:
        return dur;
    case VT_SHORT_NS:
        return it->value < dur ? it->value : dur;
    case VT_SHORT_PPM: {
        /* the 128-bit division is a library call: only when the product needs it */
        int64_t p;
        if (!__builtin_mul_overflow(dur, it->value, &p))
            return p / 1000000;
        return (int64_t)(((__int128)dur * it->value) / 1000000);
    }
    }
    return 0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

int vt__rp_map_put(u64map *m, uint64_t k, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
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
    }
    k++;   /* 0 marks an empty slot */
    size_t j = mix(k) & (m->cap - 1);
    while (m->e[j].k && m->e[j].k != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->e[j].k)
        m->n++;
    m->e[j].k = k;
    m->e[j].v = v;
    return 0;
}

static size_t map_slot(const u64map *m, uint64_t k)
{
    if (!m->n)
        return SIZE_MAX;
    k++;
    size_t j = mix(k) & (m->cap - 1);
    while (m->e[j].k) {
        if (m->e[j].k == k)
            return j;
        j = (j + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

int vt__rp_map_get(const u64map *m, uint64_t k, uint64_t *v)
{
    size_t j = map_slot(m, k);
    if (j == SIZE_MAX)
        return 0;
    *v = m->e[j].v;
    return 1;
}

void vt__rp_map_del(u64map *m, uint64_t k)
{
    size_t j = map_slot(m, k);
    if (j == SIZE_MAX)
        return;
    size_t mask = m->cap - 1;
    m->e[j].k = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->e[i].k; i = (i + 1) & mask) {
        size_t home = mix(m->e[i].k) & mask;
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->e[j] = m->e[i];
            m->e[i].k = 0;
            j = i;
        }
    }
}

void vt__rp_map_free(u64map *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

static size_t pm_home(uint32_t pos, size_t cap) { return (size_t)mix((uint64_t)pos + 1) & (cap - 1); }

uint32_t vt__rp_pm_get(const posmap *m, uint32_t pos)
{
    if (!m->n)
        return SLOT_NONE;
    uint64_t k = (uint64_t)pos + 1;
    for (size_t j = pm_home(pos, m->cap);; j = (j + 1) & (m->cap - 1)) {
        if (!m->e[j])
            return SLOT_NONE;
        if (m->e[j] >> 32 == k)
            return (uint32_t)m->e[j];
    }
}

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
int vt__rp_add_con_obs(replay *R, int64_t T, const int64_t *D, enum vt_con_kind kind, uint32_t rank, uint64_t seq,
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


/* δ of every scenario for a candidate event; `func` and the call site `cs` feed the
 * selectors. */
static void deltas(replay *R, rstate *s, uint64_t seq, int64_t dur, const char *func, int64_t cs)
{
    memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    for (size_t i = s->evptr; i < s->nevitems && s->evitems[i].seq == seq; i++) {
        int64_t v = shorten_by(s->evitems[i].it, dur);
        if (v > R->delta[s->evitems[i].scen])
            R->delta[s->evitems[i].scen] = v;
        s->evitems[i].it->hits++;
    }
    vt_site_view site;
    site.have_key = site.have_loc = 0;
    for (size_t g = 0; g < R->ngeneric; g++) {
        vt_shorten *it = R->generic[g].it;
        if (it->rank >= 0 && (uint32_t)it->rank != s->rank)
            continue;
        int match = 0;
        switch (it->sel) {
        case VT_SEL_ALL:
        case VT_SEL_RANK:
            match = 1;
            break;
        case VT_SEL_FUNC:
            match = func && !strcmp(func, it->name);
            break;
        case VT_SEL_SITE:
            match = !func && cs >= 0 && vt_site_matches(&site, R->t, s->rank, cs, it->name);
            break;
        default:
            break;
        }
        if (!match)
            continue;
        int64_t v = shorten_by(it, dur);
        if (v > R->delta[R->generic[g].scen])
            R->delta[R->generic[g].scen] = v;
        it->hits++;
    }
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
        for (size_t k = 0; k < R->nsc; k++) {
            if (base)
                s->d[k] = vt_model_candidate(base[k], R->delta[k], s->d[k], end, start);
            else
                s->d[k] += R->delta[k];
        }
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
        .rec = R->reduced ? NULL : &s->ev,
        .func = func,
        .fn = func ? s->ev.fn : -1,
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
            e.nbc_seq = s->ev.collseq;
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
