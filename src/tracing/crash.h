/* Runs that end without MPI_Finalize: fatal signals, MPI_Abort and exit. Each rank then
 * writes what its buffer holds and ends its trace files with definitions that say how
 * the run ended (doc/format.md 1.4); in a signal handler with raw blocks and write(2)
 * only, after which the signal takes its default action, so that the exit status and
 * core dump are those of the untraced program. And the flush timer
 * (VTRACE_FLUSH_INTERVAL), which bounds what a SIGKILL loses. */
#ifndef VT_CRASH_H
#define VT_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include "tracing/state.h"

/* What ends the trace: reason (enum vt_end), detail, and whether it runs in a signal
 * handler (only async-signal-safe calls then). Called at most once. */
typedef void vt_crash_end_fn(unsigned reason, int64_t detail, int in_signal);

/* Installs the handlers (signals whose action is the default one; a program's own
 * handlers are left alone) and the exit hook when SIGNALS, and starts the flush timer
 * when interval_ns > 0. */
VT_HIDDEN void vt_crash_start(vt_crash_end_fn *end, int signals, int64_t interval_ns);
/* At MPI_Finalize: the timer stops, the handlers are given back. */
VT_HIDDEN void vt_crash_stop(void);
/* MPI_Abort is being called with this code. */
VT_HIDDEN void vt_crash_abort(int code);
/* Memory for encoding the definitions in a signal handler, at least `need` bytes
 * (grown outside signal handlers only); NULL if there is none. */
VT_HIDDEN uint8_t *vt_crash_reserve(size_t need, size_t *cap);

#endif
