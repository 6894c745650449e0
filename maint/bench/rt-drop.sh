#!/bin/sh
# Events the run-time reduction drops (issue 4): the bundled examples run once with
# VTRACE_MODE=both; for each, the model events of the full trace (a burst and a call per
# record), the records of the run-time reduced trace, the share dropped, and the
# point-to-point records kept; and whether the reduced trace is `vtrace reduce`'s.
#   maint/bench/rt-drop.sh BUILDDIR [THRESHOLD]
set -eu
build=$(cd "${1:?usage: rt-drop.sh BUILDDIR [THRESHOLD]}" && pwd)
theta=${2:-1ms}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf "%-10s %8s %8s %8s %10s %s\n" example events kept dropped "p2p kept" "same as vtrace reduce"
for ex in groups halo pipeline; do
    "${MPICC:-mpicc.mpich}" -O2 -o "$work/$ex" "$here/examples/$ex.c"
    VTRACE_MODE=both VTRACE_THRESHOLD=$theta VTRACE_DIR="$work/$ex.t" LD_PRELOAD="$build/.libs/libvtrace.so" \
        "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/$ex" > /dev/null 2> "$work/$ex.err"
    "$build/vtrace" reduce "$work/$ex.t/full" "$work/$ex.off" > /dev/null
    "$build/vtrace" dump --json "$work/$ex.t/reduced" > "$work/$ex.rt"
    "$build/vtrace" dump --json "$work/$ex.off" > "$work/$ex.of"
    same=no
    cmp -s "$work/$ex.rt" "$work/$ex.of" && same=yes
    "$build/vtrace" info --json "$work/$ex.t/full" | python3 -c '
import json, sys
full = json.load(sys.stdin)
recs = [json.loads(l) for l in open(sys.argv[1])]
events = 2 * full["events"]
p2p = sum(1 for r in recs if r.get("msgs") or r.get("ssends"))
print("%-10s %8d %8d %7.1f%% %10d %s" % (sys.argv[2], events, len(recs), 100 * (1 - len(recs) / events), p2p, sys.argv[3]))
' "$work/$ex.rt" "$ex" "$same"
done
