/* Call sites to function, file and line (symbols.h): a cache of sites by rank and by
 * (module, offset), and one libdw session per module found with the recorded build-id. */
#include "vt_config.h"
#include "analysis/symbols.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

#define MAX_ID 64

typedef struct mod {
    char *path;
    uint8_t id[MAX_ID];
    size_t idlen;
    int state; /* 0 not looked for, 1 usable, -1 not */
#ifdef HAVE_LIBDW
    Dwfl *dwfl;
    Dwfl_Module *m;
    Dwarf_Addr start;
#endif
} mod;

typedef struct site {
    char *name;
    vt_srcloc loc;
    int resolved;
    int in_slot; /* owned by the (module, offset) table, shared by ranks */
} site;

typedef struct slot {
    uint32_t mod; /* + 1, 0 empty */
    uint64_t offset;
    site *s;
} slot;

static struct {
    const vt_trace *t;
    site ***byrank; /* [rank][callsite], filled on first use */
    size_t *nbyrank; /* ... their counts: reset frees them without the trace, which may be gone */
    uint32_t nranks;
    mod *mods;
    size_t nmods;
    slot *slots;
    size_t nslots, nused;
    char *dirs;
    int dirs_set;
} S;

void vt_symbols_set_path(const char *dirs)
{
    free(S.dirs);
    S.dirs = dirs ? strdup(dirs) : NULL;
    S.dirs_set = dirs != NULL;
}

static const char *search_dirs(void)
{
    if (S.dirs_set)
        return S.dirs;
    const char *e = getenv("VTRACE_DEBUG_PATH");
    return e && *e ? e : NULL;
}

int vt_symbols_available(void)
{
#ifdef HAVE_LIBDW
    return 1;
#else
    return 0;
#endif
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

#ifdef HAVE_LIBDW
/* Opens CAND as module M's file: 1 with its debug information, 0 when it has none,
 * -1 when it is another build (or no ELF file). */
static int try_file(mod *m, const char *cand, const char *dipath)
{
    static char *debuginfo_path;
    free(debuginfo_path);
    debuginfo_path = xasprintf("%s%s:.debug:/usr/lib/debug", dipath ? dipath : "", dipath ? ":" : "");
    static Dwfl_Callbacks cb = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
    };
    cb.debuginfo_path = &debuginfo_path;
    Dwfl *d = dwfl_begin(&cb);
    if (!d)
        return -1;
    dwfl_report_begin(d);
    Dwfl_Module *dm = dwfl_report_elf(d, base_name(m->path), cand, -1, 0, false);
    dwfl_report_end(d, NULL, NULL);
    Dwarf_Addr bias;
    const unsigned char *bits;
    GElf_Addr va;
    if (!dm || !dwfl_module_getelf(dm, &bias) || dwfl_module_build_id(dm, &bits, &va) != (int)m->idlen ||
        memcmp(bits, m->id, m->idlen)) {
        dwfl_end(d);
        return -1;
    }
    if (!dwfl_module_getdwarf(dm, &bias)) {
        dwfl_end(d);
        return 0;
    }
    m->dwfl = d;
    m->m = dm;
    dwfl_module_info(dm, NULL, &m->start, NULL, NULL, NULL, NULL, NULL);
    return 1;
}

/* The recorded path, then in each search directory the build-id paths and the name. */
static void find_module(mod *m)
{
    m->state = -1;
    if (!m->idlen || !*m->path)
        return;
    const char *dirs = search_dirs();
    char hex[2 * MAX_ID + 1];
    for (size_t i = 0; i < m->idlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", m->id[i]);
    int other = 0, seen = 0;
    int r = access(m->path, R_OK) == 0 ? (seen = 1, try_file(m, m->path, dirs)) : -1;
    other |= seen && r < 0;
    for (const char *d = dirs; r <= 0 && d && *d;) {
        const char *e = strchr(d, ':');
        size_t n = e ? (size_t)(e - d) : strlen(d);
        for (int k = 0; k < 4 && r <= 0; k++) {
            char *c = k == 0   ? xasprintf("%.*s/.build-id/%.2s/%s.debug", (int)n, d, hex, hex + 2)
                      : k == 1 ? xasprintf("%.*s/.build-id/%.2s/%s", (int)n, d, hex, hex + 2)
                      : k == 2 ? xasprintf("%.*s/%s", (int)n, d, base_name(m->path))
                               : xasprintf("%.*s/%s.debug", (int)n, d, base_name(m->path));
            if (c && n && access(c, R_OK) == 0) {
                int rc = try_file(m, c, dirs);
                other |= rc < 0;
                r = rc > r ? rc : r;
            }
            free(c);
        }
        d = e ? e + 1 : NULL;
    }
    if (r > 0)
        m->state = 1;
    else if (other)
        fprintf(stderr,
                "vtrace: note: %s: the binary found is not the one traced (its build-id differs from %s); "
                "its call sites are shown as module+offset\n",
                m->path, hex);
}

static int lookup(mod *m, uint64_t offset, site *s)
{
    if (!m->state)
        find_module(m);
    if (m->state < 0 || !offset)
        return 0;
    Dwarf_Addr a = m->start + offset - 1; /* the call, not the return address */
    Dwfl_Line *l = dwfl_module_getsrc(m->m, a);
    int line = 0;
    const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
    if (!file || line <= 0)
        return 0;
    const char *fn = dwfl_module_addrname(m->m, a);
    const char *dir = file[0] != '/' ? dwfl_line_comp_dir(l) : NULL;
    s->loc.function = strdup(fn ? fn : "");
    s->loc.file = dir && *dir ? xasprintf("%s/%s", dir, file) : strdup(file); /* absolute when known */
    s->loc.line = line;
    return s->loc.function && s->loc.file;
}
#else
static int lookup(mod *m, uint64_t offset, site *s) { return 0; }
#endif

static uint32_t mod_index(const vt_module *vm)
{
    for (size_t i = 0; i < S.nmods; i++)
        if (S.mods[i].idlen == vm->build_id_len && !memcmp(S.mods[i].id, vm->build_id, vm->build_id_len) &&
            !strcmp(S.mods[i].path, vm->path))
            return (uint32_t)i;
    mod *nm = realloc(S.mods, (S.nmods + 1) * sizeof *nm);
    if (!nm)
        return UINT32_MAX;
    S.mods = nm;
    mod *m = &S.mods[S.nmods];
    memset(m, 0, sizeof *m);
    m->path = strdup(vm->path);
    m->idlen = vm->build_id_len <= MAX_ID ? vm->build_id_len : 0;
    memcpy(m->id, vm->build_id, m->idlen);
    if (!m->path)
        return UINT32_MAX;
    return (uint32_t)S.nmods++;
}

static slot *find_slot(uint32_t mi, uint64_t off)
{
    if ((S.nused + 1) * 2 > S.nslots) {
        size_t n = S.nslots ? S.nslots * 2 : 256;
        slot *ns = calloc(n, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < S.nslots; i++) {
            if (!S.slots[i].mod)
                continue;
            size_t h = (size_t)((S.slots[i].offset * 0x9e3779b97f4a7c15ull) ^ S.slots[i].mod) & (n - 1);
            while (ns[h].mod)
                h = (h + 1) & (n - 1);
            ns[h] = S.slots[i];
        }
        free(S.slots);
        S.slots = ns;
        S.nslots = n;
    }
    size_t h = (size_t)((off * 0x9e3779b97f4a7c15ull) ^ (mi + 1)) & (S.nslots - 1);
    while (S.slots[h].mod && !(S.slots[h].mod == mi + 1 && S.slots[h].offset == off))
        h = (h + 1) & (S.nslots - 1);
    return &S.slots[h];
}

static char *fallback_name(const vt_callsite *cs)
{
    const char *base = base_name(cs->module ? cs->module : "");
    if (!*base)
        return xasprintf("0x%" PRIx64, cs->address);
    if (cs->symbol && *cs->symbol)
        return xasprintf("%s@%s+0x%" PRIx64, cs->symbol, base, cs->offset);
    return xasprintf("%s+0x%" PRIx64, base, cs->offset);
}

static site *site_of(const vt_trace *t, uint32_t rank, int64_t index);

void vt_symbols_summary(const vt_trace *t, size_t *sites, size_t *lines, size_t *checkable)
{
    *sites = *lines = *checkable = 0;
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        const vt_rank *rk = vt_trace_rank(t, r);
        for (size_t i = 0; i < rk->ncallsites; i++) {
            site *s = site_of(t, r, (int64_t)i);
            if (s && !s->in_slot) {
                ++*sites;
                *lines += s->resolved;
                *checkable += s->resolved;
            }
        }
    }
    for (size_t k = 0; k < S.nslots; k++)
        if (S.slots[k].mod) {
            ++*sites;
            *lines += S.slots[k].s->resolved;
            *checkable += S.mods[S.slots[k].mod - 1].idlen > 0;
        }
}

static void site_free(site *s)
{
    if (s->resolved) {
        free((char *)s->loc.function);
        free((char *)s->loc.file);
    }
    free(s->name);
    free(s);
}

static site *site_of(const vt_trace *t, uint32_t rank, int64_t index)
{
    const vt_callsite *cs = vt_trace_callsite(t, rank, index);
    const vt_rank *rk = vt_trace_rank(t, rank);
    if (!cs || !rk)
        return NULL;
    if (S.t != t) {
        vt_symbols_reset();
        S.byrank = calloc(vt_trace_nranks(t), sizeof *S.byrank);
        S.nbyrank = calloc(vt_trace_nranks(t), sizeof *S.nbyrank);
        if (!S.byrank || !S.nbyrank)
            return NULL;
        S.nranks = vt_trace_nranks(t);
        S.t = t;
    }
    if (!S.byrank[rank]) {
        if (!(S.byrank[rank] = calloc(rk->ncallsites, sizeof **S.byrank)))
            return NULL;
        S.nbyrank[rank] = rk->ncallsites;
    }
    site **at = &S.byrank[rank][index];
    if (*at)
        return *at;
    slot *sl = NULL;
    uint32_t mi = UINT32_MAX;
    if (cs->module_index >= 0 && (size_t)cs->module_index < rk->nmodules)
        mi = mod_index(&rk->modules[cs->module_index]);
    if (mi != UINT32_MAX && (sl = find_slot(mi, cs->offset)) && sl->mod)
        return *at = sl->s;
    site *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->resolved = mi != UINT32_MAX && lookup(&S.mods[mi], cs->offset, s);
    if (s->resolved && s->loc.function[0]) {
        s->name = xasprintf("%s (%s:%d)", s->loc.function, base_name(s->loc.file), s->loc.line);
    } else if (s->resolved) {
        char *f = fallback_name(cs);
        s->name = f ? xasprintf("%s (%s:%d)", f, base_name(s->loc.file), s->loc.line) : NULL;
        free(f);
    } else {
        s->name = fallback_name(cs);
    }
    if (!s->name) {
        site_free(s);
        return NULL;
    }
    if (sl) {
        sl->mod = mi + 1;
        sl->offset = cs->offset;
        sl->s = s;
        s->in_slot = 1;
        S.nused++;
    }
    return *at = s;
}

int vt_symbols_resolve(const vt_trace *t, uint32_t rank, int64_t callsite, vt_srcloc *loc)
{
    site *s = site_of(t, rank, callsite);
    if (!s || !s->resolved)
        return 0;
    *loc = s->loc;
    return 1;
}

const char *vt_site_name(const vt_trace *t, uint32_t rank, int64_t callsite)
{
    site *s = site_of(t, rank, callsite);
    return s ? s->name : "";
}

void vt_symbols_reset(void)
{
    if (S.byrank) {
        for (uint32_t r = 0; S.nbyrank && r < S.nranks; r++) {
            for (size_t i = 0; S.byrank[r] && i < S.nbyrank[r]; i++) {
                site *s = S.byrank[r][i];
                if (s && !s->in_slot)
                    site_free(s);
            }
            free(S.byrank[r]);
        }
        free(S.byrank);
    }
    free(S.nbyrank);
    S.nbyrank = NULL;
    S.nranks = 0;
    for (size_t k = 0; k < S.nslots; k++)
        if (S.slots[k].mod)
            site_free(S.slots[k].s);
    free(S.slots);
    for (size_t i = 0; i < S.nmods; i++) {
#ifdef HAVE_LIBDW
        if (S.mods[i].dwfl)
            dwfl_end(S.mods[i].dwfl);
#endif
        free(S.mods[i].path);
    }
    free(S.mods);
    S.t = NULL;
    S.byrank = NULL;
    S.slots = NULL;
    S.nslots = S.nused = 0;
    S.mods = NULL;
    S.nmods = 0;
}
