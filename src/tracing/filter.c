#define _GNU_SOURCE   /* dladdr */
#include "tracing/filter.h"
#include "tracing/buffer.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

VT_HIDDEN int vt__filter_on;
VT_HIDDEN unsigned char vt__filter_fn[VT_NFN];

static char **sites;              /* the site: entries, as written */
static size_t nsites;
static uint32_t digest = 2166136261u;

/* Verdicts of the call sites seen so far: address -> 1 left out, 2 recorded. */
static struct {
    const void *addr;
    unsigned char verdict;
} *seen;
static size_t nseen, seen_cap;    /* seen_cap: a power of two */

int vt_filter_allowed(unsigned fn)
{
    const char *name = vt_fn_name[fn], *lay = vt_fn_layout[fn];
    if (!strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread") || !strcmp(name, "MPI_Finalize"))
        return 0;
    /* the layouts of local calls, one-sided calls and blocking file I/O (no request, no
     * new handle); a blocking collective only on every rank at once */
    if (!strcmp(lay, "") || !strcmp(lay, "pb") || !strcmp(lay, "fOb"))
        return 2;
    if (!strcmp(lay, "coqbB"))
        return 1;
    return 0;
}

static void mix(const char *s)
{
    for (; *s; s++)
        digest = (digest ^ (unsigned char)*s) * 16777619u;
    digest = (digest ^ '\n') * 16777619u;
}

uint32_t vt_filter_digest(void) { return digest; }

/* One function entry (a name or a glob). Returns 0, or -1 with the reason in err. */
static int add_function(const char *pat, const char *where, char *err, size_t errlen)
{
    int glob = strpbrk(pat, "*?[") != NULL, matched = 0;
    for (unsigned fn = 0; fn < VT_NFN; fn++) {
        if (fnmatch(pat, vt_fn_name[fn], 0))
            continue;
        if (!vt_filter_allowed(fn)) {
            if (glob)
                continue;
            snprintf(err, errlen,
                     "%s: %s cannot be left out of the trace: other records refer to its calls (messages and "
                     "requests are matched between ranks and calls); expected a local, one-sided, blocking "
                     "file I/O or blocking collective function",
                     where, pat);
            return -1;
        }
        vt__filter_fn[fn] = 1;
        matched++;
    }
    if (!matched) {
        snprintf(err, errlen,
                 glob ? "%s: '%s' matches no MPI function that can be left out (maint/mpi_functions.txt)"
                      : "%s: expected an MPI function vtrace wraps (maint/mpi_functions.txt), found '%s'",
                 where, pat);
        return -1;
    }
    return 0;
}

/* Removes a comment and the spaces around the entry; returns the entry (may be empty). */
static char *entry_of(char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    while (isspace((unsigned char)*line))
        line++;
    size_t n = strlen(line);
    while (n && isspace((unsigned char)line[n - 1]))
        line[--n] = '\0';
    return line;
}

int vt_filter_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "VTRACE_FILTER: %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024], where[4200];
    int lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "VTRACE_FILTER: %s:%d", path, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s: expected a line shorter than %zu characters", where, sizeof line - 1);
            rc = -1;
            break;
        }
        char *e = entry_of(line);
        if (!*e)
            continue;
        if (strpbrk(e, " \t")) {
            snprintf(err, errlen, "%s: expected one entry per line (a function, a glob such as MPI_Win_*, "
                     "or site:NAME), found '%s'", where, e);
            rc = -1;
        } else if (!strncmp(e, "site:", 5)) {
            if (!e[5]) {
                snprintf(err, errlen, "%s: expected a call site after 'site:' (a symbol or MODULE+0xOFFSET, as "
                         "vtrace dump shows it)", where);
                rc = -1;
                break;
            }
            char **grown = realloc(sites, (nsites + 1) * sizeof *sites);
            char *copy = strdup(e + 5);
            if (!grown || !copy) {
                free(copy);
                snprintf(err, errlen, "%s: out of memory", where);
                rc = -1;
                break;
            }
            sites = grown;
            sites[nsites++] = copy;
            mix(e);
        } else if (strncmp(e, "MPI_", 4)) {
            snprintf(err, errlen, "%s: expected an MPI function name (MPI_...), a glob or site:NAME, found '%s'",
                     where, e);
            rc = -1;
        } else {
            rc = add_function(e, where, err, errlen);
            mix(e);
        }
    }
    fclose(f);
    if (rc)
        return -1;
    for (unsigned fn = 0; fn < VT_NFN; fn++) {
        if (nsites && !vt__filter_fn[fn] && vt_filter_allowed(fn) == 2)
            vt__filter_fn[fn] = 2;
        vt__filter_on |= vt__filter_fn[fn] != 0;
    }
    if (vt__filter_on)
        vt__rec_special |= VT_REC_FILTER;
    return 0;
}

/* Whether the call site at addr is one of the site: entries (names as vtrace dump and
 * whatif's site: selector write them: the symbol, or the module's base name+0xOFFSET). */
static int site_listed(const void *addr)
{
    Dl_info di;
    memset(&di, 0, sizeof di);
    if (!dladdr(addr, &di))
        return 0;
    char name[512] = "";
    if (di.dli_fname) {
        const char *base = strrchr(di.dli_fname, '/');
        snprintf(name, sizeof name, "%s+0x%" PRIxPTR, base ? base + 1 : di.dli_fname,
                 (uintptr_t)addr - (uintptr_t)di.dli_fbase);
    }
    for (size_t i = 0; i < nsites; i++)
        if ((di.dli_sname && !strcmp(sites[i], di.dli_sname)) || !strcmp(sites[i], name))
            return 1;
    return 0;
}

static size_t slot_of(const void *a)
{
    return (size_t)(((uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull) >> 32) & (seen_cap - 1);
}

static int remember(const void *addr, unsigned char verdict)
{
    if ((nseen + 1) * 2 > seen_cap) {
        size_t old = seen_cap;
        __typeof__(seen) prev = seen;
        seen_cap = seen_cap ? seen_cap * 2 : 64;
        seen = calloc(seen_cap, sizeof *seen);
        if (!seen) {   /* decide again next time */
            seen = prev;
            seen_cap = old;
            return verdict == 1;
        }
        for (size_t i = 0; i < old; i++) {
            if (!prev[i].verdict)
                continue;
            size_t s = slot_of(prev[i].addr);
            while (seen[s].verdict)
                s = (s + 1) & (seen_cap - 1);
            seen[s] = prev[i];
        }
        free(prev);
    }
    size_t s = slot_of(addr);
    while (seen[s].verdict)
        s = (s + 1) & (seen_cap - 1);
    seen[s].addr = addr;
    seen[s].verdict = verdict;
    nseen++;
    return verdict == 1;
}

int vt__filter_site(const void *site)
{
    /* the table is shared by the threads of an MPI_THREAD_MULTIPLE program */
    vt_lock();
    int drop = -1;
    if (seen_cap) {
        for (size_t s = slot_of(site); seen[s].verdict; s = (s + 1) & (seen_cap - 1))
            if (seen[s].addr == site) {
                drop = seen[s].verdict == 1;
                break;
            }
    }
    if (drop < 0)
        drop = remember(site, site_listed(site) ? 1 : 2);
    vt_unlock();
    return drop;
}
