#!/bin/sh
# Speed and memory of the trace tools on a large generated trace, medians of RUNS runs.
#   maint/bench/replay-bench.sh BUILDDIR [RUNS]
# BUILDDIR is a configured and built vtrace tree (its vtrace and examples/halo are used).
# Makes the trace with `mpiexec -n 2 examples/halo ITERS 16 0` (ITERS=1000000 gives
# 12,000,008 records and 4,000,000 messages, about 180 MB and 3 s), then times
#   decode            vtrace info --no-match DIR
#   decode+match      vtrace info DIR                   (the whole matching, vt_trace_match)
#   whatif 1          vtrace whatif DIR                 (one pass: matching while replaying)
#   whatif 8 random   vtrace whatif --threshold 2us --random 8 DIR
#                     (random scenarios: each lists hundreds of thousands of events)
#   whatif 8 select   vtrace whatif -s rank:0=-10% ... DIR  (8 selector scenarios)
# each with /usr/bin/time -f '%e %M' (GNU time), and prints per command the median
# elapsed time, events per second and peak RSS, in total and per event (an event is
# a trace record, as `vtrace info` counts them) and per message, and for the replays
# the model events per second (a burst and a call per record) and the cost of 8
# scenarios against 1.
# For the speed against the rank count (2, 1K, 16K ranks; 1 and 8 scenarios; CPU time and
# instructions per event) see replay-scale.sh beside this script.
# Environment:
#   ITERS        halo iterations (default 1000000; each makes 12 records, 4 messages)
#   BENCH_TRACE  trace directory to use: made there when it does not exist, kept
#                afterwards (default: a temporary directory, removed at the end)
#   MPIEXEC      the MPI launcher (default mpiexec.mpich: a bare mpiexec may be Open MPI's)
set -eu
me=replay-bench.sh
build=${1:?usage: replay-bench.sh BUILDDIR [RUNS]}
runs=${2:-3}
iters=${ITERS:-1000000}
mpiexec=${MPIEXEC:-mpiexec.mpich}
die() {
    echo "$me: $*" >&2
    exit 1
}
build=$(cd "$build" 2>/dev/null && pwd) || die "$1: not a directory (give the build directory)"
tool=$build/vtrace
halo=$build/examples/halo
[ -x "$tool" ] || die "$tool not found: build the tree first (make)"
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
    die "GNU time is needed as /usr/bin/time (for '-f %e %M'); install it, e.g. 'apt-get install time'"
fi
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the medians"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=${BENCH_TRACE:-$tmp/trace}
if [ ! -f "$trace/vtrace.defs" ]; then
    [ -x "$halo" ] || die "$halo not found: the examples are built with the tree (make)"
    command -v "$mpiexec" >/dev/null 2>&1 ||
        die "$mpiexec not found: the trace is made by examples/halo under MPI (set MPIEXEC or BENCH_TRACE)"
    echo "making the trace: VTRACE_DIR=$trace $mpiexec -n 2 $halo $iters 16 0"
    rm -rf "$trace"
    VTRACE_DIR=$trace "$mpiexec" -n 2 "$halo" "$iters" 16 0 >/dev/null ||
        die "the halo run failed"
fi
"$tool" info --json "$trace" >"$tmp/info.json" || die "vtrace info failed on $trace"

for name in decode match whatif1 whatif8 whatif8s; do
    case $name in
    decode) set -- info --no-match ;;
    match) set -- info ;;
    whatif1) set -- whatif ;;
    whatif8) set -- whatif --threshold 2us --random 8 ;;
    whatif8s) set -- whatif -s rank:0=-10% -s rank:1=-10% -s all=-5% -s fn:MPI_Waitall=-20% -s rank:0=elim \
        -s all=-1us -s fn:MPI_Allreduce=-50% -s rank:1=-30% ;;
    esac
    r=0
    while [ "$r" -lt "$runs" ]; do
        /usr/bin/time -o "$tmp/$name.$r" -f '%e %M' "$tool" "$@" "$trace" >"$tmp/$name.out" ||
            die "'vtrace $*' failed"
        r=$((r + 1))
    done
    echo "vtrace $* DIR" >"$tmp/$name.cmd"
done

python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
info = json.load(open(tmp + "/info.json"))
events, msgs = info["events"], info["messages"]
print("trace: %d events (records), %d messages, %d ranks, %.1f MB; medians of %d runs"
      % (events, msgs, info["ranks"], info["bytes"] / 1e6, runs))
print("%-16s %-48s %8s %10s %9s %9s %9s" % ("", "command", "time_s", "Mevents/s", "rss_MB", "B/event", "B/msg"))
med = {}
for name, label in (("decode", "decode"), ("match", "decode+match"), ("whatif1", "whatif 1"),
                    ("whatif8", "whatif 8 random"), ("whatif8s", "whatif 8 select")):
    t, m = [], []
    for r in range(runs):
        e, k = open("%s/%s.%d" % (tmp, name, r)).read().split()[-2:]
        t.append(float(e))
        m.append(int(k) * 1024)
    t, m = statistics.median(t), statistics.median(m)
    med[name] = t
    cmd = open("%s/%s.cmd" % (tmp, name)).read().strip()
    if len(cmd) > 48:
        cmd = cmd[:44] + " ..."
    print("%-16s %-48s %8.2f %10.2f %9.1f %9.1f %9.1f"
          % (label, cmd, t, events / t / 1e6 if t > 0 else float("inf"), m / 1e6, m / events,
             m / msgs if msgs else float("nan")))
if med["whatif1"] > 0:
    print("8 random scenarios / 1 scenario: %.2fx time" % (med["whatif8"] / med["whatif1"]))
    print("8 selector scenarios / 1 scenario: %.2fx time" % (med["whatif8s"] / med["whatif1"]))
    print("the replay's model events (a burst and a call per record), M/s: %.2f whatif 1, %.2f whatif 8 random, "
          "%.2f whatif 8 select"
          % tuple(2 * events / med[n] / 1e6 for n in ("whatif1", "whatif8", "whatif8s")))
PY
