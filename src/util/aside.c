/* VTRACE_OVERWRITE: see aside.h. */
#include "util/aside.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int vt_parse_overwrite(const char *s, enum vt_overwrite *out)
{
    static const char *const names[] = {"aside", "replace", "refuse"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum vt_overwrite)i;
            return 0;
        }
    return -1;
}

int vt_overwrite_from_env(enum vt_overwrite *out)
{
    const char *v = getenv("VTRACE_OVERWRITE");
    if (!v) {
        *out = VT_OVERWRITE_ASIDE;
        return 0;
    }
    return vt_parse_overwrite(v, out);
}

static int exists_in(const char *dir, const char *name)
{
    char path[4352];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

int vt_holds_trace(const char *dir)
{
    static const char *const marks[] = {"vtrace.defs", "full", "reduced", "NO-TRACE.txt", "traces.otf2"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        if (exists_in(dir, marks[i]))
            return 1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)))
        found = !strncmp(e->d_name, "rank-", 5) && strstr(e->d_name, ".vte") != NULL;
    closedir(d);
    return found;
}

int vt_make_room(const char *dir, enum vt_overwrite policy, char *moved, size_t movedcap, char *why, size_t whycap)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !vt_holds_trace(dir) || policy == VT_OVERWRITE_REPLACE)
        return 0;
    if (policy == VT_OVERWRITE_REFUSE) {
        snprintf(why, whycap, "%s holds a trace already and VTRACE_OVERWRITE=refuse", dir);
        return -1;
    }
    /* the old trace's own time in its new name: when it was written */
    char stamp[32];
    struct tm tm;
    time_t t = st.st_mtime;
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    for (int n = 1; n < 1000; n++) {
        if (n == 1)
            snprintf(moved, movedcap, "%.*s.old-%s", (int)len, dir, stamp);
        else
            snprintf(moved, movedcap, "%.*s.old-%s-%d", (int)len, dir, stamp, n);
        if (stat(moved, &st) == 0)
            continue;
        if (rename(dir, moved) == 0)
            return 1;
        snprintf(why, whycap, "cannot move the trace in %s aside to %s (%s)", dir, moved, strerror(errno));
        return -1;
    }
    snprintf(why, whycap, "cannot move the trace in %s aside: %s.old-%s to -999 exist", dir, dir, stamp);
    return -1;
}
