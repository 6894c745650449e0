#!/bin/sh
# Accuracy of what-if prediction (issue: PerWiz reported <= 4% with LogGPS).
#   maint/bench/accuracy.sh BUILDDIR [RUNS]
# For each X: run examples/pipeline with rank 0 (the first stage) computing X% longer
# (traced), predict the run time with rank 0's computation before MPI_Send shortened back
# by X/(1+X), run
# the pipeline without the extra work (traced the same way), and report the error of
# the prediction against that measured time (medians over RUNS runs).
set -eu
build=$(cd "${1:?usage: accuracy.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
items=150
us=2000
export VTRACE_THRESHOLD=500us
measure() {   # extra, run -> trace dir
    VTRACE_DIR="$work/t.$1.$2" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$build/examples/pipeline" $items $us 0 "$1" > /dev/null
    echo "$work/t.$1.$2"
}
printf '%-6s %14s %14s %14s %8s\n' "X" "slow run (s)" "predicted (s)" "normal run (s)" "error"
for x in 0.10 0.25 0.50 1.00; do
    preds="" bases="" slows=""
    r=0
    while [ "$r" -lt "$runs" ]; do
        slow=$(measure "$x" "$r")
        base=$(measure 0 "$x.$r")
        site=$("$build/vtrace" dump --rank 0 "$slow" | awk '$5 == "MPI_Send" { for (i = 6; i <= NF; i++) if ($i ~ /^site=/) { sub(/^site=/, "", $i); print $i; exit } }')
        pct=$(python3 -c "print(100 * $x / (1 + $x))")
        pred=$("$build/vtrace" whatif --json -s "0/site:$site=-$pct%" "$slow" | python3 -c 'import json,sys; print(json.load(sys.stdin)["predicted_ns"])')
        meas_slow=$("$build/vtrace" whatif --json "$slow" | python3 -c 'import json,sys; print(json.load(sys.stdin)["measured_ns"])')
        meas_base=$("$build/vtrace" whatif --json "$base" | python3 -c 'import json,sys; print(json.load(sys.stdin)["measured_ns"])')
        preds="$preds $pred" bases="$bases $meas_base" slows="$slows $meas_slow"
        r=$((r + 1))
    done
    python3 - "$x" "$preds" "$bases" "$slows" <<'PY'
import statistics, sys
x, p, b, s = sys.argv[1], [int(v) for v in sys.argv[2].split()], [int(v) for v in sys.argv[3].split()], [int(v) for v in sys.argv[4].split()]
errs = [abs(pi - bi) / bi for pi, bi in zip(p, b)]
print("%-6s %14.6f %14.6f %14.6f %7.2f%%" % ("%d%%" % round(float(x) * 100), statistics.median(s) / 1e9,
      statistics.median(p) / 1e9, statistics.median(b) / 1e9, 100 * statistics.median(errs)))
PY
done
