/* What a writer does with a trace directory that exists already (VTRACE_OVERWRITE): the
 * run-time layer for VTRACE_DIR, vtrace reduce, compensate and export for OUT. */
#ifndef VT_ASIDE_H
#define VT_ASIDE_H

#include <stddef.h>

enum vt_overwrite {
    VT_OVERWRITE_ASIDE,   /* the old one is renamed DIR.old-YYYYMMDD-HHMMSS (its time) */
    VT_OVERWRITE_REPLACE, /* the new one is written over it */
    VT_OVERWRITE_REFUSE   /* nothing is written */
};

/* "aside", "replace" or "refuse"; returns 0, or -1 and leaves *out alone. */
int vt_parse_overwrite(const char *s, enum vt_overwrite *out);
/* VTRACE_OVERWRITE of the environment, VT_OVERWRITE_ASIDE when unset; -1 when invalid. */
int vt_overwrite_from_env(enum vt_overwrite *out);

/* Whether DIR holds a trace (vtrace.defs, rank files, DIR/full or DIR/reduced of
 * VTRACE_MODE=reduced and both, NO-TRACE.txt) or an OTF2 archive (traces.otf2). */
int vt_holds_trace(const char *dir);

/* Applies POLICY to DIR before a trace is written there. Returns 0 (nothing there, or
 * replace), 1 with the new name of the old trace in MOVED (aside), or -1 with a
 * sentence in WHY (refuse, or the rename failed). */
int vt_make_room(const char *dir, enum vt_overwrite policy, char *moved, size_t movedcap, char *why, size_t whycap);

#endif
