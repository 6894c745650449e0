#!/bin/sh
# Outputs sized for a person (issue 16): on a hand-made trace of 12 ranks and 40
# barriers whose last rank to arrive changes every iteration (test/model/vtwrite.py),
# whatif summarises the rank ends beyond 8 ranks (--ranks: all) and prints one line per
# random scenario (--events: their texts); critical-path summarises its 40-segment path
# (--full: all of it); a usage error is one line and a pointer to --help; dump names
# records by the event id whatif takes, and --event finds one.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
work=test/model/outputs_cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$PYTHON" - "$top_srcdir" "$work/t" << 'PY' || exit 99
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1] + "/test/model")
import vtwrite
N, IT = 12, 40
w = vtwrite.TraceWriter(N, funcs=[("MPI_Init", ""), ("MPI_Barrier", "coq"), ("MPI_Finalize", "")])
for r in range(N):
    w.rank(r).comms.append(vtwrite.Comm(1, range(N), how="world"))
    w.rank(r).record("MPI_Init", 0, 1000)
t = 1000
for i in range(IT):
    late = i % N                     # this iteration's slow rank: it arrives last
    gate = t + 2000000
    for r in range(N):
        arrive = gate if r == late else t + 1000000 + 1000 * r
        w.rank(r).record("MPI_Barrier", arrive, gate + 5000, c=0, q=i, o=-1)
    t = gate + 5000
for r in range(N):
    # the ranks end one after the other: rank 7 last
    w.rank(r).record("MPI_Finalize", t + 1000 * ((r + 5) % N), t + 1000 * ((r + 5) % N) + 100)
w.write(sys.argv[2], "VTRACE_MODE=full\nVTRACE_THRESHOLD=500us\n")
PY

# rank ends: a summary naming the last rank, every end with --ranks
"$VTRACE" whatif "$work/t" > "$work/whatif.txt" || bad "whatif"
grep -q 'of 12 ranks: latest [0-9.]* (rank 6)' "$work/whatif.txt" || bad "no rank-end summary naming rank 6: $(cat "$work/whatif.txt")"
[ "$(wc -l < "$work/whatif.txt")" -le 5 ] || bad "whatif printed $(wc -l < "$work/whatif.txt") lines"
"$VTRACE" whatif --ranks "$work/t" | grep -q 'rank ends (s from start):\( [0-9.]*\)\{12\}$' || bad "--ranks does not print 12 ends"
# random scenarios: one line each, bounded; --events prints each scenario
"$VTRACE" whatif -r 30 "$work/t" > "$work/random.txt" || bad "whatif -r 30"
[ "$(wc -l < "$work/random.txt")" -eq 32 ] || bad "whatif -r 30 printed $(wc -l < "$work/random.txt") lines, not 2 + 30"
[ "$(wc -c < "$work/random.txt")" -lt 3000 ] || bad "whatif -r 30 printed $(wc -c < "$work/random.txt") bytes"
grep -q '^scenario: .*=' "$work/random.txt" && bad "whatif -r prints scenario texts without --events"
[ "$("$VTRACE" whatif -r 30 --events "$work/t" | grep -c '^scenario: ')" -eq 30 ] || bad "--events does not print 30 scenarios"
# critical path: summarised, whole with --full
"$VTRACE" critical-path -k 5 "$work/t" > "$work/cp.txt" || bad "critical-path"
"$VTRACE" critical-path -k 5 --full "$work/t" > "$work/cpfull.txt" || bad "critical-path --full"
grep -q '^  \.\.\. [0-9]* segments and [0-9]* edges (--full shows them)' "$work/cp.txt" || bad "no path summary"
grep -q 'the 5 longest segments' "$work/cp.txt" || bad "no longest segments"
grep -q '(--full shows them)' "$work/cpfull.txt" && bad "--full still summarises"
full=$(wc -l < "$work/cpfull.txt") short=$(wc -l < "$work/cp.txt")
[ "$short" -lt "$full" ] && [ "$short" -le 60 ] || bad "critical-path: $short lines summarised, $full in full"
grep -q '^  (7 more; --full shows them)' "$work/cp.txt" || bad "the 12 ranks on the path are not cut at 5"
# a usage error: the error and where the help is, nothing more
"$VTRACE" whatif --frobnicate "$work/t" > /dev/null 2> "$work/err"
[ $? -eq 2 ] && [ "$(wc -l < "$work/err")" -eq 2 ] && grep -q "^see 'vtrace whatif --help'" "$work/err" ||
    bad "usage error: $(cat "$work/err")"
# dump names calls as whatif does; --event finds one; a burst's id shows the call ending it
"$VTRACE" dump "$work/t" | grep -q '^3:7 [0-9]* [0-9]* MPI_Barrier .* record=3$' || bad "dump: no 3:7 MPI_Barrier record=3"
[ "$("$VTRACE" dump --event 3:6 "$work/t" | cut -d' ' -f1,4)" = "3:7 MPI_Barrier" ] || bad "dump --event 3:6"
"$VTRACE" whatif -s '3:7=elim' "$work/t" > /dev/null 2>&1 || bad "whatif does not take dump's 3:7"
"$VTRACE" dump --event 3:999 "$work/t" > /dev/null 2> "$work/err"
[ $? -eq 1 ] && grep -q 'event 3:999 is not in the trace' "$work/err" || bad "dump --event 3:999: $(cat "$work/err")"
[ "$fail" -eq 0 ] && rm -rf "$work"
exit "$fail"
