#include "vt_config.h"
#include "tracing/rankdefs.h"
#include "tracing/buffer.h"
#include "tracing/callsites.h"
#include "tracing/comms.h"
#include "tracing/handlers.h"
#include "tracing/modules.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *room(vt_growbuf *g, size_t need)
{
    size_t used = (size_t)(g->p - g->base);
    if (g->overflow)
        return NULL;
    if (used + need > g->cap) {
        if (g->fixed) {
            g->overflow = 1;
            return NULL;
        }
        size_t cap = (g->cap ? g->cap * 2 : 4096) + need;
        uint8_t *nb = realloc(g->base, cap);
        if (!nb) {
            g->overflow = 1;
            return NULL;
        }
        g->base = nb;
        g->p = nb + used;
        g->cap = cap;
    }
    return g->p;
}

void vt_growbuf_uvar(vt_growbuf *g, uint64_t v)
{
    if (room(g, VT_UVAR_MAX))
        g->p = vt_put_uvar(g->p, v);
}

void vt_growbuf_svar(vt_growbuf *g, int64_t v) { vt_growbuf_uvar(g, vt_zigzag(v)); }

void vt_growbuf_bytes(vt_growbuf *g, const void *p, size_t n)
{
    if (n && room(g, n)) {
        memcpy(g->p, p, n);
        g->p += n;
    }
}

void vt_growbuf_str(vt_growbuf *g, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > 65535)
        n = 65535;
    if (room(g, n + VT_UVAR_MAX))
        g->p = vt_put_str(g->p, s ? s : "", n);
}

/* ------------------------------------------------------------------ call sites */

typedef struct site_name {
    const char *symbol; /* "" unknown; owned */
    uint64_t offset;
    int64_t module;     /* index in the module table, -1 unknown */
} site_name;

static site_name *names;
static uint32_t nnamed, names_cap;

static const char *own(const char *s)
{
    char *c = s && *s ? strdup(s) : NULL;
    return c ? c : "";
}

void vt_rankdefs_resolve_sites(void)
{
    uint32_t n = vt_callsites_count();
    if (n > names_cap) {
        uint32_t cap = n + n / 2 + 64;
        site_name *nn = realloc(names, cap * sizeof *nn);
        if (!nn)
            return;
        names = nn;
        names_cap = cap;
    }
    for (; nnamed < n; nnamed++) {
        vt_site_module m;
        vt_module_of(vt_callsite_addr(nnamed), &m);
        site_name *s = &names[nnamed];
        s->symbol = own(m.symbol);
        s->offset = m.offset;
        s->module = m.index;
    }
}

/* ------------------------------------------------------------------ communicators */

static int member(const int *w, int i) { return w ? w[i] : i; }

/* Whether the lists A and B of N world ranks are the same. */
static int same_members(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (member(a, i) != member(b, i))
            return 0;
    return 1;
}

/* A member list, compact (doc/format.md, RANKDEFS; the communicator's flags bit 1): a
 * range of world ranks (world, self, most splits) as its first rank and stride, a list
 * that an earlier communicator of the table has as its index, any other rank by rank.
 * So a trace's definitions grow with the ranks, not with their square. */
static void put_members(vt_growbuf *g, const int *w, int n, uint32_t before)
{
    /* a group in another MPI world (MPI_Comm_spawn, _connect, _accept): its processes
     * have no rank in this trace; stored as no members */
    for (int i = 0; i < n; i++)
        if (member(w, i) < 0)
            n = 0;
    vt_growbuf_uvar(g, (uint64_t)n);
    if (n == 0)
        return;
    int64_t first = member(w, 0), stride = n > 1 ? (int64_t)member(w, 1) - first : 0;
    int range = 1;
    for (int i = 2; i < n && range; i++)
        range = member(w, i) == first + i * stride;
    if (range && n > 2) {
        vt_growbuf_uvar(g, 1);
        vt_growbuf_uvar(g, (uint64_t)first);
        vt_growbuf_svar(g, stride);
        return;
    }
    for (uint32_t j = 0; j < before && n > 2; j++) {
        const vt_comm *e = vt_comm_at(j);
        if (e->size == n && same_members(e->world, w, n)) {
            vt_growbuf_uvar(g, 2);
            vt_growbuf_uvar(g, j);
            return;
        }
    }
    vt_growbuf_uvar(g, 0);
    for (int i = 0; i < n; i++)
        vt_growbuf_uvar(g, (uint64_t)member(w, i));
}

/* ------------------------------------------------------------------ the payload */

void vt_rankdefs_encode(vt_growbuf *g, const vt_rankdefs_end *e)
{
    /* 1.6: the call sites follow the module table (below); the 1.0 list stays empty */
    vt_growbuf_uvar(g, 0);
    uint32_t nc = vt_comms_count();
    vt_growbuf_uvar(g, nc);
    for (uint32_t i = 0; i < nc; i++) {
        vt_comm *c = vt_comm_at(i);
        /* 2.0: what the id is derived from (format/commid.h), not the 64-bit id */
        uint8_t o[VT_CID_ORIGIN_MAX];
        vt_growbuf_bytes(g, o, (size_t)(vt_comm_origin_encode(o, &c->origin) - o));
        vt_growbuf_uvar(g, (uint64_t)c->inter | VT_COMM_COMPACT);
        put_members(g, c->world, c->size, i);
        put_members(g, c->rworld, c->inter ? c->rsize : 0, i);
        vt_growbuf_svar(g, c->parent);
        vt_growbuf_str(g, c->how);
    }
    uint32_t nf = vt_files_count();
    vt_growbuf_uvar(g, nf);
    for (uint32_t i = 0; i < nf; i++) {
        int32_t comm;
        const char *name = vt_file_name(i, &comm);
        vt_growbuf_str(g, name);
        vt_growbuf_uvar(g, (uint64_t)comm);
    }
    /* in a signal handler no FUNCS block can name more functions: those named only */
#define PROFILED(i) (vt__profile[i].calls > 0 && (!e->named || e->named((unsigned)(i))))
    uint32_t np = 0;
    for (int i = 0; i < VT_NFN; i++)
        np += PROFILED(i);
    vt_growbuf_uvar(g, np);
    for (int i = 0; i < VT_NFN; i++) {
        const vt_profile_entry *p = &vt__profile[i];
        if (!PROFILED(i))
            continue;
        vt_growbuf_uvar(g, (uint64_t)i);
        vt_growbuf_uvar(g, p->calls);
        vt_growbuf_uvar(g, p->time_ns);
        vt_growbuf_uvar(g, p->bytes);
        vt_growbuf_uvar(g, vt_profile_records(p));
    }
#undef PROFILED
    vt_growbuf_str(g, e->pl->host);
    vt_growbuf_svar(g, e->pl->core);
    vt_growbuf_svar(g, e->pl->numa);
    vt_growbuf_str(g, e->pl->binding);
    vt_growbuf_uvar(g, e->flags);
    vt_growbuf_uvar(g, vt_buffer_records());
    vt_growbuf_uvar(g, vt__buf.lost);
    vt_growbuf_svar(g, e->t_init);
    vt_growbuf_svar(g, e->t_fin);
    /* 1.2: the measured overhead per recorded call, and the copy cost per byte: 0, the
     * layer copies no message data (it records sizes and peers only). */
    vt_growbuf_uvar(g, e->overhead_ps);
    vt_growbuf_uvar(g, 0);
    /* 1.4: how the run ended, and a failed write */
    vt_growbuf_uvar(g, e->reason);
    vt_growbuf_svar(g, e->detail);
    vt_growbuf_uvar(g, e->write_errno);
    vt_growbuf_uvar(g, e->write_at);
    /* 1.4: the call sites' modules with their build-ids, for the analyses' symbols */
    uint32_t nm = vt_modules_count();
    vt_growbuf_uvar(g, nm);
    for (uint32_t i = 0; i < nm; i++) {
        const uint8_t *id;
        size_t idlen;
        vt_growbuf_str(g, vt_module_at(i, &id, &idlen));
        vt_growbuf_uvar(g, idlen);
        vt_growbuf_bytes(g, id, idlen);
    }
    /* 1.6: each call site as its module's index + 1 and the offset in it, no address
     * (it differs between processes: address-space randomisation); a site whose module
     * is unknown (not named yet: a signal handler; dladdr failed) keeps its address */
    uint32_t n = vt_callsites_count();
    vt_growbuf_uvar(g, n);
    for (uint32_t i = 0; i < n; i++) {
        const site_name *s = i < nnamed ? &names[i] : NULL;
        if (s && s->module >= 0 && (uint64_t)s->module < nm) {
            vt_growbuf_uvar(g, (uint64_t)s->module + 1);
            vt_growbuf_uvar(g, s->offset);
            vt_growbuf_str(g, s->symbol);
        } else {
            vt_growbuf_uvar(g, 0);
            vt_growbuf_uvar(g, (uint64_t)(uintptr_t)vt_callsite_addr(i));
            vt_growbuf_str(g, s ? s->symbol : "");
        }
    }
}
