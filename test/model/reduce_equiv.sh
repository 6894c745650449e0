#!/bin/sh
# model.md §7.1 and §7.4 on a real trace: `vtrace reduce` of the full trace TRACE must
# answer every what-if question exactly as the full trace does.
#   1. reduce --check: at every event, the symbolic difference evaluated at 30 random
#      scenarios equals the full replay's numeric one;
#   2. 1000 random scenarios (--random 1000) and every candidate eliminated alone: the
#      same T', the same predicted end of every rank, to the nanosecond (whatif --json
#      output identical line for line), and the same candidates listed;
#   3. the same critical path length for the measured run and a random scenario.
# usage: reduce_equiv.sh VTRACE TRACE THRESHOLD WORKDIR
# Exit 0 equal, 1 different (the first difference is printed).
set -u
vtrace=$1 trace=$2 theta=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: reduce_equiv: $*"; exit 1; }
red=$work/reduced

echo "+ vtrace reduce --threshold $theta --check --random 30 $trace $red"
"$vtrace" reduce --threshold "$theta" --check --random 30 --seed 3 "$trace" "$red" > "$work/reduce.out" 2>&1
rc=$?
sed 's/^/  | /' "$work/reduce.out"
[ $rc = 0 ] || fail "vtrace reduce --check failed (exit $rc)"

"$vtrace" whatif --threshold "$theta" -l "$trace" > "$work/cands.full" || fail "listing the candidates of the full trace"
"$vtrace" whatif -l "$red" > "$work/cands.red" || fail "listing the candidates of the reduced trace"
cmp -s "$work/cands.full" "$work/cands.red" || { diff "$work/cands.full" "$work/cands.red" | head; fail "the candidates differ"; }
ncand=`wc -l < "$work/cands.full"`
echo "  $ncand candidates, the same in both traces"
[ "$ncand" -gt 0 ] || fail "no candidate at θ = $theta: the comparison would prove nothing"
awk '{ print $1 "=elim" }' "$work/cands.full" > "$work/alone.txt"

for what in "--random 1000 --seed 5" "-f $work/alone.txt"; do
    # shellcheck disable=SC2086
    "$vtrace" whatif --threshold "$theta" --json $what "$trace" > "$work/full.jsonl" || fail "whatif on the full trace"
    # shellcheck disable=SC2086
    "$vtrace" whatif --json $what "$red" > "$work/red.jsonl" || fail "whatif on the reduced trace"
    n=`wc -l < "$work/full.jsonl"`
    if ! cmp -s "$work/full.jsonl" "$work/red.jsonl"; then
        diff "$work/full.jsonl" "$work/red.jsonl" | head -4 | cut -c1-400
        fail "predictions differ ($what)"
    fi
    echo "  whatif $what: $n scenarios, identical predictions (T' and every rank's end)"
done

# the header's room (doc/model-notes.md): 12 bytes overflow often; still exact
red12=$work/reduced12
"$vtrace" reduce --threshold "$theta" --header-bytes 12 --check --random 30 --seed 3 "$trace" "$red12" \
    > "$work/reduce12.out" 2>&1 || { sed 's/^/  | /' "$work/reduce12.out"; fail "vtrace reduce --header-bytes 12 --check"; }
grep -i "overflow" "$work/reduce12.out" | sed 's/^/  | /'
"$vtrace" whatif --threshold "$theta" --json --random 300 --seed 9 "$trace" > "$work/full12.jsonl" || fail "whatif"
"$vtrace" whatif --json --random 300 --seed 9 "$red12" > "$work/red12.jsonl" || fail "whatif on the 12-byte reduction"
cmp -s "$work/full12.jsonl" "$work/red12.jsonl" || { diff "$work/full12.jsonl" "$work/red12.jsonl" | head -4 | cut -c1-400;
    fail "predictions differ with 12 bytes of header room"; }
echo "  --header-bytes 12: 300 random scenarios, identical predictions"

if "$vtrace" critical-path --help > /dev/null 2>&1; then
    for s in "" "`sed -n 7p "$work/alone.txt"`"; do
        lf=`"$vtrace" critical-path --threshold "$theta" --json --scenario "$s" "$trace" | sed -n 's/.*"length_ns":\([0-9-]*\).*/\1/p'`
        lr=`"$vtrace" critical-path --json --scenario "$s" "$red" | sed -n 's/.*"length_ns":\([0-9-]*\).*/\1/p'`
        [ -n "$lf" ] && [ "$lf" = "$lr" ] || fail "critical path length differs for '$s': full $lf, reduced $lr"
        echo "  critical path length for '$s': $lf ns in both"
    done
fi
echo "PASS: reduce_equiv $trace"
