#!/bin/sh
# A real MPI run (examples/pipeline, 2 ranks) compensated: the measured overhead is shown
# by vtrace info (> 0, < 1 us per event) and happened-before holds in the result. The
# streamed compensation (the default) and the one with the trace in memory
# (VTRACE_TEST_COMPENSATE_IN_MEMORY) write the same files.
# mpiexec runs under a lock: two MPI jobs at once stall a small machine.
set -u
VTRACE=${VTRACE:-./vtrace}
HB=${HBCHECK:-test/analysis/hbcheck}
mpiexec=${VTEST_MPIEXEC:-mpiexec.mpich}
command -v "$mpiexec" > /dev/null 2>&1 || { echo "no $mpiexec: skipping"; exit 77; }
# one lock for every MPI run of the machine, as test/mpi/run-mpi-test.sh
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
[ -x examples/pipeline ] || { echo "examples/pipeline not built: skipping"; exit 77; }
fail() { echo "FAIL: compensate_mpi.sh: $*"; exit 1; }
work=test/analysis/compensate_mpi.work
rm -rf "$work" && mkdir -p "$work" || exit 99
VTRACE_DIR=$work/trace $lock "$mpiexec" -n 2 ./examples/pipeline > "$work/run.out" 2>&1 ||
    fail "the pipeline run failed: $(tail -3 "$work/run.out")"
"$VTRACE" info --json "$work/trace" > "$work/info.json" || fail "vtrace info failed"
python3 - "$work/info.json" <<'PY' || fail "the measured overhead is missing or out of (0, 1 us)"
import json, sys
ranks = json.load(open(sys.argv[1]))["per_rank"]
assert len(ranks) == 2
for r in ranks:
    assert 0 < r["overhead_ps"] < 1000000, r
    assert r["copy_ps_per_byte"] == 0
print("overhead per event (ps):", [r["overhead_ps"] for r in ranks])
PY
"$VTRACE" info "$work/trace" | grep -q "overhead/event" || fail "vtrace info does not show the overhead"
"$VTRACE" compensate "$work/trace" "$work/comp" > "$work/comp.out" || fail "compensate failed"
cat "$work/comp.out"
"$HB" "$work/comp" || fail "happened-before broken in the compensated trace"
"$VTRACE" info "$work/comp" > /dev/null || fail "the compensated trace does not read"
VTRACE_TEST_COMPENSATE_IN_MEMORY=1 "$VTRACE" compensate "$work/trace" "$work/comp.mem" > /dev/null ||
    fail "compensate in memory failed"
for f in "$work"/comp/*; do
    cmp "$f" "$work/comp.mem/${f##*/}" || fail "${f##*/} differs streamed and in memory"
done
echo "PASS: compensate_mpi.sh"
