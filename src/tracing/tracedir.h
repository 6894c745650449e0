/* Where the trace goes (VTRACE_DIR): the directory's default name, spawned worlds'
 * subdirectories, creating the path. */
#ifndef VT_TRACEDIR_H
#define VT_TRACEDIR_H

#include <stddef.h>

#include "tracing/state.h"

/* mkdir -p PATH: 0 or -errno. */
VT_HIDDEN int vt_mkdirs(const char *path);
/* Processes started by MPI_Comm_spawn: DIR (LEN bytes) gets /spawn-HOST-PID. */
VT_HIDDEN void vt_spawned_subdir(char *dir, size_t len);
/* vtrace-DATE-TIME-JOB (the batch system's job id) or -PID. */
VT_HIDDEN void vt_default_dir(char *out, size_t len);

#endif
