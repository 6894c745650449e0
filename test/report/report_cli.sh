#!/bin/sh
# vtrace report on the reader tests' synthetic trace and on its reduced trace: the page
# is self-contained, its embedded JSON holds the trace's counts (ranks, calls, messages)
# and vtrace domino's path, and headless Chromium runs its script without error, draws
# the timeline and fills in the tables (check_report.py). The checker must reject a page
# whose script throws. Every error a user can make: exit status and message.
# Skips (77) only when Chromium is not installed; the screenshots stay in
# test/report/screenshots/ (their paths are printed in the log).
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="${PYTHON3:-python3} $top_srcdir/test/report/check_report.py"
work=test/report/report_cli.work
. "$top_srcdir/test/model/cli_common.sh"
shots=$(pwd)/test/report/screenshots
rm -rf "$work"
mkdir -p "$work" "$shots"

. "$top_srcdir/test/report/chromium.sh"

"$SYNTH" "$work/t" > /dev/null || { echo "cannot make the synthetic trace"; exit 1; }
"$VTRACE" reduce --threshold 100ns "$work/t" "$work/red" > /dev/null || { echo "FAIL: vtrace reduce"; exit 1; }

# chrome DOM PNG PAGE: the DOM after the page's script ran, and a screenshot.
chrome() {
    chromium_page "$1" "$2" "file://$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
}

# What the pages must hold, from the other commands.
calls=$("$VTRACE" dump --json "$work/t" | grep -c '"name":"MPI_')
msgs=$("$VTRACE" info --json "$work/t" | sed 's/.*"messages":\([0-9]*\),.*/\1/')
rcalls=$("$VTRACE" dump --json "$work/red" | grep -c '"kind":"\(CAND\|COMP\|NBCINIT\)","seq":[0-9]*,"fn"')
dom_full=$("$VTRACE" domino --json --threshold 100ns "$work/t" 2> /dev/null | sed 's/.*"event":"\([0-9:]*\)".*/"\1"/' | paste -sd, -)
dom_red=$("$VTRACE" domino --json "$work/red" 2> /dev/null | sed 's/.*"event":"\([0-9:]*\)".*/"\1"/' | paste -sd, -)
# what to fix first by rank, as vtrace domino --by rank ranks it
fix_full=$("$VTRACE" domino --by rank --json --threshold 100ns "$work/t" 2> /dev/null | head -1 | sed 's/.*"what":"\([^"]*\)".*/"\1"/')
fix_red=$("$VTRACE" domino --by rank --json "$work/red" 2> /dev/null | head -1 | sed 's/.*"what":"\([^"]*\)".*/"\1"/')
# the load imbalance removed, as vtrace whatif -s balance predicts it
bal_full=$("$VTRACE" whatif --json --threshold 100ns -s balance "$work/t" 2> /dev/null | sed 's/.*"gain_ns":\([0-9-]*\),.*/\1/')
bal_red=$("$VTRACE" whatif --json -s balance "$work/red" 2> /dev/null | sed 's/.*"gain_ns":\([0-9-]*\),.*/\1/')
echo "expected: $calls calls, $msgs messages; reduced: $rcalls calls; domino [$dom_full] [$dom_red]"
[ -n "$dom_full" ] && [ "$calls" -gt 0 ] && [ "$rcalls" -gt 0 ] || { echo "FAIL: expectations"; fail=1; }

for kind in full red; do
    if [ $kind = full ]; then
        dir=$work/t
        set -- --threshold 100ns
        printf '{"nranks":3,"events":%s,"messages":%s,"markers":1,"aggregated":0,"domino":[%s],"critical_path":true,"whatif":10,"fix_first":%s,"balance_gain":%s}\n' \
            "$calls" "$msgs" "$dom_full" "$fix_full" "$bal_full" > "$work/$kind.expect"
    else
        dir=$work/red
        set --
        printf '{"nranks":3,"events":%s,"messages":%s,"aggregated":">0","domino":[%s],"critical_path":true,"whatif":10,"fix_first":%s,"balance_gain":%s}\n' \
            "$rcalls" "$msgs" "$dom_red" "$fix_red" "$bal_red" > "$work/$kind.expect"
    fi
    if ! "$VTRACE" report --quiet "$@" -o "$work/$kind.html" "$dir" 2> "$work/$kind.err"; then
        echo "FAIL: vtrace report $* $dir"; cat "$work/$kind.err"; fail=1; continue
    fi
    $CHECK static "$work/$kind.html" "$work/$kind.expect" || fail=1
    chrome "$work/$kind.dom" "$shots/$kind.png" "$work/$kind.html"
    $CHECK dom "$work/$kind.dom" "$work/$kind.html" || fail=1
done

# --max-events keeps the longest calls and the page says how many are left out.
"$VTRACE" report -q --max-events 10 --threshold 100ns -o "$work/small.html" "$work/t" 2> /dev/null || fail=1
printf '{"nranks":3,"events":%s,"max_events":10}\n' "$calls" > "$work/small.expect"
$CHECK static "$work/small.html" "$work/small.expect" || fail=1
chrome "$work/small.dom" "$shots/small.png" "$work/small.html"
$CHECK dom "$work/small.dom" "$work/small.html" || fail=1
grep -q "left out" "$work/small.dom" || { echo "FAIL: the page does not say that calls were left out"; fail=1; }

# The checker can fail: a page whose script throws, and one that names the network.
sed 's|^    try {$|    throw new Error("report self-test");\n    try {|' "$work/full.html" > "$work/broken.html"
grep -q 'report self-test' "$work/broken.html" || { echo "FAIL: could not break the page"; fail=1; }
chrome "$work/broken.dom" "$work/broken.png" "$work/broken.html"
if $CHECK dom "$work/broken.dom" "$work/broken.html" > "$work/out"; then
    echo "FAIL: the checker accepted a page whose script threw"; fail=1
elif ! grep -q 'report self-test' "$work/out"; then
    echo "FAIL: the checker did not report the page's error:"; cat "$work/out"; fail=1
fi
sed 's|<title>|<script src="https://example.org/x.js"></script><title>|' "$work/full.html" > "$work/net.html"
if $CHECK static "$work/net.html" "$work/full.expect" > /dev/null; then
    echo "FAIL: the checker accepted a page loading a script from the network"; fail=1
fi

# Usage errors: exit 2.
expect 2 'missing -o' -- "$VTRACE" report "$work/t"
expect 2 'missing trace directory' -- "$VTRACE" report -o "$work/x.html"
expect 2 'unknown option' -- "$VTRACE" report --frobnicate -o "$work/x.html" "$work/t"
expect 2 '--max-events takes a count' -- "$VTRACE" report --max-events many -o "$work/x.html" "$work/t"
expect 2 '--threshold takes a duration' -- "$VTRACE" report --threshold soon -o "$work/x.html" "$work/t"
expect 2 '--detail-from takes a duration' -- "$VTRACE" report --detail-from later -o "$work/x.html" "$work/t"
expect 2 'one trace directory only' -- "$VTRACE" report -o "$work/x.html" "$work/t" "$work/red"
expect 0 'usage: vtrace report' -- "$VTRACE" help report
# Bad input: exit 1 naming the file; nothing is left behind.
expect 1 'nonexistent/report.html: cannot write the report' -- "$VTRACE" report -o "$work/nonexistent/report.html" "$work/t"
expect 1 'vtrace.defs' -- "$VTRACE" report -o "$work/x.html" "$work/nonexistent"
cp -r "$work/t" "$work/cut"
head -c 100 "$work/t/rank-000001.vte" > "$work/cut/rank-000001.vte"
expect 1 'rank-000001.vte: offset' -- "$VTRACE" report -o "$work/x.html" "$work/cut"
if ls "$work"/x.html* > /dev/null 2>&1; then echo "FAIL: a failed report left a file"; ls "$work"/x.html*; fail=1; fi

[ "$fail" -eq 0 ] && rm -rf "$work"
exit "$fail"
