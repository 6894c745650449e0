#!/bin/sh
# Ranks started with different VTRACE_MODE values are refused at MPI_Init with a message
# (a header on the messages of some ranks only would corrupt them), and the job ends
# with a failure status instead of hanging. MPMD launch: rank 0 full, rank 1 reduced.
set -u
me=mixed_modes.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
prog=$builddir/test/mpi/odd_requests
[ -n "${VTEST_MPIEXEC:-}" ] || { echo "$me: no mpiexec; skipping"; exit 77; }
[ -x "$prog" ] || { echo "$me: $prog is not built" >&2; exit 99; }
work=$builddir/test/mpi/mixed_modes.work
rm -rf "$work" && mkdir -p "$work" || exit 99
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
status=0
for pair in "full reduced" "reduced both" "off reduced"; do
    set -- $pair
    $lock timeout -k 10 "${VTEST_TIMEOUT:-120}" "$VTEST_MPIEXEC" \
        -n 1 env VTRACE_MODE=$1 VTRACE_DIR="$work/trace" "$prog" : \
        -n 1 env VTRACE_MODE=$2 VTRACE_DIR="$work/trace" "$prog" > "$work/out" 2> "$work/err"
    rc=$?
    sed 's/^/  stderr| /' "$work/err"
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: $me: modes $1 and $2: exit status $rc, expected a refusal"
        status=1
    elif ! grep -q "VTRACE_MODE differs between ranks" "$work/err"; then
        echo "FAIL: $me: modes $1 and $2: no message saying the modes differ"
        status=1
    else
        echo "ok: modes $1 and $2 refused (exit status $rc)"
    fi
done
[ "$status" -eq 0 ] && rm -rf "$work"
exit $status
