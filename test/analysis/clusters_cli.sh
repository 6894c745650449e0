#!/bin/sh
# vtrace clusters (seed 003's burst clustering, offline) on a hand-made trace with known
# phases (test/analysis/clusters_cli.py), and its command-line errors. Skips (77)
# without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
command -v python3 > /dev/null 2>&1 || { echo "no python3: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
python3 "$top_srcdir/test/analysis/clusters_cli.py" --vtrace "$VTRACE" --work test/analysis/clusters_cli.work || exit 1
fail() { echo "FAIL: clusters_cli.sh: $*"; exit 1; }
err=test/analysis/clusters_cli.err
# usage errors: exit 2 and a message naming the problem
usage() { # EXPECTED-TEXT ARGS...
    want=$1; shift
    "$VTRACE" clusters "$@" > /dev/null 2> "$err"; rc=$?
    [ $rc = 2 ] || fail "'clusters $*' exits $rc, not 2"
    grep -q -- "$want" "$err" || fail "'clusters $*' does not say '$want': $(head -1 "$err")"
}
usage "unknown option '--frob'" --frob x
usage "--eps takes" --eps 0 x
usage "--eps takes" --eps -1 x
usage "--eps takes" --eps abc x
usage "--eps takes" --eps nan x
usage "--eps takes" --eps 1e400 x
usage "--eps takes" --eps
usage "--min-points takes" --min-points 0 x
usage "--floor takes" --floor 1us x
usage "--windows takes" --windows 1 x
usage "--threshold takes" --threshold 100 x
usage "--tolerance takes" --tolerance -5 x
usage "--stable 5 needs more than 4 --windows" --stable 5 --windows 4 x
usage "missing trace directory"
usage "one trace directory only" a b
"$VTRACE" clusters test/analysis/no-such-trace > /dev/null 2> "$err"; rc=$?
[ $rc = 1 ] || fail "a missing trace exits $rc, not 1"
grep -q "no-such-trace" "$err" || fail "a missing trace: the message does not name it"
"$VTRACE" clusters --help | grep -qi "hardware counters" || fail "--help does not mention the counters"
rm -f "$err"
echo "PASS: clusters_cli.sh"
