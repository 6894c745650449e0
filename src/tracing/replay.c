/* What-if replay of a full trace (model.md §2, §3, §6), numeric, several scenarios at
 * once. Each rank is streamed with its own cursor; a rank advances until it needs a
 * value another rank has not produced yet (a sender's difference at a send, a
 * receiver's difference where it posted a synchronous receive, the members of a
 * collective), then the next rank runs. Values travel through slots that are freed once
 * read. Without a vt_matches, messages are matched in the same pass ("streaming
 * matching" below): one decoding of the records, and memory for the messages in flight
 * rather than for every message of the trace. */
#include "vt_config.h"
#include "replay.h"
#include "codec.h"
#include "reader_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ scenarios */

static int parse_shortening(const char *s, vt_shorten *it)
{
    if (!strcmp(s, "elim")) {
        it->how = VT_SHORT_ELIM;
        return 0;
    }
    if (s[0] != '-')
        return -1;
    char *end;
    double v = strtod(s + 1, &end);
    if (end == s + 1 || v < 0)
        return -1;
    if (!strcmp(end, "%")) {
        if (v > 100)
            return -1;
        it->how = VT_SHORT_PPM;
        it->value = (int64_t)(v * 10000.0 + 0.5);
        return 0;
    }
    static const struct { const char *u; double ns; } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(end, units[i].u)) {
            it->how = VT_SHORT_NS;
            it->value = (int64_t)(v * units[i].ns + 0.5);
            return 0;
        }
    }
    return -1;
}

static int parse_selector(const char *s, vt_shorten *it)
{
    it->rank = -1;
    const char *slash = strchr(s, '/');
    if (slash && (!strncmp(slash + 1, "fn:", 3) || !strncmp(slash + 1, "site:", 5))) {
        char *end;
        long r = strtol(s, &end, 10);
        if (end != slash || r < 0)
            return -1;
        it->rank = r;
        s = slash + 1;
    }
    if (!strcmp(s, "all")) {
        it->sel = VT_SEL_ALL;
        return 0;
    }
    if (!strncmp(s, "rank:", 5)) {
        char *end;
        long r = strtol(s + 5, &end, 10);
        if (*end || end == s + 5 || r < 0)
            return -1;
        it->sel = VT_SEL_RANK;
        it->rank = r;
        return 0;
    }
    if (!strncmp(s, "fn:", 3) || !strncmp(s, "site:", 5)) {
        it->sel = s[0] == 'f' ? VT_SEL_FUNC : VT_SEL_SITE;
        const char *name = strchr(s, ':') + 1;
        if (!*name)
            return -1;
        it->name = name;
        return 0;
    }
    char *end;
    unsigned long long r = strtoull(s, &end, 10);
    if (end == s || *end != ':')
        return -1;
    char *end2;
    unsigned long long q = strtoull(end + 1, &end2, 10);
    if (end2 == end + 1 || *end2)
        return -1;
    it->sel = VT_SEL_EVENT;
    it->rank = (int64_t)r;
    it->seq = q;
    return 0;
}

int vt_scenario_parse(const char *text, vt_scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->text = strdup(text);
    char *copy = strdup(text);
    if (!out->text || !copy) {
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strrchr(tok, '=');
        vt_shorten it;
        memset(&it, 0, sizeof it);
        if (!eq) {
            snprintf(err, errlen, "'%s': expected SELECTOR=SHORTENING, e.g. 1:17=elim or fn:MPI_Recv=-50%%", tok);
            goto fail;
        }
        *eq = '\0';
        if (parse_selector(tok, &it)) {
            snprintf(err, errlen,
                     "'%s': expected a selector RANK:SEQ, rank:R, fn:NAME, site:NAME, R/fn:NAME, R/site:NAME or all", tok);
            goto fail;
        }
        if (parse_shortening(eq + 1, &it)) {
            snprintf(err, errlen, "'%s': expected a shortening: elim, -N%% (0 to 100) or -N with ns, us, ms or s",
                     eq + 1);
            goto fail;
        }
        /* room for 4, then doubling: the capacity is implicit in nitems */
        size_t ni = out->nitems;
        if (ni == 0 || (ni >= 4 && !(ni & (ni - 1)))) {
            vt_shorten *n = realloc(out->items, (ni ? 2 * ni : 4) * sizeof *n);
            if (!n) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            out->items = n;
        }
        out->items[out->nitems++] = it;
    }
    out->tokens = copy;   /* the items' names point into it */
    return 0;
fail:
    free(copy);
    vt_scenario_free(out);
    return -1;
}

void vt_scenario_free(vt_scenario *s)
{
    free(s->text);
    free(s->tokens);
    free(s->items);
    memset(s, 0, sizeof *s);
}

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

/* ------------------------------------------------------------------ slots and maps */

/* A value one rank publishes for another: a ready time (T), the receiving call's exit
 * (E, synchronous posts) and one difference per scenario. Slots live in one pool (their
 * differences in a parallel array of nsc values each, so no allocation per message)
 * and exist only between the record that fills them and the last reader: a rank finds
 * the slot of a send or receive position through a small per-rank map. */
typedef struct slot {
    int64_t T, E;
    int64_t Tloc;       /* T on the owner's clock */
    uint64_t seq;       /* model sequence number of the call that filled it */
    uint32_t uses;      /* readers left before it is freed */
    uint32_t rank;      /* owner, and which of its maps names it */
    uint32_t pos;
    uint32_t post;      /* 1: a receive's posting, 0: a send */
} slot;

/* u32 position -> u32 slot (open addressing, backward-shift deletion). */
typedef struct posmap {
    uint64_t *e;        /* pos + 1 << 32 | slot; 0 empty */
    size_t cap, n;
} posmap;

typedef struct gate {
    uint64_t comm, seq;
    uint32_t need, arrived, left;
    uint32_t gen;       /* reuse count of this pool entry (ids name a generation) */
    int live, complete;
    int64_t M;
    int64_t *T, *D;     /* need entries; need x nsc */
    uint32_t *mrank;    /* need entries: who arrived, with which call */
    uint64_t *mseq;
    size_t capneed;
    int64_t *base;      /* nsc, when complete */
} gate;

typedef struct u64map {
    uint64_t *keys, *vals;
    size_t cap, n;
} u64map;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int map_put(u64map *m, uint64_t k, uint64_t v)
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

static int map_get(const u64map *m, uint64_t k, uint64_t *v)
{
    size_t j = map_slot(m, k);
    if (j == SIZE_MAX)
        return 0;
    *v = m->vals[j];
    return 1;
}

static void map_del(u64map *m, uint64_t k)
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

static void map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

#define SLOT_NONE UINT32_MAX

static size_t pm_home(uint32_t pos, size_t cap) { return (size_t)mix((uint64_t)pos + 1) & (cap - 1); }

static uint32_t pm_get(const posmap *m, uint32_t pos)
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

static void pm_del(posmap *m, uint32_t pos)
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

/* Receives posted and not yet completed, by the record that completes them. */
typedef struct pend {
    uint64_t done;
    uint32_t pos;
} pend;

typedef struct heap {
    pend *v;
    size_t n, cap;
} heap;

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
        if (h->v[p].done <= done)
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
        if (c + 1 < h->n && h->v[c + 1].done < h->v[c].done)
            c++;
        if (h->v[c].done >= last.done)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* ------------------------------------------------------------------ replay state */

enum { REQ_SEND = 1, REQ_ICOLL = 2 };

typedef struct rstate {
    uint32_t rank;
    vt_cursor *cur;
    vt_event ev;
    int have, published, finished, done_ready, started;
    uint64_t ncalls;          /* call records seen */
    int64_t genter, gexit;    /* global enter and exit of ev */
    int64_t prev_exit, first_enter;
    int64_t *d;
    const vt_match_crecv *recvs;
    const vt_match_csend *sends;
    size_t nrecvs, nsends;    /* entries (streaming: positions up to which entries exist) */
    /* Entry i is rw[i & rmask] (sw[i & smask]): the vt_matches arrays (mask all ones), or
     * the streaming matcher's windows (rings). */
    vt_match_crecv *rw;
    vt_match_csend *sw;
    size_t rmask, smask;
    struct smatch *sm;        /* streaming matching (no vt_matches given) */
    const vt_rank *rk;
    uint32_t *exc;            /* receives posted before their index (by a matched probe), by posting */
    size_t nexc;
    size_t send_ptr, post_ptr;
    posmap ss, ps;            /* live slots: per send; per receive (synchronous posts) */
    posmap probed;            /* receives whose completion was a probe (until completed) */
    heap pending;             /* posted receives by completing record */
    uint32_t *done;           /* receives the current record completes */
    size_t ndone, capdone;
    u64map reqs;              /* request id -> kind << 56 | position or gate id */
    enum vt_model_kind *fkind;
    enum vt_model_kind *skind; /* vt_model_send_kind of each function */
    uint8_t *sinit;           /* the function's name holds "send_init" */
    size_t nfuncs;
    uint64_t coll_gate;       /* gate id joined by the current record + 1, 0 none */
    int nbc_joined;           /* the current record initiated a non-blocking collective ... */
    uint64_t nbc_comm;        /* ... on this communicator */
    size_t probe_msg;         /* receive the current probe matched, SIZE_MAX none */
    u64map tmpl;              /* request ids of persistent send templates */
    int64_t last_exit;
    /* Reduced traces: the current record, and the sequence numbers whose difference
     * another record reads (a send, a synchronous receive's posting), sorted, with
     * their readers. */
    vt_rrec rr;
    uint64_t gap_seq;         /* the first sequence number after the last record */
    uint64_t *needs;
    uint32_t *needcnt;
    size_t nneeds, needptr;
    /* Scenario items naming events of this rank, sorted by seq. */
    struct evitem { uint64_t seq; size_t scen; vt_shorten *it; } *evitems;
    size_t nevitems, evptr;
} rstate;

typedef struct replay {
    const vt_trace *t;
    const vt_matches *m;
    const vt_match_key *keys;
    const vt_model_params *p;
    vt_scenario *sc;
    size_t nsc;
    uint32_t nranks;
    rstate *rs;
    slot *slots;              /* pool; differences at slotd + i * nsc */
    int64_t *slotd;
    uint32_t *freeslots;
    size_t nslots, capslots, nfree;
    gate **gates;             /* pool; gate id = (gen & 0xffffff) << 32 | index */
    size_t ngates, capgates;
    uint32_t *freegates;
    size_t nfreegates;
    uint32_t *gate_of;        /* live gates by (comm, seq): index + 1, 0 empty */
    size_t capgate_of, ngate_of;
    struct { size_t scen; vt_shorten *it; } *generic;
    size_t ngeneric;
    int64_t *delta;           /* nsc scratch */
    vt_contrib *cons;
    size_t ncons, capcons;
    /* With an observer: who each contributor is (parallel to cons), and scratch. */
    const vt_observer *obs;
    vt_obs_con *ocons;
    size_t capocons;
    vt_obs_member *members;
    size_t nmembers, capmembers;
    uint8_t *slotext;         /* obs->ext_size bytes per slot */
    int64_t *dbefore;         /* nsc */
    uint64_t *probed_by;
    size_t nprobed_by, capprobed_by;
    uint64_t step_msgs, step_viol;   /* of the record being processed (it may block) */
    int64_t *tmp;
    /* What the record being processed read: released once it is applied. */
    uint32_t *used;
    size_t nused, capused;
    uint64_t *used_gates;
    size_t nused_gates, capused_gates;
    uint64_t *used_reqs;      /* request entries it completed */
    size_t nused_reqs, capused_reqs;
    vt_replay_result *res;
    vt_error *err;
    int failed;               /* err is set (a trace error found while matching) */
    /* Streaming matching: message keys, and per key the entries waiting for their other
     * end (receives or sends, in order, linked through their rx/sx.next) */
    int stream;
    vt_match_key *kt;
    size_t nkt, capkt;
    uint32_t *kslot;          /* hash of kt: key id + 1, 0 empty */
    size_t capkslot;
    uint32_t kcache[4], klast;  /* recent key ids (KEY_PENDING: none), next to replace */
    uint32_t *kq_head, *kq_tail;
    uint8_t *kq_side;         /* 0 none waiting, 1 receives, 2 sends */
    uint64_t *used_sends;     /* rank << 32 | send position read by the record being processed */
    size_t nused_sends, capused_sends;
    /* Reduced traces */
    int reduced;
    u64map pub;               /* rank << 40 | seq -> slot: published differences */
    u64map syncinfo;          /* sender << 40 | send seq -> index in sinfo */
    struct sinfo { uint32_t dst; uint64_t post_seq; int64_t P, E; } *sinfo;   /* global P, E */
    size_t nsinfo, capsinfo;
} replay;

static void set_err(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(vt_error *e, const char *fmt, ...)
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

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
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

static int64_t *slot_d(const replay *R, uint32_t i) { return R->slotd + (size_t)i * R->nsc; }

/* Fills the slot of (rank, send or posting pos) with T, E, d and its readers, reusing
 * the slot when it is still there (a second fill overwrites, as before). */
static int slot_fill(replay *R, rstate *s, int post, size_t pos, int64_t T, int64_t E, uint32_t uses)
{
    posmap *pm = post ? &s->ps : &s->ss;
    uint32_t i = pm_get(pm, (uint32_t)pos);
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
    memcpy(slot_d(R, i), s->d, sizeof(int64_t) * R->nsc);
    if (!post && R->obs && R->obs->publish)
        R->obs->publish(R->obs->arg, s->rank, sl->seq, R->obs->ext_size ? R->slotext + (size_t)i * R->obs->ext_size : NULL);
    return 0;
}

/* Adds a contributor; with an observer also who it is (kind, rank, seq), the rest of
 * which the caller fills in through *oc (NULL without an observer). */
static int add_con_obs(replay *R, int64_t T, const int64_t *D, enum vt_con_kind kind, uint32_t rank, uint64_t seq,
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

static const char *fname(const replay *R, uint32_t rank, int64_t fn)
{
    const vt_function *f = vt_trace_function(R->t, rank, fn);
    return f ? f->name : "?";
}

static int64_t gtime(const replay *R, uint32_t rank, int64_t local) { return vt_global_time(R->t, rank, local); }

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
static int apply_event(replay *R, rstate *s, uint64_t seq, int64_t start, int64_t end, const int64_t *base, int64_t M,
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

static size_t gate_home(uint64_t comm, uint64_t seq, size_t cap)
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

static uint64_t gate_id(const replay *R, size_t i) { return (uint64_t)(R->gates[i]->gen & 0xffffffu) << 32 | i; }

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
            size_t j = gate_home(g->comm, g->seq, nc);
            while (n[j])
                j = (j + 1) & (nc - 1);
            n[j] = R->gate_of[i];
        }
        free(R->gate_of);
        R->gate_of = n;
        R->capgate_of = nc;
    }
    const gate *g = R->gates[gi];
    size_t j = gate_home(g->comm, g->seq, R->capgate_of);
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
    size_t j = gate_home(g->comm, g->seq, R->capgate_of);
    while (R->gate_of[j] && R->gate_of[j] != gi + 1)
        j = (j + 1) & mask;
    if (!R->gate_of[j])
        return;
    R->gate_of[j] = 0;
    R->ngate_of--;
    for (size_t i = (j + 1) & mask; R->gate_of[i]; i = (i + 1) & mask) {
        const gate *h = R->gates[R->gate_of[i] - 1];
        size_t home = gate_home(h->comm, h->seq, R->capgate_of);
        if (((i - home) & mask) >= ((i - j) & mask)) {
            R->gate_of[j] = R->gate_of[i];
            R->gate_of[i] = 0;
            j = i;
        }
    }
}

/* The live gate of (comm, seq), made when there is none; its pool index in *gi. */
static gate *gate_get(replay *R, uint64_t comm, uint64_t seq, uint32_t need, size_t *gi)
{
    if (R->ngate_of) {
        for (size_t j = gate_home(comm, seq, R->capgate_of);; j = (j + 1) & (R->capgate_of - 1)) {
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

static void gate_join(replay *R, gate *g, int64_t T, const int64_t *D, uint32_t rank, uint64_t seq)
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

static void gate_leave(replay *R, uint64_t id)
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

/* ------------------------------------------------------------------ streaming matching
 *
 * Without a vt_matches, the replay matches messages itself, in its one pass over the
 * records (match.c's rules, the same result): each rank's records go through match()
 * when they are decoded, which adds that rank's sends (in call order) and receives (in
 * record order) to two rings, its windows, with the same fields as the compact arrays
 * of vt_trace_match. A send is paired when it is released (once it is known not to be
 * cancelled: at its completion for one with a request), a receive when it is released
 * (once it and every receive posted before it on its rank have a source and tag: at
 * the record for a blocking one, at its completion for a nonblocking or persistent one,
 * at the MPI_Mprobe for a matched one); per key, the k-th released send meets the k-th
 * released receive (the FIFOs of R->kq_*, holding only unpaired entries).
 *
 * What the replay reads of an entry is there when it reads it: when it posts a receive
 * it needs the receive's completing record (the order of the pending heap, the exit E
 * of a synchronous posting) and when it makes a send whether it was cancelled; a rank's
 * matcher then reads ahead on that rank (more()), keeping the records it read in a
 * buffer that the replay consumes before decoding further. A probe looks for its
 * message among the receives posted from it on (reading ahead until one fits). Entries
 * leave their windows once the replay is done with them (a receive at its completion, a
 * send once received and, when synchronous, completed), so memory follows the messages
 * in flight and the reading ahead, not the trace length. Unmatched entries are what is
 * left in the FIFOs: the errors are vt_trace_match's. */

enum { K_OTHER, K_RECV, K_IRECV, K_RECV_INIT, K_SEND_INIT, K_START, K_MPROBE, K_MRECV, K_IMRECV, K_FREE };
enum { A_RECV = 1, A_SEND = 2, A_IMRECV = 3 };

#define KEY_PENDING UINT32_MAX      /* source and tag not resolved yet */
#define KEY_SKIP (UINT32_MAX - 1)   /* cancelled, MPI_PROC_NULL: no message */
#define KEY_MAX (UINT32_MAX - 2)
#define POS_MAX (VT_MPOS_NONE - 1u)
#define RQ_PH (UINT64_C(1) << 63)   /* posting queue: an MPI_Mprobe's receive, not read yet */
#define RQ_DROP UINT64_MAX          /* ... that never came */

#define XF_DONE 1u    /* receive: its completing record is known */
#define XF_RET 2u     /* the replay is done with it */
#define XF_RES 4u     /* send: whether it was cancelled is known */
#define XF_REL 8u     /* receive: released (in its key's FIFO, or paired) */

typedef struct rx {
    uint64_t comm;    /* communicator id of a pending nonblocking receive */
    uint32_t next;    /* key FIFO */
    uint32_t flags;
} rx;

typedef struct sx {
    uint32_t next;
    uint16_t flags;
    uint16_t refs;    /* readers left: the receiver, and the sender's completion when synchronous */
} sx;

typedef struct brec {
    vt_event ev;
    uint64_t *st;
    vt_completion *dn;
    size_t capst, capdn;
} brec;

typedef struct sprobe {
    uint64_t index, comm_id, bytes, rq;
    int64_t peer, tag;
} sprobe;

typedef struct stmpl {
    int recv;
    int64_t fn;
    uint64_t comm_id;
    int64_t peer, tag;
    uint64_t bytes;
} stmpl;

typedef struct smatch {
    uint8_t *kinds, *inits;
    u64map active;            /* request -> position << 2 | A_* */
    u64map templates;         /* request -> index in tmpls */
    stmpl *tmpls;
    size_t ntmpls, captmpls;
    u64map probes;            /* message id -> index in pr */
    sprobe *pr;
    size_t npr, cappr;
    uint32_t *prfree;
    size_t nprfree, capprfree;
    rx *rxw;                  /* parallel to the receive window */
    size_t rcap;
    uint64_t rlo, rhi;
    sx *sxw;
    size_t scap;
    uint64_t slo, shi, srel;  /* srel: first send not released */
    uint64_t *rq, *rqpost;    /* receives in posting order, and their posting index */
    size_t qcap;
    uint64_t qlo, qrel, qhi;
    brec *buf;                /* records read ahead */
    size_t bcap;
    uint64_t blo, bhi;
    uint64_t *cst;            /* the current record's lists when it is not the cursor's */
    vt_completion *cdn;
    size_t capcst, capcdn;
    int eof, cur_owned;
    struct orph { uint64_t pos, req, comm; } *orph;
    size_t norph, caporph;
} smatch;

#define RV(s, i) (&(s)->rw[(size_t)(i) & (s)->rmask])
#define SE(s, i) (&(s)->sw[(size_t)(i) & (s)->smask])
#define RX(s, i) (&(s)->sm->rxw[(size_t)(i) & (s)->rmask])
#define SX(s, i) (&(s)->sm->sxw[(size_t)(i) & (s)->smask])

/* Doubles a ring of entries [lo, hi) from cap (a power of two) to 2 cap. */
static void *ring_grow(void *ring, size_t cap, size_t size, uint64_t lo, uint64_t hi)
{
    size_t nc = cap ? 2 * cap : 64;
    char *n = malloc(nc * size);
    if (!n)
        return NULL;
    for (uint64_t i = lo; i < hi; i++)
        memcpy(n + (size_t)(i & (nc - 1)) * size, (char *)ring + (size_t)(i & (cap - 1)) * size, size);
    return n;
}

static int name_is(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0)
        return 0;
    return name[n] == 0 || strcmp(name + n, "_c") == 0;
}

/* match.c's classify(), plus MPI_Request_free (a send it frees is never cancelled). */
static uint8_t classify(const vt_function *f, uint8_t *is_init)
{
    *is_init = strstr(f->name, "_init") != NULL;
    if (name_is(f->name, "MPI_Recv") || name_is(f->name, "MPI_Sendrecv") || name_is(f->name, "MPI_Sendrecv_replace"))
        return (f->fields & VT_F_RPEER) ? K_RECV : K_OTHER;
    if (name_is(f->name, "MPI_Irecv") || name_is(f->name, "MPI_Isendrecv") || name_is(f->name, "MPI_Isendrecv_replace"))
        return (f->fields & VT_F_REQUEST) ? K_IRECV : K_OTHER;
    if (name_is(f->name, "MPI_Recv_init") || name_is(f->name, "MPI_Precv_init"))
        return (f->fields & VT_F_REQUEST) ? K_RECV_INIT : K_OTHER;
    if (*is_init && (f->fields & VT_F_PEER) && (f->fields & VT_F_REQUEST))
        return K_SEND_INIT;
    if (name_is(f->name, "MPI_Start") || name_is(f->name, "MPI_Startall"))
        return (f->fields & VT_F_STARTED) ? K_START : K_OTHER;
    if (name_is(f->name, "MPI_Mprobe") || name_is(f->name, "MPI_Improbe"))
        return (f->fields & VT_F_MSG) ? K_MPROBE : K_OTHER;
    if (name_is(f->name, "MPI_Mrecv"))
        return (f->fields & VT_F_MSG) ? K_MRECV : K_OTHER;
    if (name_is(f->name, "MPI_Imrecv"))
        return (f->fields & VT_F_MSG) ? K_IMRECV : K_OTHER;
    if (!strcmp(f->name, "MPI_Request_free"))
        return (f->fields & VT_F_REQUEST) ? K_FREE : K_OTHER;
    return K_OTHER;
}

static uint64_t key_hash(uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    uint64_t h = comm * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)src << 32 | dst);
    h ^= (uint64_t)tag * 0xc2b2ae3d27d4eb4fULL;
    h ^= h >> 31;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static int key_same(const vt_match_key *k, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    return k->comm_id == comm && k->src == src && k->dst == dst && k->tag == tag;
}

/* The key id of (comm, src, dst, tag), added when new; KEY_PENDING without memory. */
static uint32_t key_intern(replay *R, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    /* a few recent keys first (a halo alternates between a handful) */
    for (int c = 0; c < 4; c++)
        if (R->kcache[c] != KEY_PENDING && key_same(&R->kt[R->kcache[c]], comm, src, dst, tag))
            return R->kcache[c];
    if ((R->nkt + 1) * 2 > R->capkslot) {
        size_t cap = R->capkslot ? R->capkslot * 2 : 256;
        uint32_t *sl = calloc(cap, sizeof *sl);
        if (!sl)
            return KEY_PENDING;
        for (size_t i = 0; i < R->nkt; i++) {
            const vt_match_key *k = &R->kt[i];
            size_t j = key_hash(k->comm_id, k->src, k->dst, k->tag) & (cap - 1);
            while (sl[j])
                j = (j + 1) & (cap - 1);
            sl[j] = (uint32_t)i + 1;
        }
        free(R->kslot);
        R->kslot = sl;
        R->capkslot = cap;
    }
    size_t j = key_hash(comm, src, dst, tag) & (R->capkslot - 1);
    while (R->kslot[j]) {
        uint32_t id = R->kslot[j] - 1;
        if (key_same(&R->kt[id], comm, src, dst, tag))
            return R->kcache[R->klast++ & 3] = id;
        j = (j + 1) & (R->capkslot - 1);
    }
    if (R->nkt >= KEY_MAX)
        return KEY_PENDING;
    if (R->nkt == R->capkt) {
        size_t cap = R->capkt ? R->capkt * 2 : 64;
        vt_match_key *k = realloc(R->kt, cap * sizeof *k);
        if (!k)
            return KEY_PENDING;
        R->kt = k;
        uint32_t *h = realloc(R->kq_head, cap * sizeof *h);
        if (h)
            R->kq_head = h;
        uint32_t *t = h ? realloc(R->kq_tail, cap * sizeof *t) : NULL;
        if (t)
            R->kq_tail = t;
        uint8_t *sd = t ? realloc(R->kq_side, cap) : NULL;
        if (!sd)
            return KEY_PENDING;
        R->kq_side = sd;
        R->capkt = cap;
    }
    R->kt[R->nkt] = (vt_match_key){comm, tag, src, dst};
    R->kq_side[R->nkt] = 0;
    R->kslot[j] = (uint32_t)R->nkt + 1;
    R->keys = R->kt;
    return R->kcache[R->klast++ & 3] = (uint32_t)R->nkt++;
}

static int sm_err(replay *R, const char *path, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int sm_err(replay *R, const char *path, uint64_t off, const char *fmt, ...)
{
    int n = snprintf(R->err->msg, sizeof R->err->msg, "%s: offset %" PRIu64 ": ", path ? path : "?", off);
    if (n >= 0 && (size_t)n < sizeof R->err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(R->err->msg + n, sizeof R->err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    R->failed = 1;
    return -1;
}

static int sm_nomem(replay *R, rstate *s, const vt_event *ev)
{
    return sm_err(R, vt_trace_rank(R->t, s->rank)->path, ev->block_offset,
                  "expected memory to match record %" PRIu64 ", found none", ev->index);
}

static int sm_toomany(replay *R, rstate *s, const vt_event *ev, const char *what)
{
    return sm_err(R, vt_trace_rank(R->t, s->rank)->path, ev->block_offset,
                  "expected at most %u %s on rank %u (or %u message keys), found more at record %" PRIu64,
                  (unsigned)POS_MAX, what, s->rank, (unsigned)KEY_MAX, ev->index);
}

/* File offset of the block holding record INDEX of RANK (for messages), 0 unknown. */
static uint64_t block_of(const vt_trace *t, uint32_t rank, uint64_t index)
{
    vt_cursor *c;
    vt_error e;
    vt_event ev;
    uint64_t off = 0;
    if (vt_cursor_open(t, rank, &c, &e))
        return 0;
    while (vt_cursor_next(c, &ev, &e) == 1) {
        if (ev.index == index) {
            off = ev.block_offset;
            break;
        }
    }
    vt_cursor_close(c);
    return off;
}

static uint64_t comm_id_of(const vt_rank *rk, int64_t comm)
{
    return comm >= 0 && (uint64_t)comm < rk->ncomms ? rk->comms[comm].id : 0;
}

/* Pairs a released send or receive with the head of its key's FIFO of the other side,
 * or queues it there. */
static void pair_recv(replay *R, rstate *s, uint32_t pos)
{
    uint32_t k = RV(s, pos)->key;
    if (R->kq_side[k] == 2) {
        rstate *o = &R->rs[R->kt[k].src];
        uint32_t h = R->kq_head[k];
        SE(o, h)->recv_pos = pos;
        RV(s, pos)->send_pos = h;
        R->kq_head[k] = SX(o, h)->next;
        if (R->kq_head[k] == VT_MPOS_NONE)
            R->kq_side[k] = 0;
        return;
    }
    RX(s, pos)->next = VT_MPOS_NONE;
    if (R->kq_side[k] == 0) {
        R->kq_head[k] = R->kq_tail[k] = pos;
        R->kq_side[k] = 1;
    } else {
        RX(s, R->kq_tail[k])->next = pos;
        R->kq_tail[k] = pos;
    }
}

static void pair_send(replay *R, rstate *s, uint32_t pos)
{
    uint32_t k = SE(s, pos)->key;
    if (R->kq_side[k] == 1) {
        rstate *o = &R->rs[R->kt[k].dst];
        uint32_t h = R->kq_head[k];
        RV(o, h)->send_pos = pos;
        SE(s, pos)->recv_pos = h;
        R->kq_head[k] = RX(o, h)->next;
        if (R->kq_head[k] == VT_MPOS_NONE)
            R->kq_side[k] = 0;
        return;
    }
    SX(s, pos)->next = VT_MPOS_NONE;
    if (R->kq_side[k] == 0) {
        R->kq_head[k] = R->kq_tail[k] = pos;
        R->kq_side[k] = 2;
    } else {
        SX(s, R->kq_tail[k])->next = pos;
        R->kq_tail[k] = pos;
    }
}

/* Releases what can be: receives in posting order while resolved, sends in call order
 * while known not cancelled. */
static void sm_release(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->qrel == m->qhi && m->srel == m->shi)
        return;
    while (m->qrel < m->qhi) {
        uint64_t e = m->rq[m->qrel & (m->qcap - 1)];
        if (e == RQ_DROP) {
            m->qrel++;
            continue;
        }
        if ((e & RQ_PH) || RV(s, e)->key == KEY_PENDING)
            break;
        m->qrel++;
        RX(s, e)->flags |= XF_REL;
        if (RV(s, e)->key == KEY_SKIP)
            RX(s, e)->flags |= XF_RET;
        else
            pair_recv(R, s, (uint32_t)e);
    }
    while (m->srel < m->shi && (SX(s, m->srel)->flags & XF_RES)) {
        if (SE(s, m->srel)->key == KEY_SKIP)
            SX(s, m->srel)->flags |= XF_RET;
        else
            pair_send(R, s, (uint32_t)m->srel);
        m->srel++;
    }
}

static int rq_push(rstate *s, uint64_t v, uint64_t post)
{
    smatch *m = s->sm;
    if (m->qhi - m->qlo == m->qcap) {
        uint64_t *a = ring_grow(m->rq, m->qcap, sizeof *a, m->qlo, m->qhi);
        uint64_t *b = a ? ring_grow(m->rqpost, m->qcap, sizeof *b, m->qlo, m->qhi) : NULL;
        if (!b) {
            free(a);
            return -1;
        }
        free(m->rq);
        free(m->rqpost);
        m->rq = a;
        m->rqpost = b;
        m->qcap = m->qcap ? 2 * m->qcap : 64;
    }
    m->rq[m->qhi & (m->qcap - 1)] = v;
    m->rqpost[m->qhi & (m->qcap - 1)] = post;
    m->qhi++;
    return 0;
}

static int sm_add_send(replay *R, rstate *s, const vt_event *ev, uint64_t comm, int64_t peer, int64_t tag,
                       uint64_t bytes, uint32_t sub, int64_t fn, int resolved)
{
    smatch *m = s->sm;
    if (m->shi >= POS_MAX)
        return sm_toomany(R, s, ev, "sends");
    if (m->shi - m->slo == m->scap) {
        vt_match_csend *a = ring_grow(s->sw, m->scap, sizeof *a, m->slo, m->shi);
        sx *b = a ? ring_grow(m->sxw, m->scap, sizeof *b, m->slo, m->shi) : NULL;
        if (!b) {
            free(a);
            return sm_nomem(R, s, ev);
        }
        free(s->sw);
        free(m->sxw);
        s->sw = a;
        m->sxw = b;
        m->scap = m->scap ? 2 * m->scap : 64;
        s->smask = m->scap - 1;
    }
    uint32_t key = key_intern(R, comm, s->rank, (uint32_t)peer, tag);
    if (key == KEY_PENDING)
        return R->nkt >= KEY_MAX ? sm_toomany(R, s, ev, "sends") : sm_nomem(R, s, ev);
    enum vt_model_kind sk = fn >= 0 && (size_t)fn < s->nfuncs ? s->skind[fn] : VT_MK_SEND;
    *SE(s, m->shi) = (vt_match_csend){ev->index, bytes, key, VT_MPOS_NONE, (int32_t)fn, sub};
    *SX(s, m->shi) = (sx){VT_MPOS_NONE, resolved ? XF_RES : 0, (uint16_t)(1 + vt_model_is_sync(sk, bytes, R->p))};
    s->nsends = ++m->shi;
    return 0;
}

/* Adds a receive named by EV, posted at POST; its position in *pos. */
static int sm_add_recv(replay *R, rstate *s, const vt_event *ev, uint64_t post, uint64_t *pos)
{
    smatch *m = s->sm;
    if (m->rhi >= POS_MAX)
        return sm_toomany(R, s, ev, "receives");
    if (m->rhi - m->rlo == m->rcap) {
        vt_match_crecv *a = ring_grow(s->rw, m->rcap, sizeof *a, m->rlo, m->rhi);
        rx *b = a ? ring_grow(m->rxw, m->rcap, sizeof *b, m->rlo, m->rhi) : NULL;
        if (!b) {
            free(a);
            return sm_nomem(R, s, ev);
        }
        free(s->rw);
        free(m->rxw);
        s->rw = a;
        m->rxw = b;
        m->rcap = m->rcap ? 2 * m->rcap : 64;
        s->rmask = m->rcap - 1;
    }
    *pos = m->rhi;
    *RV(s, m->rhi) = (vt_match_crecv){ev->index, post, ev->index, ev->exit, KEY_PENDING, VT_MPOS_NONE};
    *RX(s, m->rhi) = (rx){0, VT_MPOS_NONE, 0};
    s->nrecvs = ++m->rhi;
    return 0;
}

static int sm_resolve(replay *R, rstate *s, const vt_event *ev, uint64_t pos, uint64_t comm, int64_t src, int64_t tag)
{
    if (src < 0) { /* MPI_PROC_NULL or unknown (cancelled) */
        RV(s, pos)->key = KEY_SKIP;
        return 0;
    }
    uint32_t key = key_intern(R, comm, (uint32_t)src, s->rank, tag);
    if (key == KEY_PENDING)
        return R->nkt >= KEY_MAX ? sm_toomany(R, s, ev, "receives") : sm_nomem(R, s, ev);
    RV(s, pos)->key = key;
    return 0;
}

static int sm_active(replay *R, rstate *s, const vt_event *ev, uint64_t req, uint64_t pos, unsigned kind, uint64_t comm)
{
    smatch *m = s->sm;
    if (req == 0)
        return 0;
    uint64_t old;
    if (map_get(&m->active, req, &old)) {
        uint64_t op = old >> 2;
        switch ((unsigned)(old & 3)) {
        case A_RECV:
            if (RV(s, op)->key == KEY_PENDING) { /* it can never be resolved now */
                if (m->norph == m->caporph) {
                    size_t nc = m->caporph ? 2 * m->caporph : 8;
                    struct orph *o = realloc(m->orph, nc * sizeof *o);
                    if (!o)
                        return sm_nomem(R, s, ev);
                    m->orph = o;
                    m->caporph = nc;
                }
                m->orph[m->norph++] = (struct orph){op, req, RX(s, op)->comm};
            }
            break;
        case A_SEND:
            SX(s, op)->flags |= XF_RES; /* never completed: not cancelled */
            break;
        default:
            RX(s, op)->flags |= XF_DONE; /* never completed: done at its record */
            break;
        }
    }
    if (kind != A_SEND)
        RX(s, pos)->comm = comm;
    return map_put(&m->active, req, pos << 2 | kind) ? sm_nomem(R, s, ev) : 0;
}

/* match.c's on_event() on the windows. */
static int match(replay *R, rstate *s, const vt_event *ev)
{
    smatch *m = s->sm;
    if (ev->fn < 0 || (size_t)ev->fn >= s->nfuncs)
        return 0;
    const vt_rank *rk = s->rk;
    uint8_t k = m->kinds[ev->fn];
    uint64_t comm_id = comm_id_of(rk, ev->comm);
    int64_t tag = (ev->fields & VT_F_TAG) ? ev->tag : -1;
    uint64_t pos;

    if ((ev->fields & VT_F_PEER) && ev->peer >= 0 && !m->inits[ev->fn]) {
        int tracked = k != K_IRECV && ev->request;
        if (sm_add_send(R, s, ev, comm_id, ev->peer, tag, ev->bytes, 0, ev->fn, !tracked))
            return -1;
        if (tracked && sm_active(R, s, ev, ev->request, m->shi - 1, A_SEND, 0))
            return -1;
    }

    switch (k) {
    case K_RECV:
        if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(s, pos, ev->index))
            return R->failed ? -1 : sm_nomem(R, s, ev);
        RX(s, pos)->flags |= XF_DONE;
        if (sm_resolve(R, s, ev, pos, comm_id, ev->rpeer, (ev->fields & VT_F_RTAG) ? ev->rtag : -1))
            return -1;
        break;
    case K_IRECV:
        if (ev->request) {
            if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(s, pos, ev->index))
                return R->failed ? -1 : sm_nomem(R, s, ev);
            if (sm_active(R, s, ev, ev->request, pos, A_RECV, comm_id))
                return -1;
        }
        break;
    case K_RECV_INIT:
    case K_SEND_INIT:
        if (ev->request) {
            if (m->ntmpls == m->captmpls) {
                size_t nc = m->captmpls ? 2 * m->captmpls : 16;
                stmpl *t = realloc(m->tmpls, nc * sizeof *t);
                if (!t)
                    return sm_nomem(R, s, ev);
                m->tmpls = t;
                m->captmpls = nc;
            }
            m->tmpls[m->ntmpls++] = (stmpl){k == K_RECV_INIT, ev->fn, comm_id, ev->peer, tag, ev->bytes};
            if (map_put(&m->templates, ev->request, m->ntmpls - 1))
                return sm_nomem(R, s, ev);
        }
        break;
    case K_START: {
        uint32_t nsend = 0;
        for (size_t i = 0; i < ev->nstarted; i++) {
            uint64_t req = ev->started[i], ti;
            if (!map_get(&m->templates, req, &ti))
                continue; /* persistent collective, or a request we know nothing of */
            const stmpl *tp = &m->tmpls[ti];
            if (tp->recv) {
                if (sm_add_recv(R, s, ev, ev->index, &pos) || rq_push(s, pos, ev->index))
                    return R->failed ? -1 : sm_nomem(R, s, ev);
                if (sm_active(R, s, ev, req, pos, A_RECV, tp->comm_id))
                    return -1;
            } else if (tp->peer >= 0) {
                if (sm_add_send(R, s, ev, tp->comm_id, tp->peer, tp->tag, tp->bytes, nsend++, tp->fn, 0) ||
                    sm_active(R, s, ev, req, m->shi - 1, A_SEND, 0))
                    return -1;
            }
        }
        break;
    }
    case K_MPROBE:
        if (ev->msg) {
            uint32_t pi;
            if (m->nprfree) {
                pi = m->prfree[--m->nprfree];
            } else {
                if (m->npr == m->cappr) {
                    size_t nc = m->cappr ? 2 * m->cappr : 8;
                    sprobe *p = realloc(m->pr, nc * sizeof *p);
                    uint32_t *f = p ? realloc(m->prfree, nc * sizeof *f) : NULL;
                    if (p)
                        m->pr = p;
                    if (!f)
                        return sm_nomem(R, s, ev);
                    m->prfree = f;
                    m->cappr = nc;
                }
                pi = (uint32_t)m->npr++;
            }
            m->pr[pi] = (sprobe){ev->index, comm_id, ev->rbytes, m->qhi,
                                 (ev->fields & VT_F_RPEER) ? ev->rpeer : VT_PEER_UNKNOWN,
                                 (ev->fields & VT_F_RTAG) ? ev->rtag : -1};
            /* its receive is posted here (the MPI_Mrecv fills the place) */
            if (rq_push(s, RQ_PH | pi, ev->index))
                return sm_nomem(R, s, ev);
            uint64_t was;
            if (map_get(&m->probes, ev->msg, &was)) { /* the id again: the earlier one is not received */
                m->rq[m->pr[was].rq & (m->qcap - 1)] = RQ_DROP;
                m->prfree[m->nprfree++] = (uint32_t)was;
            }
            if (map_put(&m->probes, ev->msg, pi))
                return sm_nomem(R, s, ev);
        }
        break;
    case K_MRECV:
    case K_IMRECV: {
        if (!ev->msg)
            break; /* MPI_MESSAGE_NO_PROC */
        uint64_t pi;
        if (!map_get(&m->probes, ev->msg, &pi))
            return sm_err(R, rk->path, ev->block_offset,
                          "expected an MPI_Mprobe or MPI_Improbe of message id %" PRIu64
                          " before record %" PRIu64 " (rank %u), found none",
                          ev->msg, ev->index, s->rank);
        const sprobe p = m->pr[pi];
        map_del(&m->probes, ev->msg);
        m->prfree[m->nprfree++] = (uint32_t)pi;
        int64_t src = p.peer, rtag = p.tag;
        if (src == VT_PEER_UNKNOWN && (ev->fields & VT_F_RPEER)) {
            src = ev->rpeer;
            rtag = (ev->fields & VT_F_RTAG) ? ev->rtag : rtag;
        }
        uint64_t comm = p.comm_id ? p.comm_id : comm_id;
        if (sm_add_recv(R, s, ev, p.index, &pos))
            return -1;
        m->rq[p.rq & (m->qcap - 1)] = pos;
        if (sm_resolve(R, s, ev, pos, comm, src, rtag))
            return -1;
        if (k == K_IMRECV && RV(s, pos)->key != KEY_SKIP && ev->request) {
            if (sm_active(R, s, ev, ev->request, pos, A_IMRECV, 0))
                return -1;
        } else {
            RX(s, pos)->flags |= XF_DONE;
        }
        break;
    }
    case K_FREE: {
        uint64_t v;
        if (ev->request && map_get(&m->active, ev->request, &v) && (v & 3) == A_SEND) {
            SX(s, v >> 2)->flags |= XF_RES; /* freed: it is never cancelled */
            map_del(&m->active, ev->request);
        }
        break;
    }
    default:
        break;
    }

    for (size_t i = 0; i < ev->ndone; i++) {
        const vt_completion *d = &ev->done[i];
        uint64_t v;
        if (!map_get(&m->active, d->request, &v))
            continue;
        map_del(&m->active, d->request);
        uint64_t p = v >> 2;
        unsigned kind = (unsigned)(v & 3);
        if (kind == A_SEND) {
            if (d->flags & VT_COMPL_CANCELLED)
                SE(s, p)->key = KEY_SKIP;
            SX(s, p)->flags |= XF_RES;
        } else {
            vt_match_crecv *e = RV(s, p);
            e->done_index = ev->index;
            e->done_exit = ev->exit;
            RX(s, p)->flags |= XF_DONE;
            if (d->flags & VT_COMPL_CANCELLED)
                e->key = KEY_SKIP;
            else if (kind == A_RECV && sm_resolve(R, s, ev, p, RX(s, p)->comm, d->peer, d->tag))
                return -1;
        }
    }
    sm_release(R, s);
    return 0;
}

/* The end of a rank's records: receives never resolved are an error; the rest is final. */
static int sm_finish(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->eof)
        return 0;
    m->eof = 1;
    for (uint64_t i = m->rlo; i < m->rhi; i++) {
        if (RV(s, i)->key != KEY_PENDING) {
            RX(s, i)->flags |= XF_DONE;
            continue;
        }
        uint64_t req = 0, comm = RX(s, i)->comm;
        for (size_t j = 0; j < m->active.cap; j++)
            if (m->active.keys[j] && m->active.vals[j] == (i << 2 | A_RECV))
                req = m->active.keys[j] - 1;
        for (size_t j = 0; j < m->norph; j++)
            if (m->orph[j].pos == i) {
                req = m->orph[j].req;
                comm = m->orph[j].comm;
            }
        const vt_rank *rk = vt_trace_rank(R->t, s->rank);
        return sm_err(R, rk->path, block_of(R->t, s->rank, RV(s, i)->index),
                      "expected a completion of request %" PRIu64 " of receive record %" PRIu64
                      " (rank %u, communicator 0x%" PRIx64 "), found none in the rank's records",
                      req, RV(s, i)->index, s->rank, comm);
    }
    for (uint64_t q = m->qrel; q < m->qhi; q++)
        if (m->rq[q & (m->qcap - 1)] & RQ_PH)
            m->rq[q & (m->qcap - 1)] = RQ_DROP; /* an MPI_Mprobe's message nobody received */
    for (uint64_t i = m->srel; i < m->shi; i++)
        SX(s, i)->flags |= XF_RES;
    sm_release(R, s);
    return 0;
}

/* Keeps the current record's lists when the cursor is about to move on. */
static int own_current(rstate *s)
{
    smatch *m = s->sm;
    if (m->cur_owned)
        return 0;
    if (s->ev.nstarted > m->capcst) {
        uint64_t *p = realloc(m->cst, s->ev.nstarted * sizeof *p);
        if (!p)
            return -1;
        m->cst = p;
        m->capcst = s->ev.nstarted;
    }
    if (s->ev.ndone > m->capcdn) {
        vt_completion *p = realloc(m->cdn, s->ev.ndone * sizeof *p);
        if (!p)
            return -1;
        m->cdn = p;
        m->capcdn = s->ev.ndone;
    }
    if (s->ev.nstarted)
        memcpy(m->cst, s->ev.started, s->ev.nstarted * sizeof *m->cst);
    if (s->ev.ndone)
        memcpy(m->cdn, s->ev.done, s->ev.ndone * sizeof *m->cdn);
    s->ev.started = m->cst;
    s->ev.done = m->cdn;
    m->cur_owned = 1;
    return 0;
}

/* Reads one record ahead on rank s (matching it, keeping it for the replay): 1, 0 at
 * the end of the rank's records, -1 on error (R->failed). */
static int more(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->eof)
        return 0;
    if (own_current(s))
        return sm_nomem(R, s, &s->ev);
    vt_event ev;
    int rc = vt_cursor_next(s->cur, &ev, R->err);
    if (rc < 0) {
        R->failed = 1;
        return -1;
    }
    if (rc == 0)
        return sm_finish(R, s) ? -1 : 0;
    if (match(R, s, &ev))
        return -1;
    if (ev.fn < 0)
        return 1; /* special records are no model events: the replay skips them */
    if (m->bhi - m->blo == m->bcap) {
        size_t nc = m->bcap ? 2 * m->bcap : 16;
        brec *n = calloc(nc, sizeof *n);
        if (!n)
            return sm_nomem(R, s, &ev);
        for (uint64_t i = m->blo; i < m->bhi; i++)
            n[i & (nc - 1)] = m->buf[i & (m->bcap - 1)];
        for (uint64_t i = m->bhi; i < m->blo + m->bcap; i++) /* unused entries keep their lists */
            n[i & (nc - 1)] = m->buf[i & (m->bcap - 1)];
        free(m->buf);
        m->buf = n;
        m->bcap = nc;
    }
    brec *b = &m->buf[m->bhi & (m->bcap - 1)];
    if (ev.nstarted > b->capst) {
        uint64_t *p = realloc(b->st, ev.nstarted * sizeof *p);
        if (!p)
            return sm_nomem(R, s, &ev);
        b->st = p;
        b->capst = ev.nstarted;
    }
    if (ev.ndone > b->capdn) {
        vt_completion *p = realloc(b->dn, ev.ndone * sizeof *p);
        if (!p)
            return sm_nomem(R, s, &ev);
        b->dn = p;
        b->capdn = ev.ndone;
    }
    if (ev.nstarted)
        memcpy(b->st, ev.started, ev.nstarted * sizeof *b->st);
    if (ev.ndone)
        memcpy(b->dn, ev.done, ev.ndone * sizeof *b->dn);
    b->ev = ev;
    b->ev.started = b->st;
    b->ev.done = b->dn;
    m->bhi++;
    return 1;
}

/* The replay's next record of rank s: the records read ahead first. */
static int next_record(replay *R, rstate *s)
{
    smatch *m = s->sm;
    if (m->blo < m->bhi) {
        brec *b = &m->buf[m->blo & (m->bcap - 1)];
        s->ev = b->ev;
        /* the lists become the current record's; the entry gets the previous ones */
        uint64_t *st = m->cst;
        size_t capst = m->capcst;
        vt_completion *dn = m->cdn;
        size_t capdn = m->capcdn;
        m->cst = b->st;
        m->capcst = b->capst;
        m->cdn = b->dn;
        m->capcdn = b->capdn;
        b->st = st;
        b->capst = capst;
        b->dn = dn;
        b->capdn = capdn;
        m->blo++;
        m->cur_owned = 1;
        return 1;
    }
    if (m->eof)
        return 0;
    int rc = vt_cursor_next(s->cur, &s->ev, R->err);
    if (rc < 0) {
        R->failed = 1;
        return -1;
    }
    if (rc == 0)
        return sm_finish(R, s) ? -1 : 0;
    m->cur_owned = 0;
    return match(R, s, &s->ev) ? -1 : 1;
}

static int ensure_recv(replay *R, rstate *s, size_t i)
{
    while (RV(s, i)->key == KEY_PENDING || !(RX(s, i)->flags & XF_DONE)) {
        int rc = more(R, s);
        if (rc < 0)
            return -1;
        if (rc == 0 && (RV(s, i)->key == KEY_PENDING || !(RX(s, i)->flags & XF_DONE)))
            return sm_err(R, vt_trace_rank(R->t, s->rank)->path, 0, "expected the completion of receive record %" PRIu64
                          ", found none", RV(s, i)->index);
    }
    return 0;
}

static int ensure_send(replay *R, rstate *s, size_t i)
{
    while (!(SX(s, i)->flags & XF_RES)) {
        int rc = more(R, s);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
    }
    return 0;
}

/* Reads ahead on rank s while the first receive it has not released is unresolved. */
static int settle(replay *R, rstate *s)
{
    smatch *m = s->sm;
    while (!m->eof && m->qrel < m->qhi) {
        uint64_t e = m->rq[m->qrel & (m->qcap - 1)];
        if (e != RQ_DROP && !(e & RQ_PH) && RV(s, e)->key != KEY_PENDING)
            break;
        if (more(R, s) < 0)
            return -1;
    }
    return 0;
}

/* probe_target() on the windows: the receives posted from the probe on, in posting
 * order (the posting queue), reading ahead until one fits. SIZE_MAX: none (or an error,
 * R->failed). */
static size_t probe_target_stream(replay *R, rstate *s)
{
    smatch *m = s->sm;
    const vt_event *ev = &s->ev;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    int can_match = c && ev->rpeer >= 0;
    uint64_t x = ev->index;
    uint64_t lo = m->qlo, hi = m->qhi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->rqpost[mid & (m->qcap - 1)] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t q = lo;; q++) {
        while (q >= m->qhi) {
            /* later records post later: only a matched probe looks further */
            if (!can_match)
                return SIZE_MAX;
            int rc = more(R, s);
            if (rc <= 0)
                return SIZE_MAX;
        }
        uint64_t post = m->rqpost[q & (m->qcap - 1)];
        if (!can_match && post > x)
            return SIZE_MAX;
        uint64_t e;
        while ((e = m->rq[q & (m->qcap - 1)]) != RQ_DROP && ((e & RQ_PH) || (e >= m->rlo && RV(s, e)->key == KEY_PENDING))) {
            int rc = more(R, s);
            if (rc < 0)
                return SIZE_MAX;
            if (rc == 0 && (e & RQ_PH))
                break;
        }
        if (e == RQ_DROP || (e & RQ_PH) || e < m->rlo)
            continue;
        const vt_match_crecv *rv = RV(s, e);
        if (rv->key >= KEY_SKIP || pm_get(&s->probed, (uint32_t)e) != SLOT_NONE)
            continue;
        if (post == x)
            return (size_t)e;
        if (can_match && R->kt[rv->key].comm_id == c->id && R->kt[rv->key].src == (uint32_t)ev->rpeer &&
            R->kt[rv->key].tag == ev->rtag)
            return (size_t)e;
    }
}

/* A posting slot made for a message that turns out not synchronous. */
static int drop_post(replay *R, rstate *s, size_t i)
{
    uint32_t pl = pm_get(&s->ps, (uint32_t)i);
    if (pl != SLOT_NONE) {
        pm_del(&s->ps, (uint32_t)i);
        R->freeslots[R->nfree++] = pl;
    }
    return 0;
}

static int note_send(replay *R, uint32_t rank, uint32_t pos)
{
    return push_u64(&R->used_sends, &R->nused_sends, &R->capused_sends, (uint64_t)rank << 32 | pos);
}

/* Drops the entries the replay is done with from the front of the windows. */
static void sm_trim(rstate *s)
{
    smatch *m = s->sm;
    while (m->rlo < m->rhi && (RX(s, m->rlo)->flags & XF_RET))
        m->rlo++;
    while (m->qlo < m->qrel) {
        uint64_t e = m->rq[m->qlo & (m->qcap - 1)];
        if (e != RQ_DROP && e >= m->rlo && !(RX(s, e)->flags & XF_RET))
            break;
        m->qlo++;
    }
    while (m->slo < m->srel && (SX(s, m->slo)->flags & XF_RET))
        m->slo++;
}

static void sm_free(rstate *s)
{
    smatch *m = s->sm;
    if (!m)
        return;
    free(m->kinds);
    free(m->inits);
    map_free(&m->active);
    map_free(&m->templates);
    map_free(&m->probes);
    free(m->tmpls);
    free(m->pr);
    free(m->prfree);
    free(m->rxw);
    free(m->sxw);
    free(m->rq);
    free(m->rqpost);
    for (size_t i = 0; i < m->bcap; i++) {
        free(m->buf[i].st);
        free(m->buf[i].dn);
    }
    free(m->buf);
    free(m->cst);
    free(m->cdn);
    free(m->orph);
    free(m);
    free(s->rw);
    free(s->sw);
    s->sm = NULL;
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

enum { STEP_DONE, STEP_MOVED, STEP_BLOCKED, STEP_ERROR };

static int note_used(replay *R, uint32_t sl) { return push_u32(&R->used, &R->nused, &R->capused, sl); }

static int note_gate(replay *R, uint64_t id) { return push_u64(&R->used_gates, &R->nused_gates, &R->capused_gates, id); }

static int note_req(replay *R, uint64_t req) { return push_u64(&R->used_reqs, &R->nused_reqs, &R->capused_reqs, req); }

static void release_used(replay *R, rstate *s)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = &R->slots[R->used[i]];
        if (sl->uses && --sl->uses == 0) {
            rstate *o = &R->rs[sl->rank];
            pm_del(sl->post ? &o->ps : &o->ss, sl->pos);
            R->freeslots[R->nfree++] = R->used[i];
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        gate_leave(R, R->used_gates[i]);
    /* A completed request is not completed again (a persistent one is started again
     * first, which enters it anew). */
    for (size_t i = 0; i < R->nused_reqs; i++)
        map_del(&s->reqs, R->used_reqs[i]);
    /* streaming: sends read by this record (by the receiver, by a synchronous sender) */
    for (size_t i = 0; i < R->nused_sends; i++) {
        rstate *o = &R->rs[R->used_sends[i] >> 32];
        uint32_t pos = (uint32_t)R->used_sends[i];
        if (pos >= o->sm->slo && SX(o, pos)->refs && --SX(o, pos)->refs == 0) {
            SX(o, pos)->flags |= XF_RET;
            if (pos == o->sm->slo)
                sm_trim(o);
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
static size_t probe_target(replay *R, rstate *s)
{
    const vt_event *ev = &s->ev;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    int can_match = c && ev->rpeer >= 0;
    uint64_t x = ev->index;
#define PT_SKIP(i) (s->recvs[i].send_pos == VT_MPOS_NONE || pm_get(&s->probed, (uint32_t)(i)) != SLOT_NONE)
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
        return map_put(&s->reqs, req, ((uint64_t)REQ_SEND << 56) | i);
    map_del(&s->reqs, req);
    return 0;
}

/* Phase A, once per record: what this record makes available to other ranks. */
static int publish(replay *R, rstate *s, int64_t enter, int64_t exit, enum vt_model_kind k)
{
    const vt_event *ev = &s->ev;
    /* Persistent send templates: their starts are the sends. */
    if (ev->request && ev->fn >= 0 && (size_t)ev->fn < s->nfuncs && s->sinit[ev->fn] && ev->peer >= 0)
        if (map_put(&s->tmpl, ev->request, 1))
            return -1;
    /* Sends made by this record: S = its enter, D = d before it. */
    if (R->stream && s->send_ptr < s->sm->slo)
        s->send_ptr = s->sm->slo;
    while (s->send_ptr < s->nsends && SE(s, s->send_ptr)->index < ev->index)
        s->send_ptr++;
    for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++) {
        if (R->stream) {
            if (ensure_send(R, s, i))
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
            if (!map_get(&s->tmpl, ev->started[q], &v))
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
        s->probe_msg = R->stream ? probe_target_stream(R, s) : probe_target(R, s);
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
            if (ensure_recv(R, s, i))
                return -1;
            if (RV(s, i)->key == KEY_SKIP)
                continue;   /* cancelled, MPI_PROC_NULL: no message */
        }
        const vt_match_crecv *rv = RV(s, i);
        if (heap_push(&s->pending, rv->done_index, (uint32_t)i))
            return -1;
        if ((!R->stream && rv->send_pos == VT_MPOS_NONE) || rv->post_index != rv->index ||
            pm_get(&s->probed, (uint32_t)i) != SLOT_NONE)
            continue;
        if (rv->send_pos != VT_MPOS_NONE && !send_is_sync_at(R, R->keys[rv->key].src, rv->send_pos))
            continue;
        /* read by the sender and by the completing call (streaming, not paired yet: made
         * in case, dropped by the completing call when the message is not synchronous) */
        if (slot_fill(R, s, 1, i, enter, gtime(R, s->rank, rv->done_exit), 2))
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
            gate *g = gate_get(R, id, ev->collseq, need, &gi);
            if (!g)
                return -1;
            gate_join(R, g, enter, s->d, s->rank, 2 * ev->callno + 1);
            uint64_t gid = gate_id(R, gi);
            if (k == VT_MK_ICOLL) {
                s->nbc_joined = 1;
                s->nbc_comm = id;
            }
            if (k == VT_MK_COLL)
                s->coll_gate = gid + 1;
            else if (ev->request && map_put(&s->reqs, ev->request, ((uint64_t)REQ_ICOLL << 56) | gid))
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
            int rc = more(R, s);
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
    uint32_t sl = pm_get(&snd->ss, rv->send_pos);
    if (sl == SLOT_NONE)
        return 1;
    const vt_match_csend *se = SE(snd, rv->send_pos);
    const slot *sd = &R->slots[sl];
    int sync = send_is_sync(R, key->src, se);
    R->step_msgs++;
    R->step_viol += E < sd->T;
    vt_obs_con *oc;
    if (add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, E), slot_d(R, sl), VT_CON_MSG, key->src,
                    sd->seq, &oc) ||
        note_used(R, sl))
        return -1;
    /* a synchronous message's posting (its slot is read here and by the sender) */
    uint32_t pl = sync ? pm_get(&s->ps, (uint32_t)i) : SLOT_NONE;
    if (pl != SLOT_NONE && note_used(R, pl))
        return -1;
    if (R->stream && (!sync && drop_post(R, s, i)))
        return -1;
    if (R->stream && note_send(R, key->src, rv->send_pos))
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
        if (settle(R, &R->rs[R->keys[se->key].dst]))
            return -1;
        se = SE(s, i);
        if (se->recv_pos == VT_MPOS_NONE)
            return 1;
    }
    uint32_t pl = pm_get(&R->rs[R->keys[se->key].dst].ps, se->recv_pos);
    if (pl == SLOT_NONE)
        return 1;
    uint32_t sl = pm_get(&s->ss, (uint32_t)i);
    if (sl == SLOT_NONE)
        return 1; /* read already by both readers: not a trace this replay can order */
    const slot *sd = &R->slots[sl], *po = &R->slots[pl];
    const vt_match_key *key = &R->keys[se->key];
    vt_obs_con *om, *op;
    if (add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, po->E), slot_d(R, sl), VT_CON_SYNC_MSG, s->rank,
                    sd->seq, &om) ||
        add_con_obs(R, po->T, slot_d(R, pl), VT_CON_SYNC_POST, key->dst, po->seq, &op) || note_used(R, sl) ||
        note_used(R, pl) || (R->stream && note_send(R, s->rank, (uint32_t)i)))
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
static int add_gate_con(replay *R, const gate *g, int nonblocking)
{
    vt_obs_con *oc;
    if (add_con_obs(R, g->M, g->base, VT_CON_GATE, 0, 0, &oc))
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

static void fix_members(replay *R)
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
        int rc = R->stream ? next_record(R, s) : vt_cursor_next(s->cur, &s->ev, R->err);
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
        s->genter = gtime(R, s->rank, s->ev.enter);
        s->gexit = gtime(R, s->rank, s->ev.exit);
        if (!s->started) {
            s->prev_exit = s->first_enter = s->genter;
            s->started = 1;
        }
        /* The computation burst before this record: a local event. */
        R->nprobed_by = 0;
        if (apply_event(R, s, 2 * s->ev.callno, s->prev_exit, s->genter, NULL, 0, NULL, s->ev.callsite, VT_MK_LOCAL))
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
    if (k != VT_MK_PROBE) {
        for (size_t j = 0; j < s->ndone; j++) {
            size_t i = s->done[j];
            if (!R->stream && RV(s, i)->send_pos == VT_MPOS_NONE)
                continue;
            completion = 1;   /* a receive completion, even of a probed (local) message */
            uint32_t pr = pm_get(&s->probed, (uint32_t)i);
            if (pr == SLOT_NONE)
                TRY(message_in(R, s, i, exit, 0));
            else if (R->obs && push_u64(&R->probed_by, &R->nprobed_by, &R->capprobed_by, 2 * (uint64_t)pr + 1))
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
            if ((d->flags & (VT_COMPL_RECV | VT_COMPL_CANCELLED)) || !map_get(&s->reqs, d->request, &v))
                continue;
            uint64_t pos = v & ((1ull << 56) - 1);
            if ((v >> 56) == REQ_ICOLL) {
                gate *g = gate_by_id(R, pos);
                if (!g || !g->complete)
                    return STEP_BLOCKED;
                completion = 1;
                if (add_gate_con(R, g, 1) || note_gate(R, pos) || note_req(R, d->request))
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
        if (add_gate_con(R, g, 0) || note_gate(R, s->coll_gate - 1))
            goto nomem;
    }
    if (completion && local && add_con_obs(R, enter, s->d, VT_CON_LOCAL, s->rank, 2 * ev->callno + 1, NULL))
        goto nomem;
    /* Phase C: the completion rule, then the candidate rule (apply_event). */
    const int64_t *base = NULL;
    int64_t M = 0;
    if (completion && R->ncons) {
        M = vt_model_complete(R->cons, R->ncons, R->nsc, R->tmp);
        base = R->tmp;
        if (R->obs)
            fix_members(R);
    }
    if (apply_event(R, s, 2 * ev->callno + 1, enter, exit, base, M, fname(R, s->rank, ev->fn), ev->callsite, k))
        return STEP_ERROR;
    R->res->messages += R->step_msgs;
    R->res->clock_violations += R->step_viol;
    release_used(R, s);
    if (s->probed.n)
        for (size_t j = 0; j < s->ndone; j++)
            pm_del(&s->probed, s->done[j]);
    if (R->stream && s->ndone) {
        int front = 0;
        for (size_t j = 0; j < s->ndone; j++) {
            RX(s, s->done[j])->flags |= XF_RET;
            front |= s->done[j] == s->sm->rlo;
        }
        if (front)
            sm_trim(s);
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
        set_err(R->err, "out of memory replaying rank %u", s->rank);
    return STEP_ERROR;
}


/* ------------------------------------------------------------------ reduced traces
 *
 * The records say which contributors each completion has (model.md §5-6); a sender's
 * difference at a send is its difference after its records before the send's
 * sequence number, published when the sender passes it. A first pass over the records
 * collects which (rank, seq) someone reads and the receiving side of every synchronous
 * message, so memory stays proportional to what the reduced trace records. */

#define PUB_KEY(rank, seq) ((uint64_t)(rank) << 40 | (seq))

static int need_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Adds one reader of (rank, seq) to the per-rank lists (deduplicated later). */
static int need_add(replay *R, uint32_t rank, uint64_t seq, uint64_t **lists, size_t *n, size_t *cap)
{
    if (rank >= R->nranks || seq >= (UINT64_C(1) << 40))
        return -2;
    return push_u64(&lists[rank], &n[rank], &cap[rank], seq);
}

static int reduced_prepass(replay *R)
{
    uint64_t **lists = calloc(R->nranks, sizeof *lists);
    size_t *n = calloc(R->nranks, sizeof *n), *cap = calloc(R->nranks, sizeof *cap);
    int rc = -1;
    if (!lists || !n || !cap)
        goto nomem;
    for (uint32_t r = 0; r < R->nranks; r++) {
        vt_cursor *c;
        if (vt_cursor_open(R->t, r, &c, R->err))
            goto out;
        vt_rrec rec;
        int got;
        while ((got = vt_cursor_next_reduced(c, &rec, R->err)) == 1) {
            if (rec.kind != VT_RREC_COMP)
                continue;
            for (size_t i = 0; i < rec.nmsgs; i++) {
                const vt_rmsg *mg = &rec.msgs[i];
                int e = need_add(R, mg->src, mg->send_seq, lists, n, cap);
                if (!e && mg->sync) {
                    e = need_add(R, r, mg->post_seq, lists, n, cap);
                    if (!e) {
                        if (R->nsinfo == R->capsinfo) {
                            size_t nc = R->capsinfo ? 2 * R->capsinfo : 64;
                            struct sinfo *ns = realloc(R->sinfo, nc * sizeof *ns);
                            if (!ns) {
                                vt_cursor_close(c);
                                goto nomem;
                            }
                            R->sinfo = ns;
                            R->capsinfo = nc;
                        }
                        R->sinfo[R->nsinfo] = (struct sinfo){r, mg->post_seq, gtime(R, r, mg->P), gtime(R, r, rec.exit)};
                        e = map_put(&R->syncinfo, PUB_KEY(mg->src, mg->send_seq), R->nsinfo++) ? -1 : 0;
                    }
                }
                if (e) {
                    vt_cursor_close(c);
                    if (e == -2) {
                        set_err(R->err, "%s: record %" PRIu64 " (event %u:%" PRIu64 ") names a message from rank %u, "
                                "event %" PRIu64 ", which is not in the trace", vt_trace_rank(R->t, r)->path, rec.index,
                                r, rec.seq, mg->src, mg->send_seq);
                        goto out;
                    }
                    goto nomem;
                }
            }
            for (size_t i = 0; i < rec.nssends; i++)
                if (need_add(R, r, rec.ssends[i].send_seq, lists, n, cap)) {
                    vt_cursor_close(c);
                    goto nomem;
                }
        }
        vt_cursor_close(c);
        if (got < 0)
            goto out;
    }
    for (uint32_t r = 0; r < R->nranks; r++) {
        rstate *s = &R->rs[r];
        if (!n[r])
            continue;
        qsort(lists[r], n[r], sizeof *lists[r], need_cmp);
        s->needs = lists[r];
        lists[r] = NULL;
        s->needcnt = malloc(n[r] * sizeof *s->needcnt);
        if (!s->needcnt)
            goto nomem;
        size_t k = 0;
        for (size_t i = 0; i < n[r]; i++) {
            if (k && s->needs[k - 1] == s->needs[i]) {
                s->needcnt[k - 1]++;
                continue;
            }
            s->needs[k] = s->needs[i];
            s->needcnt[k++] = 1;
        }
        s->nneeds = k;
    }
    rc = 0;
    goto out;
nomem:
    set_err(R->err, "out of memory reading the reduced trace");
out:
    for (uint32_t r = 0; lists && r < R->nranks; r++)
        free(lists[r]);
    free(lists);
    free(n);
    free(cap);
    return rc;
}

/* Publishes this rank's current difference for every read sequence number up to seq. */
static int reduced_publish(replay *R, rstate *s, uint64_t upto)
{
    while (s->needptr < s->nneeds && s->needs[s->needptr] <= upto) {
        uint32_t i;
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
                R->capslots = nc;
            }
            i = (uint32_t)R->nslots++;
        }
        slot *sl = &R->slots[i];
        memset(sl, 0, sizeof *sl);
        sl->uses = s->needcnt[s->needptr];
        sl->rank = s->rank;
        sl->seq = s->needs[s->needptr];
        memcpy(slot_d(R, i), s->d, sizeof(int64_t) * R->nsc);
        if (map_put(&R->pub, PUB_KEY(s->rank, sl->seq), i))
            return -1;
        s->needptr++;
    }
    return 0;
}

static uint32_t pub_get(const replay *R, uint32_t rank, uint64_t seq)
{
    uint64_t v;
    return map_get(&R->pub, PUB_KEY(rank, seq), &v) ? (uint32_t)v : SLOT_NONE;
}

static void reduced_release(replay *R)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = &R->slots[R->used[i]];
        if (sl->uses && --sl->uses == 0) {
            map_del(&R->pub, PUB_KEY(sl->rank, sl->seq));
            R->freeslots[R->nfree++] = R->used[i];
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        gate_leave(R, R->used_gates[i]);
    R->nused = R->nused_gates = 0;
}

/* With an observer: the implicit stretch of a reduced trace from the last record's end
 * to `upto` (merged events: d does not change), so that observers see the rank's whole
 * timeline. */
static int report_gap(replay *R, rstate *s, int64_t upto, uint64_t seq)
{
    if (!R->obs || !R->obs->event || upto <= s->prev_exit)
        return 0;
    memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    vt_obs_event e = {.rank = s->rank, .seq = seq, .func = "(merged)", .fn = -1, .callsite = -1,
                      .kind = VT_MK_LOCAL, .start = s->prev_exit, .end = upto, .delta = R->delta,
                      .d_before = s->d, .d_after = s->d, .gap = 1};
    s->prev_exit = upto;
    return R->obs->event(R->obs->arg, &e, R->err) ? -1 : 0;
}

static int rstep(replay *R, rstate *s)
{
    if (s->finished)
        return STEP_DONE;
    vt_rrec *rr = &s->rr;
    if (!s->have) {
        int rc = vt_cursor_next_reduced(s->cur, rr, R->err);
        if (rc < 0)
            return STEP_ERROR;
        if (rc == 0) {
            if (reduced_publish(R, s, UINT64_MAX))
                goto nomem;
            s->finished = 1;
            return STEP_DONE;
        }
        s->have = 1;
        s->published = 0;
        s->genter = gtime(R, s->rank, rr->enter);
        s->gexit = gtime(R, s->rank, rr->exit);
        /* what apply_event and the scenario selectors read */
        s->ev.fn = rr->fn;
        s->ev.callsite = rr->callsite;
        s->ev.enter = rr->enter;
        s->ev.exit = rr->exit;
        s->ev.index = rr->index;
        s->ev.callno = rr->seq / 2;
        if (reduced_publish(R, s, rr->seq))
            goto nomem;
    }
    int64_t enter = s->genter, exit = s->gexit;
    const char *func = rr->fn >= 0 ? fname(R, s->rank, rr->fn) : NULL;
    enum vt_model_kind k = rr->fn >= 0 && (size_t)rr->fn < s->nfuncs ? s->fkind[rr->fn] : VT_MK_LOCAL;
    R->ncons = R->nused = R->nused_gates = R->nprobed_by = R->nmembers = 0;
    switch (rr->kind) {
    case VT_RREC_START:
        if (!s->started) {
            s->first_enter = s->prev_exit = enter;
            s->started = 1;
        }
        s->have = 0;
        return STEP_MOVED;
    case VT_RREC_END:
        if (report_gap(R, s, exit, s->gap_seq))
            return STEP_ERROR;
        s->last_exit = exit;
        s->ncalls = rr->seq / 2 + 1;
        s->have = 0;
        if (reduced_publish(R, s, UINT64_MAX))
            goto nomem;
        s->finished = 1;
        return STEP_DONE;
    case VT_RREC_CAND:
        if (report_gap(R, s, enter, s->gap_seq) || apply_event(R, s, rr->seq, enter, exit, NULL, 0, func, rr->callsite, k))
            return STEP_ERROR;
        s->prev_exit = exit;
        s->gap_seq = rr->seq + 1;
        s->have = 0;
        return STEP_MOVED;
    case VT_RREC_NBCINIT: {
        size_t gi;
        gate *g = gate_get(R, rr->gates[0].comm, rr->gates[0].collseq, rr->gates[0].nmembers, &gi);
        if (!g)
            goto nomem;
        gate_join(R, g, enter, s->d, s->rank, rr->seq);
        s->nbc_joined = 1;
        s->nbc_comm = rr->gates[0].comm;
        s->ev.collseq = rr->gates[0].collseq;
        int bad = report_gap(R, s, enter, s->gap_seq) ||
                  apply_event(R, s, rr->seq, enter, exit, NULL, 0, func ? func : "?", rr->callsite, VT_MK_ICOLL);
        s->nbc_joined = 0;
        if (bad)
            return STEP_ERROR;
        s->prev_exit = exit;
        s->gap_seq = rr->seq + 1;
        s->have = 0;
        return STEP_MOVED;
    }
    default:
        break;
    }
    /* COMP: blocking collectives join their gate once */
    if (!s->published) {
        for (size_t i = 0; i < rr->ngates; i++) {
            if (rr->gates[i].nonblocking)
                continue;
            size_t gi;
            gate *g = gate_get(R, rr->gates[i].comm, rr->gates[i].collseq, rr->gates[i].nmembers, &gi);
            if (!g)
                goto nomem;
            gate_join(R, g, enter, s->d, s->rank, rr->seq);
        }
        s->published = 1;
    }
    for (size_t i = 0; i < rr->nmsgs; i++) {
        const vt_rmsg *mg = &rr->msgs[i];
        uint32_t sl = pub_get(R, mg->src, mg->send_seq);
        if (sl == SLOT_NONE)
            return STEP_BLOCKED;
        int64_t S = gtime(R, mg->src, mg->S);
        vt_obs_con *oc;
        if (add_con_obs(R, S + vt_model_lambda(R->p, mg->bytes, S, exit), slot_d(R, sl), VT_CON_MSG, mg->src,
                        mg->send_seq, &oc) ||
            note_used(R, sl))
            goto nomem;
        if (oc) {
            oc->S = S;
            oc->S_local = mg->S;
            oc->bytes = mg->bytes;
            oc->sync = mg->sync;
            oc->peer = s->rank;
            oc->probed = (rr->flags & VT_RREC_F_PROBE) != 0;
            oc->post_seq = mg->sync ? mg->post_seq : rr->seq;
            oc->P = mg->sync ? gtime(R, s->rank, mg->P) : enter;
            oc->P_local = mg->sync ? mg->P : rr->enter;
        }
    }
    for (size_t i = 0; i < rr->nssends; i++) {
        const vt_rssend *x = &rr->ssends[i];
        uint64_t si;
        if (!map_get(&R->syncinfo, PUB_KEY(s->rank, x->send_seq), &si)) {
            set_err(R->err, "%s: record %" PRIu64 ": the synchronous send %u:%" PRIu64 " to rank %u has no receive "
                    "record (a reduced trace records both ends)", vt_trace_rank(R->t, s->rank)->path, rr->index,
                    s->rank, x->send_seq, x->dst);
            return STEP_ERROR;
        }
        const struct sinfo *inf = &R->sinfo[si];
        uint32_t sl = pub_get(R, s->rank, x->send_seq), pl = pub_get(R, inf->dst, inf->post_seq);
        if (sl == SLOT_NONE || pl == SLOT_NONE)
            return STEP_BLOCKED;
        int64_t S = gtime(R, s->rank, x->S);
        vt_obs_con *om, *op;
        if (add_con_obs(R, S + vt_model_lambda(R->p, x->bytes, S, inf->E), slot_d(R, sl), VT_CON_SYNC_MSG, s->rank,
                        x->send_seq, &om) ||
            add_con_obs(R, inf->P, slot_d(R, pl), VT_CON_SYNC_POST, inf->dst, inf->post_seq, &op) || note_used(R, sl) ||
            note_used(R, pl))
            goto nomem;
        if (om) {
            om->S = op->S = S;
            om->S_local = op->S_local = x->S;
            om->bytes = op->bytes = x->bytes;
            om->sync = op->sync = 1;
            om->peer = op->peer = x->dst;
            op->post_seq = inf->post_seq;
            op->P = inf->P;
        }
    }
    for (size_t i = 0; i < rr->ngates; i++) {
        size_t gi;
        gate *g = NULL;
        if (R->ngate_of) {
            for (size_t j = gate_home(rr->gates[i].comm, rr->gates[i].collseq, R->capgate_of);;
                 j = (j + 1) & (R->capgate_of - 1)) {
                if (!R->gate_of[j])
                    break;
                gate *h = R->gates[R->gate_of[j] - 1];
                if (h->comm == rr->gates[i].comm && h->seq == rr->gates[i].collseq) {
                    g = h;
                    gi = R->gate_of[j] - 1;
                    break;
                }
            }
        }
        if (!g || !g->complete)
            return STEP_BLOCKED;
        if (add_gate_con(R, g, rr->gates[i].nonblocking) || note_gate(R, gate_id(R, gi)))
            goto nomem;
    }
    if (!(rr->flags & VT_RREC_F_NOLOCAL) &&
        add_con_obs(R, gtime(R, s->rank, rr->rstar), s->d, VT_CON_LOCAL, s->rank, rr->seq, NULL))
        goto nomem;
    const int64_t *base = NULL;
    int64_t M = 0;
    if (R->ncons) {
        M = vt_model_complete(R->cons, R->ncons, R->nsc, R->tmp);
        base = R->tmp;
        if (R->obs)
            fix_members(R);
    }
    if (report_gap(R, s, enter, s->gap_seq) ||
        apply_event(R, s, rr->seq, enter, exit, base, M, func ? func : "?", rr->callsite, k))
        return STEP_ERROR;
    s->prev_exit = exit;
    s->gap_seq = rr->seq + 1;
    reduced_release(R);
    s->have = 0;
    return STEP_MOVED;
nomem:
    set_err(R->err, "out of memory replaying rank %u", s->rank);
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
            set_err(R->err, "out of memory preparing the replay of rank %u", r);
            return -1;
        }
        for (size_t i = 0; i < rk->nfuncs; i++)
            s->sm->kinds[i] = classify(&rk->funcs[i], &s->sm->inits[i]);
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
        set_err(R->err, "out of memory preparing the replay of rank %u", r);
        return -1;
    }
    for (size_t i = 0; i < rk->nfuncs; i++) {
        s->fkind[i] = vt_model_kind_of(rk->funcs[i].name);
        s->skind[i] = vt_model_send_kind(rk->funcs[i].name);
        s->sinit[i] = strstr(rk->funcs[i].name, "send_init") != NULL;
    }
    for (size_t i = 0; i < s->nrecvs; i++)
        s->nexc += s->recvs[i].post_index != s->recvs[i].index;
    if (s->nexc) {
        s->exc = malloc(s->nexc * sizeof *s->exc);
        if (!s->exc) {
            set_err(R->err, "out of memory preparing the replay of rank %u", r);
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
        set_err(R->err, "out of memory");
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
    sm_free(s);
    map_free(&s->reqs);
    map_free(&s->tmpl);
}

/* A scenario naming an event that is not there or not a candidate is an error. */
static int check_items(replay *R)
{
    for (size_t sc = 0; sc < R->nsc; sc++) {
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            const vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel == VT_SEL_EVENT && it->rank >= (int64_t)R->nranks) {
                set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (it has %u ranks)",
                        R->sc[sc].text, it->rank, it->seq, R->nranks);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen && R->reduced) {
                set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not a candidate of this reduced trace "
                        "(which holds every candidate; the event is shorter than θ = %" PRId64 " ns, or not in the trace)",
                        R->sc[sc].text, it->rank, it->seq, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen) {
                set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (rank %" PRId64
                        " has events 0 to %" PRIu64 ")",
                        R->sc[sc].text, it->rank, it->seq, it->rank,
                        2 * R->rs[it->rank].ncalls - 1);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->hits) {
                set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " lasts %" PRId64
                        " ns, under the threshold θ = %" PRId64 " ns: it is not a candidate",
                        R->sc[sc].text, it->rank, it->seq, it->seen_dur, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_RANK && it->rank >= (int64_t)R->nranks) {
                set_err(R->err, "scenario '%s': rank %" PRId64 " is not in the trace (it has %u ranks)",
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
        while ((rc = more(R, &R->rs[r])) > 0)
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
        return sm_err(R, vt_trace_rank(R->t, k->src)->path, block_of(R->t, k->src, index),
                      "expected a receive matching send record %" PRIu64 " of rank %u (to %u, tag %lld, communicator "
                      "0x%llx), found none",
                      index, k->src, k->dst, (long long)k->tag, (unsigned long long)k->comm_id);
    }
    uint64_t index = RV(&R->rs[k->dst], R->kq_head[best])->index;
    return sm_err(R, vt_trace_rank(R->t, k->dst)->path, block_of(R->t, k->dst, index),
                  "expected a send matching receive record %" PRIu64 " of rank %u (from %u, tag %lld, communicator "
                  "0x%llx), found none",
                  index, k->dst, k->src, (long long)k->tag, (unsigned long long)k->comm_id);
}

int vt_replay(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              vt_replay_result *res, vt_error *err)
{
    return vt_replay_observe(t, m, p, sc, nsc, NULL, res, err);
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
        set_err(err, "out of memory");
        goto out;
    }
    size_t ngen = 0;
    for (size_t s = 0; s < nsc; s++)
        for (size_t i = 0; i < sc[s].nitems; i++)
            ngen += sc[s].items[i].sel != VT_SEL_EVENT;
    if (ngen && !(R.generic = malloc(ngen * sizeof *R.generic))) {
        set_err(err, "out of memory");
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
    R.reduced = vt_trace_is_reduced(t);
    if (R.reduced && reduced_prepass(&R))
        goto out;
    uint32_t done = 0;
    while (done < R.nranks) {
        int progress = 0;
        for (uint32_t r = 0; r < R.nranks; r++) {
            rstate *s = &R.rs[r];
            if (s->finished)
                continue;
            for (;;) {
                int st = R.reduced ? rstep(&R, s) : step(&R, s);
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
                                            s->ev.fn >= 0 ? fname(&R, r, s->ev.fn) : "special");
            }
            set_err(err, "%s: the replay cannot order this trace: every unfinished rank waits for another:%s",
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
    map_free(&R.pub);
    map_free(&R.syncinfo);
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
static int reduced_candidates(const vt_trace *t, vt_candidate_fn fn, void *arg, vt_error *err)
{
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_rrec rec;
        int rc;
        while ((rc = vt_cursor_next_reduced(c, &rec, err)) == 1) {
            if (rec.kind != VT_RREC_CAND &&
                !((rec.kind == VT_RREC_COMP || rec.kind == VT_RREC_NBCINIT) && (rec.flags & VT_RREC_F_CAND)))
                continue;
            int64_t dur = vt_global_time(t, r, rec.exit) - vt_global_time(t, r, rec.enter);
            const vt_function *f = rec.fn >= 0 ? vt_trace_function(t, r, rec.fn) : NULL;
            fn(arg, r, rec.seq, dur, rec.fn >= 0 ? (f ? f->name : "?") : NULL);
        }
        vt_cursor_close(c);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int vt_replay_candidates(const vt_trace *t, const vt_model_params *p, vt_candidate_fn fn, void *arg, vt_error *err)
{
    if (vt_trace_is_reduced(t))
        return reduced_candidates(t, fn, arg, err);
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
