#!/bin/sh
# vtrace reduce, patterns and critical-path under mpiexec (vtrace-mpi, the parallel
# replay with an observer), whatif and patterns on reduced traces, against the serial commands:
# the same standard output and error, the same exit status and, for reduce, the same
# reduced trace byte for byte, at P = 2 and 3. The traces: the model test programs',
# the examples', vtrace synth patterns, mc.py's random programs (when
# shared/design/reference/mc.py is there), an incomplete trace and reduced ones.
# VTRACE_PAR_STATS shows that the parallel replay ran (rounds), or that process 0 ran
# alone where it must (--check, commands that are not parallel), which it then says on
# stderr. Incomplete reduced traces (killed runs) replay in parallel too, and reduce
# --polys writes the same file. Failures: a damaged rank file (the serial error, from
# process 0) and an OUT that VTRACE_OVERWRITE=refuse keeps.
# Environment: as par_setup.sh says.
set -u
NAME=analyses_par
. "$(dirname "$0")/par_setup.sh"

# same HOW CMD TRACE ARGS...: serial and P = 2, 3 give the same output (and for reduce
# the same OUT); HOW is "par" (the parallel replay ran) or "alone" (process 0 alone,
# which it says)
same() {
    how=$1 cmd=$2 trace=$3
    shift 3
    sout= pout=
    if [ "$cmd" = reduce ]; then
        rm -rf "$work/s.red" "$work/p.red"
        sout=$work/s.red pout=$work/p.red
    fi
    rm -f "$work/polys" "$work/polys.s"
    "$VTRACE" $cmd "$@" "$trace" $sout > "$work/s.out" 2> "$work/s.err" < /dev/null
    src=$?
    [ ! -f "$work/polys" ] || mv "$work/polys" "$work/polys.s"
    for P in 2 3; do
        [ -z "$pout" ] || rm -rf "$pout"
        rm -f "$work/polys"
        VTRACE_PAR_STATS=1 $lock timeout -k 10 120 "$MPIEXEC" -n $P "$VTRACE" $cmd "$@" "$trace" $pout \
            > "$work/p.out" 2> "$work/p.all" < /dev/null
        prc=$?
        runs=$((runs + 1))
        grep -v -e '^vtrace: parallel replay: ' -e 'does not run in parallel: process 0 runs it alone$' \
            "$work/p.all" > "$work/p.err"
        stats=$(grep -e '^vtrace: parallel replay: ' -e 'does not run in parallel' "$work/p.all")
        if [ $prc -ne $src ] || ! cmp -s "$work/s.out" "$work/p.out" || ! cmp -s "$work/s.err" "$work/p.err"; then
            fail "P=$P $cmd $* $trace: exit $prc (serial $src), differences:"
            diff "$work/s.out" "$work/p.out" | head -5
            diff "$work/s.err" "$work/p.err" | head -5
            continue
        fi
        # (reduce --polys "$work/polys": the same polynomial file)
        if [ -f "$work/polys.s" ] && ! cmp -s "$work/polys.s" "$work/polys"; then
            fail "P=$P $cmd $* $trace: the polynomial files differ:"
            diff "$work/polys.s" "$work/polys" | head -3
            continue
        fi
        if [ -n "$pout" ] && [ $src -eq 0 ] && ! diff -r "$sout" "$pout" > /dev/null; then
            fail "P=$P $cmd $* $trace: the reduced traces differ:"
            diff -r "$sout" "$pout" | head -3
            continue
        fi
        case $how:$stats in
          par:*" $P processes, "*" rounds, "*) case $stats in *" 0 rounds"*) fail "P=$P $trace: no round ($stats)" ;; esac ;;
          par:) [ $src -ne 0 ] || fail "P=$P $cmd $trace: no statistics" ;;   # (an error prints none)
          alone:*"does not run in parallel"*) ;;
          *) fail "P=$P $cmd $* $trace: expected '$how', got '$stats'" ;;
        esac
    done
}

# both TRACE: reduce (default, --no-compress --no-store: raw blocks are larger than the
# full trace, which would be stored), patterns (text, JSON)
# and critical-path (text, JSON with a scenario)
both() {
    same par reduce "$1"
    same par reduce "$1" --no-compress --candidates all --threshold 20us --no-store
    same par patterns "$1"
    same par patterns "$1" --json
    same par critical-path "$1" --full
    same par critical-path "$1" --json --top 50 -s 'all=-30%'
}

# The model test programs (test/mpi/testlist's arguments) and the examples, traced in full.
# Their reduced traces' critical-path: in the halos (model_halo, examples/halo, synth
# halo1d and halo2d, rboth, mc.py's) the merged stretch before a sender's next record
# can come in its receive's round or later, and whether it existed at the receive
# depended on the order of the steps; with it as a possible predecessor (the rule
# before critpath_priv.h's NF_GAP) 22 runs at P = 2 and 3 differed from serial.
for prog in "test/mpi/model_halo 30 4096 300" "test/mpi/model_groups 10 8 200" "test/mpi/model_pipeline 40 500" \
            "examples/halo" "examples/groups" "examples/pipeline"; do
    set -- $prog
    name=$(echo "$1" | tr / _)
    exe=$1
    shift
    [ -x "$exe" ] || { fail "$exe not built"; continue; }
    $lock env VTRACE_MODE=full VTRACE_DIR="$work/$name" timeout -k 10 120 "$MPIEXEC" -n 2 "$exe" "$@" \
        > "$work/$name.run" 2>&1 < /dev/null || { fail "$exe did not run:"; tail -5 "$work/$name.run"; continue; }
    both "$work/$name"
    # its reduced trace: whatif replays it in parallel too
    "$VTRACE" reduce -q "$work/$name" "$work/$name.red" > /dev/null || { fail "reduce $name"; continue; }
    same par whatif "$work/$name.red" --json -s '' -s 'all=-50%' -s 'rank:1=elim' --threshold 50us
    same par patterns "$work/$name.red"
    same par patterns "$work/$name.red" --json
    same par critical-path "$work/$name.red" --full
    same par critical-path "$work/$name.red" --json -s 'all=-30%'
done

# vtrace synth: halo with collectives, a pipeline and master-worker with synchronous
# (rendezvous-sized) messages, allreduce, 5 to 7 ranks: blocks of 2-3 ranks per process.
for spec in "halo2d -n 7 -i 30 --allreduce-every 3" "pipeline -n 5 -i 30 --bytes 100000" \
            "master-worker -n 6 -i 20 --bytes 50000" "halo1d -n 5 -i 40 --bytes 20000 --slow-rank 2" \
            "allreduce -n 7 -i 25"; do
    d="$work/synth-$(echo "$spec" | cut -d' ' -f1)"
    "$VTRACE" synth -q -p $spec "$d" > /dev/null || { fail "vtrace synth -p $spec"; continue; }
    both "$d"
    # made reduced by vtrace reduce: critical-path's cross-process edges into gaps
    "$VTRACE" reduce -q "$d" "$d.red" > /dev/null || { fail "reduce $d"; continue; }
    same par critical-path "$d.red" --full
done

# The reader's synthetic trace, every event a candidate.
if [ -x test/reader/synth ]; then
    test/reader/synth "$work/rsynth" > /dev/null || fail "test/reader/synth"
    same par reduce "$work/rsynth" --threshold 1ns
    same par patterns "$work/rsynth"
    same par critical-path "$work/rsynth" --threshold 1ns --full
fi

# mc.py's random programs: probes, persistent and synchronous sends, wildcards, collectives.
VTRACE_SHARED=${VTRACE_SHARED:-$top_srcdir/../shared}
if [ -f "$VTRACE_SHARED/design/reference/mc.py" ] && command -v "$PYTHON" > /dev/null 2>&1; then
    VTRACE_SHARED=$VTRACE_SHARED "$PYTHON" "$top_srcdir/test/model/mc_export.py" --out "$work/mc" --seeds 1-3 \
        --variants default,skew --nscen 2 > "$work/mc.cases" || fail "mc_export.py"
    while read -r d; do
        same par reduce "$d/trace"
        same par patterns "$d/trace"
        same par critical-path "$d/trace" --full
        "$VTRACE" reduce -q "$d/trace" "$d/red" > /dev/null 2>&1 &&
            same par whatif "$d/red" --json --scenario-file "$d/scenarios.txt" &&
            same par patterns "$d/red" --json &&
            same par critical-path "$d/red" --full
    done < "$work/mc.cases"
else
    echo "(no $VTRACE_SHARED/design/reference/mc.py: mc.py's traces skipped)"
fi

h="$work/synth-halo2d"
# incomplete_reduced TRACE: an incomplete reduced trace, replayed in parallel
incomplete_reduced() {
    "$VTRACE" info "$1" 2> /dev/null | grep -q '^flags: *incomplete' || fail "$1 is not incomplete"
    same par whatif "$1" -s 'all=-10%' -s 'rank:1=elim' -s ''
    same par whatif "$1" --json -s 'all=-50%' --ranks
    same par critical-path "$1" --full
    same par critical-path "$1" --json -s 'all=-30%'
    same par patterns "$1"
}
# An incomplete trace: reduce replays it in parallel up to the cut; patterns keeps it
# in memory, on process 0 alone.
if [ -x test/crash/faults ]; then
    $lock env VTRACE_MODE=full VTRACE_DIR="$work/crash" VTRACE_BUFFER=64k timeout -k 10 120 "$MPIEXEC" -n 2 \
        test/crash/faults term 1000 1 0 > "$work/crash.run" 2>&1 < /dev/null
    if [ -f "$work/crash/vtrace.defs" ]; then
        same par reduce "$work/crash"
        same par critical-path "$work/crash"
        same alone patterns "$work/crash"
        # its reduced trace (vtrace reduce): rank 0 flushed nothing, its file is a header
        "$VTRACE" reduce -q "$work/crash" "$work/crash.red" > /dev/null 2>&1 || fail "reduce of the killed run"
        incomplete_reduced "$work/crash.red"
    else
        fail "test/crash/faults wrote no trace"
    fi
    # Rank 1 killed (SIGKILL) after a pause in which a flush timer wrote both ranks'
    # blocks, traced in both modes: the reduced trace holds what was decided by then
    # (its last blocks provisional), and whatif, critical-path and patterns replay it in
    # parallel up to where a rank waits for what the trace lacks, as the serial replay.
    $lock env VTRACE_MODE=both VTRACE_DIR="$work/kboth" VTRACE_BUFFER=32M VTRACE_FLUSH_INTERVAL=100ms \
        timeout -k 10 120 "$MPIEXEC" -n 2 test/crash/faults kill 1000 1 600 > "$work/kboth.run" 2>&1 < /dev/null
    if [ -f "$work/kboth/reduced/vtrace.defs" ]; then
        incomplete_reduced "$work/kboth/reduced"
        "$VTRACE" whatif "$work/kboth/reduced" 2>&1 | grep -q "the replay stopped where" ||
            fail "the killed run's reduced trace is not cut where a rank waits"
        same par reduce "$work/kboth/full"
        same alone reduce "$work/kboth/full" --check -s 'all=-10%' -s 'rank:0=elim' --polys "$work/polys"
        same par reduce "$work/kboth/full" --polys "$work/polys"
    else
        fail "test/crash/faults (both, SIGKILL) wrote no trace"
    fi
fi

# critical-path's distributed walk with rank windows of 2 events (look-ups of the
# predecessors on each process's chains on disk) and sorted runs of 3 candidates (the
# runs merged on each process, then on process 0 with the others' first ones): the same
# path, slack and candidates; --top 2 cuts each process's candidates at 2.
VTRACE_TEST_CP_WINDOW=2 VTRACE_TEST_CP_RUN=3
export VTRACE_TEST_CP_WINDOW VTRACE_TEST_CP_RUN
same par critical-path "$work/synth-allreduce" --full
same par critical-path "$work/synth-halo1d" --json -s 'all=-30%'
same par critical-path "$work/synth-master-worker" --top 2
[ -d "$work/rsynth" ] && same par critical-path "$work/rsynth" --threshold 1ns --top 3
unset VTRACE_TEST_CP_WINDOW VTRACE_TEST_CP_RUN
# and rounds cut short (a forwarding observer's limit, which critical-path no longer has)
VTRACE_TEST_PAR_HELD=300
export VTRACE_TEST_PAR_HELD
same par critical-path "$work/synth-halo2d" --top 4 -s 'fn:MPI_Allreduce=-50%'
unset VTRACE_TEST_PAR_HELD

# Process 0 alone, and says so: reduce --check, commands that are not parallel; reduced
# traces run in parallel (whatif, patterns, critical-path), and reduce --polys.
"$VTRACE" synth -q -p halo1d -n 5 -i 20 -m both "$work/rboth" > /dev/null || fail "vtrace synth -m both"
# (halo1d's reduced records take more bytes than its full ones, so synth stores the full
# trace as rboth/reduced, doc/format.md: the reduced records for these commands)
"$VTRACE" reduce -q --no-store "$work/rboth/full" "$work/rboth/red" > /dev/null || fail "vtrace reduce --no-store"
same par patterns "$work/rboth/red"
"$VTRACE" synth -q -p master-worker -n 6 -i 20 --bytes 50000 -m both "$work/rmw" > /dev/null || fail "synth -m both"
same par patterns "$work/rmw/reduced"   # (synchronous messages: their posts go to the senders' processes)
same par whatif "$work/rboth/red" -s 'all=-20%' --ranks
same alone reduce "$h" --check -s 'all=-10%'
same par critical-path "$work/rboth/red" --full
same par critical-path "$work/rboth/reduced" --full   # (stored: a full trace)
same par critical-path "$work/rmw/reduced" --json
same par reduce "$h" --polys "$work/polys"   # (rank by rank: the same file)
same par reduce "$work/synth-master-worker" --polys "$work/polys" --no-compress
same alone domino "$h"
# the reduced trace vtrace reduce writes in parallel is the run time's (as in serial)
rm -rf "$work/rpar"
$lock timeout -k 10 120 "$MPIEXEC" -n 3 "$VTRACE" reduce -q --no-store "$work/rboth/full" "$work/rpar" > /dev/null 2>&1 \
    || fail "parallel reduce of the synth trace"
diff -r "$work/rboth/red" "$work/rpar" > /dev/null || fail "parallel reduce differs from the serial one"
rm -rf "$work/rpar"
$lock timeout -k 10 120 "$MPIEXEC" -n 3 "$VTRACE" reduce -q "$work/rboth/full" "$work/rpar" > /dev/null 2>&1 \
    || fail "parallel reduce of the synth trace (stored)"
diff -r "$work/rboth/reduced" "$work/rpar" > /dev/null || fail "parallel reduce differs from synth -m both's (stored)"

# Failures: a damaged block (the serial error, whichever process reads it) ...
cp -r "$h" "$work/bad"
f="$work/bad/rank-000005.vte"
size=$(wc -c < "$f")
printf '\377\377\377\377' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
"$VTRACE" reduce "$work/bad" "$work/bad.red" > /dev/null 2>&1 && fail "the damaged trace reduces without error"
same par reduce "$work/bad"
same par patterns "$work/bad"
same par critical-path "$work/bad"
grep -q "rank-000005.vte" "$work/p.err" || fail "the damaged trace's error does not name its file"
# ... the same in a reduced trace (patterns reads it in parallel) ...
cp -r "$work/rmw/reduced" "$work/badred"
f="$work/badred/rank-000004.vte"
size=$(wc -c < "$f")
printf '\377\377\377\377' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
same par patterns "$work/badred"
grep -q "rank-000004.vte" "$work/p.err" || fail "the damaged reduced trace's error does not name its file"
# ... no temporary file for critical-path's graph (the serial error, from process 0) ...
TMPDIR="$work/no-such-dir" same par critical-path "$h"
grep -q "cannot create a temporary file in $work/no-such-dir" "$work/p.err" ||
    fail "critical-path without a temporary directory: $(cat "$work/p.err")"
# ... and an OUT that VTRACE_OVERWRITE=refuse keeps (said by process 0, once).
mkdir -p "$work/kept" && : > "$work/kept/vtrace.defs"
VTRACE_OVERWRITE=refuse "$VTRACE" reduce "$h" "$work/kept" > "$work/s.out" 2> "$work/s.err"
src=$?
VTRACE_OVERWRITE=refuse $lock timeout -k 10 60 "$MPIEXEC" -n 2 "$VTRACE" reduce "$h" "$work/kept" \
    > "$work/p.out" 2> "$work/p.err"
prc=$?
[ $src -ne 0 ] && [ $prc -eq $src ] && cmp -s "$work/s.err" "$work/p.err" ||
    fail "VTRACE_OVERWRITE=refuse: exit $prc (serial $src): $(cat "$work/p.err")"

echo "$runs parallel runs compared, $fails failures"
[ $fails -eq 0 ]
