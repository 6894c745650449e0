#!/bin/sh
# vtrace whatif under mpiexec (vtrace-mpi, the parallel replay) against the serial vtrace
# whatif: the same standard output and error, byte for byte, and the same exit status,
# at P = 2 and 3 processes. The traces: the model test programs' (test/mpi/model_*,
# run here), vtrace synth patterns (eager and synchronous messages, collectives,
# ANY_SOURCE), the reader's synthetic trace with every event a candidate, mc.py's
# random programs (when shared/design/reference/mc.py is there), and an incomplete
# trace (test/crash/faults killed). VTRACE_PAR_STATS shows that the parallel replay
# ran (rounds of messages), or that process 0 replayed alone where it must (scenario
# errors); reduced traces replay in parallel too. Last, vtrace itself is not linked
# with MPI.
# Environment: as par_setup.sh says.
set -u
NAME=whatif_par
. "$(dirname "$0")/par_setup.sh"

# same HOW TRACE ARGS...: serial and P = 2, 3 give the same output; HOW is "par" (the
# parallel replay must have run) or "alone" (process 0 replays alone)
same() {
    how=$1 trace=$2
    shift 2
    "$VTRACE" whatif "$@" "$trace" > "$work/s.out" 2> "$work/s.err" < /dev/null
    src=$?
    for P in 2 3; do
        VTRACE_PAR_STATS=1 $lock timeout -k 10 120 "$MPIEXEC" -n $P "$VTRACE" whatif "$@" "$trace" \
            > "$work/p.out" 2> "$work/p.all" < /dev/null
        prc=$?
        runs=$((runs + 1))
        grep -v -e '^vtrace: parallel replay: ' -e 'does not run in parallel: process 0 runs it alone$' \
            "$work/p.all" > "$work/p.err"
        stats=$(grep '^vtrace: parallel replay: ' "$work/p.all")
        if [ $prc -ne $src ] || ! cmp -s "$work/s.out" "$work/p.out" || ! cmp -s "$work/s.err" "$work/p.err"; then
            fail "P=$P whatif $* $trace: exit $prc (serial $src), differences:"
            diff "$work/s.out" "$work/p.out" | head -5
            diff "$work/s.err" "$work/p.err" | head -5
            continue
        fi
        case $how:$stats in
          par:*" $P processes, "*" rounds, "*) case $stats in *" 0 rounds"*) fail "P=$P $trace: no round ($stats)" ;; esac ;;
          alone:*"replayed by process 0 alone"*) ;;
          alone:) [ $src -ne 0 ] || fail "P=$P $trace: no statistics" ;;   # (an error prints none)
          *) fail "P=$P whatif $* $trace: expected '$how', got '$stats'" ;;
        esac
    done
}

# The model test programs (test/mpi/testlist's arguments), traced in full.
for prog in "model_halo 30 4096 300" "model_groups 10 8 200" "model_pipeline 40 500"; do
    set -- $prog
    name=$1
    shift
    [ -x test/mpi/$name ] || { fail "test/mpi/$name not built"; continue; }
    $lock env VTRACE_MODE=full VTRACE_DIR="$work/$name" timeout -k 10 120 "$MPIEXEC" -n 2 test/mpi/$name "$@" \
        > "$work/$name.run" 2>&1 < /dev/null || { fail "$name did not run:"; tail -5 "$work/$name.run"; continue; }
    same par "$work/$name" --json -s '' -s 'all=-50%' -s 'rank:1=elim' -s 'fn:MPI_Recv=-20%' --threshold 50us
    same par "$work/$name" -r 20 --seed 7 --ranks --threshold 50us
done

# vtrace synth: halo with collectives, a pipeline and master-worker with synchronous
# (rendezvous-sized) messages, 5 to 7 ranks: blocks of 2-3 ranks per process.
for spec in "halo2d -n 7 -i 30 --allreduce-every 3" "pipeline -n 5 -i 30 --bytes 100000" \
            "master-worker -n 6 -i 20 --bytes 50000" "halo1d -n 5 -i 40 --bytes 20000"; do
    d="$work/synth-$(echo "$spec" | cut -d' ' -f1)"
    "$VTRACE" synth -q -p $spec "$d" > /dev/null || { fail "vtrace synth -p $spec"; continue; }
    same par "$d" -r 10 -s 'rank:1=-30%' -s 'fn:MPI_Wait=elim' -s 'all=-50%' --ranks
done

# At 4096 ranks and more the serial replay wakes a blocked rank when the rank it waits
# for moves (replay_sched.c): the parallel replay's order is another, its predictions
# the same. Eager and synchronous messages, a collective.
for spec in "halo2d -n 4096 -i 3 --allreduce-every 2" "halo1d -n 4096 -i 3 --bytes 20000" \
            "master-worker -n 4096 -i 2 --bytes 50000"; do
    d="$work/wide-$(echo "$spec" | cut -d' ' -f1)"
    "$VTRACE" synth -q -p $spec "$d" > /dev/null || { fail "vtrace synth -p $spec"; continue; }
    same par "$d" -s 'all=-50%' -s 'fn:MPI_Waitall=elim'
done

# The reader's synthetic trace, every event a candidate (whatif_cli.sh's golden scenarios).
if [ -x test/reader/synth ]; then
    test/reader/synth "$work/rsynth" > /dev/null || fail "test/reader/synth"
    same par "$work/rsynth" --json --threshold 1ns -s '' -s '0:3=elim' -s '1:9=-50%' -s 'fn:MPI_Waitall=elim' \
        -s 'rank:2=-10ns' -s 'all=elim'
else
    fail "test/reader/synth not built"
fi

# mc.py's random programs: probes, persistent and synchronous sends, wildcards, collectives.
VTRACE_SHARED=${VTRACE_SHARED:-$top_srcdir/../shared}
if [ -f "$VTRACE_SHARED/design/reference/mc.py" ] && command -v "$PYTHON" > /dev/null 2>&1; then
    VTRACE_SHARED=$VTRACE_SHARED "$PYTHON" "$top_srcdir/test/model/mc_export.py" --out "$work/mc" --seeds 1-4 \
        --variants default,skew --nscen 12 > "$work/mc.cases" || fail "mc_export.py"
    while read -r d; do
        same par "$d/trace" --json --scenario-file "$d/scenarios.txt"
    done < "$work/mc.cases"
else
    echo "(no $VTRACE_SHARED/design/reference/mc.py: mc.py's traces skipped)"
fi

# An incomplete trace (rank 1 killed): the ranks stop at the cut, in parallel too.
if [ -x test/crash/faults ]; then
    $lock env VTRACE_MODE=full VTRACE_DIR="$work/crash" VTRACE_BUFFER=64k timeout -k 10 120 "$MPIEXEC" -n 2 \
        test/crash/faults term 1000 1 0 > "$work/crash.run" 2>&1 < /dev/null
    if [ -f "$work/crash/vtrace.defs" ]; then
        same par "$work/crash" -s 'all=-10%' -s ''
        grep -q "incomplete" "$work/s.err" || fail "the killed run's trace is not incomplete"
    else
        fail "test/crash/faults wrote no trace"
    fi
fi

# Process 0 alone: scenario errors (the serial messages); a reduced trace in parallel.
h="$work/synth-halo2d"
same alone "$h" -s '9:1=elim'
same alone "$h" -s '0:999999=elim'
same alone "$h" -s '0:2=elim' --threshold 1s
"$VTRACE" synth -q -p halo1d -n 4 -i 20 -m reduced "$work/reduced" > /dev/null || fail "vtrace synth -m reduced"
same par "$work/reduced" -s 'all=-20%' --ranks
grep -q "rank ends" "$work/p.out" || fail "the reduced trace's answer is missing"

# --parallel under one process runs the parallel replay too.
$lock timeout -k 10 60 "$MPIEXEC" -n 1 "$VTRACE" --parallel whatif -s 'all=-50%' "$h" > "$work/p1.out" 2>&1 < /dev/null
"$VTRACE" whatif -s 'all=-50%' "$h" > "$work/s1.out" 2>&1 < /dev/null
cmp -s "$work/s1.out" "$work/p1.out" || fail "--parallel with one process differs"

# vtrace needs no MPI at run time: only vtrace-mpi is linked with it.
if command -v readelf > /dev/null 2>&1; then
    readelf -d "$VTRACE" | grep NEEDED | grep -qi mpi && fail "vtrace is linked with MPI"
    readelf -d "$(dirname "$VTRACE")/vtrace-mpi" | grep NEEDED | grep -qi mpi || fail "vtrace-mpi is not linked with MPI"
fi

echo "$runs parallel runs compared, $fails failures"
[ $fails -eq 0 ]
