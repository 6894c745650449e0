#!/bin/sh
# vtrace report streams (issue 15): a 1.2M-call trace (vtrace synth, halo1d on 4 ranks,
# 75,000 exchanges) within `ulimit -v` of 120 MB. The page's timeline holds bins of the
# whole run (ranks x bins) and every call of one window, at most --max-events of them,
# so its memory does not depend on the trace's length; keeping every call (the page
# before: ~250 bytes a call, 300 MB here) or matching every message up front does not
# fit. The limit is fixed: it is the binary, buffers, the bins and the bounded detail.
# The wait-state patterns (src/analysis/patterns.c) still load a rank's records: within
# the limit they are left out with a warning, which this test prints and allows.
set -u
VTRACE=${VTRACE:-./vtrace}
fail() { echo "FAIL: report_memory.sh: $*"; exit 1; }
work=test/report/report_memory.work
limit_kb=120000
rm -rf "$work" && mkdir -p "$work" || exit 99
"$VTRACE" synth -q -p halo1d -n 4 -i 75000 "$work/t" > /dev/null || fail "vtrace synth"
records=$("$VTRACE" info "$work/t" | sed -n 's/^events: *\([0-9]*\) records.*/\1/p')
[ "${records:-0}" -ge 1200000 ] || fail "the trace has ${records:-no} records, expected 1,200,000 or more"

run() {   # run LIMIT_KB OUT.html ARGS...: vtrace report within LIMIT_KB of address space
    lim=$1 out=$2
    shift 2
    # shellcheck disable=SC2016
    sh -c 'ulimit -v "$1" && shift && exec "$@"' sh "$lim" "$VTRACE" report -q "$@" -o "$out" "$work/t" 2> "$work/err"
}
run "$limit_kb" "$work/page.html" || fail "vtrace report on $records records within $limit_kb KB: $(tail -3 "$work/err")"
echo "vtrace report: $records records within $limit_kb KB"
sed 's/^/  stderr: /' "$work/err"
grep -q 'no wait-state patterns' "$work/err" &&
    echo "note: the wait-state patterns were left out within the limit (patterns.c loads a rank's records)"
grep -v 'no wait-state patterns' "$work/err" | grep -q 'warning' && fail "an analysis other than the patterns failed: $(cat "$work/err")"

# What the page holds: the bins of every rank over the whole run, one window of calls
# (all of them in it, no more than --max-events), the messages crossing it, the analyses.
python3 - "$work/page.html" "$records" <<'PY' || fail "the page's data"
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', text, re.S).group(1))
calls, ev, b, det = int(sys.argv[2]), d["events"], d["bins"], d["detail"]
assert ev["total"] == calls, (ev["total"], calls)
assert 0 < ev["embedded"] <= d["max_events"] and ev["embedded"] == len(ev["data"]), ev["embedded"]
assert not det["complete"] and 0 <= det["start"] < det["end"] < d["duration_ns"], det
assert all(det["start"] <= e[1] + e[2] and e[1] < det["end"] for e in ev["data"]), "a call outside the window"
assert len(b["ranks"]) == 4 and b["n"] >= 1000, (len(b["ranks"]), b["n"])
# the bins account for every call: their calls add up, and they span the run
nb = sum(sum(r[2::6]) for r in b["ranks"])
assert nb == calls, (nb, calls)
last = max(b["origin"] + (r[-6] + 1) * b["width"] for r in b["ranks"])
assert last >= d["duration_ns"] * 0.99, (last, d["duration_ns"])
assert 0 < d["messages"]["embedded"] <= d["max_events"], d["messages"]
assert d["critical_path"]["available"] and d["critical_path"]["consistent"], d["critical_path"].get("error")
assert len(d["domino"]) == 5 and all("start" in s for s in d["domino"]), d["domino"]
print("page: %d of %d calls in [%d, %d) ns, %d bins of %d ns per rank, %d messages" %
      (ev["embedded"], ev["total"], det["start"], det["end"], b["n"], b["width"], d["messages"]["embedded"]))
PY

# The check itself: without the limit's room the command must fail, not pass silently.
run 10000 "$work/small.html" && fail "vtrace report ran within 10 MB of address space: the limit is not applied"
rm -rf "$work"
echo "PASS: report_memory.sh"
