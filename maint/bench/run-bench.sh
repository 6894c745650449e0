#!/bin/sh
# Latency and bandwidth of plain MPICH, of full tracing and of the run-time reduction
# (VTRACE_MODE=reduced: a header on every message and the decisions), in the same run,
# alternating, medians.
#   maint/bench/run-bench.sh BUILDDIR [RUNS]
# BUILDDIR is a configured and built vtrace tree (its .libs/libvtrace.so is preloaded).
# Prints the processor, then per message size the median one-way latency plain, traced
# and reduced, each with its median absolute deviation over the runs (±), and their
# ratios to plain; the bandwidth at 4 MiB; the cost of one recorded event (traced minus
# plain per call); bytes per event. Each run is framed by two readings of the host's
# phase (maint/bench/phase.sh: these VMs switch every few seconds between phases in which
# MPICH's 8-byte latency is about 220 and 700 ns); a run read slow before or after is run
# again, up to RETRIES times (default 3 a run), and one that never ran fast is kept and
# said, with the rounds it is in. The records each round's reduced trace kept
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
. "$here/phase.sh"
phase_init "$work" "$here"
# one run of $1 (plain, traced, piggyback) of round $i, framed by phase readings; a run
# that never ran in the fast phase is kept and its round listed in $work/noisy
run_framed() {
    k=0
    while :; do
        b1=$(phase_read)
        case $1 in
        plain) "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" > "$work/plain.$i" ;;
        traced) rm -rf "$work/trace.$i"
            VTRACE_DIR="$work/trace.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/pingpong" \
                > "$work/traced.$i" ;;
        piggyback) rm -rf "$work/pb.$i"
            VTRACE_MODE=reduced VTRACE_DIR="$work/pb.$i" LD_PRELOAD="$lib" "${MPIEXEC:-mpiexec.mpich}" -n 2 \
                "$work/pingpong" > "$work/piggyback.$i" 2> "$work/piggyback.err" ;;
        esac
        b2=$(phase_read)
        phase_fast "$b1" "$b2" && return
        if [ "$k" -ge "$retries" ]; then
            echo "$i $1 $b1 $b2" >> "$work/noisy"
            return
        fi
        echo "round $i, $1: host phase slow ($b1 and $b2 ns, limit $phase_limit ns): run again" >&2
        k=$((k + 1))
    done
}
: > "$work/noisy"
i=0
while [ "$i" -lt "$runs" ]; do
    run_framed plain
    run_framed traced
    run_framed piggyback
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
if [ "${INSTRUCTIONS:-1}" != 0 ] && command -v valgrind > /dev/null 2>&1; then
    sh "$here/pair-instructions.sh" "$build" > "$work/instructions" 2> "$work/instructions.err" ||
        { echo "run-bench.sh: pair-instructions.sh failed:" >&2; cat "$work/instructions.err" >&2; : > "$work/instructions"; }
else
    : > "$work/instructions"
fi
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
noisy = [l.split() for l in open("%s/noisy" % work)]
if noisy:
    print("warning: runs that never ran in the host's fast phase are in the medians (round, mode, phase readings "
          "in ns): %s; run again when the machine is calmer" % "; ".join(" ".join(f) for f in noisy))
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
