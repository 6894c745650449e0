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
 * (low 32 bits), which pairs every send with its receive.
 * This file writes the definitions and the archive; export_otf2_events.c the events
 * (export_otf2.h). */
#include "vt_config.h"
#include "tools/export.h"

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

#include "tools/export_otf2.h"
#include "util/aside.h"
#include "analysis/symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARCHIVE "traces"

/* ------------------------------------------------------------------ definitions */

/* The ref of name S in NAMES (N of them, indexed by IX), added (strdup'ed when COPY)
 * when new. The definitions grow with the ranks (a name and a communicator a rank, and
 * more): found by hash. */
static int name_ref(ex *x, char ***names, size_t *n, size_t *cap, vt_ixhash *ix, const char *s, int copy,
                    uint32_t *ref)
{
    uint32_t hash = vt_ixhash_str(s);
    size_t pos = VT_IXHASH_START;
    for (uint32_t i; (i = vt_ixhash_next(ix, hash, &pos)) != VT_IXHASH_NONE;)
        if (!strcmp((*names)[i], s)) {
            *ref = i;
            return 0;
        }
    if (vt__export_grow((void **)names, cap, *n + 1, sizeof **names))
        return vt__otf2_oom(x);
    char *v = copy ? strdup(s) : (char *)s;
    if (!v || vt_ixhash_add(ix, hash, (uint32_t)*n)) {
        if (copy)
            free(v);
        return vt__otf2_oom(x);
    }
    (*names)[*n] = v;
    *ref = (uint32_t)(*n)++;
    return 0;
}

static int str_ref(ex *x, const char *s, uint32_t *ref)
{
    return name_ref(x, &x->strs, &x->nstrs, &x->capstrs, &x->strs_ix, s, 1, ref);
}

/* (names stay the trace's: not copied) */
static int region_ref(ex *x, const char *name, uint32_t *ref)
{
    return name_ref(x, (char ***)&x->rnames, &x->nregions, &x->capregions, &x->regions_ix, name, 0, ref);
}

/* The index of the communicator ID in x->comms, or x->ncomms. */
static size_t comm_index(const ex *x, uint64_t id)
{
    size_t pos = VT_IXHASH_START;
    for (uint32_t i; (i = vt_ixhash_next(&x->comms_ix, vt_ixhash_u64(id), &pos)) != VT_IXHASH_NONE;)
        if (x->comms[i].id == id)
            return i;
    return x->ncomms;
}

static OTF2_RegionRole region_role(const char *name)
{
    int known;
    OTF2_CollectiveOp op = vt__otf2_coll_op(name, &known);
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
    vt__otf2_base_name(name, b, sizeof b);
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

/* Each call site's name, and its source-code location (file and line) where debug
 * information gives one; locations shared by ranks are defined once. */
static int collect_sites(ex *x, uint32_t r)
{
    const vt_rank *rk = vt_trace_rank(x->t, r);
    x->rank_site[r] = calloc(rk->ncallsites + 1, sizeof **x->rank_site);
    x->rank_scl[r] = calloc(rk->ncallsites + 1, sizeof **x->rank_scl);
    if (!x->rank_site[r] || !x->rank_scl[r])
        return vt__otf2_oom(x);
    for (size_t i = 0; i < rk->ncallsites; i++) {
        uint32_t ref, file;
        vt_srcloc sl;
        if (str_ref(x, vt_site_name(x->t, r, (int64_t)i), &ref))
            return -1;
        x->rank_site[r][i] = ref + 1;
        if (!vt_symbols_resolve(x->t, r, (int64_t)i, &sl))
            continue;
        if (str_ref(x, sl.file, &file))
            return -1;
        uint32_t hash = vt_ixhash_u64((uint64_t)file << 32 | (uint32_t)sl.line), k = VT_IXHASH_NONE;
        size_t pos = VT_IXHASH_START;
        while ((k = vt_ixhash_next(&x->scl_ix, hash, &pos)) != VT_IXHASH_NONE &&
               !(x->scl_file[k] == file && x->scl_line[k] == (uint32_t)sl.line))
            ;
        if (k == VT_IXHASH_NONE) {
            k = (uint32_t)x->nscl;
            size_t cap = x->capscl;
            if (vt__export_grow((void **)&x->scl_file, &cap, x->nscl + 1, sizeof *x->scl_file) ||
                vt__export_grow((void **)&x->scl_line, &x->capscl, x->nscl + 1, sizeof *x->scl_line) ||
                vt_ixhash_add(&x->scl_ix, hash, k))
                return vt__otf2_oom(x);
            x->scl_file[k] = file;
            x->scl_line[k] = (uint32_t)sl.line;
            x->nscl++;
        }
        x->rank_scl[r][i] = (uint32_t)k + 1;
    }
    return 0;
}

static int collect_defs(ex *x)
{
    x->rank_region = calloc(x->nranks, sizeof *x->rank_region);
    x->rank_comm = calloc(x->nranks, sizeof *x->rank_comm);
    x->rank_site = calloc(x->nranks, sizeof *x->rank_site);
    x->rank_scl = calloc(x->nranks, sizeof *x->rank_scl);
    x->al = OTF2_AttributeList_New();
    if (!x->rank_region || !x->rank_comm || !x->rank_site || !x->rank_scl || !x->al)
        return vt__otf2_oom(x);
    if (str_ref(x, "vtrace:call site", &x->s_attr_site) ||
        str_ref(x, "the MPI call's call site: function (file:line), or module+offset", &x->s_attr_site_desc) ||
        str_ref(x, "vtrace:source", &x->s_attr_src) ||
        str_ref(x, "the MPI call's source file and line (debug information)", &x->s_attr_src_desc))
        return -1;
    for (uint32_t r = 0; r < x->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(x->t, r);
        x->rank_region[r] = calloc(rk->nfuncs + 1, sizeof **x->rank_region);
        x->rank_comm[r] = calloc(rk->ncomms + 1, sizeof **x->rank_comm);
        if (!x->rank_region[r] || !x->rank_comm[r])
            return vt__otf2_oom(x);
        for (size_t f = 0; f < rk->nfuncs; f++)
            if (region_ref(x, rk->funcs[f].name, &x->rank_region[r][f]))
                return -1;
        if (collect_sites(x, r))
            return -1;
        for (size_t c = 0; c < rk->ncomms; c++) {
            const vt_comm *vc = &rk->comms[c];
            size_t k = comm_index(x, vc->id);
            if (k == x->ncomms) {
                if (vt__export_grow((void **)&x->comms, &x->capcomms, x->ncomms + 1, sizeof *x->comms) ||
                    vt_ixhash_add(&x->comms_ix, vt_ixhash_u64(vc->id), (uint32_t)k))
                    return vt__otf2_oom(x);
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

static int write_global_defs(ex *x)
{
    OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(x->ar);
    if (!w)
        return vt__otf2_fail(x, "OTF2_Archive_GetGlobalDefWriter", OTF2_ERROR_INVALID);
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
        vt__otf2_oom(x);
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
            rc = vt__otf2_fail(x, "WriteString", (OTF2_ErrorCode)rc);
            goto out;
        }
    rc = -1;
    OTF2_ErrorCode e0;

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
            vt__otf2_fail(x, "WriteRegion", e);
            goto out;
        }
    }

    /* Call sites: the two attributes of every call's Enter, and the source locations. */
    for (size_t k = 0; k < x->nscl; k++)
        if ((e0 = OTF2_GlobalDefWriter_WriteSourceCodeLocation(w, (uint32_t)k, x->scl_file[k], x->scl_line[k])) !=
            OTF2_SUCCESS) {
            vt__otf2_fail(x, "WriteSourceCodeLocation", e0);
            goto out;
        }
    if ((e0 = OTF2_GlobalDefWriter_WriteAttribute(w, 0, x->s_attr_site, x->s_attr_site_desc, OTF2_TYPE_STRING)) !=
            OTF2_SUCCESS ||
        (e0 = OTF2_GlobalDefWriter_WriteAttribute(w, 1, x->s_attr_src, x->s_attr_src_desc,
                                                  OTF2_TYPE_SOURCE_CODE_LOCATION)) != OTF2_SUCCESS) {
        vt__otf2_fail(x, "WriteAttribute", e0);
        goto out;
    }

    /* System tree: the machine, one node per host. */
    OTF2_ErrorCode e =
        OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, s_machine, s_mclass, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    if (e != OTF2_SUCCESS) {
        vt__otf2_fail(x, "WriteSystemTreeNode", e);
        goto out;
    }
    /* a node a host, numbered in the order of the ranks; by the host's string ref */
    uint32_t *node = calloc(x->nranks, sizeof *node), *host_node = calloc(x->nstrs, sizeof *host_node);
    if (!node || !host_node) {
        free(node);
        free(host_node);
        vt__otf2_oom(x);
        goto out;
    }
    uint32_t nnodes = 0;
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++) {
        if ((node[r] = host_node[host[r]]))
            continue;
        node[r] = host_node[host[r]] = ++nnodes;
        e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, node[r], host[r], s_nclass, 0);
    }
    free(host_node);
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++)
        e = OTF2_GlobalDefWriter_WriteLocationGroup(w, r, lname[r], OTF2_LOCATION_GROUP_TYPE_PROCESS, node[r],
                                                    OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t r = 0; r < x->nranks && e == OTF2_SUCCESS; r++)
        e = OTF2_GlobalDefWriter_WriteLocation(w, r, lname[r], OTF2_LOCATION_TYPE_CPU_THREAD, x->nevents[r], r);
    free(node);
    if (e != OTF2_SUCCESS) {
        vt__otf2_fail(x, "WriteSystemTreeNode/LocationGroup/Location", e);
        goto out;
    }

    /* Groups: the MPI locations (group 0, rank r is location r), then one group of world
     * ranks per communicator (group k + 1 for communicator k). */
    uint64_t *mem = malloc(((size_t)x->nranks + 1) * sizeof *mem);
    if (!mem) {
        vt__otf2_oom(x);
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
            vt__otf2_oom(x);
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
        size_t q = g->parent_id >= 0 ? comm_index(x, (uint64_t)g->parent_id) : x->ncomms;
        uint32_t parent = q < x->ncomms ? (uint32_t)q : OTF2_UNDEFINED_COMM;
        e = OTF2_GlobalDefWriter_WriteComm(w, (uint32_t)k, cname[k], (uint32_t)k + 1, parent, OTF2_COMM_FLAG_NONE);
    }
    if (e != OTF2_SUCCESS) {
        vt__otf2_fail(x, "WriteGroup/WriteComm", e);
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
            return vt__otf2_fail(x, "OTF2_Archive_GetDefWriter", OTF2_ERROR_INVALID);
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

/* libotf2's own allocator keeps up to 128 MB of chunks per event writer before it
 * flushes (the archive in memory up to there: ~100 bytes an event). An event writer's
 * chunks are refused past EVT_CHUNKS, which makes libotf2 flush them to its file and
 * start again: the file is the same, written as it is produced. Definition buffers are
 * not limited (they are not chunked, and small). */
#define EVT_CHUNKS 4

typedef struct chunks {
    void *v[EVT_CHUNKS];
    size_t n;
    void **more; /* other file types */
    size_t nmore, capmore;
} chunks;

static void *chunk_alloc(void *ud, OTF2_FileType ft, OTF2_LocationRef loc_, void **pb, uint64_t size)
{
    (void)ud;
    (void)loc_;
    chunks *c = *pb;
    if (!c && !(c = *pb = calloc(1, sizeof *c)))
        return NULL;
    if (ft == OTF2_FILETYPE_EVENTS && c->n == EVT_CHUNKS)
        return NULL; /* libotf2 flushes, frees them all, and asks again */
    if (ft != OTF2_FILETYPE_EVENTS && c->nmore == c->capmore) {
        size_t nc = c->capmore ? 2 * c->capmore : 4;
        void **nv = realloc(c->more, nc * sizeof *nv);
        if (!nv)
            return NULL;
        c->more = nv;
        c->capmore = nc;
    }
    void *m = malloc(size);
    if (m && ft == OTF2_FILETYPE_EVENTS)
        c->v[c->n++] = m;
    else if (m)
        c->more[c->nmore++] = m;
    return m;
}

static void chunk_free_all(void *ud, OTF2_FileType ft, OTF2_LocationRef loc_, void **pb, bool final)
{
    (void)ud;
    (void)ft;
    (void)loc_;
    chunks *c = *pb;
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    for (size_t i = 0; i < c->nmore; i++)
        free(c->more[i]);
    c->n = c->nmore = 0;
    if (final) {
        free(c->more);
        free(c);
        *pb = NULL;
    }
}

static const OTF2_MemoryCallbacks memory_cbs = {chunk_alloc, chunk_free_all};

/* VTRACE_OVERWRITE=replace: the archive's files in OUT (ARCHIVE.otf2, ARCHIVE.def and
 * the directory ARCHIVE of per-location files), not the rest of OUT. */
static void remove_archive(const char *out)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/" ARCHIVE, out);
    DIR *d = opendir(p);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            char f[4500];
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(f, sizeof f, "%s/%s", p, e->d_name);
                unlink(f);
            }
        }
        closedir(d);
        rmdir(p);
    }
    snprintf(p, sizeof p, "%s/" ARCHIVE ".def", out);
    unlink(p);
    snprintf(p, sizeof p, "%s/" ARCHIVE ".otf2", out);
    unlink(p);
}

/* OUT: created when missing (its parent must exist); refused when it already holds an
 * archive (vtrace export moved it aside before, or VTRACE_OVERWRITE=replace removed
 * it), so an export never mixes with an older one. */
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
        enum vt_overwrite policy;
        if (access(p, F_OK) == 0 && !vt_overwrite_from_env(&policy) && policy == VT_OVERWRITE_REPLACE)
            remove_archive(out);
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
    if (x->reduced && vt__otf2_collect_rsends(x))
        return -1;

    /* OTF2 gives each location's writers a chunk of each size, touched afresh (the
     * local definitions hold a clock offset or two): the smallest chunks, so that
     * 64K ranks do not cost 64K x 5 MB of pages */
    x->ar = OTF2_Archive_Open(x->o->out, ARCHIVE, OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_MIN, OTF2_CHUNK_SIZE_MIN,
                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!x->ar)
        return vt__otf2_fail(x, "OTF2_Archive_Open", OTF2_ERROR_INVALID);
    CHECK(x, "OTF2_Archive_SetFlushCallbacks", OTF2_Archive_SetFlushCallbacks(x->ar, &flush_cbs, NULL));
    CHECK(x, "OTF2_Archive_SetMemoryCallbacks", OTF2_Archive_SetMemoryCallbacks(x->ar, &memory_cbs, NULL));
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
            rc = vt__otf2_fail(x, "OTF2_Archive_GetEvtWriter", OTF2_ERROR_INVALID);
            break;
        }
        rc = x->reduced ? vt__otf2_reduced_rank(x, &l, &p, &done) : vt__otf2_full_rank(x, &l, &p, &done);
        x->last[r] = l.last;
        if (!rc && OTF2_EvtWriter_GetNumberOfEvents(l.w, &x->nevents[r]) != OTF2_SUCCESS)
            rc = vt__otf2_fail(x, "OTF2_EvtWriter_GetNumberOfEvents", OTF2_ERROR_INVALID);
        OTF2_ErrorCode e = OTF2_Archive_CloseEvtWriter(x->ar, l.w);
        if (!rc && e != OTF2_SUCCESS)
            rc = vt__otf2_fail(x, "OTF2_Archive_CloseEvtWriter", e);
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
        return vt__otf2_fail(x, "OTF2_Archive_Close", e);
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
    vt__otf2_errors_init();
    x.first = calloc(x.nranks + 1, sizeof *x.first);
    x.last = calloc(x.nranks + 1, sizeof *x.last);
    x.nevents = calloc(x.nranks + 1, sizeof *x.nevents);
    int rc = (!x.first || !x.last || !x.nevents) ? vt__otf2_oom(&x) : export_all(&x);
    if (x.ar)
        OTF2_Archive_Close(x.ar);
    for (size_t i = 0; i < x.nstrs; i++)
        free(x.strs[i]);
    free(x.strs);
    free(x.rnames);
    vt_ixhash_free(&x.strs_ix);
    vt_ixhash_free(&x.regions_ix);
    vt_ixhash_free(&x.scl_ix);
    vt_ixhash_free(&x.comms_ix);
    for (uint32_t r = 0; r < x.nranks; r++) {
        if (x.rank_region)
            free(x.rank_region[r]);
        if (x.rank_comm)
            free(x.rank_comm[r]);
        if (x.rank_site)
            free(x.rank_site[r]);
        if (x.rank_scl)
            free(x.rank_scl[r]);
    }
    free(x.rank_region);
    free(x.rank_comm);
    free(x.rank_site);
    free(x.rank_scl);
    free(x.scl_file);
    free(x.scl_line);
    if (x.al)
        OTF2_AttributeList_Delete(x.al);
    vt__otf2_rsends_close(&x);
    free(x.comms);
    free(x.first);
    free(x.last);
    free(x.nevents);
    return rc;
}
#endif
