#!/bin/bash
# Run-time cost of tracing on real codes (issue 18): the slowdown of whole programs (NPB,
# HPCG, miniFE, ...) with VTRACE_MODE=full and VTRACE_MODE=reduced against the same
# program without the layer.
#   maint/bench/real-codes.sh BUILDDIR LIST [RUNS] [OUT]   (RUNS default 5, OUT ./real-codes)
# LIST: one program a line, "name|directory|command" as for trace-sizes.sh (blank lines and
# # comments skipped); the command runs in the directory under ${MPIEXEC:-mpiexec.mpich}
# -n ${NP:-2}, traced with LD_PRELOAD of BUILDDIR's .libs/libvtrace.so, given to the ranks
# only (`-genv LD_PRELOAD LIB`; Open MPI's launcher: `-x LD_PRELOAD=LIB`), as a program
# linked with vtrace's mpicc has it; PRELOAD=all puts it on mpiexec as well, which then
# loads libmpich and UCX into the launcher and its proxy too (2 x 14 ms of CPU before any
# rank starts: doc/clock-repair.md). It builds nothing.
# Per program, RUNS rounds; a round runs plain, full and reduced once each, in an order
# that rotates from round to round (plain full reduced, full reduced plain, reduced plain
# full, ...), so a slow phase of the machine falls on every mode alike. Each run's wall
# time and user+sys (of mpiexec and the ranks) go to OUT/runs.tsv; its output to
# OUT/NAME.MODE.out (the last round's); its trace is removed after the run (the reduced
# one once `vtrace info` has counted its records) so the disk does not fill.
# Prints the processor and, per program, the median wall time of each mode with its
# median absolute deviation in percent of the median (±), the ratios of the medians to
# plain, the median user+sys, the load average (/proc/loadavg) before and after, and the
# reduced trace's records kept per thousand calls (the general path of the reduction
# costs about ten times the folded one: doc/piggyback.md). "noisy: not conclusive" marks
# a program whose plain runs spread more (MAD) than the slowdown measured: run it again
# on a calmer machine or with more rounds; "calls vary" one whose reduced runs made
# different numbers of calls (its work follows the clock: HPCG's number of sets does
# unless hpcg.dat's run time is 0). Exits non-zero if a run fails (or a traced
# run leaves no trace); the other programs are still measured.
set -u
usage="usage: real-codes.sh BUILDDIR LIST [RUNS] [OUT]"
if [ $# -lt 2 ] || [ $# -gt 4 ]; then echo "$usage" >&2; exit 2; fi
build=$(cd "$1" 2> /dev/null && pwd) || { echo "real-codes.sh: $1: no such directory" >&2; exit 2; }
list=$2 runs=${3:-5} out=${4:-real-codes}
lib=$build/.libs/libvtrace.so vtrace=$build/vtrace
if [ ! -f "$lib" ] || [ ! -x "$vtrace" ]; then echo "real-codes.sh: $build: vtrace not built" >&2; exit 2; fi
if [ ! -r "$list" ] || [ ! -f "$list" ]; then echo "real-codes.sh: $list: cannot read" >&2; exit 2; fi
case $runs in ''|*[!0-9]*) runs_ok=0 ;; *) runs_ok=$((10#$runs > 0)) ;; esac
[ "$runs_ok" = 1 ] || { echo "real-codes.sh: RUNS: expected a positive integer, got '$runs'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "real-codes.sh: needs /usr/bin/time" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
tsv=$out/runs.tsv
: > "$tsv"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
echo "processor: ${cpu:-unknown} ($(nproc 2> /dev/null || echo '?') cores), $(uname -r); ${NP:-2} ranks, $runs rounds, libvtrace preloaded on ${PRELOAD:-ranks}"
modes=(plain full reduced)
status=0
# one run: NAME DIR MODE ROUND COMMAND; appends "name mode round wall user+sys records calls"
run() {
    local name=$1 dir=$2 mode=$3 round=$4 cmd=$5 t=$out/$1.trace rec=- calls=-
    rm -rf "$t"
    local env=()
    local ranks=()
    if [ "$mode" != plain ]; then
        env=(VTRACE_MODE="$mode" VTRACE_DIR="$t")
        case ${PRELOAD:-ranks}:${MPIEXEC:-mpiexec.mpich} in
        all:*) env+=(LD_PRELOAD="$lib") ;;
        *openmpi* | *orterun* | *mpirun*) ranks=(-x LD_PRELOAD="$lib") ;;
        *) ranks=(-genv LD_PRELOAD "$lib") ;;
        esac
    fi
    # shellcheck disable=SC2086 # the command is split into words as a shell would
    if ! (cd "$dir" && env "${env[@]}" /usr/bin/time -f '%e %U %S' -o "$out/time" \
            "${MPIEXEC:-mpiexec.mpich}" "${ranks[@]}" -n "${NP:-2}" $cmd) < /dev/null > "$out/$name.$mode.out" 2>&1; then
        echo "real-codes.sh: $name: the $mode run of round $round failed ($out/$name.$mode.out)" >&2
        rm -rf "$t"; return 1
    fi
    if [ "$mode" != plain ] && [ ! -f "$t/vtrace.defs" ]; then
        echo "real-codes.sh: $name: the $mode run of round $round left no trace in $t" >&2
        rm -rf "$t"; return 1
    fi
    if [ "$mode" = reduced ]; then
        read -r rec calls < <("$vtrace" info --json --no-match "$t" 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["stored_records"], sum(f["calls"] for f in d["functions"].values()))' 2> /dev/null) || rec=- calls=-
    fi
    rm -rf "$t"
    awk -v n="$name" -v m="$mode" -v r="$round" -v rec="${rec:--}" -v c="${calls:--}" \
        '{ printf "%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", n, m, r, $1, $2 + $3, rec, c }' "$out/time" >> "$tsv"
}
while IFS='|' read -r name dir cmd <&3; do
    case $name in ''|'#'*) continue ;; esac
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    failed=0
    for ((r = 0; r < runs; r++)); do
        for ((k = 0; k < 3; k++)); do
            run "$name" "$dir" "${modes[(r + k) % 3]}" "$r" "$cmd" || { failed=1; break 2; }
        done
    done
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    if [ "$failed" = 1 ]; then status=1; continue; fi
    printf '%s\tload\t%s\t%s\n' "$name" "$load0" "$load1" >> "$tsv"
done 3< "$list"
python3 - "$tsv" <<'PY'
import sys, statistics
runs, load, order = {}, {}, []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[1] == "load":
        load[f[0]] = (f[2], f[3])
        continue
    if f[0] not in runs:
        order.append(f[0])
    runs.setdefault(f[0], {}).setdefault(f[1], []).append(f[3:])
def mad(xs):
    m = statistics.median(xs)
    return statistics.median(abs(x - m) for x in xs)
print("| code | plain s ±MAD | full s ±MAD | reduced s ±MAD | full/plain | reduced/plain | user+sys s plain full reduced "
      "| records kept per 1000 calls | load before / after | note |")
print("|" + "---|" * 10)
for name in order:
    if name not in load:   # a run failed: said above
        continue
    m = runs[name]
    wall = {k: [float(x[0]) for x in m[k]] for k in m}
    med = {k: statistics.median(v) for k, v in wall.items()}
    pct = {k: 100.0 * mad(v) / med[k] for k, v in wall.items()}
    cpu = {k: statistics.median(float(x[1]) for x in m[k]) for k in m}
    per = [1000.0 * int(x[2]) / int(x[3]) for x in m["reduced"] if x[2] != "-" and int(x[3])]
    kept = "%.1f (of %s calls)" % (statistics.median(per), m["reduced"][0][3]) if per else "-"
    ratio = {k: med[k] / med["plain"] for k in ("full", "reduced")}
    # the slowdown measured is smaller than the spread of plain runs: it cannot be told from noise
    noisy = [k for k in ("full", "reduced") if pct["plain"] > abs(ratio[k] - 1) * 100]
    flag = "noisy: not conclusive (%s)" % " ".join(noisy) if noisy else ""
    # a program whose work follows the clock (HPCG's number of sets, a time-limited loop)
    # makes more calls in some runs: its times are not of the same work
    ncalls = sorted({int(x[3]) for x in m["reduced"] if x[3] != "-"})
    if len(ncalls) > 1:
        flag += "%scalls vary (%s): the work depends on timing" % ("; " if flag else "", " ".join(map(str, ncalls)))
    print("| %s | %.2f ±%.1f%% | %.2f ±%.1f%% | %.2f ±%.1f%% | %.3f | %.3f | %.1f %.1f %.1f | %s | %s / %s | %s |" % (
        name, med["plain"], pct["plain"], med["full"], pct["full"], med["reduced"], pct["reduced"],
        ratio["full"], ratio["reduced"], cpu["plain"], cpu["full"], cpu["reduced"], kept,
        load[name][0], load[name][1], flag))
PY
exit $status
