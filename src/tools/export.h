/* Exporters of `vtrace export --format=F DIR OUT` (cmd_export.c), one per source file:
 * export_otf2.c, export_paraver.c, export_perfetto.c. Each reads a full or a reduced
 * trace; in a reduced trace, the stretches between records (merged events) are shown as
 * a region named "vtrace:aggregated". Returns 0, or -1 with err (naming the file). */
#ifndef VT_EXPORT_H
#define VT_EXPORT_H

#include "format/reader.h"

typedef struct vt__export_opts {
    const char *out;   /* output: a directory (otf2) or a file name prefix/file */
    int quiet;         /* no progress display */
} vt__export_opts;

int vt__export_otf2(const vt_trace *t, const vt__export_opts *o, vt_error *err);
int vt__export_paraver(const vt_trace *t, const vt__export_opts *o, vt_error *err);
int vt__export_perfetto(const vt_trace *t, const vt__export_opts *o, vt_error *err);

#endif
