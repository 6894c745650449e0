#!/bin/sh
# vtrace's replay against LogGOPSim (https://github.com/spcl/LogGOPSim, built outside
# this repository) on the same halo exchange, in alternating runs (issue 15's benchmark):
#   LGS=DIR sh maint/bench/loggopsim-vs.sh BUILDDIR [RUNS]
# DIR holds LogGOPSim's LogGOPSim and txt2bin binaries (src/LogGOPSim after its `make`).
# For each rank count of RANKS (default "2 1024 16384"), `vtrace synth -p PATTERN`
# writes a trace of about EVENTS records (default 3000000) and maint/bench/goal-halo.py the
# same schedule in GOAL (one operation a record: a receive and a send a neighbour and
# the computation, which stands for the MPI_Waitall), converted by txt2bin (not timed).
# Then `vtrace whatif -s all=-10%` and `LogGOPSim -b` run RUNS times (default 3) each in
# turn; a line a rank count: records, then for each tool its median CPU time (user +
# system, min-max), its operations per CPU second and its peak resident memory, and
# vtrace's rate over LogGOPSim's. LogGOPSim's own event count (it counts the start and
# the end of an operation and a message's arrival apart) is given beside.
set -eu
build=$(cd "${1:?usage: LGS=DIR loggopsim-vs.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-3}
lgs=${LGS:?LGS must name the directory of LogGOPSim and txt2bin}
ranks=${RANKS:-2 1024 16384}
events=${EVENTS:-3000000}
pattern=${PATTERN:-halo2d}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${TMPDIR:-/tmp}/vt-loggopsim-vs
for f in "$lgs/LogGOPSim" "$lgs/txt2bin" "$build/vtrace"; do
    [ -x "$f" ] || { echo "loggopsim-vs: $f is not an executable" >&2; exit 2; }
done
/usr/bin/time -f '%U' true > /dev/null 2>&1 || { echo "loggopsim-vs: GNU time (/usr/bin/time) is needed" >&2; exit 2; }
case $pattern in halo1d|halo2d) ;; *) echo "loggopsim-vs: PATTERN is halo1d or halo2d" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work"

# the median of the numbers on standard input; with "range", followed by (min-max)
median() { sort -g | awk -v r="${1:-}" '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    if (r == "range") printf "%.2f (%.2f-%.2f)", m, v[1], v[NR]; else print m }'; }

echo "processor: $(lscpu | sed -n 's/^Model name: *//p'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ranks records | vtrace CPU s (min-max) M/s RSS MB | LogGOPSim CPU s (min-max) M/s RSS MB events | rate ratio"
for n in $ranks; do
    # operations a rank and iteration: 2 a neighbour and 1 (halo2d on a px x py grid)
    ops=$(awk -v n="$n" -v p="$pattern" 'BEGIN {
        py = 1; if (p == "halo2d") for (d = 1; d * d <= n; d++) if (n % d == 0) py = d
        px = n / py; s = 0
        for (r = 0; r < n; r++) { x = r % px; y = int(r / px)
            s += 1 + 2 * ((x > 0) + (x + 1 < px) + (y > 0) + (y + 1 < py)) }
        print s }')
    iters=$(( events / ops )); [ "$iters" -ge 1 ] || iters=1
    t=$work/t$n g=$work/g$n
    "$build/vtrace" synth -q -p "$pattern" -n "$n" -i "$iters" "$t" > "$work/synth$n.out"
    records=$(sed -n 's/.* iterations: \([0-9]*\) records.*/\1/p' "$work/synth$n.out")
    python3 "$top/maint/bench/goal-halo.py" "$pattern" "$n" "$iters" 1024 100000 > "$g.goal"
    "$lgs/txt2bin" -i "$g.goal" -o "$g.bin" > /dev/null
    rm -f "$g.goal"
    : > "$work/v$n" && : > "$work/l$n"
    i=0
    while [ "$i" -lt "$runs" ]; do
        /usr/bin/time -f '%U %S %M' -o "$work/time" "$build/vtrace" whatif -s all=-10% "$t" > /dev/null
        cat "$work/time" >> "$work/v$n"
        /usr/bin/time -f '%U %S %M' -o "$work/time" "$lgs/LogGOPSim" -b -f "$g.bin" > "$work/lgs$n.out"
        cat "$work/time" >> "$work/l$n"
        i=$((i + 1))
    done
    lev=$(sed -n 's/.*Events: *\([0-9]*\).*/\1/p' "$work/lgs$n.out")
    vs=$(awk '{ print $1 + $2 }' "$work/v$n" | median range)
    ls=$(awk '{ print $1 + $2 }' "$work/l$n" | median range)
    vm=$(awk '{ print $1 + $2 }' "$work/v$n" | median)
    lm=$(awk '{ print $1 + $2 }' "$work/l$n" | median)
    vr=$(sort -g -k3 "$work/v$n" | tail -1 | awk '{ printf "%.0f", $3 / 1024 }')
    lr=$(sort -g -k3 "$work/l$n" | tail -1 | awk '{ printf "%.0f", $3 / 1024 }')
    awk -v n="$n" -v rec="$records" -v vs="$vs" -v ls="$ls" -v vm="$vm" -v lm="$lm" -v vr="$vr" -v lr="$lr" -v lev="$lev" 'BEGIN {
        vrate = vm > 0 ? rec / vm / 1e6 : 0; lrate = lm > 0 ? rec / lm / 1e6 : 0
        printf "%s %s | %s %.2f %s | %s %.2f %s %s | %s\n", n, rec, vs, vrate, vr, ls, lrate, lr, lev,
            (lrate > 0 ? sprintf("%.2fx", vrate / lrate) : "-") }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
