/* What-if replay of a full trace (model.md §2, §3, §6), numeric, several scenarios at
 * once. Each rank is streamed with its own cursor; a rank advances until it needs a
 * value another rank has not produced yet (a sender's difference at a send, a
 * receiver's difference where it posted a synchronous receive, the members of a
 * collective), then the next rank runs. Values travel through slots that are freed once
 * read. */
#include "vt_config.h"
#include "replay.h"
#include "codec.h"

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
        if (!*name || strlen(name) >= sizeof it->name)
            return -1;
        strcpy(it->name, name);
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
        vt_shorten *n = realloc(out->items, (out->nitems + 1) * sizeof *n);
        if (!n) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        out->items = n;
        out->items[out->nitems++] = it;
    }
    free(copy);
    return 0;
fail:
    free(copy);
    vt_scenario_free(out);
    return -1;
}

void vt_scenario_free(vt_scenario *s)
{
    free(s->text);
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
 * (E, synchronous posts) and one difference per scenario. */
typedef struct slot {
    int64_t T, E;
    int64_t *D;
    uint8_t filled;
    uint8_t uses;      /* readers left before it is freed */
} slot;

typedef struct gate {
    uint64_t comm, seq;
    uint32_t need, arrived, left;
    int64_t M;
    int64_t *T, *D;    /* need entries; need x nsc */
    int64_t *base;     /* nsc, when complete */
    int used;
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

static int map_get(const u64map *m, uint64_t k, uint64_t *v)
{
    if (!m->cap)
        return 0;
    k++;
    size_t j = mix(k) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] == k) {
            *v = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

static void map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ replay state */

enum { REQ_SEND = 1, REQ_ICOLL = 2 };

typedef struct rstate {
    uint32_t rank;
    vt_cursor *cur;
    vt_event ev;
    int have, published, finished;
    uint64_t idx;
    int64_t prev_exit, first_enter;
    int64_t *d;
    const vt_match_recv *recvs;
    const vt_match_send *sends;
    size_t nrecvs, nsends;
    size_t *by_done;          /* receive positions in (done_index, sub) order */
    size_t done_ptr, send_ptr, post_ptr, probe_ptr;
    slot *ss, *ps;            /* per send; per receive (synchronous posts) */
    uint8_t *probed;          /* per receive: its completion was a probe */
    u64map reqs;              /* request id -> kind << 56 | position or gate */
    enum vt_model_kind *fkind;
    size_t nfuncs;
    uint32_t coll_gate;       /* gate joined by the current record + 1, 0 none */
    size_t probe_msg;         /* receive the current probe matched, SIZE_MAX none */
    u64map tmpl;              /* request ids of persistent send templates */
    int64_t last_exit;
    /* Scenario items naming events of this rank, sorted by seq. */
    struct evitem { uint64_t seq; size_t scen; vt_shorten *it; } *evitems;
    size_t nevitems, evptr;
} rstate;

typedef struct replay {
    const vt_trace *t;
    const vt_matches *m;
    const vt_model_params *p;
    vt_scenario *sc;
    size_t nsc;
    uint32_t nranks;
    rstate *rs;
    gate **gates;
    size_t ngates, capgates;
    u64map gate_of;           /* hash(comm, seq) -> gate index + 1 */
    struct { size_t scen; vt_shorten *it; } *generic;
    size_t ngeneric;
    int64_t *delta;           /* nsc scratch */
    struct contrib { int64_t T; const int64_t *D; } *cons;
    size_t ncons, capcons;
    int64_t *tmp;
    /* What the record being processed read: released once it is applied. */
    slot **used;
    size_t nused, capused;
    size_t *used_gates;
    size_t nused_gates, capused_gates;
    vt_replay_result *res;
    vt_error *err;
} replay;

static void set_err(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(vt_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static int64_t *dup_d(const replay *R, const int64_t *d)
{
    int64_t *x = malloc(sizeof(int64_t) * R->nsc);
    if (x)
        memcpy(x, d, sizeof(int64_t) * R->nsc);
    return x;
}

static int add_con(replay *R, int64_t T, const int64_t *D)
{
    if (R->ncons == R->capcons) {
        size_t nc = R->capcons ? R->capcons * 2 : 16;
        struct contrib *n = realloc(R->cons, nc * sizeof *n);
        if (!n)
            return -1;
        R->cons = n;
        R->capcons = nc;
    }
    R->cons[R->ncons].T = T;
    R->cons[R->ncons].D = D;
    R->ncons++;
    return 0;
}

static const char *fname(const replay *R, uint32_t rank, int64_t fn)
{
    const vt_function *f = vt_trace_function(R->t, rank, fn);
    return f ? f->name : "?";
}

static int64_t gtime(const replay *R, uint32_t rank, int64_t local) { return vt_global_time(R->t, rank, local); }

/* δ of every scenario for a candidate event; `site` and `func` feed the selectors. */
static void deltas(replay *R, rstate *s, uint64_t seq, int64_t dur, const char *func, const char *site,
                   const char *sym)
{
    memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    for (size_t i = s->evptr; i < s->nevitems && s->evitems[i].seq == seq; i++) {
        int64_t v = shorten_by(s->evitems[i].it, dur);
        if (v > R->delta[s->evitems[i].scen])
            R->delta[s->evitems[i].scen] = v;
        s->evitems[i].it->hits++;
    }
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
            match = !func && site && (!strcmp(site, it->name) || (sym && *sym && !strcmp(sym, it->name)));
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

/* A local event or the candidate rule after a completion: d = d_after (+ δ, capped). */
static void apply_event(replay *R, rstate *s, uint64_t seq, int64_t start, int64_t end, const int64_t *base,
                        const char *func, int64_t cs)
{
    int64_t dur = end - start;
    see_event(s, seq, dur);
    int cand = dur >= R->p->theta && (func == NULL || R->p->cand_calls);
    R->res->events++;
    if (!cand) {
        if (base)
            memcpy(s->d, base, sizeof(int64_t) * R->nsc);
        return;
    }
    R->res->candidates++;
    char site[256];
    const char *sym = NULL;
    site[0] = '\0';
    if (cs >= 0)
        site_name(R, s->rank, cs, site, sizeof site, &sym);
    deltas(R, s, seq, dur, func, cs >= 0 ? site : NULL, sym);
    for (size_t k = 0; k < R->nsc; k++) {
        if (base)
            s->d[k] = vt_model_candidate(base[k], R->delta[k], s->d[k], end, start);
        else
            s->d[k] += R->delta[k];
    }
}

static gate *gate_get(replay *R, uint64_t comm, uint64_t seq, uint32_t need)
{
    uint64_t key = mix(comm ^ mix(seq + 0x9e3779b97f4a7c15ull)), v;
    /* Collisions of the 64-bit key are resolved by probing the gate list. */
    for (uint64_t k = key;; k++) {
        if (!map_get(&R->gate_of, k, &v))
            break;
        gate *g = R->gates[v];
        if (g && g->comm == comm && g->seq == seq)
            return g;
        if (!g)
            break;
    }
    gate *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->comm = comm;
    g->seq = seq;
    g->need = g->left = need;
    g->T = malloc(sizeof(int64_t) * need);
    g->D = malloc(sizeof(int64_t) * need * R->nsc);
    if (!g->T || !g->D) {
        free(g->T);
        free(g->D);
        free(g);
        return NULL;
    }
    if (R->ngates == R->capgates) {
        size_t nc = R->capgates ? R->capgates * 2 : 64;
        gate **n = realloc(R->gates, nc * sizeof *n);
        if (!n)
            return NULL;
        R->gates = n;
        R->capgates = nc;
    }
    R->gates[R->ngates] = g;
    uint64_t k = key;
    while (map_get(&R->gate_of, k, &v))
        k++;
    map_put(&R->gate_of, k, R->ngates);
    R->ngates++;
    return g;
}

static size_t gate_index(const replay *R, const gate *g)
{
    for (size_t i = R->ngates; i-- > 0;)
        if (R->gates[i] == g)
            return i;
    return SIZE_MAX;
}

static void gate_join(replay *R, gate *g, int64_t T, const int64_t *D)
{
    g->T[g->arrived] = T;
    memcpy(g->D + (size_t)g->arrived * R->nsc, D, sizeof(int64_t) * R->nsc);
    g->arrived++;
    if (g->arrived < g->need)
        return;
    g->M = g->T[0];
    for (uint32_t k = 1; k < g->need; k++)
        if (g->T[k] > g->M)
            g->M = g->T[k];
    g->base = malloc(sizeof(int64_t) * R->nsc);
    for (size_t s = 0; s < R->nsc; s++) {
        int64_t best = INT64_MAX;
        for (uint32_t k = 0; k < g->need; k++) {
            int64_t v = g->D[(size_t)k * R->nsc + s] + (g->M - g->T[k]);
            if (v < best)
                best = v;
        }
        g->base[s] = best;
    }
    free(g->T);
    free(g->D);
    g->T = g->D = NULL;
}

static void gate_leave(replay *R, size_t gi)
{
    gate *g = R->gates[gi];
    if (--g->left == 0) {
        free(g->base);
        free(g);
        R->gates[gi] = NULL;
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

/* Is the message of send entry (rank, pos) synchronous? */
static int send_is_sync(const replay *R, uint32_t rank, const vt_match_send *se)
{
    return vt_model_is_sync(vt_model_send_kind(fname(R, rank, se->fn)), se->bytes, R->p);
}

enum { STEP_DONE, STEP_MOVED, STEP_BLOCKED, STEP_ERROR };

static int note_used(replay *R, slot *sl)
{
    if (R->nused == R->capused) {
        size_t nc = R->capused ? R->capused * 2 : 16;
        slot **n = realloc(R->used, nc * sizeof *n);
        if (!n)
            return -1;
        R->used = n;
        R->capused = nc;
    }
    R->used[R->nused++] = sl;
    return 0;
}

static int note_gate(replay *R, size_t gi)
{
    if (R->nused_gates == R->capused_gates) {
        size_t nc = R->capused_gates ? R->capused_gates * 2 : 8;
        size_t *n = realloc(R->used_gates, nc * sizeof *n);
        if (!n)
            return -1;
        R->used_gates = n;
        R->capused_gates = nc;
    }
    R->used_gates[R->nused_gates++] = gi;
    return 0;
}

static void release_used(replay *R)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = R->used[i];
        if (sl->uses && --sl->uses == 0) {
            free(sl->D);
            sl->D = NULL;
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        gate_leave(R, R->used_gates[i]);
    R->nused = R->nused_gates = 0;
}

/* The message a probe matched: MPI_Mprobe/Improbe name it (the receive they post);
 * MPI_Probe/Iprobe see the first message from the probed source and tag that a later
 * receive on this rank takes. */
static size_t probe_target(replay *R, rstate *s)
{
    const vt_event *ev = &s->ev;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < s->nrecvs; i++) {
        const vt_match_recv *rv = &s->recvs[i];
        if (s->probed[i] || rv->post_index < ev->index || rv->send_pos == SIZE_MAX)
            continue;
        if (rv->post_index == ev->index)
            return i;
        if (c && ev->rpeer >= 0 && rv->comm_id == c->id && rv->src == (uint32_t)ev->rpeer && rv->tag == ev->rtag &&
            (best == SIZE_MAX || rv->post_index < s->recvs[best].post_index))
            best = i;
    }
    return best;
}

static int send_is_sync_at(const replay *R, uint32_t rank, size_t pos)
{
    return send_is_sync(R, rank, &R->rs[rank].sends[pos]);
}

/* Phase A, once per record: what this record makes available to other ranks. */
static int publish(replay *R, rstate *s, int64_t enter, int64_t exit, enum vt_model_kind k, const char *func)
{
    const vt_event *ev = &s->ev;
    /* Persistent send templates: their starts are the sends. */
    if (ev->request && func && strstr(func, "send_init") && ev->peer >= 0)
        if (map_put(&s->tmpl, ev->request, 1))
            return -1;
    /* Sends made by this record: S = its enter, D = d before it. */
    while (s->send_ptr < s->nsends && s->sends[s->send_ptr].index < ev->index)
        s->send_ptr++;
    for (size_t i = s->send_ptr; i < s->nsends && s->sends[i].index == ev->index; i++) {
        slot *sl = &s->ss[i];
        sl->T = enter;
        if (!(sl->D = dup_d(R, s->d)))
            return -1;
        sl->filled = 1;
        sl->uses = (uint8_t)(1 + send_is_sync(R, s->rank, &s->sends[i]));
        if ((k == VT_MK_ISEND || k == VT_MK_ISSEND || k == VT_MK_IBSEND) && ev->request)
            if (map_put(&s->reqs, ev->request, ((uint64_t)REQ_SEND << 56) | i))
                return -1;
    }
    if (k == VT_MK_START) {
        uint32_t nth = 0;
        for (size_t q = 0; q < ev->nstarted; q++) {
            uint64_t v;
            if (!map_get(&s->tmpl, ev->started[q], &v))
                continue;
            for (size_t i = s->send_ptr; i < s->nsends && s->sends[i].index == ev->index; i++)
                if (s->sends[i].sub == nth && map_put(&s->reqs, ev->started[q], ((uint64_t)REQ_SEND << 56) | i))
                    return -1;
            nth++;
        }
    }
    /* A probe completes the message it matched, and posts it. */
    s->probe_msg = SIZE_MAX;
    if (k == VT_MK_PROBE) {
        s->probe_msg = probe_target(R, s);
        if (s->probe_msg != SIZE_MAX) {
            const vt_match_recv *rv = &s->recvs[s->probe_msg];
            s->probed[s->probe_msg] = 1;
            if (send_is_sync_at(R, rv->send_rank, rv->send_pos)) {
                slot *pl = &s->ps[s->probe_msg];
                pl->T = enter;
                pl->E = exit;
                if (!(pl->D = dup_d(R, s->d)))
                    return -1;
                pl->filled = 1;
                pl->uses = 1;
            }
        }
    }
    /* Receives this record posts: a synchronous one publishes (P_q, d_q(P_q)) and the
     * exit of the call that will complete it. */
    while (s->post_ptr < s->nrecvs && s->recvs[s->post_ptr].index < ev->index)
        s->post_ptr++;
    for (size_t i = s->post_ptr; i < s->nrecvs && s->recvs[i].index == ev->index; i++) {
        const vt_match_recv *rv = &s->recvs[i];
        if (s->probed[i] || rv->send_pos == SIZE_MAX || rv->post_index != rv->index)
            continue;
        if (!send_is_sync_at(R, rv->send_rank, rv->send_pos))
            continue;
        slot *pl = &s->ps[i];
        pl->T = enter;
        pl->E = gtime(R, s->rank, rv->done_exit);
        if (!(pl->D = dup_d(R, s->d)))
            return -1;
        pl->filled = 1;
        pl->uses = 1;
    }
    /* Collectives: join the gate of (communicator, sequence number) with (enter, d). */
    s->coll_gate = 0;
    if ((k == VT_MK_COLL || k == VT_MK_ICOLL) && ev->comm >= 0 && ev->collseq != VT_SEQ_NONE) {
        uint64_t id = 0;
        uint32_t need = comm_members(R, s->rank, ev->comm, &id);
        if (need) {
            gate *g = gate_get(R, id, ev->collseq, need);
            if (!g)
                return -1;
            gate_join(R, g, enter, s->d);
            size_t gi = gate_index(R, g);
            if (k == VT_MK_COLL)
                s->coll_gate = (uint32_t)gi + 1;
            else if (ev->request && map_put(&s->reqs, ev->request, ((uint64_t)REQ_ICOLL << 56) | gi))
                return -1;
        }
    }
    return 0;
}

/* (S + λ_m, D) of the message of receive entry i, received by a call exiting at E.
 * Returns 1 when the sender has not reached the send yet. */
static int message_in(replay *R, rstate *s, size_t i, int64_t E)
{
    const vt_match_recv *rv = &s->recvs[i];
    rstate *snd = &R->rs[rv->send_rank];
    slot *sl = &snd->ss[rv->send_pos];
    if (!sl->filled)
        return 1;
    if (add_con(R, sl->T + vt_model_lambda(R->p, snd->sends[rv->send_pos].bytes, sl->T, E), sl->D) ||
        note_used(R, sl))
        return -1;
    return 0;
}

/* Sender side of a synchronous message (send entry i of s): (S + λ_m, D) and the
 * receiver's (P_q, d_q(P_q)). Returns 1 while the receiver has not posted it. */
static int sync_sender(replay *R, rstate *s, size_t i)
{
    const vt_match_send *se = &s->sends[i];
    if (se->recv_pos == SIZE_MAX)
        return 0;
    slot *pl = &R->rs[se->dst].ps[se->recv_pos];
    if (!pl->filled)
        return 1;
    slot *sl = &s->ss[i];
    if (add_con(R, sl->T + vt_model_lambda(R->p, se->bytes, sl->T, pl->E), sl->D) || add_con(R, pl->T, pl->D) ||
        note_used(R, sl) || note_used(R, pl))
        return -1;
    return 0;
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
        int rc = vt_cursor_next(s->cur, &s->ev, R->err);
        if (rc < 0)
            return STEP_ERROR;
        if (rc == 0) {
            s->finished = 1;
            return STEP_DONE;
        }
        s->have = 1;
        s->published = 0;
        int64_t enter = gtime(R, s->rank, s->ev.enter);
        if (s->ev.index == 0)
            s->prev_exit = s->first_enter = enter;
        /* The computation burst before this record: a local event. */
        apply_event(R, s, 2 * s->ev.index, s->prev_exit, enter, NULL, NULL, s->ev.callsite);
    }
    const vt_event *ev = &s->ev;
    int64_t enter = gtime(R, s->rank, ev->enter), exit = gtime(R, s->rank, ev->exit);
    enum vt_model_kind k = VT_MK_LOCAL;
    const char *func = "FLUSH";
    if (ev->fn >= 0) {
        k = (size_t)ev->fn < s->nfuncs ? s->fkind[ev->fn] : VT_MK_LOCAL;
        func = fname(R, s->rank, ev->fn);
    }
    if (!s->published) {
        if (publish(R, s, enter, exit, k, func))
            goto nomem;
        s->published = 1;
    }
    /* Phase B: the contributors (model.md §3); block while one is not available. */
    R->ncons = R->nused = R->nused_gates = 0;
    int completion = 0, local = 1;
    if (s->probe_msg != SIZE_MAX) {
        completion = 1;
        TRY(message_in(R, s, s->probe_msg, exit));
    }
    while (s->done_ptr < s->nrecvs && s->recvs[s->by_done[s->done_ptr]].done_index < ev->index)
        s->done_ptr++;
    if (k != VT_MK_PROBE) {
        for (size_t j = s->done_ptr; j < s->nrecvs && s->recvs[s->by_done[j]].done_index == ev->index; j++) {
            size_t i = s->by_done[j];
            if (s->recvs[i].send_pos == SIZE_MAX)
                continue;
            completion = 1;   /* a receive completion, even of a probed (local) message */
            if (!s->probed[i])
                TRY(message_in(R, s, i, exit));
        }
    }
    if (k == VT_MK_SEND || k == VT_MK_SSEND || k == VT_MK_SENDRECV) {
        for (size_t i = s->send_ptr; i < s->nsends && s->sends[i].index == ev->index; i++) {
            if (!send_is_sync(R, s->rank, &s->sends[i]))
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
            size_t pos = (size_t)(v & ((1ull << 56) - 1));
            if ((v >> 56) == REQ_ICOLL) {
                gate *g = R->gates[pos];
                if (!g || !g->base)
                    return STEP_BLOCKED;
                completion = 1;
                if (add_con(R, g->M, g->base) || note_gate(R, pos))
                    goto nomem;
            } else if (send_is_sync(R, s->rank, &s->sends[pos])) {
                completion = 1;
                TRY(sync_sender(R, s, pos));
            }
        }
    }
    if (k == VT_MK_COLL && s->coll_gate) {
        gate *g = R->gates[s->coll_gate - 1];
        if (!g->base)
            return STEP_BLOCKED;
        completion = 1;
        local = 0;   /* its own (enter, d) is in the gate */
        if (add_con(R, g->M, g->base) || note_gate(R, s->coll_gate - 1))
            goto nomem;
    }
    if (completion && local && add_con(R, enter, s->d))
        goto nomem;
    /* Phase C: the completion rule, then the candidate rule (apply_event). */
    const int64_t *base = NULL;
    if (completion && R->ncons) {
        int64_t M = R->cons[0].T;
        for (size_t c = 1; c < R->ncons; c++)
            if (R->cons[c].T > M)
                M = R->cons[c].T;
        for (size_t kk = 0; kk < R->nsc; kk++) {
            int64_t best = INT64_MAX;
            for (size_t c = 0; c < R->ncons; c++) {
                int64_t v = R->cons[c].D[kk] + (M - R->cons[c].T);
                if (v < best)
                    best = v;
            }
            R->tmp[kk] = best;
        }
        base = R->tmp;
    }
    apply_event(R, s, 2 * ev->index + 1, enter, exit, base, func, ev->callsite);
    release_used(R);
    s->prev_exit = s->last_exit = exit;
    s->have = 0;
    if (k == VT_MK_END) {
        s->finished = 1;
        return STEP_DONE;
    }
    return STEP_MOVED;
nomem:
    set_err(R->err, "out of memory replaying rank %u", s->rank);
    return STEP_ERROR;
}

static int cmp_done(const void *a, const void *b, void *arg)
{
    const vt_match_recv *r = arg;
    const vt_match_recv *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
    if (x->done_index != y->done_index)
        return x->done_index < y->done_index ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_evitem(const void *a, const void *b)
{
    const struct evitem *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->scen < y->scen ? -1 : x->scen > y->scen;
}

static int setup_rank(replay *R, rstate *s, uint32_t r)
{
    s->rank = r;
    s->probe_msg = SIZE_MAX;
    if (vt_cursor_open(R->t, r, &s->cur, R->err))
        return -1;
    s->d = calloc(R->nsc, sizeof(int64_t));
    s->recvs = vt_matches_recvs(R->m, r, &s->nrecvs);
    s->sends = vt_matches_sends(R->m, r, &s->nsends);
    s->by_done = malloc(sizeof(size_t) * (s->nrecvs + 1));
    s->ss = calloc(s->nsends + 1, sizeof(slot));
    s->ps = calloc(s->nrecvs + 1, sizeof(slot));
    s->probed = calloc(s->nrecvs + 1, 1);
    const vt_rank *rk = vt_trace_rank(R->t, r);
    s->nfuncs = rk->nfuncs;
    s->fkind = malloc(sizeof(enum vt_model_kind) * (rk->nfuncs + 1));
    if (!s->d || !s->by_done || !s->ss || !s->ps || !s->probed || !s->fkind) {
        set_err(R->err, "out of memory preparing the replay of rank %u", r);
        return -1;
    }
    for (size_t i = 0; i < rk->nfuncs; i++)
        s->fkind[i] = vt_model_kind_of(rk->funcs[i].name);
    for (size_t i = 0; i < s->nrecvs; i++)
        s->by_done[i] = i;
    qsort_r(s->by_done, s->nrecvs, sizeof(size_t), cmp_done, (void *)s->recvs);
    for (size_t sc = 0; sc < R->nsc; sc++) {
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel != VT_SEL_EVENT || it->rank != (int64_t)r)
                continue;
            struct evitem *n = realloc(s->evitems, (s->nevitems + 1) * sizeof *n);
            if (!n) {
                set_err(R->err, "out of memory");
                return -1;
            }
            s->evitems = n;
            s->evitems[s->nevitems++] = (struct evitem){it->seq, sc, it};
        }
    }
    qsort(s->evitems, s->nevitems, sizeof *s->evitems, cmp_evitem);
    return 0;
}

static void free_rank(rstate *s)
{
    vt_cursor_close(s->cur);
    for (size_t i = 0; s->ss && i < s->nsends; i++)
        free(s->ss[i].D);
    for (size_t i = 0; s->ps && i < s->nrecvs; i++)
        free(s->ps[i].D);
    free(s->ss);
    free(s->ps);
    free(s->probed);
    free(s->by_done);
    free(s->fkind);
    free(s->d);
    free(s->evitems);
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
            if (it->sel == VT_SEL_EVENT && !it->seen) {
                set_err(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (rank %" PRId64
                        " has events 0 to %" PRIu64 ")",
                        R->sc[sc].text, it->rank, it->seq, it->rank,
                        2 * vt_trace_rank(R->t, (uint32_t)it->rank)->nrecords - 1);
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

int vt_replay(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              vt_replay_result *res, vt_error *err)
{
    replay R = {.t = t, .m = m, .p = p, .sc = sc, .nsc = nsc, .res = res, .err = err};
    memset(res, 0, sizeof *res);
    R.nranks = vt_trace_nranks(t);
    res->nscen = nsc;
    res->nranks = R.nranks;
    res->ends = calloc(nsc * R.nranks + 1, sizeof(int64_t));
    res->total = calloc(nsc + 1, sizeof(int64_t));
    res->measured = calloc(R.nranks + 1, sizeof(int64_t));
    R.rs = calloc(R.nranks, sizeof(rstate));
    R.delta = calloc(nsc + 1, sizeof(int64_t));
    R.tmp = calloc(nsc + 1, sizeof(int64_t));
    int rc = -1;
    if (!res->ends || !res->total || !res->measured || !R.rs || !R.delta || !R.tmp) {
        set_err(err, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < nsc; s++) {
        for (size_t i = 0; i < sc[s].nitems; i++) {
            sc[s].items[i].hits = 0;
            sc[s].items[i].seen = 0;
            if (sc[s].items[i].sel == VT_SEL_EVENT)
                continue;
            void *n = realloc(R.generic, (R.ngeneric + 1) * sizeof *R.generic);
            if (!n) {
                set_err(err, "out of memory");
                goto out;
            }
            R.generic = n;
            R.generic[R.ngeneric].scen = s;
            R.generic[R.ngeneric].it = &sc[s].items[i];
            R.ngeneric++;
        }
    }
    for (uint32_t r = 0; r < R.nranks; r++)
        if (setup_rank(&R, &R.rs[r], r))
            goto out;
    uint32_t done = 0;
    while (done < R.nranks) {
        int progress = 0;
        for (uint32_t r = 0; r < R.nranks; r++) {
            rstate *s = &R.rs[r];
            if (s->finished)
                continue;
            for (;;) {
                int st = step(&R, s);
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
        if (R.gates[g]) {
            free(R.gates[g]->T);
            free(R.gates[g]->D);
            free(R.gates[g]->base);
            free(R.gates[g]);
        }
    }
    free(R.gates);
    map_free(&R.gate_of);
    free(R.generic);
    free(R.rs);
    free(R.delta);
    free(R.tmp);
    free(R.cons);
    free(R.used);
    free(R.used_gates);
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

int vt_replay_candidates(const vt_trace *t, const vt_model_params *p, vt_candidate_fn fn, void *arg, vt_error *err)
{
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_event ev;
        int rc;
        int64_t prev = 0;
        while ((rc = vt_cursor_next(c, &ev, err)) == 1) {
            int64_t enter = vt_global_time(t, r, ev.enter), exit = vt_global_time(t, r, ev.exit);
            if (ev.index == 0)
                prev = enter;
            if (enter - prev >= p->theta)
                fn(arg, r, 2 * ev.index, enter - prev, NULL);
            if (p->cand_calls && exit - enter >= p->theta) {
                const vt_function *f = ev.fn >= 0 ? vt_trace_function(t, r, ev.fn) : NULL;
                fn(arg, r, 2 * ev.index + 1, exit - enter, f ? f->name : "FLUSH");
            }
            prev = exit;
        }
        vt_cursor_close(c);
        if (rc < 0)
            return -1;
    }
    return 0;
}
