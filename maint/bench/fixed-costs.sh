#!/bin/sh
# The layer's fixed costs, which short runs feel (issue 18: a 0.4 s run 1.11x where long
# runs stay within 3%): MPI_Init, the first collective after it (ranks leaving MPI_Init at
# different times wait there for each other), 1000 MPI_Allreduce, MPI_Finalize, of
# maint/bench/fixedcost.c on 2 ranks, plain MPICH, full tracing and VTRACE_MODE=reduced,
# interleaved over RUNS rounds (plain, full, reduced one after the other).
#   maint/bench/fixed-costs.sh BUILDDIR [RUNS]        (default 9)
# Prints, per mode, medians over the rounds (± median absolute deviation), in ms:
#   init, fin   rank 0's wall time of MPI_Init, MPI_Finalize, and its CPU time (cpu);
#   first       the slower rank's first MPI_Allreduce;  rest  the next 1000 (rank 0);
#   job         mpiexec's wall time.
# PRELOAD=ranks hands libvtrace.so to the ranks only (`mpiexec -genv LD_PRELOAD LIB`,
# MPICH's hydra) instead of LD_PRELOAD on mpiexec, which also loads it, and with it
# libmpich and UCX, into mpiexec and its proxy (about 14 ms of CPU each, before any rank
# starts: doc/clock-repair.md).
# MPICH busy-polls, so a rank's CPU time includes its waiting: it is the machine's load
# that it leaves out. With valgrind installed (CALLGRIND=0 skips it), the instructions
# rank 0 runs in the layer follow (millions, exact but for waits): in MPI_Init (its
# wrapper minus PMPI_Init), of which the TSC calibration and the clock synchronisations
# (vt_clocksync_run, at MPI_Init and MPI_Finalize; their round trips poll MPI, so they
# count waiting), and in MPI_Finalize (finish_cb), of which zstd and the reduced trace's
# end.
set -eu
build=${1:?usage: fixed-costs.sh BUILDDIR [RUNS]}
runs=${2:-9}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/.libs/libvtrace.so
[ -f "$lib" ] || { echo "fixed-costs.sh: $lib: not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${MPICC:-mpicc.mpich}" -O2 -o "$work/fixedcost" "$here/fixedcost.c"
mpiexec=${MPIEXEC:-mpiexec.mpich}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
if [ "${PRELOAD:-mpiexec}" = ranks ]; then
    preload= genv="-genv LD_PRELOAD $lib"
else
    preload="LD_PRELOAD=$lib" genv=
fi
echo "processor: ${cpu:-unknown} ($(nproc 2> /dev/null || echo '?') cores), load $(cut -d' ' -f1-3 /proc/loadavg), preload into ${PRELOAD:-mpiexec}"
# one MODE round I: the program's lines, then "job NS"
run() {
    out=$work/$1.$2
    t0=$(date +%s%N)
    if [ "$1" = plain ]; then
        "$mpiexec" -n 2 "$work/fixedcost" > "$out"
    else
        env VTRACE_MODE=$1 VTRACE_DIR="$work/trace" VTRACE_OVERWRITE=replace $preload \
            "$mpiexec" $genv -n 2 "$work/fixedcost" > "$out" 2> "$out.err" || { cat "$out.err" >&2; exit 1; }
    fi
    echo "job $(($(date +%s%N) - t0))" >> "$out"
    rm -rf "$work/trace"
}
i=0
while [ "$i" -lt "$runs" ]; do
    for mode in plain full reduced; do run "$mode" "$i"; done
    i=$((i + 1))
done
python3 - "$work" "$runs" <<'PY'
import sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
cols = ["init", "init cpu", "first", "rest", "fin", "fin cpu", "job"]
def one(path):
    ranks = {}
    job = 0
    for line in open(path):
        f = line.split()
        if f[0] == "job":
            job = int(f[1])
        elif f[0] == "rank":
            ranks[int(f[1])] = {f[k]: (int(f[k + 1]), int(f[k + 2])) for k in range(2, len(f), 3)}
    r0 = ranks[0]
    return [r0["init"][0], r0["init"][1], max(r["first"][0] for r in ranks.values()), r0["rest"][0],
            r0["fin"][0], r0["fin"][1], job]
res = {m: [one(f"{work}/{m}.{i}") for i in range(runs)] for m in ("plain", "full", "reduced")}
print(f"{'ms':8s}" + "".join(f"{c:>17s}" for c in cols))
med = {}
for m, rows in res.items():
    med[m] = [statistics.median(r[k] for r in rows) for k in range(len(cols))]
    mad = [statistics.median(abs(r[k] - med[m][k]) for r in rows) for k in range(len(cols))]
    print(f"{m:8s}" + "".join(f"{a / 1e6:10.2f} ±{d / 1e6:5.2f}" for a, d in zip(med[m], mad)))
for m in ("full", "reduced"):
    print(f"{m + '-pl':8s}" + "".join(f"{(a - p) / 1e6:+17.2f}" for a, p in zip(med[m], med["plain"])))
PY
if [ "${CALLGRIND:-1}" != 0 ] && command -v valgrind > /dev/null 2>&1; then
    printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --callgrind-out-file="$CGOUT.$PMI_RANK" "$@"\n' > "$work/vg.sh"
    chmod +x "$work/vg.sh"
    echo "instructions on rank 0 (callgrind, inclusive, millions; 100 MPI_Allreduce; clock sync"
    echo "and the calibration run longer under valgrind, whose round trips are slow):"
    for mode in full reduced; do
        CGOUT=$work/cg.$mode VTRACE_MODE=$mode VTRACE_DIR="$work/trace" VTRACE_OVERWRITE=replace LD_PRELOAD="$lib" \
            "$mpiexec" -n 2 "$work/vg.sh" "$work/fixedcost" 100 > "$work/cg.$mode.log" 2>&1 ||
            { cat "$work/cg.$mode.log" >&2; exit 1; }
        rm -rf "$work/trace"
        callgrind_annotate --inclusive=yes --threshold=100 "$work/cg.$mode.0" > "$work/cg.$mode.txt" 2> /dev/null
        python3 - "$work/cg.$mode.txt" "$mode" <<'PY'
import re, sys
ir = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*([0-9,]+) \([ 0-9.]+%\)\s+\S*?:([A-Za-z_0-9.]+) \[", line)
    if m:
        name = m.group(2).split(".")[0]
        ir[name] = max(ir.get(name, 0), int(m.group(1).replace(",", "")))
g = lambda n: ir.get(n, 0) / 1e6
print(f"  {sys.argv[2]:8s} MPI_Init: layer {g('MPI_Init') - g('PMPI_Init'):.2f} (calibration {g('vt_clock_calibrate'):.2f}, "
      f"clock sync {g('vt_clocksync_run'):.2f} both ends)  MPI_Finalize: layer {g('finish_cb'):.2f} "
      f"(zstd {g('ZSTD_compress') + g('ZSTD_compress2'):.2f}, reduced trace's end {g('vt_rt_finish'):.2f})")
PY
    done
fi
