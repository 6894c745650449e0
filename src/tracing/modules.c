#include "vt_config.h"
#include "tracing/modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BUILD_ID 64

typedef struct module {
    char *path;
    uintptr_t base; /* dladdr's dli_fbase: identifies the object */
    uint8_t id[MAX_BUILD_ID];
    size_t idlen;
} module;

static module *mods;
static uint32_t nmods, capmods;

typedef struct find {
    uintptr_t addr;
    int found, main_program;
    uint8_t id[MAX_BUILD_ID];
    size_t idlen;
} find;

/* NT_GNU_BUILD_ID in one PT_NOTE segment; notes are 4-byte aligned, or 8 in a segment
 * aligned to 8 (.note.gnu.property). */
static void build_id_in(const uint8_t *p, size_t len, size_t align, find *f)
{
    while (len >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
        size_t name = (n->n_namesz + align - 1) & ~(align - 1);
        size_t desc = (n->n_descsz + align - 1) & ~(align - 1);
        size_t all = sizeof *n + name + desc;
        if (all > len)
            return;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof *n, "GNU", 4) &&
            n->n_descsz > 0 && n->n_descsz <= MAX_BUILD_ID) {
            memcpy(f->id, p + sizeof *n + name, n->n_descsz);
            f->idlen = n->n_descsz;
            return;
        }
        p += all;
        len -= all;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    find *f = arg;
    int inside = 0;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        inside = ph->p_type == PT_LOAD && f->addr >= lo && f->addr - lo < ph->p_memsz;
    }
    if (!inside)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && !f->idlen; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            build_id_in((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, ph->p_align == 8 ? 8 : 4, f);
    }
    f->found = 1;
    f->main_program = !info->dlpi_name || !info->dlpi_name[0];
    return 1;
}

static module *module_for(uintptr_t addr, uintptr_t base, const char *fname)
{
    for (uint32_t i = 0; i < nmods; i++)
        if (mods[i].base == base)
            return &mods[i];
    if (nmods == capmods) {
        module *m = realloc(mods, (capmods ? capmods * 2 : 8) * sizeof *m);
        if (!m)
            return NULL;
        mods = m;
        capmods = capmods ? capmods * 2 : 8;
    }
    find f = {.addr = addr};
    dl_iterate_phdr(visit, &f);
    /* dladdr names the executable by argv[0], which may be relative to a working
     * directory the analysis does not know. */
    char abs[PATH_MAX];
    const char *path = fname;
    ssize_t k;
    if (f.found && f.main_program && (k = readlink("/proc/self/exe", abs, sizeof abs - 1)) > 0) {
        abs[k] = '\0';
        path = abs;
    } else if (fname[0] != '/' && realpath(fname, abs)) {
        path = abs;
    }
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    module *m = &mods[nmods++];
    *m = (module){.path = copy, .base = base, .idlen = f.idlen};
    memcpy(m->id, f.id, f.idlen);
    return m;
}

void vt_module_of(const void *a, vt_site_module *out)
{
    Dl_info di;
    memset(&di, 0, sizeof di);
    *out = (vt_site_module){.path = "", .offset = 0, .symbol = "", .index = -1};
    if (!dladdr(a, &di) || !di.dli_fname || !di.dli_fname[0])
        return;
    module *m = module_for((uintptr_t)a, (uintptr_t)di.dli_fbase, di.dli_fname);
    out->path = m ? m->path : di.dli_fname;
    out->index = m ? (int64_t)(m - mods) : -1;
    out->offset = (uint64_t)((uintptr_t)a - (uintptr_t)di.dli_fbase);
    out->symbol = di.dli_sname ? di.dli_sname : "";
}

uint32_t vt_modules_count(void) { return nmods; }

const char *vt_module_at(uint32_t i, const uint8_t **build_id, size_t *len)
{
    *build_id = mods[i].id;
    *len = mods[i].idlen;
    return mods[i].path;
}

void vt_modules_free(void)
{
    for (uint32_t i = 0; i < nmods; i++)
        free(mods[i].path);
    free(mods);
    mods = NULL;
    nmods = capmods = 0;
}
