#!/bin/sh
# vtrace critical-path finds a predecessor in its rank's window of recent nodes, else from
# a checkpoint back along the rank's chain in its temporary file (critpath_priv.h). With
# a window of 1 and of 2 nodes (VTRACE_TEST_CP_WINDOW) most look-ups go to the chains:
# the JSON output (every segment, edge and candidate with its slack) must be byte for
# byte the one of the default window on mc.py's random traces (mc_export.py). Likewise
# with the candidates sorted in runs of 3 (VTRACE_TEST_CP_RUN) merged from a file.
me=critpath_window.sh
here=$(cd "$(dirname "$0")" && pwd) || exit 99
VTRACE=${VTRACE:-$(pwd)/vtrace}
VTRACE_SHARED=${VTRACE_SHARED:-$here/../../../shared}
export VTRACE_SHARED
[ -f "$VTRACE_SHARED/design/reference/mc.py" ] || { echo "$me: mc.py not found; skipping"; exit 77; }
command -v python3 > /dev/null 2>&1 || { echo "$me: no python3; skipping"; exit 77; }
work=$(pwd)/test/model/critpath_window.work
rm -rf "$work" && mkdir -p "$work" || exit 99
python3 "$here/mc_export.py" --out "$work" --seeds 1-24 --variants default,skew --nscen 1 > "$work/cases" ||
    { echo "$me: mc_export.py failed"; exit 1; }
n=0
for c in $(cat "$work/cases"); do
    "$VTRACE" critical-path --json --threshold 1ns "$c/trace" > "$work/default.json" 2> /dev/null ||
        { echo "FAIL: $me: critical-path failed on $c"; exit 1; }
    for w in 1 2; do
        VTRACE_TEST_CP_WINDOW=$w "$VTRACE" critical-path --json --threshold 1ns "$c/trace" > "$work/w$w.json" 2> /dev/null
        cmp -s "$work/default.json" "$work/w$w.json" ||
            { echo "FAIL: $me: $c: a window of $w gives another path or slack"; exit 1; }
    done
    VTRACE_TEST_CP_RUN=3 "$VTRACE" critical-path --json --threshold 1ns "$c/trace" > "$work/r3.json" 2> /dev/null
    cmp -s "$work/default.json" "$work/r3.json" ||
        { echo "FAIL: $me: $c: candidates sorted in runs of 3 come in another order"; exit 1; }
    n=$((n + 1))
done
[ "$n" -ge 24 ] || { echo "FAIL: $me: only $n traces"; exit 1; }
rm -rf "$work"
echo "PASS: $me ($n traces)"
