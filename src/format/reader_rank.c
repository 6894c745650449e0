/* One rank file at open time (doc/format.md, "Rank files"): its header, its function
 * table (the layout letters of each function, and one table shared by the ranks whose
 * FUNCS payloads are the same), the index of its event blocks (where they begin and
 * end, their count and records) and its RANKDEFS block (call sites, communicators,
 * files, profile, placement); and a block's payload handed out raw (vt_trace_raw_block).
 * Calls reader_io.c only. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/reader_priv.h"
#include "format/commid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ function table */

unsigned vt_layout_field(char letter)
{
    switch (letter) {
    case 'c': return VT_F_COMM;
    case 'n': return VT_F_NEWCOMM;
    case 'p': return VT_F_PEER;
    case 't': return VT_F_TAG;
    case 'b': return VT_F_BYTES;
    case 'P': return VT_F_RPEER;
    case 'T': return VT_F_RTAG;
    case 'B': return VT_F_RBYTES;
    case 'o': return VT_F_ROOT;
    case 'q': return VT_F_COLLSEQ;
    case 'r': return VT_F_REQUEST;
    case 'R': return VT_F_STARTED;
    case 'k': return VT_F_DONE;
    case 'm': return VT_F_MSG;
    case 'f': return VT_F_FILE;
    case 'O': return VT_F_OFFSET;
    default: return 0;
    }
}

/* The one-sided calls, whose p letter names a target rank and no message. */
static int is_one_sided(const char *name)
{
    static const char *const rma[] = {"MPI_Put", "MPI_Rput", "MPI_Get", "MPI_Rget", "MPI_Accumulate",
                                      "MPI_Raccumulate", "MPI_Get_accumulate", "MPI_Rget_accumulate",
                                      "MPI_Fetch_and_op", "MPI_Compare_and_swap"};
    for (size_t i = 0; i < sizeof rma / sizeof rma[0]; i++) {
        size_t n = strlen(rma[i]);
        if (!strncmp(name, rma[i], n) && (!name[n] || !strcmp(name + n, "_c")))
            return 1;
    }
    return 0;
}

static int parse_funcs(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    if (pp_count(r, &n, 2, "number of functions"))
        return -1;
    vt_function *f = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *f);
    if (!f)
        return vt__pp_nomem(r, "the function table");
    for (uint64_t i = 0; i < n; i++) {
        char *name, *layout;
        if (vt__pp_str(r, &t->ar, &name, "function name"))
            return -1;
        const uint8_t *at = r->p;
        size_t len;
        if (vt__pp_strl(r, &t->ar, &layout, &len, "function layout"))
            return -1;
        unsigned fields = 0;
        for (size_t k = 0; k < len; k++) {
            unsigned bit = vt_layout_field(layout[k]);
            if (!bit) {
                char e[16];
                uint8_t c = (uint8_t)layout[k];
                r->p = at;
                return vt__pp_err(r, "expected layout letters from \"cnptbPTBoqrRkmfO\" for %s, found '%s'", name,
                                  vt__escape_bytes(e, sizeof e, &c, 1));
            }
            if (fields & bit) {
                r->p = at;
                return vt__pp_err(r, "expected each layout letter once for %s, found '%c' twice", name, layout[k]);
            }
            fields |= bit;
        }
        if ((fields & VT_F_PEER) && is_one_sided(name))
            fields = (fields & ~VT_F_PEER) | VT_F_TARGET;
        f[i].name = name;
        f[i].layout = layout;
        f[i].fields = fields;
    }
    rk->nfuncs = (size_t)n;
    rk->funcs = f;
    return vt__pp_finish(r, rk->version, "FUNCS");
}

struct member_range {
    uint32_t n, first;
    int64_t stride;
    const uint32_t *m;
};

static uint64_t range_home(uint32_t n, uint32_t first, int64_t stride, size_t cap)
{
    uint64_t x = ((uint64_t)n << 32 | first) * 0x9e3779b97f4a7c15u ^ (uint64_t)stride * 0xbf58476d1ce4e5b9u;
    return (x ^ x >> 29) & (cap - 1);
}

/* The members FIRST, FIRST + STRIDE, ... (N of them), one array for the whole trace. */
static const uint32_t *range_members(vt_trace *t, uint32_t n, uint32_t first, int64_t stride)
{
    if (2 * (t->nranges + 1) > t->capranges) {
        size_t nc = t->capranges ? 2 * t->capranges : 64;
        struct member_range *ne = calloc(nc, sizeof *ne);
        if (!ne)
            return NULL;
        for (size_t i = 0; i < t->capranges; i++)
            if (t->ranges[i].m) {
                uint64_t h = range_home(t->ranges[i].n, t->ranges[i].first, t->ranges[i].stride, nc);
                while (ne[h].m)
                    h = (h + 1) & (nc - 1);
                ne[h] = t->ranges[i];
            }
        free(t->ranges);
        t->ranges = ne;
        t->capranges = nc;
    }
    uint64_t h = range_home(n, first, stride, t->capranges);
    for (; t->ranges[h].m; h = (h + 1) & (t->capranges - 1))
        if (t->ranges[h].n == n && t->ranges[h].first == first && t->ranges[h].stride == stride)
            return t->ranges[h].m;
    uint32_t *m = vt__arena_calloc(&t->ar, n, sizeof *m);
    if (!m)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        m[i] = (uint32_t)((int64_t)first + (int64_t)i * stride);
    t->ranges[h] = (struct member_range){n, first, stride, m};
    t->nranges++;
    return m;
}

/* A member list: world ranks one by one, or (COMPACT, doc/format.md) a form: 0 one by
 * one, 1 a range (first, stride), 2 the local members of communicator EARLIER[index]. */
static int parse_members(vt_trace *t, pp *r, int compact, const vt_comm *earlier, uint64_t nearlier, uint32_t *size,
                         const uint32_t **members, const char *what)
{
    uint64_t n, form = 0;
    const uint8_t *at = r->p;
    /* a compact list may name more members than the payload has bytes (a range) */
    if (compact ? pp_uvar(r, &n, what) : pp_count(r, &n, 1, what))
        return -1;
    if (n > t->nranks) {
        r->p = at;
        return vt__pp_err(r, "expected %s at most %u (number of ranks), found %llu", what, t->nranks,
                          (unsigned long long)n);
    }
    *size = (uint32_t)n;
    at = r->p;
    if (compact && n && pp_uvar(r, &form, "member list form"))
        return -1;
    if (form == 1) {
        uint64_t first;
        int64_t stride;
        if (pp_uvar(r, &first, "first member") || pp_svar(r, &stride, "member stride"))
            return -1;
        /* both ends within the world (n <= nranks: no overflow) */
        if (first >= t->nranks || stride <= -(int64_t)t->nranks || stride >= (int64_t)t->nranks ||
            (int64_t)first + (int64_t)(n - 1) * stride < 0 ||
            (int64_t)first + (int64_t)(n - 1) * stride >= (int64_t)t->nranks) {
            r->p = at;
            return vt__pp_err(r, "expected a range of %llu world ranks below %u, found first %llu stride %lld",
                              (unsigned long long)n, t->nranks, (unsigned long long)first, (long long)stride);
        }
        *members = range_members(t, (uint32_t)n, (uint32_t)first, stride);
        return *members ? 0 : vt__pp_nomem(r, what);
    }
    if (form == 2) {
        uint64_t k;
        if (pp_index(r, &k, nearlier, "index of an earlier communicator with these members"))
            return -1;
        if (earlier[k].size != n) {
            r->p = at;
            return vt__pp_err(r, "expected an earlier communicator of %llu members, found one of %u",
                              (unsigned long long)n, earlier[k].size);
        }
        *members = earlier[k].members;
        return 0;
    }
    if (form != 0) {
        r->p = at;
        return vt__pp_err(r, "expected member list form 0, 1 or 2, found %llu", (unsigned long long)form);
    }
    if (n > pp_left(r)) {
        r->p = at;
        return vt__pp_err(r, "expected %llu members one by one, found %zu bytes left in the payload",
                          (unsigned long long)n, pp_left(r));
    }
    uint32_t *m = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *m);
    if (!m)
        return vt__pp_nomem(r, what);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        if (pp_index(r, &v, t->nranks, "member world rank"))
            return -1;
        m[i] = (uint32_t)v;
    }
    *members = m;
    return 0;
}

/* 1.4: the module table; each call site gets the index of the module of its path. */
static int parse_modules(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    char *s;
    if (pp_count(r, &n, 2, "number of modules"))
        return -1;
    vt_module *m = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *m);
    if (!m)
        return vt__pp_nomem(r, "the module table");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        if (vt__pp_str(r, &t->ar, &s, "module path") || pp_count(r, &len, 1, "build-id length"))
            return -1;
        uint8_t *id = vt__arena_alloc(&t->ar, len ? len : 1);
        if (!id)
            return vt__pp_nomem(r, "a build-id");
        memcpy(id, r->p, len);
        r->p += len;
        m[i].path = s;
        m[i].build_id = id;
        m[i].build_id_len = (size_t)len;
    }
    rk->nmodules = (size_t)n;
    rk->modules = m;
    vt_callsite *cs = (vt_callsite *)rk->callsites;
    for (size_t i = 0; i < rk->ncallsites; i++)
        for (size_t j = 0; j < n && cs[i].module_index < 0; j++)
            if (cs[i].module[0] && !strcmp(cs[i].module, m[j].path))
                cs[i].module_index = (int64_t)j;
    return 0;
}

/* 1.6: call sites after the module table, each its module's index + 1 (0 unknown: then
 * the address) and the offset in it; they follow those of the 1.0 list (empty when a
 * 1.6 writer wrote it). */
static int parse_sites(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    if (pp_count(r, &n, 3, "number of call sites after the module table"))
        return -1;
    size_t old = rk->ncallsites;
    vt_callsite *cs = vt__arena_calloc(&t->ar, old + n ? old + n : 1, sizeof *cs);
    if (!cs)
        return vt__pp_nomem(r, "the call-site table");
    if (old)
        memcpy(cs, rk->callsites, old * sizeof *cs);
    for (uint64_t i = 0; i < n; i++) {
        vt_callsite *c = &cs[old + i];
        uint64_t m, v;
        char *sym;
        const uint8_t *at = r->p;
        if (pp_uvar(r, &m, "call-site module index + 1"))
            return -1;
        if (m > rk->nmodules) {
            r->p = at;
            return vt__pp_err(r, "expected a call-site module index + 1 of at most %zu (the entries of the module "
                              "table), found %llu", rk->nmodules, (unsigned long long)m);
        }
        if (pp_uvar(r, &v, m ? "call-site offset in module" : "call-site address") ||
            vt__pp_str(r, &t->ar, &sym, "call-site symbol"))
            return -1;
        c->module = m ? rk->modules[m - 1].path : "";
        c->module_index = (int64_t)m - 1;
        c->offset = m ? v : 0;
        c->address = m ? 0 : v;
        c->symbol = sym;
    }
    rk->ncallsites = old + (size_t)n;
    rk->callsites = cs;
    return 0;
}

/* 2.0: what a communicator id is derived from (format/commid.h). */
static int parse_origin(pp *r, vt_comm_origin *o)
{
    uint64_t kind;
    const uint8_t *at = r->p;
    *o = (vt_comm_origin){0};
    if (pp_uvar(r, &kind, "communicator id kind"))
        return -1;
    if (kind >= VT_CID_KINDS) {
        r->p = at;
        return vt__pp_err(r, "expected communicator id kind 0 to %d, found %llu", VT_CID_KINDS - 1,
                          (unsigned long long)kind);
    }
    o->kind = (uint32_t)kind;
    if (kind == VT_CID_EXPLICIT && pp_uvar(r, &o->id, "communicator id"))
        return -1;
    if (kind == VT_CID_GROUP && pp_svar(r, &o->tag, "communicator tag (difference)"))
        return -1;
    if ((kind == VT_CID_PARENT || kind == VT_CID_GROUP) && pp_uvar(r, &o->count, "communicators made before"))
        return -1;
    return 0;
}

/* The id of entry I of the table CM from its origin O as stored (read at AT): the count
 * of VT_CID_PARENT a difference to NEXT[parent], the tag of VT_CID_GROUP one to
 * *LAST_TAG (commid.h), both then updated. */
static int derive_id(pp *r, const vt_rank *rk, vt_comm *cm, uint64_t i, vt_comm_origin *o, const uint8_t *at,
                     uint64_t *next, int64_t *last_tag)
{
    vt_comm *c = &cm[i];
    const uint64_t *pid = c->parent >= 0 && (uint64_t)c->parent < i ? &cm[c->parent].id : NULL;
    if (o->kind == VT_CID_PARENT && pid) {
        o->count += next[c->parent];
        next[c->parent] = o->count + 1;
    } else if (o->kind == VT_CID_GROUP) {
        o->tag = (int64_t)((uint64_t)*last_tag + (uint64_t)o->tag);
        *last_tag = o->tag;
    }
    int rc = vt_comm_id_derive(o, rk->rank, (c->flags & 1) != 0, c->members, c->size, c->remote_members,
                               c->remote_size, pid, &c->id);
    if (rc == 0)
        return 0;
    r->p = at;
    if (rc == VT_CID_ENOPARENT)
        return vt__pp_err(r, "expected an earlier communicator as the parent of communicator %llu (its id is "
                          "derived from the parent's), found parent index %lld",
                          (unsigned long long)i, (long long)c->parent);
    if (rc == VT_CID_ENOMEMBERS)
        return vt__pp_err(r, "expected members of communicator %llu (its id is derived from the lowest), found none",
                          (unsigned long long)i);
    return vt__pp_nomem(r, "the members of a communicator");
}

static int parse_rankdefs(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    char *s;

    if (pp_count(r, &n, 4, "number of call sites"))
        return -1;
    vt_callsite *cs = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *cs);
    if (!cs)
        return vt__pp_nomem(r, "the call-site table");
    for (uint64_t i = 0; i < n; i++) {
        if (pp_uvar(r, &cs[i].address, "call-site address") ||
            vt__pp_istr(r, &t->ar, &t->callsite_strs, &cs[i].module, "call-site module path") ||
            pp_uvar(r, &cs[i].offset, "call-site offset in module") ||
            vt__pp_istr(r, &t->ar, &t->callsite_strs, &cs[i].symbol, "call-site symbol"))
            return -1;
        cs[i].module_index = -1;
    }
    rk->ncallsites = (size_t)n;
    rk->callsites = cs;

    rk->comms_at = (size_t)(r->p - r->begin);
    if (pp_count(r, &n, 6, "number of communicators"))
        return -1;
    int origins = rk->version >= VT_VERSION(2, 0);
    uint64_t *next = origins ? vt__arena_calloc(&t->ar, n ? n : 1, sizeof *next) : NULL;
    int64_t last_tag = 0;
    if (origins && !next)
        return vt__pp_nomem(r, "the communicator table");
    vt_comm *cm = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *cm);
    if (!cm)
        return vt__pp_nomem(r, "the communicator table");
    for (uint64_t i = 0; i < n; i++) {
        vt_comm_origin o;
        const uint8_t *origin_at = r->p;
        if ((origins ? parse_origin(r, &o) : pp_uvar(r, &cm[i].id, "communicator id")) ||
            pp_uvar(r, &cm[i].flags, "communicator flags"))
            return -1;
        int compact = (cm[i].flags & VT_COMM_COMPACT) != 0;
        cm[i].flags &= ~(uint64_t)VT_COMM_COMPACT;
        if (parse_members(t, r, compact, cm, i, &cm[i].size, &cm[i].members, "communicator size") ||
            parse_members(t, r, compact, cm, i, &cm[i].remote_size, &cm[i].remote_members, "communicator remote size"))
            return -1;
        const uint8_t *at = r->p;
        if (pp_svar(r, &cm[i].parent, "parent communicator index"))
            return -1;
        if (cm[i].parent < -1 || cm[i].parent >= (int64_t)n) {
            r->p = at;
            return vt__pp_err(r, "expected parent communicator index -1 to %lld, found %lld", (long long)n - 1,
                              (long long)cm[i].parent);
        }
        if (vt__pp_str(r, &t->ar, &s, "communicator origin"))
            return -1;
        cm[i].how = s;
        if (origins && derive_id(r, rk, cm, i, &o, origin_at, next, &last_tag))
            return -1;
    }
    rk->ncomms = (size_t)n;
    rk->comms = cm;

    if (pp_count(r, &n, 2, "number of files"))
        return -1;
    vt_file *fl = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *fl);
    if (!fl)
        return vt__pp_nomem(r, "the file table");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c;
        if (vt__pp_str(r, &t->ar, &s, "file name") || pp_index(r, &c, rk->ncomms, "file communicator index"))
            return -1;
        fl[i].name = s;
        fl[i].comm = (uint32_t)c;
    }
    rk->nfiles = (size_t)n;
    rk->files = fl;

    if (pp_count(r, &n, 5, "number of profile entries"))
        return -1;
    vt_profile *pr = vt__arena_calloc(&t->ar, n ? n : 1, sizeof *pr);
    if (!pr)
        return vt__pp_nomem(r, "the profile");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t fn;
        const uint8_t *fat = r->p;
        if (pp_index(r, &fn, rk->nfuncs, "profile function id"))
            return -1;
        if (!rk->funcs[fn].name[0]) {
            r->p = fat;
            return vt__pp_err(r, "expected a profiled function a FUNCS block names, found function id %llu, which none "
                              "names", (unsigned long long)fn);
        }
        if (pp_uvar(r, &pr[i].calls, "profile calls") ||
            pp_uvar(r, &pr[i].time_ns, "profile time") || pp_uvar(r, &pr[i].bytes, "profile bytes") ||
            pp_uvar(r, &pr[i].records, "profile records written"))
            return -1;
        pr[i].fn = (uint32_t)fn;
    }
    rk->nprofile = (size_t)n;
    rk->profile = pr;

    char *host, *binding;
    if (vt__pp_str(r, &t->ar, &host, "hostname") || pp_svar(r, &rk->core, "core") ||
        pp_svar(r, &rk->numa, "NUMA node") || vt__pp_str(r, &t->ar, &binding, "binding") ||
        pp_uvar(r, &rk->flags, "rank flags") || pp_uvar(r, &rk->records_written, "records written") ||
        pp_uvar(r, &rk->calls_not_recorded, "calls not recorded") ||
        pp_svar(r, &rk->init_time, "initialisation time") || pp_svar(r, &rk->fini_time, "finalisation time"))
        return -1;
    rk->hostname = host;
    rk->binding = binding;
    /* 1.2 appended the measured overhead; a 1.0/1.1 file (or one written without it)
     * ends here and both stay 0. */
    if (rk->version >= VT_VERSION(1, 2) && r->p != r->end) {
        rk->overhead_at = (size_t)(r->p - r->begin);
        if (pp_uvar(r, &rk->overhead_ps, "overhead per event (ps)") ||
            pp_uvar(r, &rk->copy_ps_per_byte, "copy cost per byte (ps)"))
            return -1;
        rk->overhead_len = (size_t)(r->p - r->begin) - rk->overhead_at;
        rk->has_overhead = 1;
    }
    /* 1.4: how the run ended, and a failed write */
    if (rk->version >= VT_VERSION(1, 4) && r->p != r->end) {
        uint64_t reason;
        const uint8_t *at = r->p;
        if (pp_uvar(r, &reason, "end reason"))
            return -1;
        if (reason > VT_END_LAST) {
            r->p = at;
            return vt__pp_err(r, "expected end reason 0 to %u, found %llu", (unsigned)VT_END_LAST,
                              (unsigned long long)reason);
        }
        rk->end_reason = (unsigned)reason;
        if (pp_svar(r, &rk->end_detail, "end detail") || pp_uvar(r, &rk->write_errno, "write errno") ||
            pp_uvar(r, &rk->write_at, "bytes before the failed write"))
            return -1;
    }
    if (rk->version >= VT_VERSION(1, 4) && r->p != r->end && parse_modules(t, rk, r))
        return -1;
    if (rk->version >= VT_VERSION(1, 6) && r->p != r->end && parse_sites(t, rk, r))
        return -1;
    return vt__pp_finish(r, rk->version, "RANKDEFS");
}

/* ------------------------------------------------------------------ the rank file */

int vt__parse_trace_funcs(vt_trace *t, pp *r)
{
    vt_rank tmp = {.version = t->defs_version};
    if (parse_funcs(t, &tmp, r))
        return -1;
    t->funcs = tmp.funcs;
    t->nfuncs = tmp.nfuncs;
    return 0;
}

/* A later FUNCS block (1.3): its entries with a name define the ones the table left
 * empty; a defined entry keeps its name and layout. */
static int merge_funcs(vt_trace *t, vt_rank *rk, pp *r)
{
    vt_function *have = (vt_function *)rk->funcs;
    size_t n = rk->nfuncs;
    if (parse_funcs(t, rk, r))
        return -1;
    vt_function *more = (vt_function *)rk->funcs;
    rk->funcs = have;
    if (rk->nfuncs != n) {
        r->p = r->begin;
        rk->nfuncs = n;
        return vt__pp_err(r, "expected a function table of %zu entries, as the first one, found %zu", n,
                          (size_t)rk->nfuncs);
    }
    for (size_t i = 0; i < n; i++) {
        if (!more[i].name[0])
            continue;
        if (!have[i].name[0]) {
            have[i] = more[i];
        } else if (strcmp(have[i].name, more[i].name) || strcmp(have[i].layout, more[i].layout)) {
            r->p = r->begin;
            return vt__pp_err(r, "expected function %zu to stay %s (\"%s\"), found %s (\"%s\")", i, have[i].name,
                              have[i].layout, more[i].name, more[i].layout);
        }
    }
    return 0;
}

/* The FUNCS blocks of a rank file: the first, and (1.3) more before the blocks that use
 * their entries, kept as [u64 offset, u8 codec, u32 length, payload]... until the table
 * is built from them all, or shared with the last rank whose blocks were the same. */
typedef struct funcs_seen {
    uint8_t *p;
    size_t len, cap;
} funcs_seen;

static int funcs_add(funcs_seen *fs, const uint8_t *data, uint32_t len, uint64_t off, uint8_t codec)
{
    size_t need = fs->len + 13 + len;
    if (need > fs->cap) {
        size_t nc = fs->cap ? 2 * fs->cap : 16384;
        while (nc < need)
            nc *= 2;
        uint8_t *n = realloc(fs->p, nc);
        if (!n)
            return -1;
        fs->p = n;
        fs->cap = nc;
    }
    memcpy(fs->p + fs->len, &off, 8);
    fs->p[fs->len + 8] = codec;
    memcpy(fs->p + fs->len + 9, &len, 4);
    memcpy(fs->p + fs->len + 13, data, len);
    fs->len = need;
    return 0;
}

static int funcs_build(vt_trace *t, vt_rank *rk, const src_t *s, const funcs_seen *fs, funcs_cache *fc, vt_error *err)
{
    if (!fs->len) {
        /* 1.5: no FUNCS block of its own, the trace's (vtrace.defs) */
        if (!t->funcs)
            return vt__seterr(err, s->path, VT_FILE_HEADER_SIZE,
                              "expected a FUNCS block (vtrace.defs has no function table), found none");
        rk->nfuncs = t->nfuncs;
        rk->funcs = t->funcs;
        return 0;
    }
    /* the offsets differ from rank to rank when the blocks do not: compare from the codec on */
    if (fc->funcs && fc->len == fs->len) {
        int same = 1;
        for (size_t at = 0; same && at < fs->len;) {
            uint32_t len;
            memcpy(&len, fs->p + at + 9, 4);
            same = !memcmp(fc->payload + at + 8, fs->p + at + 8, 5 + (size_t)len);
            at += 13 + (size_t)len;
        }
        if (same) {
            rk->nfuncs = fc->nfuncs;
            rk->funcs = fc->funcs;
            return 0;
        }
    }
    for (size_t at = 0, k = 0; at < fs->len; k++) {
        uint64_t off;
        uint32_t len;
        memcpy(&off, fs->p + at, 8);
        memcpy(&len, fs->p + at + 9, 4);
        pp r;
        pp_init(&r, fs->p + at + 13, len, s->path, off, fs->p[at + 8] != VT_CODEC_RAW, err);
        if (k == 0 ? parse_funcs(t, rk, &r) : merge_funcs(t, rk, &r))
            return -1;
        at += 13 + (size_t)len;
    }
    /* cache tables parsed strictly (no trailing bytes of a higher minor) */
    uint8_t *copy = rk->version <= VT_FORMAT_VERSION ? malloc(fs->len ? fs->len : 1) : NULL;
    if (copy) {
        memcpy(copy, fs->p, fs->len);
        free(fc->payload);
        fc->payload = copy;
        fc->len = fs->len;
        fc->nfuncs = rk->nfuncs;
        fc->funcs = rk->funcs;
    }
    return 0;
}

int vt__open_rank(vt_trace *t, uint32_t rank, const src_t *s, funcs_cache *fc, vt_error *err)
{
    vt_rank *rk = &t->ranks[rank];
    rank_priv *rp = &t->priv[rank];
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    uint32_t value;
    int rc = -1;
    pp r;

    rk->path = s->path;
    rk->file_bytes = s->size;
    if (vt__read_file_header(s, VT_MAGIC_RANK, "VTRACE\\0E", &rk->version, &value, err))
        return -1;
    if (value != rank)
        return vt__seterr(err, s->path, 12, "expected rank %u in the file header, found %u", rank, value);

    uint64_t off = VT_FILE_HEADER_SIZE;
    funcs_seen fs = {0};
    /* A file cut short is read up to the cut only where vtrace.defs says that the run
     * did not end well (it ended without a word, or a write failed): in the trace of a
     * run that finished, a rank file that ends early is damage, an error. */
    int cuts_ok = (t->flags & (VT_GLOBAL_RUNNING | VT_GLOBAL_INCOMPLETE)) != 0;
    int cut = cuts_ok ? vt__block_cut(s, off, err) : 0;
    if (cut < 0)
        goto out;
    if (cut) {
        /* the run ended before its first block was whole: nothing to read */
        rk->cut_at = off;
        rk->lost_bytes = s->size - off;
        rp->ev_begin = rp->ev_end = off;
        rk->end_reason = VT_END_RUNNING;
        rk->hostname = rk->binding = "";
        rk->core = rk->numa = -1;
        goto done;
    }
    /* 1.5: a rank file may leave its function table to vtrace.defs */
    if (rk->version >= VT_VERSION(1, 5) && vt__read_block_header(s, off, &h, err))
        goto out;
    if (rk->version < VT_VERSION(1, 5) || h.type == VT_BLOCK_FUNCS) {
        if (vt__load_block(s, off, VT_BLOCK_FUNCS, &h, &stored, &raw, &data, err))
            goto out;
        if (funcs_add(&fs, data, h.raw_len, off, h.codec)) {
            vt__seterr(err, s->path, off, "expected memory for the function table, found none");
            goto out;
        }
        off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    }

    rp->ev_begin = off;
    int first_event = 1;
    /* the last RANKDEFS (1.4: snapshots follow the blocks flushed during the run) and
     * the event blocks and records before it */
    uint64_t defs_at = 0, blocks_before = 0, records_before = 0;
    for (;;) {
        if (cuts_ok && (cut = vt__block_cut(s, off, err)) < 0)
            goto out;
        if (cut)
            break;
        if (vt__read_block_header(s, off, &h, err))
            goto out;
        if (h.type == VT_BLOCK_END && defs_at)
            break;
        if (h.type == VT_BLOCK_RANKDEFS) {
            defs_at = off;
            blocks_before = rk->nblocks;
            records_before = rk->nrecords;
            if (rk->version < VT_VERSION(1, 4)) /* before 1.4 it is the last block but END */
                break;
            off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
            continue;
        }
        if (h.type == VT_BLOCK_FUNCS && rk->version >= VT_VERSION(1, 3)) {
            /* more of the function table, before the blocks that use it (1.3) */
            if (vt__load_payload(s, off, &h, &stored, &raw, NULL, &data, err))
                goto out;
            if (funcs_add(&fs, data, h.raw_len, off, h.codec)) {
                vt__seterr(err, s->path, off, "expected memory for the function table, found none");
                goto out;
            }
            off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
            continue;
        }
        /* the first event block says which kind of trace this rank file is */
        if (first_event && (h.type == VT_BLOCK_REDUCED || h.type == VT_BLOCK_REDUCED_COLS))
            rk->reduced = 1;
        first_event = 0;
        unsigned want = rk->reduced ? VT_BLOCK_REDUCED : VT_BLOCK_EVENTS;
        if (h.type != want && h.type != (rk->reduced ? VT_BLOCK_REDUCED_COLS : VT_BLOCK_EVENTS_COLS)) {
            vt__seterr(err, s->path, off + 4, "expected an %s or RANKDEFS block, found a %s block (type %u)",
                       vt__block_type_name(want), vt__block_type_name(h.type), h.type);
            goto out;
        }
        rk->nblocks++;
        rk->nrecords += h.nrecords;
        off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    }
    if (funcs_build(t, rk, s, &fs, fc, err))
        goto out;
    if (!defs_at) {
        /* cut before the definitions its records need: none of them is readable */
        rk->cut_at = off;
        rk->lost_bytes = s->size - rp->ev_begin;
        rp->ev_end = rp->ev_begin;
        rk->nblocks = rk->nrecords = 0;
        rk->reduced = 0;
        rk->end_reason = VT_END_RUNNING;
        rk->hostname = rk->binding = "";
        rk->core = rk->numa = -1;
        goto done;
    }
    rp->ev_end = defs_at;
    rk->nblocks = blocks_before;
    rk->nrecords = records_before;
    if (vt__read_block_header(s, defs_at, &h, err) || vt__load_payload(s, defs_at, &h, &stored, &raw, NULL, &data, err))
        goto out;
    pp_init(&r, data, h.raw_len, s->path, defs_at, h.codec != VT_CODEC_RAW, err);
    if (parse_rankdefs(t, rk, &r))
        goto out;
    rk->has_defs = 1;
    uint64_t defs_end = defs_at + VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    /* END: after the last RANKDEFS (before 1.4 the loop stopped at the only one) */
    uint64_t end_at = rk->version < VT_VERSION(1, 4) ? defs_end : off;
    if (cuts_ok && !cut && rk->version < VT_VERSION(1, 4) && (cut = vt__block_cut(s, end_at, err)) < 0)
        goto out;
    if (cut) {
        rk->cut_at = end_at;
        rk->lost_bytes = s->size - defs_end;
    } else if (end_at != defs_end) {
        vt__seterr(err, s->path, defs_end, "expected END after the last RANKDEFS, found more blocks");
        goto out;
    } else if (vt__read_end(s, end_at, &stored, &raw, err)) {
        goto out;
    }
done:
    t->bytes += s->size;
    t->nrecords += rk->nrecords;
    rc = 0;
out:
    free(fs.p);
    free(stored.p);
    free(raw.p);
    return rc;
}

int vt_trace_raw_block(const vt_trace *t, uint32_t rank, unsigned type, uint8_t **payload, size_t *len, vt_error *err)
{
    *payload = NULL;
    *len = 0;
    if (!t)
        return vt__seterr(err, "(trace)", 0, "expected an open trace, found none");
    int defs = type == VT_BLOCK_GLOBAL;
    if (!defs && rank >= t->nranks)
        return vt__seterr(err, t->dir, 0, "expected a rank below %u, found %u", t->nranks, rank);
    if (type == VT_BLOCK_FUNCS) {
        /* the table as the rank's FUNCS blocks make it together, in one payload */
        const vt_rank *rk = &t->ranks[rank];
        size_t need = VT_UVAR_MAX;
        for (size_t i = 0; i < rk->nfuncs; i++)
            need += 2 * VT_UVAR_MAX + strlen(rk->funcs[i].name) + strlen(rk->funcs[i].layout);
        uint8_t *p = malloc(need);
        if (!p)
            return vt__seterr(err, rk->path, 0, "expected memory for the function table, found none");
        uint8_t *w = vt_put_uvar(p, rk->nfuncs);
        for (size_t i = 0; i < rk->nfuncs; i++) {
            w = vt_put_str(w, rk->funcs[i].name, strlen(rk->funcs[i].name));
            w = vt_put_str(w, rk->funcs[i].layout, strlen(rk->funcs[i].layout));
        }
        *payload = p;
        *len = (size_t)(w - p);
        return 0;
    }
    char name[32];
    if (defs)
        snprintf(name, sizeof name, "vtrace.defs");
    else
        vt__rank_file_name(name, rank);
    const char *path = defs ? t->defs_path : t->ranks[rank].path;
    /* a RANKDEFS kept when the trace was opened is read from there (trace_keep in
     * reader.c: no system call), any other block from its file */
    int kept = type == VT_BLOCK_RANKDEFS && t->priv[rank].kept_len > t->priv[rank].ev_end;
    src_t s;
    if (kept ? vt__trace_src_pooled(t, rank, &s, "a trace file", err)
             : vt__trace_src_open(t, path, name, &s, "a trace file", err))
        return -1;
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    int rc = -1;
    uint64_t off = type == VT_BLOCK_RANKDEFS ? t->priv[rank].ev_end : VT_FILE_HEADER_SIZE;
    if (vt__load_block(&s, off, type, &h, &stored, &raw, &data, err))
        goto out;
    *payload = malloc(h.raw_len ? h.raw_len : 1);
    if (!*payload) {
        vt__seterr(err, s.path, off, "expected memory for a %u-byte payload, found none", h.raw_len);
        goto out;
    }
    memcpy(*payload, data, h.raw_len);
    *len = h.raw_len;
    rc = 0;
out:
    free(stored.p);
    free(raw.p);
    vt__src_close(&s);
    return rc;
}
