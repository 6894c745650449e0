#!/bin/sh
# vtrace report draws by level of detail (issue 16), seen in headless Chromium's
# screenshots (their paths are in the log) and checked pixel by pixel (check_report.py
# pixels): on a 320,000-call trace whose page embeds the calls of a window only
# (--max-events 20000),
#   - zoomed out: the bins right of the window in the colour of their dominant function,
#     summed pixel columns, the computation, the critical path, the domino path and the
#     window's band; no call drawn as itself;
#   - zoomed into the window: calls drawn as themselves over the lane's height, no bin;
#   - zoomed as much outside the window: bins, no call as itself;
# and on a reduced trace, its aggregated spans hatched, zoomed out and zoomed in. The
# checks must fail on a page that does not draw its bins or its aggregated spans.
# Skips (77) only when Chromium is not installed.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
SYNTH=${SYNTH:-./test/reader/synth}
CHECK="${PYTHON3:-python3} $top_srcdir/test/report/check_report.py"
work=test/report/report_lod.work
shots=$(pwd)/test/report/screenshots
rm -rf "$work"
mkdir -p "$work" "$shots"
fail=0

. "$top_srcdir/test/report/chromium.sh"

# shot NAME PAGE [VIEW]: the DOM after the page's script ran ($work/NAME.dom) and a
# screenshot ($shots/lod-NAME.png) of PAGE, at VIEW (FROM,TO in ns) when given.
shot() {
    chromium_page "$work/$1.dom" "$shots/lod-$1.png" "file://$(cd "$(dirname "$2")" && pwd)/$(basename "$2")${3:+#view=$3}" \
        --force-device-scale-factor=1
}

# summary NAME KEY: a data-KEY attribute of the page's #vt-summary
summary() {
    sed -n 's/.*<div id="vt-summary"[^>]* data-'"$2"'="\([^"]*\)".*/\1/p' "$work/$1.dom"
}

# expect_count NAME KEY OP N: the summary's KEY compares with N (-gt, -eq)
expect_count() {
    v=$(summary "$1" "$2")
    [ -n "$v" ] && [ "$v" "$3" "$4" ] || { echo "FAIL: $1: data-$2 is '$v', expected $3 $4"; fail=1; }
}

# ---------------------------------------------------------------- a full trace
"$VTRACE" synth -q -p halo1d -n 4 -i 20000 "$work/t" > /dev/null || { echo "FAIL: vtrace synth"; exit 1; }
"$VTRACE" report -q --max-events 20000 -o "$work/full.html" "$work/t" 2> "$work/report.err" ||
    { echo "FAIL: vtrace report"; cat "$work/report.err"; exit 1; }
# the detail window and the run's length, from the page's data
eval "$(python3 - "$work/full.html" <<'PY'
import json, re, sys
d = json.loads(re.search(r'id="vt-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
w = d["detail"]
assert not w["complete"], w
print("w0=%d w1=%d dur=%d" % (w["start"], w["end"], d["duration_ns"]))
PY
)" || { echo "FAIL: the page's detail window"; exit 1; }
span=1000000   # 1 ms: calls (microseconds) are wider than a pixel
mid=$(( (w0 + w1) / 2 ))
out=$(( w1 + (dur - w1) * 3 / 4 ))
echo "detail window [$w0, $w1) of $dur ns"

shot out "$work/full.html"
$CHECK dom "$work/out.dom" "$work/full.html" || fail=1
$CHECK pixels "$shots/lod-out.png" "$work/out.dom" bins:MPI_Waitall columns:MPI_Waitall computation path domino detail \
    '!events:MPI_Waitall' || fail=1
expect_count out drawn-bins -gt 1000
expect_count out drawn-columns -gt 100
expect_count out drawn-events -eq 0

shot in "$work/full.html" "$mid,$((mid + span))"
$CHECK pixels "$shots/lod-in.png" "$work/in.dom" events:MPI_Waitall computation '!bins:MPI_Waitall' || fail=1
expect_count in drawn-events -gt 3
expect_count in drawn-bins -eq 0

shot outside "$work/full.html" "$out,$((out + span))"
$CHECK pixels "$shots/lod-outside.png" "$work/outside.dom" bins:MPI_Waitall computation '!events:MPI_Waitall' || fail=1
expect_count outside drawn-bins -gt 0
expect_count outside drawn-events -eq 0

# The checks can fail: a page that draws no bin.
sed 's|^        function drawBin(s, bn, a, b) {$|&\n            return;|' "$work/full.html" > "$work/nobins.html"
grep -A1 'function drawBin' "$work/nobins.html" | grep -q 'return;' || { echo "FAIL: could not break the page"; fail=1; }
shot nobins "$work/nobins.html"
if $CHECK pixels "$shots/lod-nobins.png" "$work/nobins.dom" bins:MPI_Waitall > "$work/out" 2>&1; then
    echo "FAIL: the pixel check found bins on a page that draws none"; cat "$work/out"; fail=1
fi

# --detail-from moves the window: it starts 1 s into the run, every call in it
"$VTRACE" report -q --max-events 20000 --detail-from 1s -o "$work/late.html" "$work/t" 2> "$work/report.err" ||
    { echo "FAIL: vtrace report --detail-from 1s"; cat "$work/report.err"; fail=1; }
python3 - "$work/late.html" <<'PY' || { echo "FAIL: --detail-from 1s: the window"; fail=1; }
import json, re, sys
d = json.loads(re.search(r'id="vt-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
w, ev = d["detail"], d["events"]["data"]
assert 0.99e9 <= w["start"] <= 1.01e9 < w["end"], w
assert ev and all(e[1] + e[2] >= w["start"] and e[1] < w["end"] for e in ev), "a call outside the window"
# every call of the window: rank 1's calls in it follow each other without a gap in seq
seqs = sorted(e[4] for e in ev if e[0] == 1)
assert seqs == list(range(seqs[0], seqs[-1] + 1, 2)), "rank 1 misses calls in the window"
print("--detail-from 1s: window [%d, %d), %d calls" % (w["start"], w["end"], len(ev)))
PY

# ---------------------------------------------------------------- a reduced trace
"$SYNTH" "$work/s" > /dev/null || { echo "cannot make the synthetic trace"; exit 1; }
"$VTRACE" reduce --threshold 100ns "$work/s" "$work/red" > /dev/null || { echo "FAIL: vtrace reduce"; exit 1; }
"$VTRACE" report -q -o "$work/red.html" "$work/red" 2> "$work/report.err" || { echo "FAIL: vtrace report (reduced)"; exit 1; }
# the longest aggregated span, with as much on each side
view=$(python3 - "$work/red.html" <<'PY'
import json, re, sys
d = json.loads(re.search(r'id="vt-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
a = max(d["aggregated"]["data"], key=lambda a: a[2])
print("%d,%d" % (a[1] - a[2], a[1] + 2 * a[2]))
PY
) || { echo "FAIL: no aggregated span in the reduced trace's page"; exit 1; }
shot red "$work/red.html"
$CHECK pixels "$shots/lod-red.png" "$work/red.dom" hatch computation || fail=1
expect_count red drawn-aggregated -gt 0
shot redin "$work/red.html" "$view"
$CHECK pixels "$shots/lod-redin.png" "$work/redin.dom" hatch || fail=1
# ... and fail on a page that does not draw them
sed 's|hatch = ctx.createPattern(pc, .repeat.);|hatch = "#ffffff";|' "$work/red.html" > "$work/nohatch.html"
cmp -s "$work/red.html" "$work/nohatch.html" && { echo "FAIL: could not break the reduced page"; fail=1; }
shot nohatch "$work/nohatch.html" "$view"
if $CHECK pixels "$shots/lod-nohatch.png" "$work/nohatch.dom" hatch > "$work/out" 2>&1; then
    echo "FAIL: the pixel check found aggregated spans on a page that does not draw them"; cat "$work/out"; fail=1
fi

[ "$fail" -eq 0 ] && rm -rf "$work"
exit "$fail"
