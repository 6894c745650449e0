#!/bin/sh
# Every vtrace command on damaged traces (issue 14): test/tools/fuzz_commands.py makes
# mutants of seed traces (synthetic halo, pipeline and master/worker traces, full and
# reduced; a reduced trace of format 1.3; where MPI runs, traces of a run that a signal
# ended, full and reduced) and runs each command on each; none may crash, hang or exit
# without a message. test/build/sanitizers.sh runs it again with its ASan/UBSan build.
# Environment: VTEST_VTRACE, VTEST_PYTHON, VTEST_MPIEXEC, VTEST_FUZZ_MUTANTS (mutants
# per seed, default 20), VTEST_FUZZ_SEED (default 1), VTEST_WORK.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
MPIEXEC=${VTEST_MPIEXEC:-}
work=${VTEST_WORK:-test/tools/fuzz_commands.work}
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
command -v zstd > /dev/null 2>&1 || { echo "no zstd tool (to store the seeds' blocks raw): skipping"; exit 77; }
rm -rf "$work" && mkdir -p "$work/seeds" || exit 99
s=$work/seeds
"$VTRACE" synth -n 3 -i 20 --allreduce-every 5 -m both "$s/halo" > /dev/null &&
    "$VTRACE" synth -p pipeline -n 3 -i 10 -m both "$s/pipeline" > /dev/null &&
    "$VTRACE" synth -p master-worker -n 3 -i 4 "$s/mw" > /dev/null || { echo "FAIL: vtrace synth"; exit 1; }
seeds="$s/halo/full $s/halo/reduced $s/pipeline/full $s/pipeline/reduced $s/mw $top_srcdir/test/reader/v1.3/comms-reduced"
if [ -n "$MPIEXEC" ] && [ -x test/crash/faults ]; then
    lock=
    command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
    # (rank 1 computes 1 ms between calls 20 times before its SIGTERM: candidates in its
    # own trace, which its handler writes; rank 0, taken down by mpiexec, may flush nothing,
    # and a trace without candidates is one domino refuses)
    $lock env VTRACE_MODE=both VTRACE_DIR="$s/term" VTRACE_BUFFER=64k \
        timeout -k 10 120 "$MPIEXEC" -n 2 test/crash/faults term 300 1 20 > "$work/term.out" 2>&1
    [ -f "$s/term/full/vtrace.defs" ] && seeds="$seeds $s/term/full $s/term/reduced"
fi
# shellcheck disable=SC2086
"$PYTHON" "$top_srcdir/test/tools/fuzz_commands.py" "$VTRACE" "$work/run" $seeds \
    --mutants "${VTEST_FUZZ_MUTANTS:-20}" --seed "${VTEST_FUZZ_SEED:-1}" || exit 1
rm -rf "$work"
