#!/bin/sh
# VTRACE_MODE=reduced keeps the full trace only while it may still be needed whole
# (src/tracing/buffer.h): when the run-time reduction stops before the first buffer block
# is full, the full trace holds the run; when it stops later, the run leaves no trace, says
# so and marks its directory; the program sees nothing of either. The stop is the test hook
# VTRACE_TEST_RT_BROKEN=stop:N (the reduction stops at call N).
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/model_halo_rt
need_mpiexec
need_built "$prog"
new_work

# run NAME ARGS ENV...: the halo program with ARGS ("iterations cells work"), 2 ranks
run() {
    name=$1 args=$2
    shift 2
    locked env "$@" "$VTEST_MPIEXEC" -n 2 "$prog" $args \
        > "$work/$name.out" 2> "$work/$name.err" || { cat "$work/$name.err"; fail "$name: the run failed"; }
}

run plain "3000 64 10" VTRACE_MODE=off
run kept "30 4096 300" VTRACE_MODE=reduced VTRACE_DIR="$work/kept"
run early "30 4096 300" VTRACE_MODE=reduced VTRACE_TEST_RT_BROKEN=stop:5 VTRACE_DIR="$work/early"
run late "3000 64 10" VTRACE_MODE=reduced VTRACE_BUFFER=64k VTRACE_TEST_RT_BROKEN=stop:15000 \
    VTRACE_DIR="$work/late"

"$vtrace" info "$work/kept" > "$work/kept.info" 2>&1 && grep -q '^kind: *reduced' "$work/kept.info" ||
    { cat "$work/kept.info"; fail "no reduced trace without a stop"; }
[ ! -e "$work/kept/full" ] && [ ! -e "$work/kept/reduced" ] || fail "DIR/full or DIR/reduced left behind"

"$vtrace" info "$work/early" > "$work/early.info" 2>&1 && grep -q '^kind: *full' "$work/early.info" ||
    { cat "$work/early.info"; fail "a stop before the first block: no full trace"; }
grep -q 'holds the full trace' "$work/early.err" || { cat "$work/early.err"; fail "early: no warning"; }

grep -q 'no trace of this run' "$work/late.err" || { cat "$work/late.err"; fail "late: no warning"; }
[ -f "$work/late/NO-TRACE.txt" ] || fail "late: the directory is not marked"
[ ! -e "$work/late/vtrace.defs" ] && [ ! -e "$work/late/full" ] || fail "late: a trace or DIR/full left behind"
if "$vtrace" info "$work/late" > "$work/late.info" 2>&1; then
    fail "late: vtrace info read a trace that is not there"
fi
cmp -s "$work/plain.out" "$work/late.out" || fail "late: the program's output differs from the plain run's"

finish
