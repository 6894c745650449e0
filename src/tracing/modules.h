/* The loaded objects (executable, shared libraries) that hold call sites: their paths
 * and GNU build-ids, found once, at finalisation, for the RANKDEFS module table
 * (doc/format.md) that lets `vtrace` find the right debug information. */
#ifndef VT_MODULES_H
#define VT_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "tracing/state.h"

typedef struct vt_site_module {
    const char *path;   /* absolute when it could be found; "" unknown */
    uint64_t offset;    /* the address minus the object's first mapped byte */
    const char *symbol; /* dynamic symbol, "" unknown */
    int64_t index;      /* in the module table, -1 none (path and offset as dladdr gave them) */
} vt_site_module;

/* Where addr lies; adds its object to the module table. Strings stay valid until
 * vt_modules_free. */
VT_HIDDEN void vt_module_of(const void *addr, vt_site_module *out);
VT_HIDDEN uint32_t vt_modules_count(void);
/* Path of module i and its build-id (*len 0 when it has none). */
VT_HIDDEN const char *vt_module_at(uint32_t i, const uint8_t **build_id, size_t *len);
VT_HIDDEN void vt_modules_free(void);

#endif
