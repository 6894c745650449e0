/* Call sites as the programmer knows them: function, file and line, from the debug
 * information of the module each site lies in (elfutils' libdw), found by the module's
 * recorded path, the debug directories (--debug-dir, VTRACE_DEBUG_PATH) and the build-id
 * convention DIR/.build-id/xx/yyyy.debug. A module whose build-id differs from the one
 * recorded is not used: its sites keep module+offset, with one note on stderr. Each
 * distinct (module, offset) is resolved once. Without libdw, nothing resolves. */
#ifndef VT_SYMBOLS_H
#define VT_SYMBOLS_H

#include "format/reader.h"

#include <stdint.h>

typedef struct vt_srcloc {
    const char *function; /* "" unknown */
    const char *file;     /* as the debug information names it; "" unknown */
    int line;             /* 0 unknown */
} vt_srcloc;

/* Directories searched, colon-separated, before the default (/usr/lib/debug); NULL:
 * VTRACE_DEBUG_PATH. Call before the first lookup. */
void vt_symbols_set_path(const char *dirs);
/* 1 and *loc (strings valid until vt_symbols_reset) when the site has a file and line. */
int vt_symbols_resolve(const vt_trace *t, uint32_t rank, int64_t callsite, vt_srcloc *loc);
/* "function (file:line)" (file's last component), else "symbol@module+0xOFFSET",
 * "module+0xOFFSET", "0xADDRESS"; "" for an unknown site. Valid until vt_symbols_reset. */
const char *vt_site_name(const vt_trace *t, uint32_t rank, int64_t callsite);
/* Resolves every call site of T: *sites distinct ones (ranks share a module's), *lines
 * of them with a file and line, *checkable of them in a module with a recorded build-id
 * (those that could have lines). */
void vt_symbols_summary(const vt_trace *t, size_t *sites, size_t *lines, size_t *checkable);
/* Whether this build resolves lines (libdw found at configure time). */
int vt_symbols_available(void);
void vt_symbols_reset(void);

#endif
