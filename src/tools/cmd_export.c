/* vtrace export --format=F DIR OUT: the trace in a format other viewers read; one
 * exporter per source file (export.h). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/export.h"

#include <string.h>

typedef struct format {
    const char *name;
    const char *what;
    int (*run)(const vt_trace *t, const vt__export_opts *o, vt_error *err);
} format;

/* Exporters register here, one line each. */
static const format formats[] = {
    {"paraver", "Paraver: OUT.prv, OUT.pcf and OUT.row (OUT: the name without extension)", vt__export_paraver},
    {"perfetto", "Chrome trace-event JSON for the Perfetto UI, chrome://tracing (OUT: the file)", vt__export_perfetto},
#ifdef HAVE_OTF2
    {"otf2", "OTF2 archive in directory OUT, for Vampir, Scalasca, otf2-print (OUT/traces.otf2)", vt__export_otf2},
#else
    {"otf2", "OTF2 archive (not in this build: configure --with-otf2, needs libotf2-trace-dev)", vt__export_otf2},
#endif
    {NULL, NULL, NULL},
};

void vt__usage_export(FILE *out)
{
    fprintf(out, "usage: vtrace export --format=FORMAT [--quiet] DIR OUT\n"
                 "Writes the trace DIR (full or reduced) in another format. Formats:\n");
    for (const format *f = formats; f->name; f++)
        fprintf(out, "  %-10s %s\n", f->name, f->what);
    fprintf(out, "In a reduced trace, the stretches between records (merged events) appear as the region\n"
                 "vtrace:aggregated.\n"
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet          no progress display\n");
}

int vt__cmd_export(int argc, char **argv)
{
    const char *fmt = NULL, *dir = NULL, *out = NULL;
    int quiet = 0;
    const vt__opt opts[] = {
        {"-F", "--format", VT_OPT_STRING, .dest = &fmt, .flags = VT_OPT_EQ},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_export, .opts = opts, .pos = {&dir, &out}, .extra = "too many arguments"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (!fmt)
        return vt__usage_error(vt__usage_export, "missing --format");
    const format *f = formats;
    while (f->name && strcmp(f->name, fmt))
        f++;
    if (!f->name)
        return vt__usage_error(vt__usage_export, "unknown format '%s'", fmt);
    if (!dir || !out)
        return vt__usage_error(vt__usage_export, "expected DIR and OUT");
    vt_trace *t;
    vt_error err;
    if (vt_trace_open(dir, &t, &err))
        return vt__fail(&err);
    vt__note_incomplete(t);
    if (!strcmp(f->name, "otf2") && vt__make_room(out)) {
        vt_trace_close(t);
        return VT_EXIT_ERROR;
    }
    vt__export_opts o = {out, quiet};
    int rc = f->run(t, &o, &err);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    return rc ? vt__fail(&err) : VT_EXIT_OK;
}
