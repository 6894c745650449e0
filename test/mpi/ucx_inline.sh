#!/bin/sh
# VTRACE_UCX_INLINE=1 widens UCX's inline limit by the header (issue 18, src/mpid/pb_env.c):
# test/mpi/ucx_inline checks UCX_MM_FIFO_ELEM_SIZE after MPI_Init against UI_WANT, in the
# modes with headers (set), full and off (untouched), without the setting (untouched), with
# a user's value (kept) and with a user's value for one transport (nothing set over it).
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/ucx_inline
need_mpiexec
need_built "$prog"
new_work
i=0
# each case: the environment of both ranks (UI_USER=1: the case sets the variable itself)
for case in "VTRACE_MODE=reduced VTRACE_UCX_INLINE=1 UI_WANT=192" \
    "VTRACE_MODE=both VTRACE_UCX_INLINE=1 UI_WANT=192" \
    "VTRACE_MODE=full VTRACE_UCX_INLINE=1 UI_WANT=unset" \
    "VTRACE_MODE=off VTRACE_UCX_INLINE=1 UI_WANT=unset" \
    "VTRACE_MODE=reduced UI_WANT=unset" \
    "VTRACE_MODE=reduced VTRACE_UCX_INLINE=0 UI_WANT=unset" \
    "VTRACE_MODE=reduced VTRACE_UCX_INLINE=1 UCX_MM_FIFO_ELEM_SIZE=256 UI_WANT=256 UI_USER=1" \
    "VTRACE_MODE=reduced VTRACE_UCX_INLINE=1 UCX_POSIX_FIFO_ELEM_SIZE=256 UI_WANT=unset"; do
    i=$((i + 1))
    (cd "$work" && locked env -u UCX_MM_FIFO_ELEM_SIZE -u UCX_POSIX_FIFO_ELEM_SIZE -u UCX_SYSV_FIFO_ELEM_SIZE \
        -u VTRACE_UCX_INLINE $case VTRACE_DIR="$work/trace.$i" "$VTEST_MPIEXEC" -n 2 "$prog") > "$work/out.$i" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "ok: $case"
    else
        sed 's/^/  | /' "$work/out.$i"
        fail "$case: exit status $rc"
    fi
done
finish
