#!/bin/sh
# The floor under the small-message ratios (issue 18): the ping-pong of
# maint/bench/pingpong.c on 2 ranks, in each round plain MPICH, through
# maint/bench/clock-floor.c (two TSC reads and one store a call: the least a tracer that
# times each call does), full tracing and VTRACE_MODE=reduced, one after the other.
#   maint/bench/clock-floor.sh BUILDDIR [RUNS]        (default 7)
# Prints the processor and clock source, then per size (0, 8, 64 bytes) each mode's
# median one-way latency over the rounds (± median absolute deviation) and its ratio
# to plain's median; and the TSC's cost, a read in a tight loop.
# Each run is kept only when the host's phase was fast before and after it
# (maint/bench/phase.sh); a run that is not kept is run again, up to TRIES times a round
# (default 4). Each mode's median is over its kept runs.
set -eu
build=${1:?usage: clock-floor.sh BUILDDIR [RUNS]}
runs=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
[ -f "$lib" ] || { echo "clock-floor.sh: $lib: not built" >&2; exit 2; }
mpicc=${MPICC:-mpicc.mpich}
mpiexec=${MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mpicc" -O2 -o "$work/pingpong" "$here/pingpong.c"
"$mpicc" -O2 -shared -fPIC -o "$work/clock-floor.so" "$here/clock-floor.c"
cat > "$work/tsc.c" << 'C'
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
int main(void)
{
    enum { N = 10000000 };
    struct timespec a, b;
    unsigned long long s = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++)
        s += __rdtsc();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f %llu\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / N, s & 1);
    return 0;
}
C
cc -O2 -o "$work/tsc" "$work/tsc.c"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
src=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null || echo '?')
echo "processor: ${cpu:-unknown} ($(nproc) cores), clock source $src, load $(cut -d' ' -f1-3 /proc/loadavg)"
. "$here/phase.sh"
phase_init "$work" "$here"
tries=${TRIES:-4}
# one run of mode $1 into $work/$1.$i, kept when the phase was fast before and after it
run_framed() {
    mode=$1 k=0
    while [ "$k" -lt "$tries" ]; do
        b1=$(phase_read)
        rm -rf "$work/t"
        case $mode in
        plain) "$mpiexec" -n 2 "$work/pingpong" > "$work/out" ;;
        floor) LD_PRELOAD="$work/clock-floor.so" "$mpiexec" -n 2 "$work/pingpong" > "$work/out" ;;
        full) VTRACE_DIR="$work/t" LD_PRELOAD="$lib" "$mpiexec" -n 2 "$work/pingpong" > "$work/out" ;;
        reduced) VTRACE_MODE=reduced VTRACE_DIR="$work/t" LD_PRELOAD="$lib" "$mpiexec" -n 2 \
            "$work/pingpong" > "$work/out" ;;
        esac
        b2=$(phase_read)
        if phase_fast "$b1" "$b2"; then
            mv "$work/out" "$work/$mode.$i"
            return
        fi
        echo "round $i, $mode: phase readings $b1 and $b2 ns (limit $phase_limit): run again" >&2
        k=$((k + 1))
    done
    echo "round $i, $mode: no run in the fast phase" >&2
}
i=0
while [ "$i" -lt "$runs" ]; do
    for mode in plain floor full reduced; do
        run_framed "$mode"
    done
    "$work/tsc" | cut -d' ' -f1 > "$work/tsc.$i"
    i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$runs" << 'PY'
import statistics as st, sys
work, runs = sys.argv[1], int(sys.argv[2])
def lat(path):
    return {int(l.split()[1]): float(l.split()[2]) for l in open(path) if l.startswith("latency_ns")}
modes = ["plain", "floor", "full", "reduced"]
import os
kept = {m: [lat(f"{work}/{m}.{i}") for i in range(runs) if os.path.exists(f"{work}/{m}.{i}")] for m in modes}
if any(not kept[m] for m in modes):
    sys.exit("clock-floor.sh: a mode has no run in the fast phase: the machine is too noisy")
tsc = [float(open(f"{work}/tsc.{i}").read()) for i in range(runs)]
print(f"TSC read in a loop: {st.median(tsc):.1f} ns (median of {runs})")
print("runs kept: " + ", ".join(f"{m} {len(kept[m])} of {runs}" for m in modes))
print("one-way latency in ns, median ±MAD, ratio to plain's median")
print(f"{'bytes':>5} " + " ".join(f"{m:>22}" for m in modes))
for n in (0, 8, 64):
    cells = []
    base = st.median(r[n] for r in kept["plain"])
    for m in modes:
        v = [r[n] for r in kept[m]]
        med = st.median(v)
        mad = st.median(abs(x - med) for x in v)
        cells.append(f"{med:8.1f} ±{mad:5.1f} {med / base:5.3f}x")
    print(f"{n:>5} " + " ".join(f"{c:>22}" for c in cells))
PY
