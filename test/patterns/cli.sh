#!/bin/sh
# `vtrace patterns` on bad input: exit 2 with one line and a pointer to --help for a
# usage error, exit 1 with a clear message for a plug-in that cannot be loaded or has
# no entry point, and for something that is not a trace. Also: the text output says
# which figures are exact.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
work=test/patterns/cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fails=0

# expect STATUS REGEX (on stderr; "" anything) COMMAND...
expect() {
    want=$1 re=$2
    shift 2
    "$@" > "$work/out" 2> "$work/err"
    got=$?
    if [ "$got" != "$want" ] || { [ -n "$re" ] && ! grep -E -q -e "$re" "$work/err"; }; then
        echo "FAIL: $*: exit $got (expected $want), stderr:"
        sed 's/^/  | /' "$work/err"
        fails=$((fails + 1))
    else
        echo "ok: $* -> $got"
    fi
}

# a trace to run on: one Late Sender of 30 us
"$PYTHON" - "$top_srcdir" "$work/trace" << 'PY' || exit 99
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1] + "/test/model")
import vtwrite
w = vtwrite.TraceWriter(2, funcs=[("MPI_Init", ""), ("MPI_Send", "cptb"), ("MPI_Recv", "cPTB"), ("MPI_Finalize", "")])
for r in range(2):
    w.rank(r).comms.append(vtwrite.Comm(1, range(2), how="world"))
    w.rank(r).record("MPI_Init", 0, 0)
w.rank(0).record("MPI_Send", 50000, 52000, c=0, p=1, t=0, b=8)
w.rank(1).record("MPI_Recv", 20000, 52000, c=0, P=0, T=0, B=8)
for r in range(2):
    w.rank(r).record("MPI_Finalize", 60000, 60000)
w.write(sys.argv[2], "VTRACE_MODE=full\n")
PY

expect 2 "unknown option '--bogus'" "$VTRACE" patterns --bogus "$work/trace"
expect 2 "see 'vtrace patterns --help'" "$VTRACE" patterns --bogus "$work/trace"
expect 2 "missing trace directory" "$VTRACE" patterns
expect 2 "more than one trace directory" "$VTRACE" patterns "$work/trace" "$work/trace"
expect 2 "--plugin needs a file" "$VTRACE" patterns "$work/trace" --plugin
expect 1 "cannot load plug-in $work/nothing.so" "$VTRACE" patterns --plugin "$work/nothing.so" "$work/trace"
expect 1 "noentry.so: no function vtrace_pattern_plugin\(\)" \
    "$VTRACE" patterns --plugin test/patterns/.libs/noentry.so "$work/trace"
expect 1 "$work/none" "$VTRACE" patterns "$work/none"
expect 0 "" "$VTRACE" patterns "$work/trace"
grep -q "full trace: every figure is exact" "$work/out" || { echo "FAIL: no 'exact' line"; fails=$((fails + 1)); }
grep -E -q "^Late Sender +0\.000030 +25\.00% +1$" "$work/out" ||
    { echo "FAIL: no Late Sender line of 30 us, 25%:"; cat "$work/out"; fails=$((fails + 1)); }
expect 2 "unknown pattern 'Late Senderz'; the patterns are: 'Late Sender'" "$VTRACE" patterns --pattern "Late Senderz" "$work/trace"
expect 0 "" "$VTRACE" patterns --json --pattern late-sender "$work/trace"
if grep -v '"pattern":"Late Sender"' "$work/out" | grep -q .; then
    echo "FAIL: --pattern late-sender lists other patterns:"; cat "$work/out"; fails=$((fails + 1))
fi
grep -q '"pattern":"Late Sender"' "$work/out" || { echo "FAIL: --pattern late-sender lists nothing"; fails=$((fails + 1)); }
expect 0 "" "$VTRACE" help patterns
grep -q "vtrace patterns \[--json\] \[--pattern NAME\]" "$work/out" || { echo "FAIL: help patterns"; fails=$((fails + 1)); }

[ "$fails" = 0 ] && rm -rf "$work"
echo "$fails failures"
[ "$fails" = 0 ]
