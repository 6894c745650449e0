/* What-if replay of a full trace (model.md §2, §3, §6), numeric, several scenarios at
 * once. Each rank is streamed with its own cursor; a rank advances until it needs a
 * value another rank has not produced yet (a sender's difference at a send, a
 * receiver's difference where it posted a synchronous receive, the members of a
 * collective), then the next rank runs. Values travel through slots that are freed once
 * read. Without a vt_matches, messages are matched in the same pass ("streaming
 * matching" below): one decoding of the records, and memory for the messages in flight
 * rather than for every message of the trace. */
#include "vt_config.h"
#include "analysis/replay_priv.h"

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
    case VT_SHORT_PPM:
        return (int64_t)(((__int128)dur * it->value) / 1000000);
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
        size_t nc = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = calloc(nc, sizeof *nk), *nv = calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = mix(m->keys[i]) & (nc - 1);
            while (nk[j])
                j = (j + 1) & (nc - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
    }
    k++;   /* 0 marks an empty slot */
    size_t j = mix(k) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->n++;
    m->keys[j] = k;
    m->vals[j] = v;
    return 0;
}

static size_t map_slot(const u64map *m, uint64_t k)
{
    if (!m->n)
        return SIZE_MAX;
    k++;
    size_t j = mix(k) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] == k)
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
    *v = m->vals[j];
    return 1;
}

void vt__rp_map_del(u64map *m, uint64_t k)
{
    size_t j = map_slot(m, k);
    if (j == SIZE_MAX)
        return;
    size_t mask = m->cap - 1;
    m->keys[j] = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->keys[i]; i = (i + 1) & mask) {
        size_t home = mix(m->keys[i]) & mask;
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->keys[j] = m->keys[i];
            m->vals[j] = m->vals[i];
            m->keys[i] = 0;
            j = i;
        }
    }
}

void vt__rp_map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
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

static int pm_put(posmap *m, uint32_t pos, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
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


/* Receives complete in the order of their completing record, then of their posting (a
 * completion lists its messages in posting order, as the run time sees them). */
static int pend_before(pend a, pend b) { return a.done < b.done || (a.done == b.done && a.pos < b.pos); }

static int heap_push(heap *h, uint64_t done, uint32_t pos)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        pend *v = realloc(h->v, nc * sizeof *v);
        if (!v)
            return -1;
        h->v = v;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h->v[p].done < done || (h->v[p].done == done && h->v[p].pos <= pos))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = (pend){done, pos};
    return 0;
}

static pend heap_pop(heap *h)
{
    pend top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && pend_before(h->v[c + 1], h->v[c]))
            c++;
        if (!pend_before(h->v[c], last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

void vt__rp_set_err(vt_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static int push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        uint32_t *p = realloc(*v, nc * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return 0;
}

int vt__rp_push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        uint64_t *p = realloc(*v, nc * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return 0;
}

int64_t *vt__rp_slot_d(const replay *R, uint32_t i) { return R->slotd + (size_t)i * R->nsc; }

/* Fills the slot of (rank, send or posting pos) with T, E, d and its readers, reusing
 * the slot when it is still there (a second fill overwrites, as before). */
static int slot_fill(replay *R, rstate *s, int post, size_t pos, int64_t T, int64_t E, uint32_t uses)
{
    posmap *pm = post ? &s->ps : &s->ss;
    uint32_t i = vt__rp_pm_get(pm, (uint32_t)pos);
    if (i == SLOT_NONE) {
        if (R->nfree) {
            i = R->freeslots[--R->nfree];
        } else {
            if (R->nslots == R->capslots) {
                size_t nc = R->capslots ? R->capslots * 2 : 64;
                slot *ns = realloc(R->slots, nc * sizeof *ns);
                if (!ns)
                    return -1;
                R->slots = ns;
                int64_t *nd = realloc(R->slotd, nc * (R->nsc ? R->nsc : 1) * sizeof *nd);
                if (!nd)
                    return -1;
                R->slotd = nd;
                uint32_t *nf = realloc(R->freeslots, nc * sizeof *nf);
                if (!nf)
                    return -1;
                R->freeslots = nf;
                if (R->obs && R->obs->ext_size) {
                    uint8_t *ne = realloc(R->slotext, nc * R->obs->ext_size);
                    if (!ne)
                        return -1;
                    R->slotext = ne;
                }
                R->capslots = nc;
            }
            i = (uint32_t)R->nslots++;
        }
        if (pm_put(pm, (uint32_t)pos, i)) {
            R->freeslots[R->nfree++] = i;
            return -1;
        }
    }
    slot *sl = &R->slots[i];
    sl->T = T;
    sl->E = E;
    sl->uses = uses;
    sl->rank = s->rank;
    sl->pos = (uint32_t)pos;
    sl->post = (uint32_t)post;
    sl->seq = 2 * s->ev.callno + 1;
    sl->Tloc = s->ev.enter;
    memcpy(vt__rp_slot_d(R, i), s->d, sizeof(int64_t) * R->nsc);
    if (!post && R->obs && R->obs->publish)
        R->obs->publish(R->obs->arg, s->rank, sl->seq,
                        R->obs->ext_size ? R->slotext + (size_t)i * R->obs->ext_size : NULL);
    return 0;
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

const char *vt__rp_fname(const replay *R, uint32_t rank, int64_t fn)
{
    const vt_function *f = vt_trace_function(R->t, rank, fn);
    return f ? f->name : "?";
}

int64_t vt__rp_gtime(const replay *R, uint32_t rank, int64_t local) { return vt_global_time(R->t, rank, local); }

static void site_name(const replay *R, uint32_t rank, int64_t cs, char *buf, size_t len, const char **sym)
{
    const vt_callsite *c = vt_trace_callsite(R->t, rank, cs);
    *sym = NULL;
    if (!c) {
        snprintf(buf, len, "?");
        return;
    }
    const char *base = strrchr(c->module, '/');
    base = base ? base + 1 : c->module;
    snprintf(buf, len, "%s+0x%" PRIx64, base, c->offset);
    *sym = c->symbol;
}

/* δ of every scenario for a candidate event; `func` and the call site `cs` feed the
 * selectors (the site's name is made only when a site selector looks at it). */
static void deltas(replay *R, rstate *s, uint64_t seq, int64_t dur, const char *func, int64_t cs)
{
    memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    for (size_t i = s->evptr; i < s->nevitems && s->evitems[i].seq == seq; i++) {
        int64_t v = shorten_by(s->evitems[i].it, dur);
        if (v > R->delta[s->evitems[i].scen])
            R->delta[s->evitems[i].scen] = v;
        s->evitems[i].it->hits++;
    }
    char site[256];
    const char *sym = NULL;
    int have_site = 0;
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
            if (func || cs < 0)
                break;
            if (!have_site) {
                site_name(R, s->rank, cs, site, sizeof site, &sym);
                have_site = 1;
            }
            match = !strcmp(site, it->name) || (sym && *sym && !strcmp(sym, it->name));
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

static gate *gate_by_id(const replay *R, uint64_t id)
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
    gate *g = gate_by_id(R, id);
    if (g && --g->left == 0) {
        size_t i = (size_t)(id & 0xffffffffu);
        gate_table_del(R, (uint32_t)i);
        g->live = 0;
        R->freegates[R->nfreegates++] = (uint32_t)i;
    }
}

static uint32_t comm_members(const replay *R, uint32_t rank, int64_t ci, uint64_t *id)
{
    const vt_comm *c = vt_trace_comm(R->t, rank, ci);
    if (!c)
        return 0;
    *id = c->id;
    return c->size + ((c->flags & 1) ? c->remote_size : 0);
}

/* ------------------------------------------------------------------ the records */

/* Is the message of send entry (rank, pos) synchronous? */
static int send_is_sync(const replay *R, uint32_t rank, const vt_match_csend *se)
{
    const rstate *s = &R->rs[rank];
    enum vt_model_kind k = se->fn >= 0 && (size_t)se->fn < s->nfuncs ? s->skind[se->fn] : VT_MK_SEND;
    return vt_model_is_sync(k, se->bytes, R->p);
}

static int send_is_sync_at(const replay *R, uint32_t rank, size_t pos)
{
    return send_is_sync(R, rank, SE(&R->rs[rank], pos));
}


int vt__rp_note_used(replay *R, uint32_t sl) { return push_u32(&R->used, &R->nused, &R->capused, sl); }

int vt__rp_note_gate(replay *R, uint64_t id)
{
    return vt__rp_push_u64(&R->used_gates, &R->nused_gates, &R->capused_gates, id);
}

static int note_req(replay *R, uint64_t req)
{
    return vt__rp_push_u64(&R->used_reqs, &R->nused_reqs, &R->capused_reqs, req);
}

static void release_used(replay *R, rstate *s)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = &R->slots[R->used[i]];
        if (sl->uses && --sl->uses == 0) {
            rstate *o = &R->rs[sl->rank];
            vt__rp_pm_del(sl->post ? &o->ps : &o->ss, sl->pos);
            R->freeslots[R->nfree++] = R->used[i];
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        vt__rp_gate_leave(R, R->used_gates[i]);
    /* A completed request is not completed again (a persistent one is started again
     * first, which enters it anew). */
    for (size_t i = 0; i < R->nused_reqs; i++)
        vt__rp_map_del(&s->reqs, R->used_reqs[i]);
    /* streaming: sends read by this record (by the receiver, by a synchronous sender) */
    for (size_t i = 0; i < R->nused_sends; i++) {
        rstate *o = &R->rs[R->used_sends[i] >> 32];
        uint32_t pos = (uint32_t)R->used_sends[i];
        if (pos >= o->sm->slo && SX(o, pos)->refs && --SX(o, pos)->refs == 0) {
            SX(o, pos)->flags |= XF_RET;
            if (pos == o->sm->slo)
                vt__rp_sm_trim(o);
        }
    }
    R->nused = R->nused_gates = R->nused_reqs = R->nused_sends = 0;
}

/* The message a probe matched: MPI_Mprobe/Improbe name it (the receive they post);
 * MPI_Probe/Iprobe see the first message from the probed source and tag that a later
 * receive on this rank takes. That is: among the receives posted at or after the probe
 * that are matched and not probed yet, the first (in array order) posted by the probe
 * itself, else the first posted (then first in array order) with the probe's
 * communicator, source and tag. Receives are sorted by index and posted at their index,
 * except those an earlier matched probe posted (exc, sorted by posting index): both
 * kinds are searched from the probe's index on, each stopping at its first fit. */
size_t vt__rp_probe_target(replay *R, rstate *s)
{
    const vt_event *ev = &s->ev;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    int can_match = c && ev->rpeer >= 0;
    uint64_t x = ev->index;
#define PT_SKIP(i) (s->recvs[i].send_pos == VT_MPOS_NONE || vt__rp_pm_get(&s->probed, (uint32_t)(i)) != SLOT_NONE)
#define PT_FITS(rv) (R->keys[(rv)->key].comm_id == c->id && R->keys[(rv)->key].src == (uint32_t)ev->rpeer && \
                     R->keys[(rv)->key].tag == ev->rtag)
    size_t best = SIZE_MAX, lo = 0, hi = s->nrecvs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->recvs[mid].index < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->nrecvs; i++) {
        const vt_match_crecv *rv = &s->recvs[i];
        if (!can_match && rv->index > x)
            break;
        if (rv->post_index != rv->index || PT_SKIP(i))
            continue;
        if (rv->index == x)
            return i;
        if (can_match && PT_FITS(rv)) {
            best = i;
            break;
        }
    }
    lo = 0;
    hi = s->nexc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->recvs[s->exc[mid]].post_index < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t j = lo; j < s->nexc; j++) {
        size_t i = s->exc[j];
        const vt_match_crecv *rv = &s->recvs[i];
        if (!can_match && rv->post_index > x)
            break;
        if (PT_SKIP(i))
            continue;
        if (rv->post_index == x)
            return i;
        if (can_match && PT_FITS(rv)) {
            if (best == SIZE_MAX || rv->post_index < s->recvs[best].post_index ||
                (rv->post_index == s->recvs[best].post_index && i < best))
                best = i;
            break;
        }
    }
#undef PT_SKIP
#undef PT_FITS
    return best;
}

/* Enters (or, for a message that is not synchronous, forgets) the send request REQ:
 * only a synchronous send's completion has contributors. */
static int req_send(rstate *s, const replay *R, uint64_t req, size_t i)
{
    if (send_is_sync(R, s->rank, SE(s, i)))
        return vt__rp_map_put(&s->reqs, req, ((uint64_t)REQ_SEND << 56) | i);
    vt__rp_map_del(&s->reqs, req);
    return 0;
}

/* Phase A, once per record: what this record makes available to other ranks. */
static int publish(replay *R, rstate *s, int64_t enter, int64_t exit, enum vt_model_kind k)
{
    const vt_event *ev = &s->ev;
    /* Persistent send templates: their starts are the sends. */
    if (ev->request && ev->fn >= 0 && (size_t)ev->fn < s->nfuncs && s->sinit[ev->fn] && ev->peer >= 0)
        if (vt__rp_map_put(&s->tmpl, ev->request, 1))
            return -1;
    /* Sends made by this record: S = its enter, D = d before it. */
    if (R->stream && s->send_ptr < s->sm->slo)
        s->send_ptr = s->sm->slo;
    while (s->send_ptr < s->nsends && SE(s, s->send_ptr)->index < ev->index)
        s->send_ptr++;
    for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++) {
        if (R->stream) {
            if (vt__rp_ensure_send(R, s, i))
                return -1;
            if (SE(s, i)->key == KEY_SKIP)
                continue;   /* cancelled: no message */
        }
        if (slot_fill(R, s, 0, i, enter, 0, (uint32_t)(1 + send_is_sync(R, s->rank, SE(s, i)))))
            return -1;
        if ((k == VT_MK_ISEND || k == VT_MK_ISSEND || k == VT_MK_IBSEND) && ev->request)
            if (req_send(s, R, ev->request, i))
                return -1;
    }
    if (k == VT_MK_START) {
        uint32_t nth = 0;
        for (size_t q = 0; q < ev->nstarted; q++) {
            uint64_t v;
            if (!vt__rp_map_get(&s->tmpl, ev->started[q], &v))
                continue;
            for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++)
                if (SE(s, i)->key != KEY_SKIP && SE(s, i)->sub == nth && req_send(s, R, ev->started[q], i))
                    return -1;
            nth++;
        }
    }
    /* A probe completes the message it matched, and posts it. */
    s->probe_msg = SIZE_MAX;
    if (k == VT_MK_PROBE) {
        s->probe_msg = R->stream ? vt__rp_probe_target_stream(R, s) : vt__rp_probe_target(R, s);
        if (R->failed)
            return -1;
        if (s->probe_msg != SIZE_MAX) {
            const vt_match_crecv *rv = RV(s, s->probe_msg);
            if (pm_put(&s->probed, (uint32_t)s->probe_msg, (uint32_t)ev->callno))
                return -1;
            /* read by the sender and by this probe (streaming: while the message is not
             * paired yet, whether it is synchronous is not known: the slot is made, and
             * dropped by the probe when it is not) */
            if ((rv->send_pos == VT_MPOS_NONE || send_is_sync_at(R, R->keys[rv->key].src, rv->send_pos)) &&
                slot_fill(R, s, 1, s->probe_msg, enter, exit, 2))
                return -1;
        }
    }
    /* Receives this record posts: each waits for its completing record; a synchronous
     * one publishes (P_q, d_q(P_q)) and the exit of the call that will complete it. */
    if (R->stream && s->post_ptr < s->sm->rlo)
        s->post_ptr = s->sm->rlo;
    while (s->post_ptr < s->nrecvs && RV(s, s->post_ptr)->index < ev->index)
        s->post_ptr++;
    for (size_t i = s->post_ptr; i < s->nrecvs && RV(s, i)->index == ev->index; i++) {
        if (R->stream) {
            /* its source, tag and completing record (the streaming matcher reads ahead
             * on this rank up to its completion when needed) */
            if (vt__rp_ensure_recv(R, s, i))
                return -1;
            if (RV(s, i)->key == KEY_SKIP)
                continue;   /* cancelled, MPI_PROC_NULL: no message */
        }
        const vt_match_crecv *rv = RV(s, i);
        if (heap_push(&s->pending, rv->done_index, (uint32_t)i))
            return -1;
        if ((!R->stream && rv->send_pos == VT_MPOS_NONE) || rv->post_index != rv->index ||
            vt__rp_pm_get(&s->probed, (uint32_t)i) != SLOT_NONE)
            continue;
        if (rv->send_pos != VT_MPOS_NONE && !send_is_sync_at(R, R->keys[rv->key].src, rv->send_pos))
            continue;
        /* read by the sender and by the completing call (streaming, not paired yet: made
         * in case, dropped by the completing call when the message is not synchronous) */
        if (slot_fill(R, s, 1, i, enter, vt__rp_gtime(R, s->rank, rv->done_exit), 2))
            return -1;
    }
    /* Collectives: join the gate of (communicator, sequence number) with (enter, d). */
    s->coll_gate = 0;
    s->nbc_joined = 0;
    if ((k == VT_MK_COLL || k == VT_MK_ICOLL) && ev->comm >= 0 && ev->collseq != VT_SEQ_NONE) {
        uint64_t id = 0;
        uint32_t need = comm_members(R, s->rank, ev->comm, &id);
        if (need) {
            size_t gi;
            gate *g = vt__rp_gate_get(R, id, ev->collseq, need, &gi);
            if (!g)
                return -1;
            vt__rp_gate_join(R, g, enter, s->d, s->rank, 2 * ev->callno + 1);
            uint64_t gid = vt__rp_gate_id(R, gi);
            if (k == VT_MK_ICOLL) {
                s->nbc_joined = 1;
                s->nbc_comm = id;
            }
            if (k == VT_MK_COLL)
                s->coll_gate = gid + 1;
            else if (ev->request && vt__rp_map_put(&s->reqs, ev->request, ((uint64_t)REQ_ICOLL << 56) | gid))
                return -1;
        }
    }
    return 0;
}

/* (S + λ_m, D) of the message of receive entry i, received by a call exiting at E.
 * Returns 1 when the sender has not reached the send yet. */
static int message_in(replay *R, rstate *s, size_t i, int64_t E, int probed)
{
    if (R->stream && RV(s, i)->send_pos == VT_MPOS_NONE) {
        /* not paired yet: not released while a receive posted before it is unresolved
         * (read ahead until it is), or its send is not made yet (wait for it) */
        while (!(RX(s, i)->flags & XF_REL)) {
            int rc = vt__rp_more(R, s);
            if (rc < 0)
                return -1;
            if (rc == 0)
                break;
        }
        if (RV(s, i)->send_pos == VT_MPOS_NONE)
            return 1;
    }
    const vt_match_crecv *rv = RV(s, i);
    const vt_match_key *key = &R->keys[rv->key];
    rstate *snd = &R->rs[key->src];
    uint32_t sl = vt__rp_pm_get(&snd->ss, rv->send_pos);
    if (sl == SLOT_NONE)
        return 1;
    const vt_match_csend *se = SE(snd, rv->send_pos);
    const slot *sd = &R->slots[sl];
    int sync = send_is_sync(R, key->src, se);
    R->step_msgs++;
    R->step_viol += E < sd->T;
    vt_obs_con *oc;
    if (vt__rp_add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, E), vt__rp_slot_d(R, sl), VT_CON_MSG,
                           key->src, sd->seq, &oc) ||
        vt__rp_note_used(R, sl))
        return -1;
    /* a synchronous message's posting (its slot is read here and by the sender) */
    uint32_t pl = sync ? vt__rp_pm_get(&s->ps, (uint32_t)i) : SLOT_NONE;
    if (pl != SLOT_NONE && vt__rp_note_used(R, pl))
        return -1;
    if (R->stream && (!sync && vt__rp_drop_post(R, s, i)))
        return -1;
    if (R->stream && vt__rp_note_send(R, key->src, rv->send_pos))
        return -1;
    if (oc) {
        oc->S = sd->T;
        oc->S_local = sd->Tloc;
        oc->bytes = se->bytes;
        oc->sync = sync;
        enum vt_model_kind fk = se->fn >= 0 && (size_t)se->fn < snd->nfuncs ? snd->fkind[se->fn] : VT_MK_LOCAL;
        oc->blocking_send = fk == VT_MK_SEND || fk == VT_MK_SSEND || fk == VT_MK_BSEND;
        oc->peer = s->rank;
        oc->tag = key->tag;
        oc->comm_id = key->comm_id;
        oc->probed = probed;
        oc->ext = R->obs->ext_size ? R->slotext + (size_t)sl * R->obs->ext_size : NULL;
        if (pl != SLOT_NONE) {
            oc->post_seq = R->slots[pl].seq;
            oc->P = R->slots[pl].T;
            oc->P_local = R->slots[pl].Tloc;
        } else {
            oc->post_seq = 2 * s->ev.callno + 1;
            oc->P = s->genter;
            oc->P_local = s->ev.enter;
        }
    }
    return 0;
}

/* Sender side of a synchronous message (send entry i of s): (S + λ_m, D) and the
 * receiver's (P_q, d_q(P_q)). Returns 1 while the receiver has not posted it. */
static int sync_sender(replay *R, rstate *s, size_t i)
{
    const vt_match_csend *se = SE(s, i);
    if (se->recv_pos == VT_MPOS_NONE) {
        if (!R->stream)
            return 0;
        /* not paired yet: the receiver may not have posted it, or holds unresolved receives */
        if (vt__rp_settle(R, &R->rs[R->keys[se->key].dst]))
            return -1;
        se = SE(s, i);
        if (se->recv_pos == VT_MPOS_NONE)
            return 1;
    }
    uint32_t pl = vt__rp_pm_get(&R->rs[R->keys[se->key].dst].ps, se->recv_pos);
    if (pl == SLOT_NONE)
        return 1;
    uint32_t sl = vt__rp_pm_get(&s->ss, (uint32_t)i);
    if (sl == SLOT_NONE)
        return 1; /* read already by both readers: not a trace this replay can order */
    const slot *sd = &R->slots[sl], *po = &R->slots[pl];
    const vt_match_key *key = &R->keys[se->key];
    vt_obs_con *om, *op;
    if (vt__rp_add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, po->E), vt__rp_slot_d(R, sl),
                           VT_CON_SYNC_MSG, s->rank, sd->seq, &om) ||
        vt__rp_add_con_obs(R, po->T, vt__rp_slot_d(R, pl), VT_CON_SYNC_POST, key->dst, po->seq, &op) ||
        vt__rp_note_used(R, sl) || vt__rp_note_used(R, pl) || (R->stream && vt__rp_note_send(R, s->rank, (uint32_t)i)))
        return -1;
    if (om) {
        om->S = sd->T;
        om->S_local = sd->Tloc;
        om->bytes = se->bytes;
        om->sync = 1;
        om->peer = key->dst;
        om->tag = key->tag;
        om->comm_id = key->comm_id;
        op->S = sd->T;
        op->S_local = sd->Tloc;
        op->bytes = se->bytes;
        op->sync = 1;
        op->peer = key->dst;
        op->tag = key->tag;
        op->comm_id = key->comm_id;
        op->post_seq = po->seq;
        op->P = po->T;
        op->P_local = po->Tloc;
    }
    return 0;
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

#define TRY(x) \
    do { \
        int rc_ = (x); \
        if (rc_ > 0) \
            return STEP_BLOCKED; \
        if (rc_ < 0) \
            goto nomem; \
    } while (0)

static int step(replay *R, rstate *s)
{
    if (s->finished)
        return STEP_DONE;
    if (!s->have) {
        int rc = R->stream ? vt__rp_next_record(R, s) : vt_cursor_next(s->cur, &s->ev, R->err);
        if (rc < 0)
            return STEP_ERROR;
        if (rc == 0) {
            s->finished = 1;
            return STEP_DONE;
        }
        /* Special records (FLUSH, MARKER, STOPPED) are no model events: a flush belongs
         * to the burst around it, which ends at the next call. */
        if (s->ev.fn < 0)
            return STEP_MOVED;
        s->have = 1;
        s->ncalls = s->ev.callno + 1;
        s->published = 0;
        s->done_ready = 0;
        s->genter = vt__rp_gtime(R, s->rank, s->ev.enter);
        s->gexit = vt__rp_gtime(R, s->rank, s->ev.exit);
        if (!s->started) {
            s->prev_exit = s->first_enter = s->genter;
            s->started = 1;
        }
        /* The computation burst before this record: a local event. */
        R->nprobed_by = 0;
        if (vt__rp_apply_event(R, s, 2 * s->ev.callno, s->prev_exit, s->genter, NULL, 0, NULL, s->ev.callsite,
                               VT_MK_LOCAL))
            return STEP_ERROR;
    }
    const vt_event *ev = &s->ev;
    int64_t enter = s->genter, exit = s->gexit;
    enum vt_model_kind k = VT_MK_LOCAL;
    if (ev->fn >= 0)
        k = (size_t)ev->fn < s->nfuncs ? s->fkind[ev->fn] : VT_MK_LOCAL;
    if (!s->published) {
        if (publish(R, s, enter, exit, k))
            goto nomem;
        s->published = 1;
    }
    /* Phase B: the contributors (model.md §3); block while one is not available. */
    R->ncons = R->nused = R->nused_gates = R->nused_reqs = R->nprobed_by = R->nmembers = R->nused_sends = 0;
    R->step_msgs = R->step_viol = 0;
    int completion = 0, local = 1;
    if (s->probe_msg != SIZE_MAX) {
        completion = 1;
        TRY(message_in(R, s, s->probe_msg, exit, 1));
    }
    if (!s->done_ready) {
        s->ndone = 0;
        while (s->pending.n && s->pending.v[0].done <= ev->index) {
            pend p = heap_pop(&s->pending);
            if (p.done == ev->index && push_u32(&s->done, &s->ndone, &s->capdone, p.pos))
                goto nomem;
        }
        s->done_ready = 1;
    }
    /* A receive whose completion a local call records (MPI_Request_free of an active
     * receive, VT_COMPL_FREED) takes its message but nobody waits for it: no contributor. */
    if (k != VT_MK_PROBE && k != VT_MK_LOCAL) {
        for (size_t j = 0; j < s->ndone; j++) {
            size_t i = s->done[j];
            if (!R->stream && RV(s, i)->send_pos == VT_MPOS_NONE)
                continue;
            completion = 1;   /* a receive completion, even of a probed (local) message */
            uint32_t pr = vt__rp_pm_get(&s->probed, (uint32_t)i);
            if (pr == SLOT_NONE)
                TRY(message_in(R, s, i, exit, 0));
            else if (R->obs && vt__rp_push_u64(&R->probed_by, &R->nprobed_by, &R->capprobed_by, 2 * (uint64_t)pr + 1))
                goto nomem;
        }
    }
    if (k == VT_MK_SEND || k == VT_MK_SSEND || k == VT_MK_SENDRECV) {
        for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++) {
            if (SE(s, i)->key == KEY_SKIP || !send_is_sync(R, s->rank, SE(s, i)))
                continue;
            completion = 1;
            if (k != VT_MK_SENDRECV)
                local = 0;   /* a blocking synchronous send: no local contributor */
            TRY(sync_sender(R, s, i));
        }
    }
    if (k == VT_MK_COMPLETION) {
        for (size_t c = 0; c < ev->ndone; c++) {
            const vt_completion *d = &ev->done[c];
            uint64_t v;
            if ((d->flags & (VT_COMPL_RECV | VT_COMPL_CANCELLED)) || !vt__rp_map_get(&s->reqs, d->request, &v))
                continue;
            uint64_t pos = v & ((1ull << 56) - 1);
            if ((v >> 56) == REQ_ICOLL) {
                gate *g = gate_by_id(R, pos);
                if (!g || !g->complete)
                    return STEP_BLOCKED;
                completion = 1;
                if (vt__rp_add_gate_con(R, g, 1) || vt__rp_note_gate(R, pos) || note_req(R, d->request))
                    goto nomem;
            } else {
                /* only synchronous sends are entered (req_send) */
                completion = 1;
                TRY(sync_sender(R, s, (size_t)pos));
                /* (reading ahead may have moved this record's lists: index again) */
                if (note_req(R, ev->done[c].request))
                    goto nomem;
            }
        }
    }
    if (k == VT_MK_COLL && s->coll_gate) {
        gate *g = gate_by_id(R, s->coll_gate - 1);
        if (!g || !g->complete)
            return STEP_BLOCKED;
        completion = 1;
        local = 0;   /* its own (enter, d) is in the gate */
        if (vt__rp_add_gate_con(R, g, 0) || vt__rp_note_gate(R, s->coll_gate - 1))
            goto nomem;
    }
    if (completion && local && vt__rp_add_con_obs(R, enter, s->d, VT_CON_LOCAL, s->rank, 2 * ev->callno + 1, NULL))
        goto nomem;
    /* Phase C: the completion rule, then the candidate rule (apply_event). */
    const int64_t *base = NULL;
    int64_t M = 0;
    if (completion && R->ncons) {
        M = vt_model_complete(R->cons, R->ncons, R->nsc, R->tmp);
        base = R->tmp;
        if (R->obs)
            vt__rp_fix_members(R);
    }
    if (vt__rp_apply_event(R, s, 2 * ev->callno + 1, enter, exit, base, M, vt__rp_fname(R, s->rank, ev->fn),
                           ev->callsite, k))
        return STEP_ERROR;
    R->res->messages += R->step_msgs;
    R->res->clock_violations += R->step_viol;
    release_used(R, s);
    if (s->probed.n)
        for (size_t j = 0; j < s->ndone; j++)
            vt__rp_pm_del(&s->probed, s->done[j]);
    if (R->stream && s->ndone) {
        int front = 0;
        for (size_t j = 0; j < s->ndone; j++) {
            RX(s, s->done[j])->flags |= XF_RET;
            front |= s->done[j] == s->sm->rlo;
        }
        if (front)
            vt__rp_sm_trim(s);
    }
    s->prev_exit = s->last_exit = exit;
    s->have = 0;
    if (k == VT_MK_END) {
        s->finished = 1;
        return STEP_DONE;
    }
    return STEP_MOVED;
nomem:
    if (!R->failed)
        vt__rp_set_err(R->err, "out of memory replaying rank %u", s->rank);
    return STEP_ERROR;
}


static int cmp_evitem(const void *a, const void *b)
{
    const struct evitem *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->scen < y->scen ? -1 : x->scen > y->scen;
}

static int cmp_exc(const void *a, const void *b, void *arg)
{
    const vt_match_crecv *r = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r[x].post_index != r[y].post_index)
        return r[x].post_index < r[y].post_index ? -1 : 1;
    return (x > y) - (x < y);
}

static int setup_rank(replay *R, rstate *s, uint32_t r)
{
    s->rank = r;
    s->probe_msg = SIZE_MAX;
    if (vt_cursor_open(R->t, r, &s->cur, R->err))
        return -1;
    s->d = calloc(R->nsc + 1, sizeof(int64_t));
    const vt_rank *rk = vt_trace_rank(R->t, r);
    s->rk = rk;
    if (R->stream) {
        s->sm = calloc(1, sizeof *s->sm);
        if (!s->sm || !(s->sm->kinds = malloc(rk->nfuncs + 1)) || !(s->sm->inits = malloc(rk->nfuncs + 1))) {
            vt__rp_set_err(R->err, "out of memory preparing the replay of rank %u", r);
            return -1;
        }
        for (size_t i = 0; i < rk->nfuncs; i++)
            s->sm->kinds[i] = vt__rp_classify(&rk->funcs[i], &s->sm->inits[i]);
    } else {
        s->recvs = vt_matches_crecvs(R->m, r, &s->nrecvs);
        s->sends = vt_matches_csends(R->m, r, &s->nsends);
        s->rw = (vt_match_crecv *)s->recvs;  /* read only */
        s->sw = (vt_match_csend *)s->sends;
        s->rmask = s->smask = SIZE_MAX;
    }
    s->nfuncs = rk->nfuncs;
    s->fkind = malloc(sizeof(enum vt_model_kind) * (rk->nfuncs + 1));
    s->skind = malloc(sizeof(enum vt_model_kind) * (rk->nfuncs + 1));
    s->sinit = malloc(rk->nfuncs + 1);
    if (!s->d || !s->fkind || !s->skind || !s->sinit) {
        vt__rp_set_err(R->err, "out of memory preparing the replay of rank %u", r);
        return -1;
    }
    for (size_t i = 0; i < rk->nfuncs; i++) {
        s->fkind[i] = vt_model_kind_of(rk->funcs[i].name);
        s->skind[i] = vt_model_send_kind(rk->funcs[i].name);
        /* MPI_Send_init and the Ssend, Bsend, Rsend ones (and their _c variants) */
        s->sinit[i] = strstr(rk->funcs[i].name, "send_init") || strstr(rk->funcs[i].name, "Send_init");
    }
    for (size_t i = 0; i < s->nrecvs; i++)
        s->nexc += s->recvs[i].post_index != s->recvs[i].index;
    if (s->nexc) {
        s->exc = malloc(s->nexc * sizeof *s->exc);
        if (!s->exc) {
            vt__rp_set_err(R->err, "out of memory preparing the replay of rank %u", r);
            return -1;
        }
        size_t n = 0;
        for (size_t i = 0; i < s->nrecvs; i++)
            if (s->recvs[i].post_index != s->recvs[i].index)
                s->exc[n++] = (uint32_t)i;
        qsort_r(s->exc, n, sizeof *s->exc, cmp_exc, (void *)s->recvs);
    }
    size_t nev = 0;
    for (size_t sc = 0; sc < R->nsc; sc++)
        for (size_t i = 0; i < R->sc[sc].nitems; i++)
            nev += R->sc[sc].items[i].sel == VT_SEL_EVENT && R->sc[sc].items[i].rank == (int64_t)r;
    if (nev && !(s->evitems = malloc(nev * sizeof *s->evitems))) {
        vt__rp_set_err(R->err, "out of memory");
        return -1;
    }
    for (size_t sc = 0; sc < R->nsc; sc++) {
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel != VT_SEL_EVENT || it->rank != (int64_t)r)
                continue;
            s->evitems[s->nevitems++] = (struct evitem){it->seq, sc, it};
        }
    }
    if (s->nevitems > 1)
        qsort(s->evitems, s->nevitems, sizeof *s->evitems, cmp_evitem);
    return 0;
}

static void free_rank(rstate *s)
{
    vt_cursor_close(s->cur);
    free(s->ss.e);
    free(s->ps.e);
    free(s->probed.e);
    free(s->pending.v);
    free(s->done);
    free(s->fkind);
    free(s->skind);
    free(s->sinit);
    free(s->exc);
    free(s->d);
    free(s->evitems);
    free(s->needs);
    free(s->needcnt);
    vt__rp_sm_free(s);
    vt__rp_map_free(&s->reqs);
    vt__rp_map_free(&s->tmpl);
}

/* A scenario naming an event that is not there or not a candidate is an error. */
static int check_items(replay *R)
{
    for (size_t sc = 0; sc < R->nsc; sc++) {
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            const vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel == VT_SEL_EVENT && it->rank >= (int64_t)R->nranks) {
                vt__rp_set_err(R->err,
                               "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (it has %u ranks)",
                               R->sc[sc].text, it->rank, it->seq, R->nranks);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen && R->reduced) {
                vt__rp_set_err(R->err,
                               "scenario '%s': event %" PRId64 ":%" PRIu64 " is not a candidate of this reduced trace "
                               "(which holds every candidate; the event is shorter than θ = %" PRId64
                               " ns, or not in the trace)",
                               R->sc[sc].text, it->rank, it->seq, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen) {
                vt__rp_set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (rank %" PRId64
                        " has events 0 to %" PRIu64 ")",
                        R->sc[sc].text, it->rank, it->seq, it->rank,
                        2 * R->rs[it->rank].ncalls - 1);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->hits) {
                vt__rp_set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " lasts %" PRId64
                        " ns, under the threshold θ = %" PRId64 " ns: it is not a candidate",
                        R->sc[sc].text, it->rank, it->seq, it->seen_dur, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_RANK && it->rank >= (int64_t)R->nranks) {
                vt__rp_set_err(R->err, "scenario '%s': rank %" PRId64 " is not in the trace (it has %u ranks)",
                        R->sc[sc].text, it->rank, R->nranks);
                return -1;
            }
        }
    }
    return 0;
}

static int key_less(const vt_match_key *a, const vt_match_key *b)
{
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id;
    if (a->src != b->src)
        return a->src < b->src;
    if (a->dst != b->dst)
        return a->dst < b->dst;
    return a->tag < b->tag;
}

/* Streaming: reads every rank to its end (DRAIN) and reports the first unmatched send or
 * receive left in a FIFO, in (communicator, source, destination, tag) order, as
 * vt_trace_match does. 0 when there is none. */
static int stream_unmatched(replay *R, int drain)
{
    for (uint32_t r = 0; drain && r < R->nranks; r++) {
        int rc;
        while ((rc = vt__rp_more(R, &R->rs[r])) > 0)
            ;
        if (rc < 0)
            return -1;
    }
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < R->nkt; k++)
        if (R->kq_side[k] && (best == SIZE_MAX || key_less(&R->kt[k], &R->kt[best])))
            best = k;
    if (best == SIZE_MAX)
        return 0;
    const vt_match_key *k = &R->kt[best];
    if (R->kq_side[best] == 2) {
        uint64_t index = SE(&R->rs[k->src], R->kq_head[best])->index;
        return vt__rp_sm_err(R, vt_trace_rank(R->t, k->src)->path, vt__rp_block_of(R->t, k->src, index),
                      "expected a receive matching send record %" PRIu64 " of rank %u (to %u, tag %lld, communicator "
                      "0x%llx), found none",
                      index, k->src, k->dst, (long long)k->tag, (unsigned long long)k->comm_id);
    }
    uint64_t index = RV(&R->rs[k->dst], R->kq_head[best])->index;
    return vt__rp_sm_err(R, vt_trace_rank(R->t, k->dst)->path, vt__rp_block_of(R->t, k->dst, index),
                  "expected a send matching receive record %" PRIu64 " of rank %u (from %u, tag %lld, communicator "
                  "0x%llx), found none",
                  index, k->dst, k->src, (long long)k->tag, (unsigned long long)k->comm_id);
}

int vt_replay(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              vt_replay_result *res, vt_error *err)
{
    return vt_replay_observe(t, m, p, sc, nsc, NULL, res, err);
}

/* The progress hook of this thread's replays (vt_replay_progress). */
static _Thread_local void (*progress_fn)(void *arg, uint64_t records);
static _Thread_local void *progress_arg;

void vt_replay_progress(void (*fn)(void *arg, uint64_t records), void *arg)
{
    progress_fn = fn;
    progress_arg = arg;
}

int vt_replay_observe(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                      const vt_observer *obs, vt_replay_result *res, vt_error *err)
{
    replay R = {.t = t, .m = m, .p = p, .sc = sc, .nsc = nsc, .obs = obs, .res = res, .err = err};
    R.keys = vt_matches_keys(m, NULL);
    memset(res, 0, sizeof *res);
    R.nranks = vt_trace_nranks(t);
    /* without a vt_matches, a full trace is matched while it is replayed */
    R.stream = !m && !vt_trace_is_reduced(t);
    for (int c = 0; c < 4; c++)
        R.kcache[c] = KEY_PENDING;
    res->nscen = nsc;
    res->nranks = R.nranks;
    res->ends = calloc(nsc * R.nranks + 1, sizeof(int64_t));
    res->total = calloc(nsc + 1, sizeof(int64_t));
    res->measured = calloc(R.nranks + 1, sizeof(int64_t));
    R.rs = calloc(R.nranks, sizeof(rstate));
    R.delta = calloc(nsc + 1, sizeof(int64_t));
    R.tmp = calloc(nsc + 1, sizeof(int64_t));
    R.dbefore = calloc(nsc + 1, sizeof(int64_t));
    int rc = -1;
    if (!res->ends || !res->total || !res->measured || !R.rs || !R.delta || !R.tmp || !R.dbefore) {
        vt__rp_set_err(err, "out of memory");
        goto out;
    }
    size_t ngen = 0;
    for (size_t s = 0; s < nsc; s++)
        for (size_t i = 0; i < sc[s].nitems; i++)
            ngen += sc[s].items[i].sel != VT_SEL_EVENT;
    if (ngen && !(R.generic = malloc(ngen * sizeof *R.generic))) {
        vt__rp_set_err(err, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < nsc; s++) {
        for (size_t i = 0; i < sc[s].nitems; i++) {
            sc[s].items[i].hits = 0;
            sc[s].items[i].seen = 0;
            if (sc[s].items[i].sel == VT_SEL_EVENT)
                continue;
            R.generic[R.ngeneric].scen = s;
            R.generic[R.ngeneric].it = &sc[s].items[i];
            R.ngeneric++;
        }
    }
    for (uint32_t r = 0; r < R.nranks; r++)
        if (setup_rank(&R, &R.rs[r], r))
            goto out;
    /* A scaled trace (VTRACE_PERIODIC) lacks the records of repeated iterations. */
    for (uint32_t r = 0; r < R.nranks; r++) {
        if (vt_trace_rank(t, r)->flags & VT_RANK_SCALED) {
            vt__rp_set_err(err, "%s: rank %u's trace was scaled by VTRACE_PERIODIC (records of repeated iterations "
                           "were not written): predictions from it would be wrong; trace the run again without "
                           "VTRACE_PERIODIC (VTRACE_PERIODIC=0 marks iterations and keeps every record)",
                           vt_trace_rank(t, r)->path, r);
            goto out;
        }
    }
    R.reduced = vt_trace_is_reduced(t);
    if (R.reduced && vt__rp_reduced_prepass(&R))
        goto out;
    uint32_t done = 0;
    uint64_t nsteps = 0;
    while (done < R.nranks) {
        int progress = 0;
        for (uint32_t r = 0; r < R.nranks; r++) {
            rstate *s = &R.rs[r];
            if (s->finished)
                continue;
            for (;;) {
                int st = R.reduced ? vt__rp_rstep(&R, s) : step(&R, s);
                if (__builtin_expect(progress_fn != NULL, 0) && st == STEP_MOVED && (++nsteps & 0xffff) == 0)
                    progress_fn(progress_arg, nsteps);
                if (st == STEP_ERROR)
                    goto out;
                if (st == STEP_BLOCKED)
                    break;
                progress = 1;
                if (st == STEP_DONE) {
                    done++;
                    break;
                }
            }
        }
        if (!progress && R.stream && stream_unmatched(&R, 1))
            goto out;
        if (!progress) {
            char where[1024];
            size_t off = 0;
            for (uint32_t r = 0; r < R.nranks && off < sizeof where - 100; r++) {
                rstate *s = &R.rs[r];
                if (!s->finished)
                    off += (size_t)snprintf(where + off, sizeof where - off, "%s rank %u at record %" PRIu64 " (%s)",
                                            off ? "," : "", r, s->ev.index,
                                            s->ev.fn >= 0 ? vt__rp_fname(&R, r, s->ev.fn) : "special");
            }
            vt__rp_set_err(err, "%s: the replay cannot order this trace: every unfinished rank waits for another:%s",
                    vt_trace_dir(t), where);
            goto out;
        }
    }
    if (R.stream && stream_unmatched(&R, 1))
        goto out;
    for (uint32_t r = 0; r < R.nranks; r++) {
        rstate *s = &R.rs[r];
        res->measured[r] = s->last_exit;
        if (r == 0 || s->first_enter < res->start)
            res->start = s->first_enter;
        for (size_t k = 0; k < nsc; k++) {
            int64_t e = s->last_exit - s->d[k];
            res->ends[k * R.nranks + r] = e;
            if (r == 0 || e > res->total[k])
                res->total[k] = e;
        }
    }
    rc = check_items(&R);
out:
    for (uint32_t r = 0; R.rs && r < R.nranks; r++)
        free_rank(&R.rs[r]);
    for (size_t g = 0; g < R.ngates; g++) {
        free(R.gates[g]->T);
        free(R.gates[g]->D);
        free(R.gates[g]->base);
        free(R.gates[g]->mrank);
        free(R.gates[g]->mseq);
        free(R.gates[g]);
    }
    free(R.gates);
    free(R.freegates);
    free(R.gate_of);
    free(R.slots);
    free(R.slotd);
    free(R.freeslots);
    free(R.used_reqs);
    free(R.generic);
    free(R.rs);
    free(R.delta);
    free(R.tmp);
    free(R.cons);
    free(R.used);
    free(R.used_gates);
    free(R.ocons);
    free(R.members);
    free(R.slotext);
    free(R.dbefore);
    free(R.probed_by);
    vt__rp_map_free(&R.pub);
    vt__rp_map_free(&R.syncinfo);
    free(R.sinfo);
    free(R.kt);
    free(R.kslot);
    free(R.kq_head);
    free(R.kq_tail);
    free(R.kq_side);
    free(R.used_sends);
    if (rc)
        vt_replay_result_free(res);
    return rc;
}

void vt_replay_result_free(vt_replay_result *res)
{
    free(res->ends);
    free(res->total);
    free(res->measured);
    res->ends = res->total = res->measured = NULL;
}

/* A reduced trace records every candidate: CAND records, and COMP records flagged so. */
int vt_replay_candidates(const vt_trace *t, const vt_model_params *p, vt_candidate_fn fn, void *arg, vt_error *err)
{
    if (vt_trace_is_reduced(t))
        return vt__rp_reduced_candidates(t, fn, arg, err);
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_event ev;
        int rc;
        int64_t prev = 0;
        while ((rc = vt_cursor_next(c, &ev, err)) == 1) {
            if (ev.fn < 0)
                continue;
            int64_t enter = vt_global_time(t, r, ev.enter), exit = vt_global_time(t, r, ev.exit);
            if (ev.callno == 0)
                prev = enter;
            if (enter - prev >= p->theta)
                fn(arg, r, 2 * ev.callno, enter - prev, NULL);
            if (p->cand_calls && exit - enter >= p->theta) {
                const vt_function *f = vt_trace_function(t, r, ev.fn);
                fn(arg, r, 2 * ev.callno + 1, exit - enter, f ? f->name : "?");
            }
            prev = exit;
        }
        vt_cursor_close(c);
        if (rc < 0)
            return -1;
    }
    return 0;
}

