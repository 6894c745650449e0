#!/bin/sh
# Replay speed of two builds measured in the same minutes: records per CPU second of
# `vtrace whatif -s all=-10%` and the ratio AFTER / BEFORE, medians of RUNS rounds.
#   maint/bench/replay-vs.sh BEFORE_BUILDDIR AFTER_BUILDDIR [RUNS]
# The CPU time of the same binary on the same trace varies up to 2x between minutes on a
# shared VM, so absolute rates measured on different days do not compare; a ratio of
# two builds whose runs alternate does. For each rank count of RANKS each build makes its
# own trace with its own `vtrace synth` (same pattern, ranks and iterations: the same
# records, written in each build's format, so a build that cannot read the other's
# format still compares), then each round runs both builds, the first of them
# alternating between rounds, under /usr/bin/time (user + system). The predictions of
# the two builds (their "predicted" lines) must be the same bytes: the exit status is 1
# if not.
# Prints the processor model, the load average before and after, and per rank count
# each build's median CPU time (min-max), its records per CPU second and the ratio of
# the rates, AFTER / BEFORE.
# Environment:
#   RANKS    rank counts (default "2 16384")
#   EVENTS   records a trace, about (default 10000000)
#   PATTERN  vtrace synth pattern (default halo2d)
#   KEEP     directory for the traces, reused when there (default: temporary)
set -eu
me=replay-vs.sh
die() {
    echo "$me: $*" >&2
    exit 2
}
[ $# -ge 2 ] || die "usage: replay-vs.sh BEFORE_BUILDDIR AFTER_BUILDDIR [RUNS]"
before=$(cd "$1" 2>/dev/null && pwd) || die "$1: not a directory (give a build directory)"
after=$(cd "$2" 2>/dev/null && pwd) || die "$2: not a directory (give a build directory)"
runs=${3:-5}
case $runs in '' | *[!0-9]*) die "RUNS must be a number, not '$runs'" ;; esac
[ "$runs" -ge 1 ] || die "RUNS must be at least 1"
for b in "$before" "$after"; do
    [ -x "$b/vtrace" ] || die "$b/vtrace not found: build the tree first (make)"
done
/usr/bin/time -f '%U %S' true >/dev/null 2>&1 || die "GNU time is needed as /usr/bin/time ('apt-get install time')"
ranks=${RANKS:-2 16384}
events=${EVENTS:-10000000}
pattern=${PATTERN:-halo2d}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${KEEP:-$tmp}
mkdir -p "$dir"

records() { "$1/vtrace" info --no-match --json "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
per_iteration() { # BUILD N -> records an iteration of PATTERN on N ranks (2 iterations less 1)
    for i in 1 2; do
        "$1/vtrace" synth -q -p "$pattern" -n "$2" -i "$i" "$tmp/it$i" >/dev/null ||
            die "$1/vtrace synth -p $pattern -n $2 -i $i failed"
    done
    echo $(($(records "$1" "$tmp/it2") - $(records "$1" "$tmp/it1")))
    rm -rf "$tmp/it1" "$tmp/it2"
}
trace() { # BUILD TAG N ITERATIONS -> trace directory made by BUILD's own synth
    t=$dir/$2-$pattern-n$3-i$4
    if [ ! -f "$t/vtrace.defs" ]; then
        rm -rf "$t"
        "$1/vtrace" synth -q -p "$pattern" -n "$3" -i "$4" "$t" >/dev/null ||
            die "$1/vtrace synth -p $pattern -n $3 -i $4 failed"
    fi
    echo "$t"
}
run() { # BUILD TRACE OUT -> appends "user+system" to OUT.times
    /usr/bin/time -o "$tmp/time" -f '%U %S' "$1/vtrace" whatif -s all=-10% "$2" >"$3.out" ||
        die "$1/vtrace whatif -s all=-10% $2 failed"
    awk '{print $1 + $2}' "$tmp/time" >>"$3.times"
}
median() { sort -g "$1" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f", m, v[1], v[NR]}'; }

model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
echo "processor: ${model:-unknown}; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before: $before"
echo "after:  $after"
printf '%-7s %10s  %-24s %8s  %-24s %8s  %s\n' ranks records "before CPU s (min-max)" "M/s" "after CPU s (min-max)" "M/s" "after/before"
status=0
for n in $ranks; do
    per=$(per_iteration "$after" "$n")
    [ "$per" -ge 1 ] || die "$pattern on $n ranks: no records an iteration"
    it=$((events / per))
    [ "$it" -ge 1 ] || it=1
    tb=$(trace "$before" before "$n" "$it")
    ta=$(trace "$after" after "$n" "$it")
    records=$(records "$after" "$ta")
    rm -f "$tmp/b.times" "$tmp/a.times"
    i=0
    while [ "$i" -lt "$runs" ]; do
        if [ $((i % 2)) -eq 0 ]; then
            run "$before" "$tb" "$tmp/b"
            run "$after" "$ta" "$tmp/a"
        else
            run "$after" "$ta" "$tmp/a"
            run "$before" "$tb" "$tmp/b"
        fi
        i=$((i + 1))
    done
    # (the per-rank lines' form changed between releases: the predictions decide)
    grep predicted "$tmp/b.out" >"$tmp/b.pred" || true
    grep predicted "$tmp/a.out" >"$tmp/a.pred" || true
    if [ ! -s "$tmp/a.pred" ] || ! cmp -s "$tmp/b.pred" "$tmp/a.pred"; then
        echo "$me: $n ranks: the two builds predict differently:" >&2
        diff "$tmp/b.pred" "$tmp/a.pred" | cut -c1-200 | head -6 >&2
        status=1
    fi
    set -- $(median "$tmp/b.times") $(median "$tmp/a.times")
    # (a run under /usr/bin/time's 10 ms has no rate: "-")
    awk -v n="$n" -v r="$records" -v bm="$1" -v blo="$2" -v bhi="$3" -v am="$4" -v alo="$5" -v ahi="$6" '
        function rate(t) { return t > 0 ? sprintf("%.2f", r / t / 1e6) : "-" }
        BEGIN {
            printf "%-7s %10d  %6.2f (%.2f-%.2f)%6s %8s  %6.2f (%.2f-%.2f)%6s %8s  %s\n",
                n, r, bm, blo, bhi, "", rate(bm), am, alo, ahi, "", rate(am), (bm > 0 && am > 0) ? sprintf("%.2fx", bm / am) : "-" }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
