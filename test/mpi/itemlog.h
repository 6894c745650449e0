/* The log of the transparency tests (pb_transparency.c, bottom.c): each line of what the
 * program observed is prefixed with the item being run, the log is compared byte for
 * byte with a plain run's; failures go to standard error and are counted. Define
 * ITEMLOG_PROGRAM (the program's name) before including it. */
#ifndef VT_TEST_ITEMLOG_H
#define VT_TEST_ITEMLOG_H

#include <stdarg.h>
#include <stdio.h>

static int me;                            /* this rank */
static FILE *lg;                          /* the log */
static const char *volatile item = "init"; /* the item being run */
static int errors;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    va_list ap;
    fprintf(lg, "%s: ", item);
    va_start(ap, fmt);
    vfprintf(lg, fmt, ap);
    va_end(ap);
    fputc('\n', lg);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, ITEMLOG_PROGRAM ": rank %d: %s: ", me, item);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    errors++;
}

#endif
