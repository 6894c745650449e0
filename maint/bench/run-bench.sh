#!/bin/sh
# Latency and bandwidth of plain MPICH, of full tracing and of the run-time reduction
# (VTRACE_MODE=reduced: a header on every message and the decisions), in the same run,
# alternating, medians.
#   maint/bench/run-bench.sh BUILDDIR [RUNS]
# BUILDDIR is a configured and built vtrace tree (its .libs/libvtrace.so is preloaded).
# Prints per message size the median one-way latency plain, traced and reduced and their
# ratios to plain, the bandwidth at 4 MiB, the cost of one recorded event
# (traced minus plain per call), and bytes per event.
set -eu
build=${1:?usage: run-bench.sh BUILDDIR [RUNS]}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
tool=$(cd "$build" && pwd)/vtrace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${MPICC:-mpicc.mpich}" -O2 -o "$work/pingpong" "$here/pingpong.c"
i=0
while [ "$i" -lt "$runs" ]; do
    "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" > "$work/plain.$i"
    VTRACE_DIR="$work/trace.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" > "$work/traced.$i"
    VTRACE_MODE=reduced VTRACE_DIR="$work/pb.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" \
        > "$work/piggyback.$i" 2> "$work/piggyback.err"
    i=$((i + 1))
done
python3 - "$work" "$runs" <<'PY'
import sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
def load(kind):
    out = {}
    for i in range(runs):
        for line in open("%s/%s.%d" % (work, kind, i)):
            name, size, val = line.split()
            out.setdefault((name, int(size)), []).append(float(val))
    return out
plain, traced, pb = load("plain"), load("traced"), load("piggyback")
print("%-14s %10s %12s %12s %8s %12s %8s" % ("measure", "bytes", "plain", "traced", "ratio", "reduced", "ratio"))
for key in sorted(plain):
    p, t, b = (statistics.median(x[key]) for x in (plain, traced, pb))
    print("%-14s %10d %12.1f %12.1f %8.3f %12.1f %8.3f" % (key[0], key[1], p, t, t / p, b, b / p))
    if key[0] == "call_ns":
        print("event cost (traced - plain per recorded call): %.1f ns" % (t - p))
# These machines have noisy phases (plain 8-byte latency several times its calm value):
# medians over runs that straddle one mix them. Say so, and say which runs.
lat = [v for k, v in plain.items() if k == ("latency_ns", 8)]
if lat and max(lat[0]) > 1.5 * min(lat[0]):
    print("warning: the machine was noisy during these runs (plain 8-byte latency %s ns): "
          "the ratios mix calm and noisy phases; run again" % " ".join("%.0f" % v for v in lat[0]))
PY
if [ -x "$tool" ]; then
    "$tool" info --json "$work/trace.0" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("bytes per event: %.2f (%d events, %d bytes)" % (d["bytes_per_event"], d["events"], d["bytes"]))'
fi
