# Sourced by the tests of test/parallel with NAME set: the tools, mpiexec (skips, 77,
# without one), the mpiexec lock, a fresh work directory test/parallel/NAME.work ($work,
# absolute) and the failure count (fail MESSAGE; $fails, $runs).
# Environment: VTEST_MPIEXEC, VTEST_VTRACE, VTEST_PYTHON (as the other MPI tests).
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-$(pwd)/vtrace}
MPIEXEC=${VTEST_MPIEXEC:-}
PYTHON=${VTEST_PYTHON:-python3}
[ -n "$MPIEXEC" ] || { echo "no mpiexec: skipping"; exit 77; }
[ -x "$VTRACE" ] && [ -x "$(dirname "$VTRACE")/vtrace-mpi" ] || { echo "vtrace or vtrace-mpi not built"; exit 1; }
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
work=test/parallel/$NAME.work
rm -rf "$work" && mkdir -p "$work" || exit 99
work=$(cd "$work" && pwd)
fails=0 runs=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
