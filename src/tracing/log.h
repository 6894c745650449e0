/* Messages from the layer to the user, prefixed with "vtrace" and the rank. */
#ifndef VT_LOG_H
#define VT_LOG_H

#include "tracing/state.h"

VT_HIDDEN void vt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
VT_HIDDEN void vt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
VT_HIDDEN extern int vt__rank;
VT_HIDDEN extern int vt__verbose;

#endif
