#!/bin/sh
# VTRACE_OVERWRITE (issue 16): what a writer does with a directory that holds a trace.
#   1. aside (the default): a second run into VTRACE_DIR moves the first run's trace to
#      DIR.old-YYYYMMDD-HHMMSS (both readable, the old one unchanged) and says so; the
#      same for DIR/full and DIR/reduced of VTRACE_MODE=both under VTRACE_MODE=reduced;
#   2. replace writes over it (no .old directory); refuse leaves the run untraced with a
#      warning, the old trace unchanged, the program's output and status as untraced;
#   3. an invalid value ends the run in MPI_Init with a message;
#   4. vtrace reduce and export --format=otf2: the same for their OUT (refuse: exit 1).
# Environment: VTEST_MPIEXEC, VTEST_VTRACE.
. "$(dirname "$0")/common.sh"
fail_stops=yes
prog=$builddir/test/crash/faults
need_mpiexec
need_built "$prog"
new_work
run() { # run NAME [VAR=VALUE...]: the program traced into $work/t, output in $work/NAME.{out,err}
    name=$1
    shift
    locked env VTRACE_DIR="$work/t" "$@" "$VTEST_MPIEXEC" -n 2 "$prog" none 50 \
        > "$work/$name.out" 2> "$work/$name.err"
}
olds() { ls -d "$work"/t.old-* 2> /dev/null | wc -l; }

run first || fail "the first run failed: $(tail -2 "$work/first.err")"
sum1=$(cksum < "$work/t/vtrace.defs")
run second || fail "the second run failed: $(tail -2 "$work/second.err")"
[ "$(olds)" = 1 ] || fail "aside: $(olds) old directories, expected 1"
old=$(ls -d "$work"/t.old-*)
case $old in *.old-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]) ;;
    *) fail "aside: the old trace is in $old, expected t.old-YYYYMMDD-HHMMSS" ;; esac
grep -q "held a trace: it is now $old" "$work/second.err" || fail "aside: no warning naming $old"
[ "$(cksum < "$old/vtrace.defs")" = "$sum1" ] || fail "aside: the old trace changed"
"$vtrace" info "$old" > /dev/null && "$vtrace" info "$work/t" > /dev/null || fail "aside: a trace does not read"

run replace VTRACE_OVERWRITE=replace || fail "replace: the run failed"
[ "$(olds)" = 1 ] || fail "replace: a directory was moved aside"
"$vtrace" info "$work/t" > /dev/null || fail "replace: the trace does not read"
sum2=$(cksum < "$work/t/vtrace.defs")

run plain VTRACE_MODE=off || fail "the untraced run failed"
run refuse VTRACE_OVERWRITE=refuse || fail "refuse: the run failed (it must run untraced)"
cmp -s "$work/plain.out" "$work/refuse.out" || fail "refuse: the output differs from the untraced run's"
grep -q "holds a trace already and VTRACE_OVERWRITE=refuse: tracing is off" "$work/refuse.err" ||
    fail "refuse: no warning: $(cat "$work/refuse.err")"
[ "$(cksum < "$work/t/vtrace.defs")" = "$sum2" ] && [ "$(olds)" = 1 ] || fail "refuse: the old trace changed"

run bad VTRACE_OVERWRITE=sideways && fail "an invalid VTRACE_OVERWRITE was accepted"
grep -q "VTRACE_OVERWRITE='sideways' is invalid: expected aside, replace or refuse" "$work/bad.err" ||
    fail "an invalid VTRACE_OVERWRITE: $(cat "$work/bad.err")"

# a both run's DIR/full and DIR/reduced, then a reduced run into the same DIR
rm -rf "$work"/t "$work"/t.old-*
run both VTRACE_MODE=both || fail "both: the run failed"
run reduced VTRACE_MODE=reduced || fail "reduced: the run failed"
old=$(ls -d "$work"/t.old-* 2> /dev/null)
[ -d "$old/full" ] && [ -d "$old/reduced" ] && [ -f "$work/t/vtrace.defs" ] && [ ! -d "$work/t/full" ] ||
    fail "reduced after both: old $old, new $(ls "$work/t")"
grep -q "^VTRACE_DIR=$work/t\$" "$work/t/config.txt" || fail "reduced: config.txt names $(grep VTRACE_DIR "$work/t/config.txt")"
grep -q "^VTRACE_DIR=$work/t\$" "$old/reduced/config.txt" || fail "both: DIR/reduced has no config.txt naming DIR"

# the tools' OUT
"$vtrace" reduce "$old/full" "$work/r" > /dev/null || fail "vtrace reduce"
"$vtrace" reduce "$old/full" "$work/r" > /dev/null 2> "$work/reduce.err" || fail "vtrace reduce again"
[ "$(ls -d "$work"/r.old-* | wc -l)" = 1 ] && grep -q "note: .*/r held a trace: it is now" "$work/reduce.err" ||
    fail "vtrace reduce: the old OUT was not moved aside: $(cat "$work/reduce.err")"
VTRACE_OVERWRITE=refuse "$vtrace" reduce "$old/full" "$work/r" > /dev/null 2> "$work/refuse.err"
[ $? = 1 ] && grep -q "holds a trace already and VTRACE_OVERWRITE=refuse" "$work/refuse.err" ||
    fail "vtrace reduce, refuse: $(cat "$work/refuse.err")"
if "$vtrace" export --help | grep -q '^  otf2 .*OTF2 archive in directory'; then
    for i in 1 2; do "$vtrace" export --format=otf2 --quiet "$old/full" "$work/o" 2> "$work/export.err" ||
        fail "export --format=otf2 ($i): $(cat "$work/export.err")"; done
    [ -f "$(ls -d "$work"/o.old-*)/traces.otf2" ] || fail "export --format=otf2: the old archive was not moved aside"
    VTRACE_OVERWRITE=replace "$vtrace" export --format=otf2 --quiet "$old/full" "$work/o" 2> "$work/export.err" ||
        fail "export --format=otf2, replace: $(cat "$work/export.err")"
fi
finish
