#!/bin/sh
# maint/bench/goal-halo.py (issue 15's comparison with LogGOPSim): the GOAL schedule of a
# halo has one operation for each record of `vtrace synth`'s trace of the same halo but
# MPI_Init and MPI_Finalize, every send has its receive on the peer, and bad arguments
# are refused.
set -u
me=goal_halo.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
gen=$srcdir/maint/bench/goal-halo.py
work=$builddir/test/tools/goal_halo.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
command -v python3 > /dev/null 2>&1 || { echo "SKIP: $me: python3 not installed"; exit 77; }
[ -x "$builddir/vtrace" ] || fail "$builddir/vtrace not built"

for case in "halo2d 12 3" "halo2d 7 2" "halo1d 5 4" "halo2d 1 2"; do
    set -- $case
    python3 "$gen" "$1" "$2" "$3" 1024 100000 > "$work/g.goal" 2> "$work/g.err" || fail "$case: $(cat "$work/g.err")"
    "$builddir/vtrace" synth -q -p "$1" -n "$2" -i "$3" "$work/t" > "$work/synth.out" 2>&1 || fail "synth $case"
    records=$(sed -n 's/.* iterations: \([0-9]*\) records.*/\1/p' "$work/synth.out")
    ops=$(grep -Ec '^l[0-9]+: (calc|send|recv) ' "$work/g.goal")
    [ "$ops" -eq $((records - 2 * $2)) ] || fail "$case: $ops operations for $records records of $2 ranks"
    grep -q "^num_ranks $2\$" "$work/g.goal" || fail "$case: no num_ranks $2"
    # each (sender, receiver) pair: as many sends as receives
    awk '/^rank / { r = $2 } / send / { s[r " " $5]++ } / recv / { v[$5 " " r]++ }
         END { for (k in s) if (s[k] != v[k]) bad = 1; for (k in v) if (s[k] != v[k]) bad = 1; exit bad }' "$work/g.goal" ||
        fail "$case: sends and receives do not pair"
    rm -rf "$work/t"
done
python3 "$gen" halo3d 4 1 8 1 > /dev/null 2> "$work/bad.err" && fail "an unknown pattern accepted"
grep -q 'usage: goal-halo.py' "$work/bad.err" || fail "expected the usage: $(cat "$work/bad.err")"
python3 "$gen" halo2d four 1 8 1 > /dev/null 2>&1 && fail "a rank count that is not a number accepted"
echo "PASS: $me"
