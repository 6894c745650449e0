#!/bin/sh
# vtrace whatif --balance (issue 16, load imbalance): on generated halo traces with an
# allreduce after every exchange,
#   1. rank 1 computing 3x as long as the others (no jitter): the mean of an interval is
#      1.5x, so the balanced run predicts what halving rank 1's computation (the bursts
#      that end at the exchange) predicts, and
#      gains the computation above the mean it reports;
#   2. no slow rank and no jitter: nothing to shorten, no gain;
#   3. the reduced trace of the same run predicts the same to the nanosecond;
#   4. a trace without collectives on MPI_COMM_WORLD is one interval;
#   5. vtrace domino --by rank ends with the same gain, and critical-path -s balance finds
#      a path as long as the balanced prediction.
set -u
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
work=test/model/balance.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: balance.sh: $*"; exit 1; }
gain() { # gain NAME FILE: the gain_ns of scenario NAME (its text's first word) in whatif --json output
    "$PYTHON" -c 'import json, sys
for l in open(sys.argv[2]):
    j = json.loads(l)
    if j["scenario"].split(" ")[0] == sys.argv[1]: print(j["gain_ns"], j["predicted_ns"])' "$1" "$2"
}
"$VTRACE" synth -n 4 -i 40 --allreduce-every 1 --compute 1ms --jitter 0 --slow-rank 1 --slow-factor 3 -m both \
    "$work/slow" > /dev/null || fail "vtrace synth"
"$VTRACE" whatif --balance -s '1/site:exchange_post_recv=-50%' "$work/slow/full" > "$work/slow.txt" || fail "whatif --balance"
"$VTRACE" whatif --json --balance -s '1/site:exchange_post_recv=-50%' "$work/slow/full" > "$work/slow.json" || fail "whatif --balance --json"
set -- $(gain balance "$work/slow.json")
bal_gain=$1 bal_pred=$2
set -- $(gain '1/site:exchange_post_recv=-50%' "$work/slow.json")
[ "${bal_pred:-x}" = "${2:-y}" ] || fail "balanced prediction $bal_pred ns, rank 1's computation halved $2 ns"
above=$(sed -n 's/.*shortened, \([0-9.]*\) s of .*/\1/p' "$work/slow.txt")
"$PYTHON" -c 'import sys; g, a = int(sys.argv[1]), float(sys.argv[2]) * 1e9
sys.exit(0 if g > 0 and abs(g - a) <= 1e-3 * a + 1000 else 1)' "$bal_gain" "${above:-0}" ||
    fail "the gain $bal_gain ns is not the computation above the mean ($above s)"
grep -q "^balance: 41 intervals between collectives on MPI_COMM_WORLD; 40 candidate bursts" "$work/slow.txt" ||
    fail "the summary line: $(head -1 "$work/slow.txt")"
"$VTRACE" whatif --json --balance -s '1/site:exchange_post_recv=-50%' "$work/slow/reduced" > "$work/slow-red.json" ||
    fail "whatif --balance on the reduced trace"
cmp -s "$work/slow.json" "$work/slow-red.json" || fail "the reduced trace predicts otherwise: $(diff "$work/slow.json" "$work/slow-red.json")"
# critical-path takes it too: the path of the balanced run is as long as whatif predicts
"$VTRACE" critical-path --json -s balance "$work/slow/full" > "$work/cp.json" || fail "critical-path -s balance"
"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["predicted_ns"] == int(sys.argv[2]) and d["consistent"] else 1)' "$work/cp.json" "$bal_pred" ||
    fail "critical-path -s balance: T' $(grep -o '"predicted_ns":[0-9]*' "$work/cp.json"), whatif $bal_pred"
# domino --by rank ends with the same scenario's row
"$VTRACE" domino --by rank --json "$work/slow/full" > "$work/domino.json" || fail "domino --by rank"
"$PYTHON" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
b = [r for r in rows if r.get("what") == "load imbalance"]
sys.exit(0 if len(b) == 1 and b[0]["gain_ns"] == int(sys.argv[2]) else 1)' "$work/domino.json" "$bal_gain" ||
    fail "domino --by rank: no load-imbalance row with the gain $bal_gain ns: $(tail -1 "$work/domino.json")"
"$VTRACE" synth -n 4 -i 40 --allreduce-every 1 --compute 1ms --jitter 0 "$work/even" > /dev/null || fail "vtrace synth"
"$VTRACE" whatif --balance "$work/even" > "$work/even.txt" || fail "whatif --balance (even)"
grep -q "; 0 candidate bursts of ranks above the mean shortened" "$work/even.txt" &&
    grep -q "gain 0.000000 s (0.00%)" "$work/even.txt" || fail "an even load gains: $(cat "$work/even.txt")"

"$VTRACE" synth -p pipeline -n 3 -i 20 --compute 1ms "$work/pipe" > /dev/null || fail "vtrace synth pipeline"
"$VTRACE" whatif --balance "$work/pipe" > "$work/pipe.txt" || fail "whatif --balance (pipeline)"
grep -q "^balance: 1 intervals" "$work/pipe.txt" || fail "pipeline: $(head -1 "$work/pipe.txt")"
rm -rf "$work"
echo "PASS: balance.sh"
