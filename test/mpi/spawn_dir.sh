#!/bin/sh
# Processes started by MPI_Comm_spawn under tracing (test/mpi/spawn_world.c): they inherit
# the parents' VTRACE_DIR and write their world's trace into DIR/spawn-HOST-PID, never
# over the parents' rank files nor moving DIR aside; MPI_Comm_disconnect of a
# communicator no traced call made (MPI_Comm_get_parent's) works. In full, reduced and
# both modes the output is the untraced run's. Without a message between the worlds
# both traces read (vtrace info) and the children's holds their collectives; with one,
# the run still ends as untraced (a message to another world has no peer in the trace:
# the reader says so, naming file and offset). Skips (77) when the untraced run cannot
# spawn (MPICH 4.0.2's hydra on some machines).
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/spawn_world
need_mpiexec
need_built "$prog"
new_work
run() { # run NAME ARG [VAR=value...]: output sorted in NAME.out, status in rc
    name=$1 arg=$2
    shift 2
    locked env "$@" VTRACE_DIR="$work/$name" \
        $VTEST_MPIEXEC -n 2 "$prog" "$prog" "$arg" > "$work/$name.raw" 2> "$work/$name.err"
    rc=$?
    grep -E '^(parent|child) ' "$work/$name.raw" | sort > "$work/$name.out"
}
for arg in quiet msg; do
    run plain_$arg $arg VTRACE_MODE=off
    if [ "$rc" != 0 ]; then
        cat "$work/plain_$arg.raw" "$work/plain_$arg.err" | tail -5
        echo "$me: the untraced run cannot spawn here: skipping"
        exit 77
    fi
    [ "$(wc -l < "$work/plain_$arg.out")" = 4 ] || fail "untraced $arg: not 4 lines"
    for mode in full reduced both; do
        name=${mode}_$arg
        run "$name" $arg VTRACE_MODE=$mode
        [ "$rc" = 0 ] || { tail -5 "$work/$name.err"; fail "$name: exit status $rc"; continue; }
        cmp -s "$work/plain_$arg.out" "$work/$name.out" || fail "$name: the output differs from the untraced run's"
        ls -d "$work/$name".old-* > /dev/null 2>&1 && fail "$name: the children moved the parents' trace aside"
        case $mode in both) sub=full ;; *) sub= ;; esac   # (reduced: the reduced trace goes up into DIR at the end)
        parent=$work/$name${sub:+/$sub}
        n=$(ls -d "$work/$name"/spawn-* 2> /dev/null | wc -l)
        [ "$n" = 1 ] || { fail "$name: $n spawn-* directories in $work/$name"; continue; }
        child=$(ls -d "$work/$name"/spawn-*)${sub:+/$sub}
        for d in "$parent" "$child"; do
            [ -s "$d/rank-000000.vte" ] && [ -s "$d/rank-000001.vte" ] || fail "$name: $d lacks rank files"
        done
        [ "$arg" = quiet ] || continue
        for d in "$parent" "$child"; do
            "$vtrace" info "$d" > "$d.info" 2>&1 || fail "$name: vtrace info $d: $(tail -1 "$d.info")"
            grep -q '^ranks: *2' "$d.info" || fail "$name: $d: not 2 ranks"
        done
        [ "$mode" = reduced ] && continue
        "$vtrace" dump "$child" > "$work/$name.child.dump" 2>&1 || fail "$name: vtrace dump $child"
        [ "$(grep -c MPI_Allreduce "$work/$name.child.dump")" = 6 ] || fail "$name: the children's trace lacks their 6 Allreduce"
        "$vtrace" dump "$parent" > "$work/$name.parent.dump" 2>&1 || fail "$name: vtrace dump $parent"
        [ "$(grep -c MPI_Comm_spawn "$work/$name.parent.dump")" = 2 ] || fail "$name: the parents' trace lacks MPI_Comm_spawn"
    done
done
finish
