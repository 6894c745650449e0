/* Internal helpers shared by reader.c and match.c (not installed). */
#ifndef VT_READER_PRIV_H
#define VT_READER_PRIV_H

#include "format/reader.h"

#include <stdint.h>

/* Sets err to "PATH: offset OFF: " followed by the formatted text (which should read
 * "expected X, found Y"). Always returns -1. err may be NULL. */
int vt__seterr(vt_error *err, const char *path, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
