#!/bin/sh
# vtrace export --format=otf2 on a real trace: examples/halo (Irecv/Isend/Waitall and an
# Allreduce per iteration) on 2 ranks, full and reduced; otf2-print and otf2_check.py
# (test/export/otf2_lib.sh) read both archives. One MPI job at a time on the machine
# (flock, as test/mpi/run-mpi-test.sh). Skips (77) when vtrace was built without OTF2 or
# configure found no mpiexec.
set -u
. "$(dirname "$0")/otf2_lib.sh"
# the launcher configure found, never a bare mpiexec from PATH (it may be another MPI's)
MPIEXEC=${VTEST_MPIEXEC:-}
[ -n "$MPIEXEC" ] && command -v "$MPIEXEC" > /dev/null || { echo "SKIP: no mpiexec found by configure"; exit 77; }
HALO=${HALO:-./examples/halo}
[ -x "$HALO" ] || { echo "FAIL: $HALO is not built"; exit 1; }
work=test/export/otf2_halo.work
rm -rf "$work"
mkdir -p "$work"
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
if ! $lock env VTRACE_DIR="$work/t" timeout -k 10 120 "$MPIEXEC" -n 2 "$HALO" 20 1024 100 > "$work/run.out" 2>&1; then
    echo "FAIL: mpiexec -n 2 $HALO"; cat "$work/run.out"; exit 1
fi
"$VTRACE" export --format=otf2 --quiet "$work/t" "$work/full" || { echo "FAIL: export of the halo trace"; fail=1; }
check_archive "$work/full" "$work/t"
# 20 iterations: 2 Irecv, 2 Isend, a Waitall and an Allreduce on each of the 2 ranks.
n=$(grep -c '^MPI_ISEND ' "$work/full.print")
[ "$n" -eq 80 ] || { echo "FAIL: $n MPI_ISEND events, expected 80"; fail=1; }
n=$(grep -c '^MPI_IRECV ' "$work/full.print")
[ "$n" -eq 80 ] || { echo "FAIL: $n MPI_IRECV events, expected 80"; fail=1; }
n=$(grep -c '^MPI_COLLECTIVE_END .*ALLREDUCE' "$work/full.print")
[ "$n" -eq 40 ] || { echo "FAIL: $n Allreduce collectives, expected 40"; fail=1; }
"$VTRACE" reduce --threshold 100ns --no-store "$work/t" "$work/r" > /dev/null || { echo "FAIL: vtrace reduce"; fail=1; }
"$VTRACE" export --format=otf2 --quiet "$work/r" "$work/red" || { echo "FAIL: export of the reduced trace"; fail=1; }
check_archive "$work/red" "$work/r" --reduced
[ "$fail" -eq 0 ] && rm -rf "$work" "$work".*
exit "$fail"
