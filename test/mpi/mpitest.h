/* Helpers shared by the MPI integration tests (test/mpi).
 *
 * A test program checks its own MPI results with CHECK() and returns
 * mt_result() from main after MPI_Finalize: non-zero when any check failed, so
 * mpiexec (and the test) fails. It makes no MPI call of its own for this, so the
 * trace holds exactly the calls the test makes.
 *
 * mt_expect() adds expectations known only at run time (who received what under
 * MPI_ANY_SOURCE, for example) for check_trace.py: one line per call, in the
 * format of the .expect files, written to dynamic.expect.RANK in the current
 * directory (the test's work directory, see run-mpi-test.sh). */
#ifndef VT_MPITEST_H
#define VT_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_errors;
static int mt_rank = -1;

static void mt_fail(const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), unused));
static void mt_fail(const char *file, int line, const char *what, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[rank %d] %s:%d: check failed: %s", mt_rank, file, line, what);
    if (fmt && *fmt) {
        fputs(": ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    mt_errors++;
}

/* CHECK(condition, "printf format", ...) */
#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond))                                                                                               \
            mt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                                       \
    } while (0)

/* Checks an MPI return code. */
#define CHECK_MPI(call)                                                                                            \
    do {                                                                                                           \
        int mt_rc_ = (call);                                                                                       \
        if (mt_rc_ != MPI_SUCCESS)                                                                                 \
            mt_fail(__FILE__, __LINE__, #call, "returned %d", mt_rc_);                                             \
    } while (0)

/* Checks a status against the expected source, tag and count of elements of TYPE. */
#define CHECK_STATUS(st, src, tg, n, type)                                                                         \
    do {                                                                                                           \
        int mt_cnt_ = -1;                                                                                          \
        MPI_Get_count(&(st), (type), &mt_cnt_);                                                                    \
        CHECK((st).MPI_SOURCE == (src) && (st).MPI_TAG == (tg) && mt_cnt_ == (n),                                  \
              "status source %d tag %d count %d, expected %d %d %d", (st).MPI_SOURCE, (st).MPI_TAG, mt_cnt_,       \
              (int)(src), (int)(tg), (int)(n));                                                                    \
    } while (0)

static void mt_expect(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void mt_expect(const char *fmt, ...)
{
    char path[64];
    snprintf(path, sizeof path, "dynamic.expect.%d", mt_rank);
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "[rank %d] cannot write %s\n", mt_rank, path);
        mt_errors++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

/* The exit status of main: 0 when every check passed. */
static int mt_result(void) __attribute__((unused));
static int mt_result(void)
{
    if (mt_errors)
        fprintf(stderr, "[rank %d] %d check(s) failed\n", mt_rank, mt_errors);
    return mt_errors ? 1 : 0;
}

#endif
