#!/bin/sh
# vtrace compensate (seed 001) on hand-made traces with a known injected per-event cost
# (compensate_cli.py), a reduced trace refused, and its command-line errors.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
HB=${HBCHECK:-test/analysis/hbcheck}
command -v python3 > /dev/null 2>&1 || { echo "no python3: skipping"; exit 77; }
[ -x "$VTRACE" ] && [ -x "$HB" ] || { echo "$VTRACE or $HB not built"; exit 1; }
work=test/analysis/compensate_cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
python3 "$top_srcdir/test/analysis/compensate_cli.py" --vtrace "$VTRACE" --hbcheck "$HB" --work "$work" || exit 1
fail() { echo "FAIL: compensate_cli.sh: $*"; exit 1; }
err=$work/err
usage() { # EXPECTED-TEXT ARGS...
    want=$1; shift
    "$VTRACE" compensate "$@" > /dev/null 2> "$err"; rc=$?
    [ $rc = 2 ] || fail "'compensate $*' exits $rc, not 2"
    grep -q -- "$want" "$err" || fail "'compensate $*' does not say '$want': $(head -1 "$err")"
}
usage "unknown option '--frob'" --frob a b
usage "--overhead takes" --overhead abc a b
usage "--overhead takes" --overhead -1 a b
usage "--overhead takes" --overhead
usage "--latency takes" --latency nan a b
usage "missing trace directory"
usage "missing output directory" "$work/local"
usage "one trace directory and one output directory only" a b c
# an unwritable OUT: exit 1, naming it
: > "$work/afile"
"$VTRACE" compensate "$work/local" "$work/afile/out" > /dev/null 2> "$err"; rc=$?
[ $rc = 1 ] || fail "an unwritable OUT exits $rc, not 1"
grep -q "afile/out" "$err" || fail "an unwritable OUT: the message does not name it: $(cat "$err")"
# a reduced trace is refused with the reason
"$VTRACE" reduce --no-compress "$work/local" "$work/reduced" > /dev/null 2>&1 || fail "vtrace reduce failed"
"$VTRACE" compensate "$work/reduced" "$work/reduced.out" > /dev/null 2> "$err"; rc=$?
[ $rc = 1 ] || fail "a reduced trace exits $rc, not 1"
grep -q "reduced trace" "$err" || fail "a reduced trace: no reason given: $(cat "$err")"
[ -e "$work/reduced.out" ] && fail "a reduced trace: OUT was written"
echo "PASS: compensate_cli.sh"
