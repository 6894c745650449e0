#!/bin/sh
# vtrace synth: for each pattern, the reduced trace it writes is byte for byte what
# `vtrace reduce` makes of the full trace it writes, and whatif predicts the same from
# both; the full trace has the records and messages the pattern makes; the same seed
# gives the same bytes; its usage errors.
set -u
me=synth.sh
VTRACE=${VTEST_VTRACE:-${VTRACE:-./vtrace}}
[ -x "$VTRACE" ] || { echo "$me: $VTRACE not built"; exit 99; }
work=test/scale/synth.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }

# same_tree A B: the same files with the same bytes
same_tree() {
    (cd "$1" && ls) > "$work/ls1"; (cd "$2" && ls) > "$work/ls2"
    cmp -s "$work/ls1" "$work/ls2" || fail "$1 and $2 hold different files"
    for f in $(cat "$work/ls1"); do
        cmp "$1/$f" "$2/$f" > /dev/null || fail "$1/$f and $2/$f differ"
    done
}

for pat in halo1d halo2d allreduce pipeline master-worker; do
    for comp in "" --no-compress; do
        t=$work/$pat$comp
        "$VTRACE" synth -q -p $pat -n 6 -i 30 --allreduce-every 4 --slow-rank 2 --seed 7 --mode both $comp "$t" \
            > "$t.out" 2>&1 || { cat "$t.out"; fail "synth -p $pat $comp --mode both failed"; }
        "$VTRACE" reduce -q $comp "$t/full" "$t/by-reduce" > /dev/null 2> "$t.err" ||
            { cat "$t.err"; fail "vtrace reduce of synth's $pat trace failed"; }
        same_tree "$t/reduced" "$t/by-reduce"
        for d in full reduced; do
            "$VTRACE" whatif -q --json -r 8 --seed 3 "$t/$d" > "$t/whatif.$d" 2> "$t.err" ||
                { cat "$t.err"; fail "whatif of synth's $pat $d trace failed"; }
        done
        [ "$(wc -l < "$t/whatif.full")" -eq 8 ] || fail "$pat: whatif printed $(wc -l < "$t/whatif.full") lines, not 8"
        cmp -s "$t/whatif.full" "$t/whatif.reduced" || fail "$pat $comp: whatif predicts differently from the reduced trace"
    done
done

# what the trace proves: halo2d on 6 ranks is a 3 x 2 grid, 14 messages an exchange; 30
# exchanges and 7 Allreduce calls: 6 Init + 6 Finalize, per exchange 14 Irecv, 14 Isend
# and 6 Waitall, 7 x 6 Allreduce
t=$work/halo2d
"$VTRACE" info "$t/full" > "$t/info" || fail "info of the halo2d trace failed"
grep -q "^messages: *420 matched" "$t/info" || fail "halo2d: not 420 messages matched: $(grep messages "$t/info")"
want=$((12 + 30 * 34 + 7 * 6))
grep -q "^events: *$want records" "$t/info" || fail "halo2d: not $want records: $(grep events: "$t/info")"
grep -q ": $want records" "$t.out" || fail "synth does not report $want records: $(cat "$t.out")"
# pipeline: 5 messages an item
"$VTRACE" info "$work/pipeline/full" | grep -q "^messages: *150 matched" || fail "pipeline: not 150 messages matched"
# master-worker: 10 messages a round
"$VTRACE" info "$work/master-worker/full" | grep -q "^messages: *300 matched" || fail "master-worker: not 300 messages matched"

# the slow rank waits least: in halo1d its Waitall time is below every other rank's
"$VTRACE" dump "$work/halo1d/full" | awk '$5 == "MPI_Waitall" { w[$1] += $4 - $3 }
    END { for (r in w) if (r != 2 && w[r] <= w[2]) { print "rank " r " waits " w[r] " ns, rank 2 " w[2]; exit 1 } }' ||
    fail "halo1d: the slow rank 2 does not wait least"

# --mode reduced writes the reduced trace alone, the same; the same seed, the same bytes
"$VTRACE" synth -q -p halo2d -n 6 -i 30 --allreduce-every 4 --slow-rank 2 --seed 7 --mode reduced "$work/r" > /dev/null ||
    fail "synth --mode reduced failed"
same_tree "$work/r" "$work/halo2d/reduced"
ls -d "$work"/r.synth-full-* > /dev/null 2>&1 && fail "synth --mode reduced left its full trace behind"
"$VTRACE" synth -q -p halo2d -n 6 -i 30 --allreduce-every 4 --slow-rank 2 --seed 7 "$work/again" > /dev/null || fail "synth failed"
same_tree "$work/again" "$work/halo2d/full"
"$VTRACE" synth -q -p halo2d -n 6 -i 30 --allreduce-every 4 --slow-rank 2 --seed 8 "$work/other" > /dev/null || fail "synth failed"
cmp -s "$work/other/rank-000001.vte" "$work/again/rank-000001.vte" && fail "another seed gives the same trace"

# usage errors: exit 2, naming the problem
usage() { # EXPECTED-TEXT ARGS...
    want=$1; shift
    "$VTRACE" synth "$@" > /dev/null 2> "$work/err"; rc=$?
    [ $rc = 2 ] || fail "'synth $*' exits $rc, not 2"
    grep -q -- "$want" "$work/err" || fail "'synth $*' does not say '$want': $(head -1 "$work/err")"
}
usage "--pattern takes" -p ring "$work/x"
usage "--mode takes" -m half "$work/x"
usage "--slow-rank takes a rank below 4" --slow-rank 4 "$work/x"
usage "--compute takes a duration" --compute fast "$work/x"
usage "--ranks" -n 0 "$work/x"
usage "expected the output directory" -n 2
[ -e "$work/x" ] && fail "a usage error wrote a trace"
rm -rf "$work"
exit 0
