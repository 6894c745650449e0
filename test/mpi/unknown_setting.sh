#!/bin/sh
# Settings at MPI_Init (README.vtrace, section 3): an unknown VTRACE_* variable (a typo)
# gets one warning from rank 0 naming the nearest setting, and the run goes on and writes
# its trace; names of vtrace's own scripts and module file get none; a setting that is
# set but empty (VTRACE_BUFFER=) ends the run like any invalid value.
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/route_lib
need_mpiexec
need_built "$prog"
new_work

run_case typo VTRACE_BUFER=1M VTRACE_ROOT=/opt/vtrace VTRACE_CONFIGURE_FLAGS=--enable-werror
want="vtrace: warning: unknown setting VTRACE_BUFER (did you mean VTRACE_BUFFER?)"
[ "$rc" -eq 0 ] || fail "a typo: the run exited with $rc, expected 0"
n=`grep -c -F -x "$want" "$work/typo.err"`
[ "$n" -eq 1 ] || fail "a typo: '$want' printed $n times, expected once"
! grep -q 'VTRACE_ROOT\|VTRACE_CONFIGURE_FLAGS' "$work/typo.err" || fail "a warning for a known name"
[ -f "$work/typo/vtrace.defs" ] || fail "a typo: no trace was written"
if [ -n "${VTEST_VTRACE:-}" ] && [ -f "$work/typo/vtrace.defs" ]; then
    "$VTEST_VTRACE" info "$work/typo" > "$work/info.out" 2>&1 || fail "a typo: vtrace info cannot read the trace"
fi

run_case empty VTRACE_BUFFER=
[ "$rc" -ne 0 ] || fail "VTRACE_BUFFER= (empty): the run exited with 0, expected a failure"
grep -q "VTRACE_BUFFER='' is invalid" "$work/empty.err" || fail "VTRACE_BUFFER= (empty): no message naming it"
[ ! -e "$work/empty" ] || fail "VTRACE_BUFFER= (empty): a trace was written"

finish
