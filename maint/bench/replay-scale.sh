#!/bin/sh
# Replay speed against the rank count: events per second (CPU time) and instructions per
# event of `vtrace whatif` on traces made by `vtrace synth`, for 1 and 8 scenarios.
#   maint/bench/replay-scale.sh BUILDDIR
# For each rank count N of RANKS, makes `vtrace synth -n N -i I` (halo2d; I chosen for
# about EVENTS records) and runs
#   1 scenario    vtrace whatif -s all=-10% DIR
#   8 scenarios   vtrace whatif -s rank:0=-10% -s rank:1=-10% -s all=-5% ... DIR
# under /usr/bin/time (user + system CPU seconds: wall time is no measure on a shared
# machine), and, with CALLGRIND=1, under valgrind --tool=callgrind on a trace of
# CG_EVENTS records, counting the instructions of vt_replay only (--toggle-collect:
# opening the trace is left out; not vt_replay_observe, which the link-time
# optimisation folds into vt_replay, leaving nothing to count) and of the whole command.
# An event is a trace record, as `vtrace info` counts them (the replay's model events
# are twice as many: a burst and a call per record).
# Environment:
#   RANKS       rank counts (default "2 1024 16384")
#   EVENTS      records of the timed traces (default 10000000)
#   CG_EVENTS   records of the callgrind traces (default 1000000)
#   CALLGRIND   1: also count instructions (default 1 when valgrind is there)
#   KEEP        a directory to keep the traces in (reused when there), default temporary
set -eu
me=replay-scale.sh
build=${1:?usage: replay-scale.sh BUILDDIR}
ranks=${RANKS:-2 1024 16384}
events=${EVENTS:-10000000}
cg_events=${CG_EVENTS:-1000000}
die() {
    echo "$me: $*" >&2
    exit 1
}
build=$(cd "$build" 2>/dev/null && pwd) || die "$1: not a directory (give the build directory)"
tool=$build/vtrace
[ -x "$tool" ] || die "$tool not found: build the tree first (make)"
/usr/bin/time -f '%U %S' true >/dev/null 2>&1 || die "GNU time is needed as /usr/bin/time ('apt-get install time')"
if [ -z "${CALLGRIND:-}" ]; then
    CALLGRIND=0
    command -v valgrind >/dev/null 2>&1 && CALLGRIND=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${KEEP:-$tmp}
mkdir -p "$dir"

# halo2d writes about 9 records per iteration and rank (3 at 2 ranks: one neighbour)
trace() { # N RECORDS -> prints the trace directory
    n=$1
    per=9
    [ "$n" -le 2 ] && per=3
    it=$(($2 / (n * per)))
    [ "$it" -ge 1 ] || it=1
    t=$dir/halo2d-n$n-i$it
    if [ ! -f "$t/vtrace.defs" ]; then
        rm -rf "$t"
        "$tool" synth -q -n "$n" -i "$it" "$t" >/dev/null || die "vtrace synth -n $n -i $it failed"
    fi
    echo "$t"
}
records() { "$tool" info --no-match --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
one="-s all=-10%"
eight="-s rank:0=-10% -s rank:1=-10% -s all=-5% -s fn:MPI_Waitall=-20% -s rank:0=elim -s all=-1us \
-s fn:MPI_Allreduce=-50% -s rank:1=-30%"

printf '%-7s %-5s %11s %8s %10s %12s %12s\n' ranks scen events cpu_s Mevents/s "instr/event" "(whole cmd)"
for n in $ranks; do
    t=$(trace "$n" "$events")
    ev=$(records "$t")
    if [ "$CALLGRIND" = 1 ]; then
        ct=$(trace "$n" "$cg_events")
        cev=$(records "$ct")
    fi
    for sc in 1 8; do
        if [ "$sc" = 1 ]; then args=$one; else args=$eight; fi
        # shellcheck disable=SC2086
        /usr/bin/time -o "$tmp/time" -f '%U %S' "$tool" whatif $args "$t" >/dev/null || die "vtrace whatif failed on $t"
        cpu=$(awk '{print $1 + $2}' "$tmp/time")
        ipe=- whole=-
        if [ "$CALLGRIND" = 1 ]; then
            # shellcheck disable=SC2086
            valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=vt_replay \
                "$tool" whatif $args "$ct" >/dev/null 2>"$tmp/cg.err" || die "callgrind failed on $ct"
            ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg")
            # shellcheck disable=SC2086
            valgrind --tool=callgrind --callgrind-out-file="$tmp/cgw" "$tool" whatif $args "$ct" >/dev/null \
                2>"$tmp/cgw.err" || die "callgrind failed on $ct"
            irw=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cgw")
            ipe=$(awk -v a="$ir" -v b="$cev" 'BEGIN{printf "%.0f", a / b}')
            whole=$(awk -v a="$irw" -v b="$cev" 'BEGIN{printf "%.0f", a / b}')
        fi
        printf '%-7s %-5s %11s %8.2f %10.2f %12s %12s\n' "$n" "$sc" "$ev" "$cpu" \
            "$(awk -v e="$ev" -v c="$cpu" 'BEGIN{print (c > 0) ? e / c / 1e6 : 0}')" "$ipe" "$whole"
    done
done
echo "events: trace records; instr/event: vt_replay's instructions per record on a trace of about"
echo "$cg_events records (whole cmd: with opening the trace); CPU time: user + system"
