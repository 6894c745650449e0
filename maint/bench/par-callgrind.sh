#!/bin/sh
# The parallel replay's cost by callgrind (instruction counts: exact on a loaded
# machine): whatif, reduce, patterns and critical-path on one synthetic trace, and
# whatif, patterns and critical-path on its reduced trace, serial (vtrace) and at P processes (vtrace-mpi under
# mpiexec, each process under valgrind). Per command and P: the instructions of the
# replay (replay_run, inclusive), of its stepping (vt__rp_step or _rstep, inclusive:
# the observer too), of its rounds (MPI, waiting included: MPICH polls) and of the
# whole command, each the largest over the processes; and the bytes sent per model event (VTRACE_PAR_STATS).
# Usage: maint/bench/par-callgrind.sh BUILD [RANKS] [ITERATIONS] [P]
# (CMDS: the commands' labels to run, default all)
#   e.g. maint/bench/par-callgrind.sh _build 256 100 2
set -eu
build=$(cd "${1:?usage: par-callgrind.sh BUILD [RANKS] [ITERATIONS] [P]}" && pwd)
ranks=${2:-256} iters=${3:-100} P=${4:-2}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/vtrace" synth -q -p halo2d -n "$ranks" -i "$iters" --allreduce-every 10 "$tmp/t" > "$tmp/synth.out"
echo "trace: $(cat "$tmp/synth.out")"

# incl FILE FUNCTION: FUNCTION's inclusive instructions in callgrind output FILE (0: none)
incl() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2> /dev/null |
        awk -v f="$2" '{ n = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", n); sub(/ .*/, "", n); sub(/^.*:/, "", n)
                        if (n == f) { gsub(",", "", $1); print $1; exit } }' | grep . || echo 0
}
total() { callgrind_annotate "$1" 2> /dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'; }
# max over files of a measure
maxof() {
    what=$1 fn=$2
    shift 2
    m=0
    for f in "$@"; do
        if [ "$what" = total ]; then v=$(total "$f"); else v=$(incl "$f" "$fn"); fi
        [ "$v" -gt "$m" ] && m=$v
    done
    echo "$m"
}

# columns: replay_run; of it the stepping (vt__rp_step), the rounds (exchange and sum:
# MPI and its waiting, busy) and in them what the others sent taken in (deliver); the
# whole program; bytes sent per model event
row() { printf '%-13s %2s %12s %12s %12s %12s %12s %8s\n' "$@"; }
row command P replay_run step rounds deliver program B/event
"$build/vtrace" reduce -q "$tmp/t" "$tmp/r" > /dev/null
for cmd in ${CMDS:-whatif reduce patterns critical-path whatif-reduced patterns-reduced critical-path-reduced}; do
    trace=$tmp/t label=$cmd
    case $cmd in
      whatif) args="-s all=-10%" ;;
      reduce) args="--no-write" ;;
      patterns | critical-path) args="" ;;
      whatif-reduced) cmd=whatif args="-s all=-10%" trace=$tmp/r ;;
      patterns-reduced) cmd=patterns args="" trace=$tmp/r ;;
      critical-path-reduced) cmd=critical-path args="" trace=$tmp/r ;;
    esac
    valgrind --tool=callgrind --callgrind-out-file="$tmp/s.cg" "$build/vtrace" $cmd $args "$trace" \
        > /dev/null 2> "$tmp/s.err"
    step=$(( $(maxof incl vt__rp_step "$tmp/s.cg") + $(maxof incl vt__rp_rstep "$tmp/s.cg") ))
    row $label 1 "$(maxof incl replay_run "$tmp/s.cg")" "$step" 0 0 \
        "$(maxof total - "$tmp/s.cg")" -
    rm -f "$tmp"/p.cg.*
    VTRACE_PAR_STATS=1 "$MPIEXEC" -n "$P" valgrind --tool=callgrind --callgrind-out-file="$tmp/p.cg.%p" \
        "$build/vtrace-mpi" $cmd $args "$trace" > /dev/null 2> "$tmp/p.err"
    bpe=$(sed -n 's/.*(\([0-9.]*\) bytes per event).*/\1/p' "$tmp/p.err")
    rounds=$(( $(maxof incl exchange "$tmp"/p.cg.*) + $(maxof incl sum "$tmp"/p.cg.*) ))
    step=$(( $(maxof incl vt__rp_step "$tmp"/p.cg.*) + $(maxof incl vt__rp_rstep "$tmp"/p.cg.*) ))
    row $label "$P" "$(maxof incl replay_run "$tmp"/p.cg.*)" "$step" "$rounds" \
        "$(maxof incl deliver "$tmp"/p.cg.*)" "$(maxof total - "$tmp"/p.cg.*)" "${bpe:-?}"
done
