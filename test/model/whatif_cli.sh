#!/bin/sh
# vtrace whatif on the reader tests' synthetic trace: a golden answer for a few
# scenarios (regression guard; correctness against the model is check_whatif.sh), and
# every error a user can make: exit status and the message.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=test/model/whatif_cli.work
. "$top_srcdir/test/model/cli_common.sh"
rm -rf "$work"
mkdir -p "$work"
"$SYNTH" "$work/t" > /dev/null || { echo "cannot make the synthetic trace"; exit 1; }

# Golden: baseline, single events, selectors (θ = 1 ns makes every event a candidate).
"$VTRACE" whatif --json --threshold 1ns -s '' -s '0:3=elim' -s '1:9=-50%' -s 'fn:MPI_Waitall=elim' \
    -s 'rank:2=-10ns' -s 'all=elim' "$work/t" > "$work/golden.jsonl" || fail=1
if ! diff -u "$top_srcdir/test/model/golden/whatif-synth.jsonl" "$work/golden.jsonl"; then
    echo "FAIL: golden answers differ (VT_UPDATE_GOLDEN=1 rewrites them)"
    [ -n "${VT_UPDATE_GOLDEN:-}" ] && cp "$work/golden.jsonl" "$top_srcdir/test/model/golden/whatif-synth.jsonl"
    fail=1
fi
"$VTRACE" domino --json -k 3 --threshold 1ns "$work/t" > "$work/domino.jsonl" || fail=1
if ! diff -u "$top_srcdir/test/model/golden/domino-synth.jsonl" "$work/domino.jsonl"; then
    echo "FAIL: golden domino path differs (VT_UPDATE_GOLDEN=1 rewrites it)"
    [ -n "${VT_UPDATE_GOLDEN:-}" ] && cp "$work/domino.jsonl" "$top_srcdir/test/model/golden/domino-synth.jsonl"
    fail=1
fi
expect 2 '--top takes a positive count' -- "$VTRACE" domino --top 0 "$work/t"
expect 1 'no candidate events' -- "$VTRACE" domino "$work/t"
# The baseline reproduces the measured run.
expect 0 '"gain_ns":0,' -- "$VTRACE" whatif --json "$work/t"
expect 0 '^0:3 300 ns MPI_Send' -- "$VTRACE" whatif --threshold 1ns --list-candidates "$work/t"

# Errors in scenarios: exit 1 with a message naming the event.
expect 1 'event 0:3 lasts 300 ns, under the threshold' -- "$VTRACE" whatif -s '0:3=elim' "$work/t"
expect 1 'event 0:99999 is not in the trace' -- "$VTRACE" whatif --threshold 1ns -s '0:99999=elim' "$work/t"
expect 1 'event 7:1 is not in the trace (it has 3 ranks)' -- "$VTRACE" whatif --threshold 1ns -s '7:1=elim' "$work/t"
expect 1 'rank 9 is not in the trace' -- "$VTRACE" whatif -s 'rank:9=elim' "$work/t"
printf '0:3=elim\n0:3=wrong\n' > "$work/scen"
expect 1 'line 2' -- "$VTRACE" whatif --threshold 1ns -f "$work/scen" "$work/t"
# Usage errors: exit 2.
expect 2 'expected a selector' -- "$VTRACE" whatif -s 'bogus=elim' "$work/t"
expect 2 'expected a shortening' -- "$VTRACE" whatif -s '0:3=-200%' "$work/t"
expect 2 'expected SELECTOR=SHORTENING' -- "$VTRACE" whatif -s '0:3' "$work/t"
expect 2 '--random takes a count' -- "$VTRACE" whatif --random many "$work/t"
expect 2 '--threshold takes a duration' -- "$VTRACE" whatif --threshold soon "$work/t"
expect 2 'unknown option' -- "$VTRACE" whatif --frobnicate "$work/t"
expect 2 'missing trace directory' -- "$VTRACE" whatif
# A missing or broken trace: exit 1 naming the file.
expect 1 'vtrace.defs' -- "$VTRACE" whatif "$work/nonexistent"
cp -r "$work/t" "$work/cut"
head -c 100 "$work/t/rank-000001.vte" > "$work/cut/rank-000001.vte"
expect 1 'rank-000001.vte: offset' -- "$VTRACE" whatif "$work/cut"

[ "$fail" -eq 0 ] && rm -rf "$work"
exit "$fail"
