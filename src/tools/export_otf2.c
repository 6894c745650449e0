/* vtrace export --format=otf2 DIR OUT: the trace as an OTF2 archive in directory OUT
 * (OUT/traces.otf2, OUT/traces.def, OUT/traces/), written serially through libotf2.
 *
 * One location (and location group) per rank, one system-tree node per host. Event
 * times are the ranks' local ns; each location's ClockOffset records (the two measured
 * synchronisations, and the same offsets at its first and last time, where vtrace holds
 * them constant) let OTF2 readers compute vtrace's global time, so the archive keeps
 * what was measured. The clock properties give the global time range.
 *
 * Full traces: Enter/Leave per record (FLUSH as "vtrace:flush"), MpiSend/MpiRecv for
 * blocking point-to-point, MpiIsend/MpiIsendComplete and MpiIrecvRequest/MpiIrecv with
 * vtrace's request ids for non-blocking and persistent ones (their completions are in the
 * Wait/Test records), MpiCollectiveBegin/End for blocking collectives. Peers and roots
 * are ranks of the communicator, as OTF2 wants.
 * Reduced traces: every record as its region ("computation" for a burst), the stretches
 * between records as "vtrace:aggregated", an MpiRecv for each message a COMP record keeps
 * and its MpiSend on the sender at its enter S. A reduced trace keeps neither the tag nor
 * the communicator of a message: they are MPI_COMM_WORLD and the send's sequence number
 * (low 32 bits), which pairs every send with its receive. */
#include "vt_config.h"
#include "tools/export.h"
#include "tools/progress.h"
#include "util/codec.h"

#include <stdio.h>
#include <string.h>

#ifndef HAVE_OTF2

int vt__export_otf2(const vt_trace *t, const vt__export_opts *o, vt_error *err)
{
    (void)t;
    (void)o;
    snprintf(err->msg, sizeof err->msg,
             "this vtrace was built without OTF2, so --format=otf2 is not available: install libotf2 "
             "(Debian/Ubuntu: apt-get install libotf2-trace-dev) and build vtrace again with "
             "'configure --with-otf2'");
    return -1;
}

#else

#include <otf2/otf2.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARCHIVE "traces"

/* ------------------------------------------------------------------ small tables */

typedef struct req_ent {
    uint64_t key; /* request id (0: empty slot) */
    int used;
    int send, persistent, active, coll;
    uint32_t comm;    /* OTF2 comm ref */
    int64_t peer, tag;
    uint64_t bytes;
} req_ent;

typedef struct req_map {
    req_ent *v;
    size_t cap, n;
} req_map;

static req_ent *req_find(req_map *m, uint64_t key, int create)
{
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        req_ent *nv = calloc(ncap, sizeof *nv);
        if (!nv)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].used)
                continue;
            size_t j = (m->v[i].key * 0x9e3779b97f4a7c15u) & (ncap - 1);
            while (nv[j].used)
                j = (j + 1) & (ncap - 1);
            nv[j] = m->v[i];
        }
        free(m->v);
        m->v = nv;
        m->cap = ncap;
    }
    if (!m->cap)
        return NULL;
    size_t j = (key * 0x9e3779b97f4a7c15u) & (m->cap - 1);
    while (m->v[j].used) {
        if (m->v[j].key == key)
            return &m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!create)
        return NULL;
    memset(&m->v[j], 0, sizeof m->v[j]);
    m->v[j].used = 1;
    m->v[j].key = key;
    m->n++;
    return &m->v[j];
}

/* Deletion by marking: the entry stays as a tombstone with active 0 and no side. */
static void req_forget(req_ent *e)
{
    e->active = 0;
    e->send = e->coll = 0;
    e->persistent = 0;
    e->comm = OTF2_UNDEFINED_COMM;
}

typedef struct gcomm {
    uint64_t id;
    uint32_t size;
    const uint32_t *members;
    int64_t parent_id; /* -1 none */
    const char *how;
} gcomm;

typedef struct ex {
    const vt_trace *t;
    const vt__export_opts *o;
    vt_error *err;
    OTF2_Archive *ar;
    uint32_t nranks;
    int reduced;
    /* strings */
    char **strs;
    size_t nstrs, capstrs;
    /* regions: name string refs, one per distinct name */
    const char **rnames;
    size_t nregions, capregions;
    uint32_t **rank_region; /* [rank][fn] -> region ref */
    uint32_t r_flush, r_comp, r_aggr;
    /* communicators */
    gcomm *comms;
    size_t ncomms, capcomms;
    uint32_t **rank_comm; /* [rank][comm index] -> comm ref */
    uint32_t world;       /* comm ref of MPI_COMM_WORLD, OTF2_UNDEFINED_COMM if none */
    /* time range (global ns) and per-location first/last local time */
    int64_t gmin, gmax;
    int64_t *first, *last;
    uint64_t *nevents;
    /* reduced traces: messages by sender */
    struct rsend {
        int64_t S;
        uint64_t seq;
        uint32_t dst;
        uint64_t bytes;
    } **rsends;
    size_t *nrsends;
} ex;

static char otf2_msg[512];

static OTF2_ErrorCode otf2_error_cb(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                                    const char *fmt, va_list va)
{
    (void)ud;
    (void)file;
    (void)line;
    (void)fn;
    if (fmt)
        vsnprintf(otf2_msg, sizeof otf2_msg, fmt, va);
    else
        otf2_msg[0] = 0;
    return code;
}

static int fail(ex *x, const char *what, OTF2_ErrorCode rc)
{
    snprintf(x->err->msg, sizeof x->err->msg, "%s: OTF2 error in %s: %s%s%s", x->o->out, what, OTF2_Error_GetName(rc),
             otf2_msg[0] ? ": " : "", otf2_msg);
    return -1;
}

static int oom(ex *x)
{
    snprintf(x->err->msg, sizeof x->err->msg, "%s: out of memory", x->o->out);
    return -1;
}

#define CHECK(x, what, call)                                                                                           \
    do {                                                                                                               \
        OTF2_ErrorCode rc_ = (call);                                                                                   \
        if (rc_ != OTF2_SUCCESS)                                                                                       \
            return fail(x, what, rc_);                                                                                 \
    } while (0)

/* String ref of S (linear search: the definitions are few). */
static int str_ref(ex *x, const char *s, uint32_t *ref)
{
    for (size_t i = 0; i < x->nstrs; i++)
        if (!strcmp(x->strs[i], s)) {
            *ref = (uint32_t)i;
            return 0;
        }
    if (vt__export_grow((void **)&x->strs, &x->capstrs, x->nstrs + 1, sizeof *x->strs))
        return oom(x);
    if (!(x->strs[x->nstrs] = strdup(s)))
        return oom(x);
    *ref = (uint32_t)x->nstrs++;
    return 0;
}

static int region_ref(ex *x, const char *name, uint32_t *ref)
{
    for (size_t i = 0; i < x->nregions; i++)
        if (!strcmp(x->rnames[i], name)) {
            *ref = (uint32_t)i;
            return 0;
        }
    if (vt__export_grow((void **)&x->rnames, &x->capregions, x->nregions + 1, sizeof *x->rnames))
        return oom(x);
    x->rnames[x->nregions] = name;
    *ref = (uint32_t)x->nregions++;
    return 0;
}

/* Name without "MPI_" and the large-count "_c" suffix, for classification. */
static void base_name(const char *name, char *buf, size_t len)
{
    if (!strncmp(name, "MPI_", 4))
        name += 4;
    snprintf(buf, len, "%s", name);
    size_t n = strlen(buf);
    if (n > 2 && !strcmp(buf + n - 2, "_c"))
        buf[n - 2] = 0;
}

static OTF2_CollectiveOp coll_op(const char *name, int *known)
{
    static const struct {
        const char *n;
        OTF2_CollectiveOp op;
    } ops[] = {
        {"Barrier", OTF2_COLLECTIVE_OP_BARRIER},
        {"Bcast", OTF2_COLLECTIVE_OP_BCAST},
        {"Gather", OTF2_COLLECTIVE_OP_GATHER},
        {"Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
        {"Scatter", OTF2_COLLECTIVE_OP_SCATTER},
        {"Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
        {"Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
        {"Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
        {"Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
        {"Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
        {"Reduce", OTF2_COLLECTIVE_OP_REDUCE},
        {"Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
        {"Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
        {"Scan", OTF2_COLLECTIVE_OP_SCAN},
        {"Exscan", OTF2_COLLECTIVE_OP_EXSCAN},
        {"Neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
        {"Neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"Neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
        {"Neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"Neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
    };
    char b[64];
    base_name(name, b, sizeof b);
    const char *n = b;
    if (n[0] == 'I' && strcmp(n, "Init") && strncmp(n, "Intercomm", 9))
        n++; /* non-blocking collectives: the role of their blocking form */
    size_t l = strlen(n);
    char c[64];
    snprintf(c, sizeof c, "%s", n);
    if (l > 5 && !strcmp(c + l - 5, "_init"))
        c[l - 5] = 0; /* persistent collectives */
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].n, c)) {
            *known = 1;
            return ops[i].op;
        }
    *known = 0;
    return OTF2_COLLECTIVE_OP_BARRIER;
}

static OTF2_RegionRole region_role(const char *name)
{
    int known;
    OTF2_CollectiveOp op = coll_op(name, &known);
    if (known) {
        switch (op) {
        case OTF2_COLLECTIVE_OP_BARRIER: return OTF2_REGION_ROLE_BARRIER;
        case OTF2_COLLECTIVE_OP_BCAST:
        case OTF2_COLLECTIVE_OP_SCATTER:
        case OTF2_COLLECTIVE_OP_SCATTERV: return OTF2_REGION_ROLE_COLL_ONE2ALL;
        case OTF2_COLLECTIVE_OP_GATHER:
        case OTF2_COLLECTIVE_OP_GATHERV:
        case OTF2_COLLECTIVE_OP_REDUCE: return OTF2_REGION_ROLE_COLL_ALL2ONE;
        case OTF2_COLLECTIVE_OP_SCAN:
        case OTF2_COLLECTIVE_OP_EXSCAN: return OTF2_REGION_ROLE_COLL_OTHER;
        default: return OTF2_REGION_ROLE_COLL_ALL2ALL;
        }
    }
    char b[64];
    base_name(name, b, sizeof b);
    static const char *const p2p[] = {"Send", "Ssend", "Bsend", "Rsend", "Recv", "Isend", "Issend", "Ibsend",
                                      "Irsend", "Irecv", "Sendrecv", "Sendrecv_replace", "Isendrecv",
                                      "Isendrecv_replace", "Probe", "Iprobe", "Mprobe", "Improbe", "Mrecv", "Imrecv",
                                      "Send_init", "Ssend_init", "Bsend_init", "Rsend_init", "Recv_init", "Start",
                                      "Startall", "Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall",
                                      "Testany", "Testsome", "Cancel", "Request_free", "Request_get_status"};
    for (size_t i = 0; i < sizeof p2p / sizeof p2p[0]; i++)
        if (!strcmp(p2p[i], b))
            return OTF2_REGION_ROLE_POINT2POINT;
    if (!strncmp(b, "File_", 5))
        return OTF2_REGION_ROLE_FILE_IO;
    if (!strcmp(b, "Put") || !strcmp(b, "Get") || !strcmp(b, "Rput") || !strcmp(b, "Rget"))
        return OTF2_REGION_ROLE_RMA;
    return OTF2_REGION_ROLE_FUNCTION;
}

/* ------------------------------------------------------------------ definitions */

static int collect_defs(ex *x)
{
    x->rank_region = calloc(x->nranks, sizeof *x->rank_region);
    x->rank_comm = calloc(x->nranks, sizeof *x->rank_comm);
    if (!x->rank_region || !x->rank_comm)
        return oom(x);
    for (uint32_t r = 0; r < x->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(x->t, r);
        x->rank_region[r] = calloc(rk->nfuncs + 1, sizeof **x->rank_region);
        x->rank_comm[r] = calloc(rk->ncomms + 1, sizeof **x->rank_comm);
        if (!x->rank_region[r] || !x->rank_comm[r])
            return oom(x);
        for (size_t f = 0; f < rk->nfuncs; f++)
            if (region_ref(x, rk->funcs[f].name, &x->rank_region[r][f]))
                return -1;
        for (size_t c = 0; c < rk->ncomms; c++) {
            const vt_comm *vc = &rk->comms[c];
            size_t k = 0;
            while (k < x->ncomms && x->comms[k].id != vc->id)
                k++;
            if (k == x->ncomms) {
                if (vt__export_grow((void **)&x->comms, &x->capcomms, x->ncomms + 1, sizeof *x->comms))
                    return oom(x);
                gcomm *g = &x->comms[x->ncomms++];
                g->id = vc->id;
                g->size = vc->size;
                g->members = vc->members;
                g->how = vc->how;
                g->parent_id = vc->parent >= 0 && (size_t)vc->parent < rk->ncomms ? (int64_t)rk->comms[vc->parent].id
                                                                                    : -1;
            }
            x->rank_comm[r][c] = (uint32_t)k;
        }
    }
    if (region_ref(x, "vtrace:flush", &x->r_flush) || region_ref(x, "computation", &x->r_comp) ||
        region_ref(x, "vtrace:aggregated", &x->r_aggr))
        return -1;
    x->world = OTF2_UNDEFINED_COMM;
    for (size_t k = 0; k < x->ncomms; k++)
        if (x->comms[k].id == 1)
            x->world = (uint32_t)k;
    return 0;
}

/* Rank of world rank W in communicator C; OTF2_UNDEFINED_UINT32 when not a member. */
static uint32_t comm_rank(const ex *x, uint32_t c, int64_t w)
{
    if (w < 0 || c >= x->ncomms)
        return OTF2_UNDEFINED_UINT32;
    const gcomm *g = &x->comms[c];
    if ((uint64_t)w < g->size && g->members[w] == (uint32_t)w)
        return (uint32_t)w;
    for (uint32_t i = 0; i < g->size; i++)
        if (g->members[i] == (uint32_t)w)
            return i;
    return OTF2_UNDEFINED_UINT32;
}

static int write_global_defs(ex *x)
{
    OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(x->ar);
    if (!w)
        return fail(x, "OTF2_Archive_GetGlobalDefWriter", OTF2_ERROR_INVALID);
    uint64_t goff = x->gmin > 0 ? (uint64_t)x->gmin : 0;
    uint64_t glen = x->gmax > x->gmin ? (uint64_t)(x->gmax - x->gmin) : 0;
    CHECK(x, "WriteClockProperties",
          OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000u, goff, glen, OTF2_UNDEFINED_TIMESTAMP));

    /* Strings first (every name the definitions below use). */
    uint32_t s_empty, s_machine, s_mclass, s_nclass, s_mpi, s_world_grp, s_loc_grp;
    if (str_ref(x, "", &s_empty) || str_ref(x, "machine", &s_machine) || str_ref(x, "machine", &s_mclass) ||
        str_ref(x, "node", &s_nclass) || str_ref(x, "MPI", &s_mpi) || str_ref(x, "MPI_COMM_WORLD", &s_world_grp) ||
        str_ref(x, "MPI locations", &s_loc_grp))
        return -1;
    uint32_t *rname = calloc(x->nregions, sizeof *rname);
    uint32_t *host = calloc(x->nranks, sizeof *host), *lname = calloc(x->nranks, sizeof *lname);
    uint32_t *cname = calloc(x->ncomms + 1, sizeof *cname);
    int rc = -1;
    if (!rname || !host || !lname || !cname) {
        oom(x);
        goto out;
    }
    for (size_t i = 0; i < x->nregions; i++)
        if (str_ref(x, x->rnames[i], &rname[i]))
            goto out;
    for (uint32_t r = 0; r < x->nranks; r++) {
        char b[64];
        snprintf(b, sizeof b, "MPI Rank %" PRIu32, r);
        if (str_ref(x, vt__export_host(x->t, r), &host[r]) || str_ref(x, b, &lname[r]))
            goto out;
    }
    for (size_t k = 0; k < x->ncomms; k++) {
        char b[96];
        const gcomm *g = &x->comms[k];
        if (g->id == 1)
            snprintf(b, sizeof b, "MPI_COMM_WORLD");
        else if (g->how && !strcmp(g->how, "self") && g->size == 1)
            snprintf(b, sizeof b, "MPI_COMM_SELF (rank %" PRIu32 ")", g->members[0]);
        else
            snprintf(b, sizeof b, "%s 0x%" PRIx64, g->how && g->how[0] ? g->how : "comm", g->id);
        if (str_ref(x, b, &cname[k]))
            goto out;
    }
    for (size_t i = 0; i < x->nstrs; i++)
        if ((rc = OTF2_GlobalDefWriter_WriteString(w, (uint32_t)i, x->strs[i])) != OTF2_SUCCESS) {
            rc = fail(x, "WriteString", (OTF2_ErrorCode)rc);
            goto out;
        }
    rc = -1;

    for (size_t i = 0; i < x->nregions; i++) {
        const char *n = x->rnames[i];
        int mpi = !strncmp(n, "MPI_", 4);
        OTF2_RegionRole role = mpi ? region_role(n) : (uint32_t)i == x->r_comp ? OTF2_REGION_ROLE_FUNCTION
                                                                               : OTF2_REGION_ROLE_ARTIFICIAL;
        OTF2_Paradigm par = mpi ? OTF2_PARADIGM_MPI
                                : (uint32_t)i == x->r_comp ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MEASUREMENT_SYSTEM;
        OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteRegion(w, (uint32_t)i, rname[i], rname[i], s_empty, role, par,
                                                            OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
        if (e != OTF2_SUCCESS) {
            fail(x, "WriteRegion", e);
            goto out;
        }
    }

    /* System tree: the machine, one node per host. */
    OTF2_ErrorCode e =
        OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, s_machine, s_mclass, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    if (e != OTF2_SUCCESS) {
        fail(x, "WriteSystemTreeNode", e);
        goto out;
    }
    uint32_t *node = calloc(x->nranks, sizeof *node);
    if (!node) {
        oom(x);
        goto out;
    }
    uint32_t nnodes = 0;
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++) {
        uint32_t q = 0;
        while (q < r && host[q] != host[r])
            q++;
        if (q < r) {
            node[r] = node[q];
            continue;
        }
        node[r] = ++nnodes;
        e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, node[r], host[r], s_nclass, 0);
    }
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++)
        e = OTF2_GlobalDefWriter_WriteLocationGroup(w, r, lname[r], OTF2_LOCATION_GROUP_TYPE_PROCESS, node[r],
                                                    OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++)
        e = OTF2_GlobalDefWriter_WriteLocation(w, r, lname[r], OTF2_LOCATION_TYPE_CPU_THREAD, x->nevents[r], r);
    free(node);
    if (e != OTF2_SUCCESS) {
        fail(x, "WriteSystemTreeNode/LocationGroup/Location", e);
        goto out;
    }

    /* Groups: the MPI locations (group 0, rank r is location r), then one group of world
     * ranks per communicator (group k + 1 for communicator k). */
    uint64_t *mem = malloc(((size_t)x->nranks + 1) * sizeof *mem);
    if (!mem) {
        oom(x);
        goto out;
    }
    for (uint32_t r = 0; r < x->nranks; r++)
        mem[r] = r;
    e = OTF2_GlobalDefWriter_WriteGroup(w, 0, s_loc_grp, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, x->nranks, mem);
    free(mem);
    for (size_t k = 0; k < x->ncomms && e == OTF2_SUCCESS; k++) {
        const gcomm *g = &x->comms[k];
        uint64_t *m = malloc(((size_t)g->size + 1) * sizeof *m);
        if (!m) {
            oom(x);
            goto out;
        }
        for (uint32_t i = 0; i < g->size; i++)
            m[i] = g->members[i];
        e = OTF2_GlobalDefWriter_WriteGroup(w, (uint32_t)k + 1, g->id == 1 ? s_world_grp : cname[k],
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                            g->size, m);
        free(m);
    }
    for (size_t k = 0; k < x->ncomms && e == OTF2_SUCCESS; k++) {
        const gcomm *g = &x->comms[k];
        uint32_t parent = OTF2_UNDEFINED_COMM;
        for (size_t q = 0; q < x->ncomms; q++)
            if (g->parent_id >= 0 && x->comms[q].id == (uint64_t)g->parent_id)
                parent = (uint32_t)q;
        e = OTF2_GlobalDefWriter_WriteComm(w, (uint32_t)k, cname[k], (uint32_t)k + 1, parent, OTF2_COMM_FLAG_NONE);
    }
    if (e != OTF2_SUCCESS) {
        fail(x, "WriteGroup/WriteComm", e);
        goto out;
    }
    rc = 0;
out:
    free(rname);
    free(host);
    free(lname);
    free(cname);
    return rc;
}

/* Local definitions: the clock offsets of each location. */
static int write_local_defs(ex *x)
{
    CHECK(x, "OTF2_Archive_OpenDefFiles", OTF2_Archive_OpenDefFiles(x->ar));
    for (uint32_t r = 0; r < x->nranks; r++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(x->ar, r);
        if (!dw)
            return fail(x, "OTF2_Archive_GetDefWriter", OTF2_ERROR_INVALID);
        const vt_rank *rk = vt_trace_rank(x->t, r);
        const vt_clock *c = &rk->clock;
        /* vtrace's offset: linear between the two synchronisations, constant outside. */
        int64_t pts[4];
        int n = 0;
        if (x->nevents[r] && x->first[r] < c->t1)
            pts[n++] = x->first[r];
        pts[n++] = c->t1;
        if (c->t2 > c->t1)
            pts[n++] = c->t2;
        if (x->nevents[r] && x->last[r] > pts[n - 1])
            pts[n++] = x->last[r];
        for (int i = 0; i < n; i++) {
            int64_t off = c->same_clock ? 0 : vt_global_time(x->t, r, pts[i]) - pts[i];
            CHECK(x, "WriteClockOffset",
                  OTF2_DefWriter_WriteClockOffset(dw, pts[i] > 0 ? (uint64_t)pts[i] : 0, off, 0.0));
        }
        CHECK(x, "OTF2_Archive_CloseDefWriter", OTF2_Archive_CloseDefWriter(x->ar, dw));
    }
    CHECK(x, "OTF2_Archive_CloseDefFiles", OTF2_Archive_CloseDefFiles(x->ar));
    return 0;
}

/* ------------------------------------------------------------------ events */

typedef struct loc {
    ex *x;
    uint32_t rank;
    OTF2_EvtWriter *w;
    int64_t last; /* last local time written */
    int any;
} loc;

/* Local time, never before the previous one of the location (OTF2 wants them ordered). */
static OTF2_TimeStamp ts(loc *l, int64_t t)
{
    if (l->any && t < l->last)
        t = l->last;
    if (t < 0)
        t = 0;
    if (!l->any) {
        l->x->first[l->rank] = t;
        l->any = 1;
    }
    l->last = t;
    int64_t g = vt_global_time(l->x->t, l->rank, t);
    if (g < l->x->gmin)
        l->x->gmin = g;
    if (g > l->x->gmax)
        l->x->gmax = g;
    return (OTF2_TimeStamp)t;
}

#define EV(l, what, call) CHECK((l)->x, what, call)

static int ev_comm(loc *l, int64_t index, uint32_t *c)
{
    const vt_rank *rk = vt_trace_rank(l->x->t, l->rank);
    if (index < 0 || (size_t)index >= rk->ncomms)
        return 0;
    *c = l->x->rank_comm[l->rank][index];
    return 1;
}

static int full_rank(ex *x, loc *l, vt__progress *p, uint64_t *done)
{
    const vt_trace *t = x->t;
    uint32_t r = l->rank;
    vt_cursor *cur;
    if (vt_cursor_open(t, r, &cur, x->err))
        return -1;
    req_map reqs = {0}, msgs = {0};
    vt_event ev;
    int got, rc = -1;
    while ((got = vt_cursor_next(cur, &ev, x->err)) == 1) {
        if (++*done % 4096 == 0)
            vt__progress_update(p, *done);
        OTF2_EvtWriter *w = l->w;
        if (ev.fn < 0) {
            if (ev.code != VT_CODE_FLUSH)
                continue;
            if (OTF2_EvtWriter_Enter(w, NULL, ts(l, ev.enter), x->r_flush) != OTF2_SUCCESS ||
                OTF2_EvtWriter_Leave(w, NULL, ts(l, ev.exit), x->r_flush) != OTF2_SUCCESS) {
                fail(x, "EvtWriter_Enter/Leave", OTF2_ERROR_INVALID);
                goto out;
            }
            continue;
        }
        const vt_function *f = vt_trace_function(t, r, ev.fn);
        uint32_t region = x->rank_region[r][ev.fn];
        unsigned fl = ev.fields;
        char b[64];
        base_name(f->name, b, sizeof b);
        size_t bl = strlen(b);
        int is_init = bl > 5 && !strcmp(b + bl - 5, "_init");
        int is_probe = strstr(b, "probe") || strstr(b, "Probe"); /* Probe, Iprobe, Mprobe, Improbe */
        uint32_t comm = OTF2_UNDEFINED_COMM;
        int has_comm = (fl & VT_F_COMM) && ev_comm(l, ev.comm, &comm);
        OTF2_ErrorCode e = OTF2_SUCCESS;
        OTF2_TimeStamp t0 = ts(l, ev.enter);
        e = OTF2_EvtWriter_Enter(w, NULL, t0, region);

        int coll = (fl & VT_F_COLLSEQ) && !(fl & (VT_F_REQUEST | VT_F_NEWCOMM)) && has_comm;
        int known = 0;
        OTF2_CollectiveOp op = coll ? coll_op(f->name, &known) : OTF2_COLLECTIVE_OP_BARRIER;
        coll = coll && known;
        if (coll && e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t0);

        /* Send side at the enter. */
        if ((fl & VT_F_PEER) && has_comm && e == OTF2_SUCCESS) {
            if (fl & VT_F_REQUEST) {
                req_ent *q = req_find(&reqs, ev.request, 1);
                if (!q) {
                    oom(x);
                    goto out;
                }
                q->send = 1;
                q->coll = 0;
                q->comm = comm;
                q->peer = ev.peer;
                q->tag = ev.tag;
                q->bytes = ev.bytes;
                q->persistent = is_init;
                q->active = !is_init && ev.peer >= 0;
                if (q->active)
                    e = OTF2_EvtWriter_MpiIsend(w, NULL, t0, comm_rank(x, comm, ev.peer), comm, (uint32_t)ev.tag,
                                                ev.bytes, ev.request);
            } else if (ev.peer >= 0) {
                e = OTF2_EvtWriter_MpiSend(w, NULL, t0, comm_rank(x, comm, ev.peer), comm, (uint32_t)ev.tag, ev.bytes);
            }
        }
        /* Non-blocking and persistent receives: their request. */
        if ((fl & VT_F_REQUEST) && !(fl & (VT_F_PEER | VT_F_COLLSEQ | VT_F_NEWCOMM | VT_F_FILE)) &&
            (has_comm || (fl & VT_F_MSG)) && e == OTF2_SUCCESS && ev.request) {
            uint32_t c = comm;
            if (!has_comm) { /* MPI_Imrecv: the communicator of its probe */
                req_ent *m = req_find(&msgs, ev.msg, 0);
                c = m ? m->comm : OTF2_UNDEFINED_COMM;
            }
            if (c != OTF2_UNDEFINED_COMM) {
                req_ent *q = req_find(&reqs, ev.request, 1);
                if (!q) {
                    oom(x);
                    goto out;
                }
                q->send = 0;
                q->coll = 0;
                q->comm = c;
                q->persistent = is_init;
                q->active = !is_init;
                if (q->active)
                    e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t0, ev.request);
            }
        } else if ((fl & VT_F_REQUEST) && (fl & (VT_F_COLLSEQ | VT_F_NEWCOMM | VT_F_FILE)) && ev.request) {
            req_ent *q = req_find(&reqs, ev.request, 0); /* an id reused by another kind of request */
            if (q)
                req_forget(q);
        }
        /* Persistent requests started. */
        for (size_t i = 0; i < ev.nstarted && e == OTF2_SUCCESS; i++) {
            req_ent *q = req_find(&reqs, ev.started[i], 0);
            if (!q || !q->persistent || q->comm == OTF2_UNDEFINED_COMM)
                continue;
            if (q->send && q->peer >= 0) {
                q->active = 1;
                e = OTF2_EvtWriter_MpiIsend(w, NULL, t0, comm_rank(x, q->comm, q->peer), q->comm, (uint32_t)q->tag,
                                            q->bytes, ev.started[i]);
            } else if (!q->send) {
                q->active = 1;
                e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t0, ev.started[i]);
            }
        }

        OTF2_TimeStamp t1 = ts(l, ev.exit);
        /* Blocking receives (probes receive nothing) at the exit. */
        if ((fl & VT_F_RPEER) && !is_probe && e == OTF2_SUCCESS && ev.rpeer >= 0) {
            uint32_t c = comm;
            if (!has_comm) { /* MPI_Mrecv */
                req_ent *m = req_find(&msgs, ev.msg, 0);
                c = m ? m->comm : OTF2_UNDEFINED_COMM;
            }
            if (c != OTF2_UNDEFINED_COMM)
                e = OTF2_EvtWriter_MpiRecv(w, NULL, t1, comm_rank(x, c, ev.rpeer), c, (uint32_t)ev.rtag, ev.rbytes);
        }
        if (is_probe && (fl & VT_F_MSG) && has_comm) { /* a matched message: its communicator */
            req_ent *m = req_find(&msgs, ev.msg, 1);
            if (!m) {
                oom(x);
                goto out;
            }
            m->comm = comm;
        }
        /* Completions. */
        for (size_t i = 0; i < ev.ndone && e == OTF2_SUCCESS; i++) {
            const vt_completion *d = &ev.done[i];
            req_ent *q = req_find(&reqs, d->request, 0);
            if (!q || !q->active || q->comm == OTF2_UNDEFINED_COMM)
                continue;
            if (d->flags & 2u)
                e = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t1, d->request);
            else if (q->send)
                e = OTF2_EvtWriter_MpiIsendComplete(w, NULL, t1, d->request);
            else if (d->peer >= 0)
                e = OTF2_EvtWriter_MpiIrecv(w, NULL, t1, comm_rank(x, q->comm, d->peer), q->comm, (uint32_t)d->tag,
                                            d->bytes, d->request);
            else /* from MPI_PROC_NULL: no message, the request ends */
                e = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t1, d->request);
            q->active = 0;
            if (!q->persistent)
                req_forget(q);
        }
        if (!strcmp(b, "Request_free") && (fl & VT_F_REQUEST)) {
            req_ent *q = req_find(&reqs, ev.request, 0);
            if (q && !q->active)
                req_forget(q);
        }
        if (coll && e == OTF2_SUCCESS) {
            uint32_t root = OTF2_UNDEFINED_UINT32;
            if ((fl & VT_F_ROOT) && ev.root >= 0)
                root = comm_rank(x, comm, ev.root);
            e = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t1, op, comm, root, ev.bytes, ev.rbytes);
        }
        if (e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_Leave(w, NULL, t1, region);
        if (e != OTF2_SUCCESS) {
            fail(x, "an OTF2_EvtWriter call", e);
            goto out;
        }
    }
    if (got == 0)
        rc = 0;
out:
    free(reqs.v);
    free(msgs.v);
    vt_cursor_close(cur);
    return rc;
}

/* Reduced traces, first pass: every message a COMP record keeps, by sender. */
typedef struct rsend_lists {
    ex *x;
    size_t *cap;
} rsend_lists;

static int add_rsend(void *arg, uint32_t r, const vt_rrec *rr, const vt_rmsg *m, uint64_t id)
{
    rsend_lists *L = arg;
    ex *x = L->x;
    if (vt__export_grow((void **)&x->rsends[m->src], &L->cap[m->src], x->nrsends[m->src] + 1, sizeof **x->rsends))
        return oom(x);
    struct rsend *s = &x->rsends[m->src][x->nrsends[m->src]++];
    s->S = m->S;
    s->seq = m->send_seq;
    s->dst = r;
    s->bytes = m->bytes;
    return 0;
}

static int collect_rsends(ex *x)
{
    static const vt__xrrec_ops ops = {NULL, add_rsend};
    size_t *cap = calloc(x->nranks, sizeof *cap);
    x->rsends = calloc(x->nranks, sizeof *x->rsends);
    x->nrsends = calloc(x->nranks, sizeof *x->nrsends);
    if (!cap || !x->rsends || !x->nrsends) {
        free(cap);
        return oom(x);
    }
    rsend_lists L = {x, cap};
    int rc = vt__xrrecs_walk(x->t, &ops, &L, x->err);
    free(cap);
    return rc;
}

static int rsend_cmp(const void *a, const void *b)
{
    const struct rsend *p = a, *q = b;
    if (p->seq != q->seq)
        return p->seq < q->seq ? -1 : 1;
    return p->dst < q->dst ? -1 : p->dst > q->dst;
}

/* The sends of the location with S before END, inside the span [.., END] just entered. */
static OTF2_ErrorCode emit_rsends(ex *x, loc *l, size_t *next, int64_t end, int all)
{
    uint32_t r = l->rank;
    OTF2_ErrorCode e = OTF2_SUCCESS;
    while (*next < x->nrsends[r] && e == OTF2_SUCCESS && (all || x->rsends[r][*next].S < end)) {
        const struct rsend *s = &x->rsends[r][(*next)++];
        e = OTF2_EvtWriter_MpiSend(l->w, NULL, ts(l, s->S), s->dst, x->world, (uint32_t)s->seq, s->bytes);
    }
    return e;
}

static int reduced_rank(ex *x, loc *l, vt__progress *p, uint64_t *done)
{
    uint32_t r = l->rank;
    vt_cursor *cur;
    if (vt_cursor_open(x->t, r, &cur, x->err))
        return -1;
    vt_rrec rr;
    int got, have_prev = 0;
    int64_t prev_exit = 0;
    size_t next = 0;
    OTF2_ErrorCode e = OTF2_SUCCESS;
    while (e == OTF2_SUCCESS && (got = vt_cursor_next_reduced(cur, &rr, x->err)) == 1) {
        if (++*done % 4096 == 0)
            vt__progress_update(p, *done);
        /* The implicit stretch since the previous record. */
        if (have_prev && rr.enter > prev_exit) {
            e = OTF2_EvtWriter_Enter(l->w, NULL, ts(l, prev_exit), x->r_aggr);
            if (e == OTF2_SUCCESS)
                e = emit_rsends(x, l, &next, rr.enter, 0);
            if (e == OTF2_SUCCESS)
                e = OTF2_EvtWriter_Leave(l->w, NULL, ts(l, rr.enter), x->r_aggr);
        }
        have_prev = 1;
        if (rr.exit > prev_exit || rr.kind == VT_RREC_START)
            prev_exit = rr.exit;
        if (e != OTF2_SUCCESS || rr.kind == VT_RREC_START || rr.kind == VT_RREC_END)
            continue;
        uint32_t region = x->r_comp;
        if (rr.fn >= 0) {
            if ((size_t)rr.fn >= vt_trace_rank(x->t, r)->nfuncs)
                continue;
            region = x->rank_region[r][rr.fn];
        }
        e = OTF2_EvtWriter_Enter(l->w, NULL, ts(l, rr.enter), region);
        if (e == OTF2_SUCCESS)
            e = emit_rsends(x, l, &next, rr.exit, 0);
        if (rr.kind == VT_RREC_COMP)
            for (size_t i = 0; i < rr.nmsgs && e == OTF2_SUCCESS; i++)
                e = OTF2_EvtWriter_MpiRecv(l->w, NULL, ts(l, rr.exit), rr.msgs[i].src, x->world,
                                           (uint32_t)rr.msgs[i].send_seq, rr.msgs[i].bytes);
        if (e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_Leave(l->w, NULL, ts(l, rr.exit), region);
    }
    if (e == OTF2_SUCCESS && got >= 0) /* sends after the last record (none in a sound trace) */
        e = emit_rsends(x, l, &next, 0, 1);
    vt_cursor_close(cur);
    if (got < 0)
        return -1;
    if (e != OTF2_SUCCESS)
        return fail(x, "an OTF2_EvtWriter call", e);
    return 0;
}

/* ------------------------------------------------------------------ archive */

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc_, void *cd, bool final)
{
    (void)ud;
    (void)ft;
    (void)loc_;
    (void)cd;
    (void)final;
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cbs = {pre_flush, NULL};

/* OUT: created when missing (its parent must exist); refused when it already holds an
 * archive, so an export never mixes with an older one. */
static int prepare_out(ex *x)
{
    const char *out = x->o->out;
    struct stat st;
    if (stat(out, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(x->err->msg, sizeof x->err->msg, "%s: exists and is not a directory (OTF2 writes a directory)",
                     out);
            return -1;
        }
        char p[4096];
        snprintf(p, sizeof p, "%s/" ARCHIVE ".otf2", out);
        if (access(p, F_OK) == 0) {
            snprintf(x->err->msg, sizeof x->err->msg,
                     "%s: already holds an OTF2 archive (" ARCHIVE ".otf2); remove it or choose another OUT", out);
            return -1;
        }
    } else if (mkdir(out, 0777) != 0) {
        snprintf(x->err->msg, sizeof x->err->msg, "%s: cannot create the output directory: %s", out, strerror(errno));
        return -1;
    }
    if (access(out, W_OK | X_OK) != 0) {
        snprintf(x->err->msg, sizeof x->err->msg, "%s: cannot write in the output directory: %s", out,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static int export_all(ex *x)
{
    if (prepare_out(x) || collect_defs(x))
        return -1;
    if (x->reduced && x->world == OTF2_UNDEFINED_COMM) {
        snprintf(x->err->msg, sizeof x->err->msg, "%s: no rank defines MPI_COMM_WORLD", vt_trace_dir(x->t));
        return -1;
    }
    if (x->reduced && collect_rsends(x))
        return -1;
    if (x->reduced)
        for (uint32_t r = 0; r < x->nranks; r++)
            qsort(x->rsends[r], x->nrsends[r], sizeof **x->rsends, rsend_cmp);

    x->ar = OTF2_Archive_Open(x->o->out, ARCHIVE, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!x->ar)
        return fail(x, "OTF2_Archive_Open", OTF2_ERROR_INVALID);
    CHECK(x, "OTF2_Archive_SetFlushCallbacks", OTF2_Archive_SetFlushCallbacks(x->ar, &flush_cbs, NULL));
    CHECK(x, "OTF2_Archive_SetSerialCollectiveCallbacks", OTF2_Archive_SetSerialCollectiveCallbacks(x->ar));
    CHECK(x, "OTF2_Archive_SetCreator", OTF2_Archive_SetCreator(x->ar, "vtrace export " PACKAGE_VERSION));
    char desc[512];
    snprintf(desc, sizeof desc, "%s trace %s, written by %s", x->reduced ? "vtrace reduced" : "vtrace",
             vt_trace_dir(x->t), vt_trace_version(x->t));
    CHECK(x, "OTF2_Archive_SetDescription", OTF2_Archive_SetDescription(x->ar, desc));
    CHECK(x, "OTF2_Archive_OpenEvtFiles", OTF2_Archive_OpenEvtFiles(x->ar));

    vt__progress p;
    vt__progress_start(&p, "otf2", vt_trace_nrecords(x->t), x->o->quiet);
    uint64_t done = 0;
    int rc = 0;
    for (uint32_t r = 0; r < x->nranks && !rc; r++) {
        loc l = {x, r, OTF2_Archive_GetEvtWriter(x->ar, r), 0, 0};
        if (!l.w) {
            rc = fail(x, "OTF2_Archive_GetEvtWriter", OTF2_ERROR_INVALID);
            break;
        }
        rc = x->reduced ? reduced_rank(x, &l, &p, &done) : full_rank(x, &l, &p, &done);
        x->last[r] = l.last;
        if (!rc && OTF2_EvtWriter_GetNumberOfEvents(l.w, &x->nevents[r]) != OTF2_SUCCESS)
            rc = fail(x, "OTF2_EvtWriter_GetNumberOfEvents", OTF2_ERROR_INVALID);
        OTF2_ErrorCode e = OTF2_Archive_CloseEvtWriter(x->ar, l.w);
        if (!rc && e != OTF2_SUCCESS)
            rc = fail(x, "OTF2_Archive_CloseEvtWriter", e);
    }
    vt__progress_end(&p);
    if (rc)
        return -1;
    CHECK(x, "OTF2_Archive_CloseEvtFiles", OTF2_Archive_CloseEvtFiles(x->ar));
    if (x->gmax < x->gmin)
        x->gmin = x->gmax = 0;
    if (write_local_defs(x) || write_global_defs(x))
        return -1;
    OTF2_ErrorCode e = OTF2_Archive_Close(x->ar);
    x->ar = NULL;
    if (e != OTF2_SUCCESS)
        return fail(x, "OTF2_Archive_Close", e);
    return 0;
}

int vt__export_otf2(const vt_trace *t, const vt__export_opts *o, vt_error *err)
{
    ex x;
    memset(&x, 0, sizeof x);
    x.t = t;
    x.o = o;
    x.err = err;
    x.nranks = vt_trace_nranks(t);
    x.reduced = vt_trace_is_reduced(t);
    x.gmin = INT64_MAX;
    x.gmax = INT64_MIN;
    otf2_msg[0] = 0;
    OTF2_Error_RegisterCallback(otf2_error_cb, NULL);
    x.first = calloc(x.nranks + 1, sizeof *x.first);
    x.last = calloc(x.nranks + 1, sizeof *x.last);
    x.nevents = calloc(x.nranks + 1, sizeof *x.nevents);
    int rc = (!x.first || !x.last || !x.nevents) ? oom(&x) : export_all(&x);
    if (x.ar)
        OTF2_Archive_Close(x.ar);
    for (size_t i = 0; i < x.nstrs; i++)
        free(x.strs[i]);
    free(x.strs);
    free(x.rnames);
    for (uint32_t r = 0; r < x.nranks; r++) {
        if (x.rank_region)
            free(x.rank_region[r]);
        if (x.rank_comm)
            free(x.rank_comm[r]);
        if (x.rsends)
            free(x.rsends[r]);
    }
    free(x.rank_region);
    free(x.rank_comm);
    free(x.rsends);
    free(x.nrsends);
    free(x.comms);
    free(x.first);
    free(x.last);
    free(x.nevents);
    return rc;
}

#endif
