#include "tracing/log.h"

#include <stdarg.h>
#include <stdio.h>

VT_HIDDEN int vt__rank = -1;
VT_HIDDEN int vt__verbose;

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (vt__rank >= 0)
        fprintf(stderr, "vtrace[%d]: %s%s\n", vt__rank, kind, msg);
    else
        fprintf(stderr, "vtrace: %s%s\n", kind, msg);
}

void vt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void vt_info(const char *fmt, ...)
{
    if (!vt__verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}
