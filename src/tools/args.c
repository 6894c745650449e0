/* The subcommands' argument handling (args.h): the option parser, the usage errors,
 * vt__fail and vt__parse_u32. Calls no subcommand and not vtrace.c. */
#include "vt_config.h"
#include "tools/tools.h"
#include "util/settings.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int vt__fail(const vt_error *err)
{
    fflush(stdout);
    fprintf(stderr, "vtrace: %s\n", err->msg);
    return VT_EXIT_ERROR;
}

const char *vt__command_name;

int vt__usage_error(void (*u)(FILE *), const char *fmt, ...)
{
    va_list ap;
    fputs("vtrace: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    /* one line and where the options are, not the whole help after it */
    (void)u;
    if (vt__command_name)
        fprintf(stderr, "see 'vtrace %s --help'\n", vt__command_name);
    else
        fputs("see 'vtrace --help'\n", stderr);
    return VT_EXIT_USAGE;
}

int vt__parse_u32(const char *s, uint32_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_number(const vt__opt *o, const char *s, double *out)
{
    if (!*s)
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < o->lo || v > o->hi || ((o->flags & VT_OPT_BELOW) && v >= o->hi))
        return -1;
    *out = v;
    return 0;
}

/* Stores VAL for option O: 0, -1 when VAL is bad, or the exit status of another error
 * (explained in msg). */
static int take(const vt__opt *o, const char *val, int argc, char *msg, size_t len)
{
    uint32_t u;
    int i;
    double d;
    switch (o->kind) {
    case VT_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case VT_OPT_STRING:
        *(const char **)o->dest = val;
        return 0;
    case VT_OPT_COUNT:
    case VT_OPT_POSITIVE: {
        double lo = o->kind == VT_OPT_POSITIVE ? 1 : o->lo;
        if (vt__parse_u32(val, &u) || u < lo || (o->hi > 0 && u > o->hi))
            return -1;
        *(uint32_t *)o->dest = u;
        return 0;
    }
    case VT_OPT_INT:
        if (vt_parse_int(val, (int)o->lo, (int)o->hi, &i))
            return -1;
        *(int *)o->dest = i;
        return 0;
    case VT_OPT_NUMBER:
        if (parse_number(o, val, &d))
            return -1;
        *(double *)o->dest = d;
        return 0;
    case VT_OPT_LIST: {
        vt__strlist *l = o->dest;
        if (!l->v && !(l->v = calloc((size_t)argc + 1, sizeof *l->v))) {
            snprintf(msg, len, "out of memory");
            return VT_EXIT_ERROR;
        }
        l->v[l->n++] = val;
        return 0;
    }
    case VT_OPT_CALL:
        return o->call(o->dest, val, msg, len);
    }
    return -1;
}

/* "NAME takes WHAT, not 'VALUE'" or "NAME needs WHAT". */
static int bad_value(const vt__args *a, const vt__opt *o, const char *val)
{
    const char *pre = a->prefix ? a->prefix : "";
    char range[64];
    const char *what = o->what;
    if (!what && (o->kind == VT_OPT_INT || (o->kind == VT_OPT_COUNT && o->hi > 0))) {
        snprintf(range, sizeof range, "%s%.0f to %.0f", o->kind == VT_OPT_INT ? "an integer from " : "", o->lo, o->hi);
        what = range;
    } else if (!what) {
        what = o->kind == VT_OPT_POSITIVE || o->lo >= 1 ? "a positive count" : "a count";
    }
    if (o->flags & VT_OPT_NEEDS)
        return vt__usage_error(a->usage, "%s%s needs %s", pre, o->lname, what);
    return vt__usage_error(a->usage, "%s%s takes %s, not '%s'", pre, o->lname, what, val);
}

/* The entry of option ARG, with its value in *VAL when written --name=VALUE. */
static const vt__opt *find(const vt__opt *opts, const char *arg, const char **val)
{
    *val = NULL;
    for (const vt__opt *o = opts; o->sname || o->lname; o++) {
        if ((o->sname && !strcmp(arg, o->sname)) || (o->lname && !strcmp(arg, o->lname)))
            return o;
        size_t n = o->lname ? strlen(o->lname) : 0;
        if ((o->flags & VT_OPT_EQ) && n && !strncmp(arg, o->lname, n) && arg[n] == '=') {
            *val = arg + n + 1;
            return o;
        }
    }
    return NULL;
}

int vt__args_parse(const vt__args *a, int argc, char **argv)
{
    const char *pre = a->prefix ? a->prefix : "";
    size_t npos = 0;
    int only_args = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_args && arg[0] == '-' && arg[1]) {
            if (a->dashdash && !strcmp(arg, "--")) {
                only_args = 1;
                continue;
            }
            if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
                a->usage(stdout);
                return VT_EXIT_OK;
            }
            const char *val;
            const vt__opt *o = find(a->opts, arg, &val);
            if (o && o->kind != VT_OPT_FLAG && !val) {
                if (i + 1 < argc)
                    val = argv[++i];
                else if (o->flags & (VT_OPT_NEEDS | VT_OPT_MISSING_EMPTY))
                    return bad_value(a, o, "");
                else if (o->flags & VT_OPT_MISSING_SELF)
                    return bad_value(a, o, arg);
                else
                    o = NULL; /* without its value: not this option */
            }
            if (!o)
                return vt__usage_error(a->usage, "%sunknown option '%s'", pre, arg);
            char msg[2048] = "";
            int rc = take(o, val, argc, msg, sizeof msg);
            if (rc < 0)
                return bad_value(a, o, val);
            if (rc == VT_EXIT_USAGE)
                return vt__usage_error(a->usage, "%s%s", pre, msg);
            if (rc) {
                fprintf(stderr, "vtrace: %s\n", msg);
                return rc;
            }
        } else if (npos < sizeof a->pos / sizeof a->pos[0] && a->pos[npos]) {
            *a->pos[npos++] = arg;
        } else if (a->extra_plain) {
            return vt__usage_error(a->usage, "%s%s", pre, a->extra);
        } else {
            return vt__usage_error(a->usage, "%s%s ('%s')", pre, a->extra ? a->extra : "one trace directory only",
                                   arg);
        }
    }
    if (a->missing && a->pos[0] && !*a->pos[0])
        return vt__usage_error(a->usage, "%s%s", pre, a->missing);
    return VT_ARGS_GO;
}
