#!/bin/sh
# Stored reduced traces (issue 13; doc/format.md "Stored reduced traces"): where reducing
# does not make a trace smaller, the reduced trace is the full trace, marked stored.
#   all   frequent short messages, threshold 1 ns: every call a candidate, every message
#         recorded; the reduced records take more bytes than the full ones, so the
#         fallback fires: DIR/reduced's rank files are DIR/full's, its bytes equal, and
#         `vtrace reduce DIR/full` writes the same bytes; info, dump and whatif read it
#         as the full trace; VTRACE_MODE=reduced leaves the full trace, marked stored.
#         The copy falls back to read and write where the file system clones nothing and
#         refuses copy_file_range (VTRACE_TEST_STORE=readwrite): the same bytes.
#   wins  the same program, threshold 50 ms: most records drop and the fallback does not
#         fire, in both writers.
#   failures: the copy cannot be written (test hook VTRACE_TEST_STORE=nospace): vtrace
#         reduce fails naming the file, the run time warns; both leave the reduced trace,
#         readable. A run killed inside the copy (VTRACE_TEST_STORE=kill, in
#         MPI_Finalize) leaves the reduced trace whole; vtrace reduce killed there has
#         written no reduced rank file (it held them in memory, knowing it would store)
#         and leaves the copy whole beside OUT, and a second run stores.
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/bursts_rt
need_mpiexec
need_built "$prog"
new_work

# run NAME ENV...: 400 iterations of the short-message ring on 2 ranks, with jitter: a
# regular ring's times compress so well on a calm machine that the reduced records, which
# carry more times, may take no more bytes than the full ones
run() {
    name=$1
    shift
    locked env VTRACE_VERBOSE=1 VTRACE_DIR="$work/$name" "$@" "$VTEST_MPIEXEC" -n 2 "$prog" short 400 jitter \
        > "$work/$name.out" 2> "$work/$name.err"
}
bytes() { cat "$1"/vtrace.defs "$1"/rank-*.vte | wc -c; }
kind() { "$vtrace" info "$1" 2> /dev/null | sed -n 's/^kind: *//p'; }
json() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

# --- every message recorded: stored, in both writers -----------------------------------
run all VTRACE_MODE=both VTRACE_THRESHOLD=1ns || { cat "$work/all.err"; fail "all: the run failed"; }
d=$work/all
case `kind "$d/reduced"` in
full,\ stored*) ;;
*) "$vtrace" info "$d/reduced"; fail "all: DIR/reduced is not the full trace, marked stored" ;;
esac
grep -q "reduced holds the full trace, marked stored" "$work/all.err" || fail "all: the run did not say it stored"
for f in "$d"/full/rank-*.vte; do
    cmp -s "$f" "$d/reduced/${f##*/}" || fail "all: ${f##*/} differs from the full trace's"
done
[ "`bytes "$d/full"`" = "`bytes "$d/reduced"`" ] || fail "all: `bytes "$d/reduced"` bytes reduced, `bytes "$d/full"` full"
"$vtrace" reduce --json "$d/full" "$work/all.off" > "$work/all.reduce.json" || fail "all: vtrace reduce"
[ "`json "$work/all.reduce.json" stored`" = 1 ] || { cat "$work/all.reduce.json"; fail "all: vtrace reduce did not store"; }
m=`json "$work/all.reduce.json" messages` k=`json "$work/all.reduce.json" messages_recorded`
[ "$m" -gt 0 ] && [ "$m" = "$k" ] || fail "all: $k of $m messages recorded (the test needs every one)"
rb=`json "$work/all.reduce.json" bytes_reduced` fb=`json "$work/all.reduce.json" bytes_in`
[ "$rb" -gt "$fb" ] || fail "all: the reduced records took $rb bytes, the full trace $fb: nothing to store"
[ "`json "$work/all.reduce.json" bytes_out`" = "$fb" ] || fail "all: vtrace reduce wrote `json "$work/all.reduce.json" bytes_out` bytes, the full trace is $fb"
for f in "$d"/reduced/rank-*.vte "$d/reduced/vtrace.defs"; do
    cmp -s "$f" "$work/all.off/${f##*/}" || fail "all: ${f##*/} differs from vtrace reduce's"
done
"$vtrace" reduce "$d/full" "$work/all.off2/" > "$work/all.reduce.txt" || fail "all: vtrace reduce (text; OUT/)"
[ -f "$work/all.off2/vtrace.defs" ] && [ ! -e "$work/all.off2/all.off2" ] || fail "all: OUT/ was not written as OUT"
grep -q "^bytes .*: stored, the reduced trace took $rb bytes: OUT holds the full trace" "$work/all.reduce.txt" ||
    { cat "$work/all.reduce.txt"; fail "all: the statistics line does not say it stored"; }
"$vtrace" dump "$d/full" > "$work/all.dump.full" && "$vtrace" dump "$d/reduced" > "$work/all.dump.red" &&
    cmp -s "$work/all.dump.full" "$work/all.dump.red" || fail "all: dump of the stored trace differs from the full trace's"
"$vtrace" whatif --json --random 50 --seed 3 "$d/full" > "$work/all.wf" &&
    "$vtrace" whatif --json --random 50 --seed 3 "$d/reduced" > "$work/all.wr" && cmp -s "$work/all.wf" "$work/all.wr" ||
    fail "all: whatif on the stored trace differs from whatif on the full trace"
# the copy without a clone or copy_file_range (VTRACE_TEST_STORE=readwrite: a file system
# that refuses both): the same bytes
VTRACE_TEST_STORE=readwrite "$vtrace" reduce --json "$d/full" "$work/all.rw" > "$work/all.rw.json" &&
    [ "`json "$work/all.rw.json" stored`" = 1 ] || fail "all: vtrace reduce with read and write copies did not store"
for f in "$work"/all.off/rank-*.vte "$work/all.off/vtrace.defs"; do
    cmp -s "$f" "$work/all.rw/${f##*/}" || fail "all: ${f##*/} copied with read and write differs"
done
# a stored trace is a full trace: reducing it again stores it again
"$vtrace" reduce --json "$d/reduced" "$work/all.again" > "$work/all.again.json" &&
    [ "`json "$work/all.again.json" stored`" = 1 ] || fail "all: reducing the stored trace again"

# VTRACE_MODE=reduced decides on this run's bytes, which depend on how its timings
# compress (a calm machine's regular ring compresses the reduced records better): the
# decision must follow the sizes the run reports; and where the reduced rank files take
# more bytes (forced by the hook VTRACE_TEST_STORE=larger), it leaves the full trace,
# marked stored.
run allred VTRACE_MODE=reduced VTRACE_THRESHOLD=1ns || { cat "$work/allred.err"; fail "allred: the run failed"; }
sizes=`sed -n "s/.* took \\([0-9]*\\) bytes and [0-9]* records, the full [a-z']* \\([0-9]*\\) and [0-9]*$/\\1 \\2/p" "$work/allred.err"`
[ -n "$sizes" ] || { cat "$work/allred.err"; fail "allred: the run did not say what its rank files took"; }
set -- $sizes
case `kind "$work/allred"` in
full,\ stored*) [ "$1" -gt "$2" ] || fail "allred: stored, though the reduced rank files took $1 bytes, the full $2" ;;
reduced*) [ "$1" -le "$2" ] || fail "allred: not stored, though the reduced rank files took $1 bytes, the full $2" ;;
*) "$vtrace" info "$work/allred"; fail "allred: VTRACE_MODE=reduced left `kind "$work/allred"`" ;;
esac
run allredl VTRACE_MODE=reduced VTRACE_THRESHOLD=1ns VTRACE_TEST_STORE=larger ||
    { cat "$work/allredl.err"; fail "allredl: the run failed"; }
case `kind "$work/allredl"` in
full,\ stored*) ;;
*) cat "$work/allredl.err"; "$vtrace" info "$work/allredl"
   fail "allredl: VTRACE_MODE=reduced did not leave the full trace, marked stored" ;;
esac
grep -q "holds the full trace, marked stored" "$work/allredl.err" || fail "allredl: the run did not say it stored"
[ ! -e "$work/allredl/full" ] && [ ! -e "$work/allredl/reduced" ] || fail "allredl: DIR/full or DIR/reduced left behind"
"$vtrace" whatif --random 5 "$work/allredl" > /dev/null || fail "allredl: whatif"

# --- most records drop: not stored -----------------------------------------------------
run wins VTRACE_MODE=both VTRACE_THRESHOLD=50ms || { cat "$work/wins.err"; fail "wins: the run failed"; }
d=$work/wins
case `kind "$d/reduced"` in
reduced*) ;;
*) fail "wins: DIR/reduced is `kind "$d/reduced"`" ;;
esac
[ "`bytes "$d/reduced"`" -lt "`bytes "$d/full"`" ] || fail "wins: `bytes "$d/reduced"` bytes reduced, `bytes "$d/full"` full"
"$vtrace" reduce --json "$d/full" "$work/wins.off" > "$work/wins.reduce.json" &&
    [ "`json "$work/wins.reduce.json" stored`" = 0 ] || fail "wins: vtrace reduce stored"
cmp -s "$d/reduced/vtrace.defs" "$work/wins.off/vtrace.defs" || fail "wins: vtrace.defs differs from vtrace reduce's"
run winsred VTRACE_MODE=reduced VTRACE_THRESHOLD=50ms || { cat "$work/winsred.err"; fail "winsred: the run failed"; }
case `kind "$work/winsred"` in
reduced*) ;;
*) fail "winsred: VTRACE_MODE=reduced left `kind "$work/winsred"`" ;;
esac

# --- failures ---------------------------------------------------------------------------
d=$work/all
if VTRACE_TEST_STORE=nospace "$vtrace" reduce "$d/full" "$work/nospace" > "$work/nospace.out" 2> "$work/nospace.err"; then
    fail "nospace: vtrace reduce succeeded without writing its copy"
fi
grep -q "cannot copy .*rank-000000.vte.*No space left on device" "$work/nospace.err" ||
    { cat "$work/nospace.err"; fail "nospace: the error does not name the file and the cause"; }
case `kind "$work/nospace"` in
reduced*) ;;
*) fail "nospace: vtrace reduce's OUT is not the reduced trace it wrote" ;;
esac
ls -d "$work"/nospace.stored-* > /dev/null 2>&1 && fail "nospace: the copy's directory was left behind"
run nospacert VTRACE_MODE=both VTRACE_THRESHOLD=1ns VTRACE_TEST_STORE=nospace ||
    { cat "$work/nospacert.err"; fail "nospacert: the run failed (a trace problem must not fail the program)"; }
grep -q "warning: cannot copy .*No space left on device.*keeps the reduced trace" "$work/nospacert.err" ||
    { cat "$work/nospacert.err"; fail "nospacert: no warning"; }
case `kind "$work/nospacert/reduced"` in
reduced*) ;;
*) fail "nospacert: DIR/reduced is not the reduced trace" ;;
esac
if VTRACE_TEST_STORE=kill "$vtrace" reduce "$d/full" "$work/killed" > /dev/null 2>&1; then
    fail "killed: vtrace reduce was not killed"
fi
ls "$work"/killed/rank-*.vte > /dev/null 2>&1 && fail "killed: vtrace reduce wrote reduced rank files it then stored over"
case `kind "$work"/killed.stored-*` in
full*stored*) ;;
*) fail "killed: the copy beside OUT is not the full trace, whole" ;;
esac
"$vtrace" reduce "$d/full" "$work/killed" > /dev/null 2>&1 || fail "killed: vtrace reduce did not run again"
case `kind "$work/killed"` in
full*stored*) ;;
*) fail "killed: vtrace reduce run again did not store" ;;
esac
run killedrt VTRACE_MODE=both VTRACE_THRESHOLD=1ns VTRACE_TEST_STORE=kill && fail "killedrt: the run was not killed"
"$vtrace" info "$work/killedrt/full" > "$work/killedrt.full.info" 2>&1 && grep -q "^kind: *full$" "$work/killedrt.full.info" ||
    { cat "$work/killedrt.full.info"; fail "killedrt: DIR/full is not readable"; }
case `kind "$work/killedrt/reduced"` in
reduced*) ;;
*) fail "killedrt: DIR/reduced is not the reduced trace, whole" ;;
esac
[ $status = 0 ] && echo "  stored: `bytes "$work/all/reduced"` bytes, as the full trace; not stored: `bytes "$work/wins/reduced"` of `bytes "$work/wins/full"`"
finish
