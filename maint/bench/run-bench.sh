#!/bin/sh
# Latency and bandwidth of plain MPICH, of full tracing and of the run-time reduction
# (VTRACE_MODE=reduced: a header on every message and the decisions), in the same run,
# alternating, medians.
#   maint/bench/run-bench.sh BUILDDIR [RUNS]
# BUILDDIR is a configured and built vtrace tree (its .libs/libvtrace.so is preloaded).
# Prints the processor, then per message size the median one-way latency plain, traced
# and reduced, each with its median absolute deviation over the runs (±), and their
# ratios to plain; the bandwidth at 4 MiB; the cost of one recorded event (traced minus
# plain per call); bytes per event. A round (plain, traced, reduced one after the other)
# whose plain 8-byte latency is more than 1.5 times the calm value (the smallest seen)
# ran in a noisy phase of the machine: it is run again, up to RETRIES times (default 3
# per round), and the ones kept are said. The records each round's reduced trace kept
# per million calls are shown too: a round whose reduction took its general path more
# often (descheduled ranks) is slower for that reason. With valgrind installed, the instructions per
# MPI_Send/MPI_Recv pair (maint/bench/pair-instructions.sh: exact, not noisy) are shown
# beside the ratios at 8 B, 64 B, 1 KiB and 4 MiB; INSTRUCTIONS=0 skips them.
set -eu
build=${1:?usage: run-bench.sh BUILDDIR [RUNS]}
runs=${2:-5}
retries=${RETRIES:-3}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
tool=$(cd "$build" && pwd)/vtrace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${MPICC:-mpicc.mpich}" -O2 -o "$work/pingpong" "$here/pingpong.c"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
echo "processor: ${cpu:-unknown} ($(nproc 2> /dev/null || echo '?') cores), $(uname -r)"
# the plain 8-byte latency of a round's output
lat8() { awk '$1 == "latency_ns" && $2 == 8 { print $3 }' "$1"; }
i=0 calm= noisy_left=$((runs * retries))
while [ "$i" -lt "$runs" ]; do
    rm -rf "$work/trace.$i" "$work/pb.$i"
    "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" > "$work/plain.$i"
    VTRACE_DIR="$work/trace.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" > "$work/traced.$i"
    VTRACE_MODE=reduced VTRACE_DIR="$work/pb.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" \
        > "$work/piggyback.$i" 2> "$work/piggyback.err"
    l=$(lat8 "$work/plain.$i")
    calm=$(echo "${calm:-$l} $l" | awk '{ print ($2 < $1 ? $2 : $1) }')
    # a noisy round is run again (the medians would mix a calm and a noisy phase)
    if [ "$noisy_left" -gt 0 ] && awk -v l="$l" -v c="$calm" 'BEGIN { exit !(l > 1.5 * c) }'; then
        echo "round $i: noisy (plain 8-byte latency $l ns, calm $calm ns): run again" >&2
        noisy_left=$((noisy_left - 1))
        continue
    fi
    # how many records the round's reduced trace kept: the general path of the reduction
    # (a call or burst longer than the threshold, then unequal differences for a few
    # messages) costs about ten times the folded one, so rounds that record more are slower
    if [ -x "$tool" ]; then
        "$tool" info --json "$work/pb.$i" 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["events"], sum(f["calls"] for f in d["functions"].values()))' > "$work/records.$i" || : > "$work/records.$i"
    fi
    [ "$i" -gt 0 ] && rm -rf "$work/trace.$i" "$work/pb.$i"
    i=$((i + 1))
done
# (a round kept before a calmer one was seen may be noisy after all: said below)
if [ "${INSTRUCTIONS:-1}" != 0 ] && command -v valgrind > /dev/null 2>&1; then
    sh "$here/pair-instructions.sh" "$build" > "$work/instructions" 2> "$work/instructions.err" ||
        { echo "run-bench.sh: pair-instructions.sh failed:" >&2; cat "$work/instructions.err" >&2; : > "$work/instructions"; }
else
    : > "$work/instructions"
fi
python3 - "$work" "$runs" "$calm" <<'PY'
import sys, statistics
work, runs, calm = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def load(kind):
    out = {}
    for i in range(runs):
        for line in open("%s/%s.%d" % (work, kind, i)):
            name, size, val = line.split()
            out.setdefault((name, int(size)), []).append(float(val))
    return out
def mad(xs):
    m = statistics.median(xs)
    return statistics.median(abs(x - m) for x in xs)
# instructions per pair by (bytes, mode): the total where MPI's part is countable, else the layer's
ins = {}
for line in open("%s/instructions" % work):
    f = line.split()
    if len(f) >= 5 and f[0].isdigit():
        ins[(int(f[0]), f[1])] = f[4] if f[4] != "-" else "+" + f[3]
plain, traced, pb = load("plain"), load("traced"), load("piggyback")
print("%-14s %8s %16s %16s %7s %16s %7s %s" % ("measure", "bytes", "plain ±MAD", "traced ±MAD", "ratio",
                                               "reduced ±MAD", "ratio", "instr/pair plain full reduced" if ins else ""))
for key in sorted(plain):
    p, t, b = (statistics.median(x[key]) for x in (plain, traced, pb))
    dp, dt, db = (mad(x[key]) for x in (plain, traced, pb))
    extra = ""
    if key[0] == "latency_ns" and (key[1], "plain") in ins:
        extra = "  %s %s %s" % tuple(ins[(key[1], m)] for m in ("plain", "full", "reduced"))
    elif key[0] == "bandwidth_MBps" and (key[1], "plain") in ins:
        extra = "  layer only: %s %s %s" % tuple(ins[(key[1], m)] for m in ("plain", "full", "reduced"))
    print("%-14s %8d %9.1f ±%5.1f %9.1f ±%5.1f %7.3f %9.1f ±%5.1f %7.3f%s" % (key[0], key[1], p, dp, t, dt, t / p,
                                                                        b, db, b / p, extra))
    if key[0] == "call_ns":
        print("event cost (traced - plain per recorded call): %.1f ns" % (t - p))
lat = plain.get(("latency_ns", 8), [])
noisy = [i for i, v in enumerate(lat) if v > 1.5 * calm]
if noisy:
    print("warning: rounds %s stayed noisy (plain 8-byte latency %s ns, calm %.0f ns): their figures are in the "
          "medians; run again when the machine is calmer" % (" ".join(map(str, noisy)),
                                                             " ".join("%.0f" % lat[i] for i in noisy), calm))
recs = []
for i in range(runs):
    try:
        f = open("%s/records.%d" % (work, i)).read().split()
        recs.append((int(f[0]), int(f[1])))
    except (OSError, ValueError, IndexError):
        pass
if recs:
    per = [1e6 * r / c for r, c in recs if c]
    print("reduced trace: records per million calls, by round: %s (median %.0f of %d calls)" % (
        " ".join("%.0f" % x for x in per), statistics.median(per), statistics.median(c for _, c in recs)))
if ins:
    print("instructions per pair: callgrind (maint/bench/pair-instructions.sh); MPI's own part counted without "
          "polling; '+N': above the eager limit only the layer's N are shown")
PY
if [ -x "$tool" ]; then
    "$tool" info --json "$work/trace.0" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("bytes per event: %.2f (%d events, %d bytes)" % (d["bytes_per_event"], d["events"], d["bytes"]))'
fi
