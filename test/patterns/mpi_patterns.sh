#!/bin/sh
# MPI programs with waits of known sizes (p2p_waits.c, coll_waits.c), 2 ranks, one MPI
# job at a time on the machine (the lock of test/mpi/run-mpi-test.sh); their traces'
# `vtrace patterns --json` (with the example plug-in) checked by check_mpi.py within
# 3 ms per instance of the program's sleeps as they really lasted. Skips (77) without mpiexec or python3.
# Environment (from test/mpi/Makefile.mk's LOG_COMPILER): VTEST_MPIEXEC, VTEST_VTRACE,
# VTEST_PYTHON.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
MPIEXEC=${VTEST_MPIEXEC:-}
PLUGIN=${PLUGIN:-examples/plugins/.libs/longwait.so}
timeout=${VTEST_TIMEOUT:-120}
[ -n "$MPIEXEC" ] || { echo "no mpiexec: skipping"; exit 77; }
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
[ -f "$PLUGIN" ] || { echo "$PLUGIN not built"; exit 1; }
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
work=test/patterns/mpi.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fails=0
for prog in p2p_waits coll_waits; do
    trace=$work/$prog
    echo "+ $lock env VTRACE_DIR=$trace timeout $timeout $MPIEXEC -n 2 test/patterns/$prog"
    $lock env VTRACE_DIR="$trace" timeout -k 10 "$timeout" "$MPIEXEC" -n 2 "test/patterns/$prog" > "$work/$prog.out"
    rc=$?
    cat "$work/$prog.out"
    if [ "$rc" != 0 ]; then
        echo "FAIL: $prog exited with $rc"
        fails=$((fails + 1))
        continue
    fi
    "$VTRACE" patterns "$trace" | sed -n '1,16p'
    if ! "$VTRACE" patterns --json --plugin "$PLUGIN" "$trace" > "$work/$prog.json"; then
        echo "FAIL: vtrace patterns $trace"
        fails=$((fails + 1))
        continue
    fi
    # streamed (the default without plug-ins) and with the trace in memory: the same bytes
    "$VTRACE" patterns --json "$trace" > "$work/$prog.stream.json" &&
        VTRACE_TEST_PATTERNS_IN_MEMORY=1 "$VTRACE" patterns --json "$trace" > "$work/$prog.mem.json" &&
        cmp "$work/$prog.stream.json" "$work/$prog.mem.json" ||
        { echo "FAIL: $prog: streamed and in-memory patterns differ"; fails=$((fails + 1)); }
    "$PYTHON" "$top_srcdir/test/patterns/check_mpi.py" "$prog" "$work/$prog.json" "$work/$prog.out" "$VTRACE" "$trace" || fails=$((fails + 1))
done
[ "$fails" = 0 ] && rm -rf "$work"
echo "$fails failures"
[ "$fails" = 0 ]
