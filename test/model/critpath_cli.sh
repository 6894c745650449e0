#!/bin/sh
# vtrace critical-path on the reader tests' synthetic trace: the text and JSON outputs
# agree with vtrace whatif and pass their own check, and every error a user can make
# gives its exit status and message; on reduced traces, no message or gate edge leaves
# from a merged stretch.
set -u
work=test/model/critpath_cli.work
. "$(dirname "$0")/cli_common.sh"
rm -rf "$work"
mkdir -p "$work"
"$SYNTH" "$work/t" > /dev/null || { echo "cannot make the synthetic trace"; exit 1; }

# T' as whatif predicts it, for the baseline and a scenario.
for s in '' '1:2=elim fn:MPI_Allreduce=-50%'; do
    w=$("$VTRACE" whatif --json --threshold 1ns -s "$s" "$work/t" | sed 's/.*"predicted_ns":\([0-9-]*\),.*/\1/')
    expect 0 "\"predicted_ns\":$w,.*\"consistent\":true" -- "$VTRACE" critical-path --json --threshold 1ns -s "$s" "$work/t"
    expect 0 "($w ns).*" -- "$VTRACE" critical-path --threshold 1ns -s "$s" "$work/t"
done
expect 0 ': consistent$' -- "$VTRACE" critical-path "$work/t"
expect 0 'least slack (3 of ' -- "$VTRACE" critical-path --threshold 1ns --top 3 "$work/t"
expect 0 'critical-path' -- "$VTRACE" help
expect 0 'usage: vtrace critical-path' -- "$VTRACE" critical-path --help
# Scenario errors the replay reports: exit 1 naming the event.
expect 1 'event 0:3 lasts 300 ns, under the threshold' -- "$VTRACE" critical-path -s '0:3=elim' "$work/t"
expect 1 'event 0:99999 is not in the trace' -- "$VTRACE" critical-path --threshold 1ns -s '0:99999=elim' "$work/t"
# Usage errors: exit 2.
expect 2 'expected a selector' -- "$VTRACE" critical-path -s 'bogus=elim' "$work/t"
expect 2 'one scenario only' -- "$VTRACE" critical-path -s '' -s '' "$work/t"
expect 2 '--top takes a count' -- "$VTRACE" critical-path --top many "$work/t"
expect 2 '--threshold takes a duration' -- "$VTRACE" critical-path --threshold soon "$work/t"
expect 2 'unknown option' -- "$VTRACE" critical-path --frobnicate "$work/t"
expect 2 'missing trace directory' -- "$VTRACE" critical-path
expect 2 'one trace directory only' -- "$VTRACE" critical-path "$work/t" "$work/t"
# A missing or broken trace: exit 1 naming the file.
expect 1 'vtrace.defs' -- "$VTRACE" critical-path "$work/nonexistent"
cp -r "$work/t" "$work/cut"
head -c 100 "$work/t/rank-000001.vte" > "$work/cut/rank-000001.vte"
expect 1 'rank-000001.vte: offset' -- "$VTRACE" critical-path "$work/cut"

# A reduced trace: a message or a collective's member leaves from its rank's last record
# before the send or the call, never from the merged stretch after it (model-notes.md),
# whatever the order of the replay's steps; every such edge's "from" is a record.
for spec in "halo1d -n 5 -i 20" "halo2d -n 6 -i 15 --allreduce-every 2"; do
    r=$work/red-$(echo "$spec" | cut -d' ' -f1)
    # (reduced with --no-store: halo1d's reduced records take more bytes than its full
    # ones, and a stored trace is the full one, doc/format.md)
    "$VTRACE" synth -q -p $spec "$r.full" > /dev/null || { echo "FAIL: vtrace synth -p $spec"; fail=1; continue; }
    "$VTRACE" reduce -q --no-store "$r.full" "$r" > /dev/null || { echo "FAIL: vtrace reduce $spec"; fail=1; continue; }
    "$VTRACE" dump "$r" | sed -n 's/^\([0-9]*:[0-9]*\) .* record=[0-9]*$/\1/p' > "$work/records"
    "$VTRACE" critical-path --json "$r" | grep -o '"kind":"[a-z]*","from":"[0-9]*:[0-9]*"' |
        grep -e message -e collective | sed 's/.*"from":"\(.*\)"/\1/' | sort -u > "$work/froms"
    n=$(wc -l < "$work/froms")
    bad=$(grep -v -x -F -f "$work/records" "$work/froms" | head -3 | tr '\n' ' ')
    if [ "$n" -eq 0 ] || [ -n "$bad" ]; then
        echo "FAIL: $spec reduced: $n message or gate edges, from merged stretches: $bad"
        fail=1
    fi
done

[ "$fail" -eq 0 ] && rm -rf "$work"
exit "$fail"
