/* --debug-dir: the directories the call-site resolver searches (analysis/symbols.h). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt__opt_debug_dir(void *dest, const char *val, char *msg, size_t len)
{
    static char *dirs;
    if (!*val || strchr(val, ':')) {
        snprintf(msg, len, "--debug-dir takes one directory, not '%s' (repeat the option for more)", val);
        return VT_EXIT_USAGE;
    }
    size_t have = dirs ? strlen(dirs) : 0, add = strlen(val);
    char *d = realloc(dirs, have + add + 2);
    if (!d) {
        snprintf(msg, len, "out of memory");
        return VT_EXIT_ERROR;
    }
    if (have)
        d[have++] = ':';
    memcpy(d + have, val, add + 1);
    dirs = d;
    /* the option's directories first, then VTRACE_DEBUG_PATH's */
    const char *env = getenv("VTRACE_DEBUG_PATH");
    if (env && *env) {
        char *both = malloc(strlen(dirs) + strlen(env) + 2);
        if (!both) {
            snprintf(msg, len, "out of memory");
            return VT_EXIT_ERROR;
        }
        sprintf(both, "%s:%s", dirs, env);
        vt_symbols_set_path(both);
        free(both);
    } else {
        vt_symbols_set_path(dirs);
    }
    return 0;
}
