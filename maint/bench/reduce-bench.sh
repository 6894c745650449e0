#!/bin/sh
# What `vtrace reduce` keeps of the bundled examples' traces (seed 002, Fig. 6):
#   maint/bench/reduce-bench.sh BUILDDIR [THRESHOLD]
# Runs each example with 2 ranks (full trace), reduces it with the candidate threshold
# THRESHOLD (default 1ms, VTRACE_THRESHOLD's default), checks that the reduced trace
# predicts what the full one does (100 random scenarios, vtrace whatif --json), and
# prints records and bytes before and after, and the point-to-point messages merged.
#   groups    seed 002's group exchange (Fig. 8): 20 iterations x 16 points
#   halo      Irecv/Isend/Waitall + Allreduce each iteration, 200 iterations
#   pipeline  200 items through the ranks
# Environment: MPIEXEC (default mpiexec.mpich: a bare mpiexec may be Open MPI's).
set -eu
me=reduce-bench.sh
build=$(cd "${1:?usage: reduce-bench.sh BUILDDIR [THRESHOLD]}" && pwd)
theta=${2:-1ms}
mpiexec=${MPIEXEC:-mpiexec.mpich}
vt=$build/vtrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-9s %9s %9s %7s %10s %10s %7s %9s %9s %s\n' example events kept kept% bytes bytes_red bytes% messages merged predictions
for ex in "groups 20 16 200" "halo 200 4096 300" "pipeline 200 500"; do
    set -- $ex
    name=$1
    shift
    VTRACE_DIR=$tmp/$name "$mpiexec" -n 2 "$build/examples/$name" "$@" > /dev/null
    "$vt" reduce --threshold "$theta" --json "$tmp/$name" "$tmp/$name.red" > "$tmp/$name.json"
    "$vt" whatif --threshold "$theta" --json --random 100 "$tmp/$name" > "$tmp/a" 2> /dev/null
    "$vt" whatif --json --random 100 "$tmp/$name.red" > "$tmp/b" 2> /dev/null
    same=different
    cmp -s "$tmp/a" "$tmp/b" && same=identical
    python3 - "$tmp/$name.json" "$name" "$same" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ri, ro, bi, bo = s["events"], s["records_out"], s["bytes_in"], s["bytes_out"]
print("%-9s %9d %9d %6.1f%% %10d %10d %6.1f%% %9d %9d %s" % (sys.argv[2], ri, ro, 100.0 * ro / ri, bi, bo,
      100.0 * bo / bi, s["messages"], s["messages_merged"], sys.argv[3]))
PY
done
echo "($me: vtrace reduce --threshold $theta; events: the full trace's model events, a burst and a call per record;"
echo " kept: the reduced trace's records, a START and an END per rank included)"
