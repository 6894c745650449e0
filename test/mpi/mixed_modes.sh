#!/bin/sh
# Ranks started with different VTRACE_MODE values are refused at MPI_Init with a message
# (a header on the messages of some ranks only would corrupt them), and the job ends
# with a failure status instead of hanging. MPMD launch: rank 0 full, rank 1 reduced.
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/odd_requests
need_mpiexec
need_built "$prog"
new_work
for pair in "full reduced" "reduced both" "off reduced"; do
    set -- $pair
    locked "$VTEST_MPIEXEC" \
        -n 1 env VTRACE_MODE=$1 VTRACE_DIR="$work/trace" "$prog" : \
        -n 1 env VTRACE_MODE=$2 VTRACE_DIR="$work/trace" "$prog" > "$work/out" 2> "$work/err"
    rc=$?
    sed 's/^/  stderr| /' "$work/err"
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "modes $1 and $2: exit status $rc, expected a refusal"
    elif ! grep -q "VTRACE_MODE differs between ranks" "$work/err"; then
        fail "modes $1 and $2: no message saying the modes differ"
    else
        echo "ok: modes $1 and $2 refused (exit status $rc)"
    fi
done
finish
