/* vtrace config-vars: the VTRACE_* settings the layer reads, from the one table that
 * vt_config_load's messages come from (src/util/settings.c), after scorep-info
 * config-vars. */
#include "vt_config.h"
#include "tools/tools.h"
#include "util/settings.h"

#include <string.h>

void vt__usage_config_vars(FILE *out)
{
    fprintf(out, "usage: vtrace config-vars [--full] [--all] [--json]\n"
                 "The VTRACE_* environment variables the tracing layer reads at MPI_Init.\n\n"
                 "  --full   each with its type, default, accepted values and description\n"
                 "  --all    also the names vtrace's module file, wrappers and scripts use\n"
                 "  --json   one JSON object per variable and line\n");
}

static void json_str(const char *key, const char *v, int last)
{
    printf("\"%s\":\"", key);
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        putchar(*p);
    }
    printf(last ? "\"" : "\",");
}

int vt__cmd_config_vars(int argc, char **argv)
{
    int full = 0, all = 0, json = 0;
    const vt__opt opts[] = {
        {NULL, "--full", VT_OPT_FLAG, .dest = &full},
        {NULL, "--all", VT_OPT_FLAG, .dest = &all},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {0},
    };
    const vt__args args = {.usage = vt__usage_config_vars, .opts = opts, .extra = "no arguments expected",
                           .extra_plain = 1, .prefix = "config-vars: "};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    const vt_setting_info *s;
    for (size_t i = 0; (s = vt_setting_info_at(i)); i++) {
        if (!s->is_setting && !all)
            continue;
        if (json) {
            printf("{");
            json_str("name", s->name, 0);
            printf("\"read_by_layer\":%s,", s->is_setting ? "true" : "false");
            json_str("type", s->type, 0);
            json_str("default", s->def, 0);
            json_str("accepted", s->accepted, 0);
            json_str("description", s->what, 1);
            printf("}\n");
        } else if (full) {
            printf("%s\n    Description: %s\n           Type: %s\n        Default: %s\n", s->name, s->what, s->type,
                   s->def);
            if (s->is_setting)
                printf("       Accepted: %s\n", s->accepted);
            else
                printf("       Read by: vtrace's scripts, not the layer\n");
            printf("\n");
        } else {
            printf("%-24s %s\n", s->name, s->what);
        }
    }
    return VT_EXIT_OK;
}
