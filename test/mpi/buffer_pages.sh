#!/bin/sh
# The record buffer in transparent huge pages (issue 18, src/util/hugemem.c): while a
# process's records fill 6 MiB of its 16 MiB buffer, it takes at most 64 minor page
# faults (in 4 KiB pages: about 1500). Skipped where the kernel has no transparent huge
# pages, has them off ("never"), or the program's own advised pages fault every 4 KiB.
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/buffer_pages
need_mpiexec
need_built "$prog"
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [ ! -r "$thp" ] || grep -q '\[never\]' "$thp"; then
    echo "$me: transparent huge pages off or absent here ($thp); skipping"
    exit 77
fi
new_work
(cd "$work" && locked env VTRACE_MODE=full VTRACE_BUFFER=16M BP_MB=6 BP_MAX_FAULTS=64 VTRACE_DIR="$work/trace" \
    "$VTEST_MPIEXEC" -n 1 "$prog") > "$work/out" 2>&1
rc=$?
sed 's/^/  | /' "$work/out"
if [ "$rc" -eq 0 ] && grep -q '^no huge pages here' "$work/out"; then
    echo "$me: skipping"
    exit 77
fi
[ "$rc" -eq 0 ] || fail "exit status $rc"
finish
