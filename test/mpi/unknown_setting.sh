#!/bin/sh
# Settings at MPI_Init (README.vtrace, section 3): an unknown VTRACE_* variable (a typo)
# gets one warning from rank 0 naming the nearest setting, and the run goes on and writes
# its trace; names of vtrace's own scripts and module file get none; a setting that is
# set but empty (VTRACE_BUFFER=) ends the run like any invalid value.
set -u
me=unknown_setting.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
prog=$builddir/test/mpi/route_lib
[ -n "${VTEST_MPIEXEC:-}" ] || { echo "$me: no mpiexec; skipping"; exit 77; }
[ -x "$prog" ] || { echo "$me: $prog is not built" >&2; exit 99; }
work=$builddir/test/mpi/unknown_setting.work
rm -rf "$work" && mkdir -p "$work" || exit 99
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
status=0
fail() { echo "FAIL: $me: $*"; status=1; }

# run NAME VAR=value...: the program on 2 ranks in $work/NAME; exit status in $rc
run() {
    name=$1
    shift
    echo "+ env $* $VTEST_MPIEXEC -n 2 $prog"
    (cd "$work" && $lock env "$@" VTRACE_DIR="$work/$name.trace" timeout -k 10 "${VTEST_TIMEOUT:-120}" \
        "$VTEST_MPIEXEC" -n 2 "$prog" > "$name.out" 2> "$name.err")
    rc=$?
    sed 's/^/  stderr| /' "$work/$name.err"
    echo "  exit status $rc"
}

run typo VTRACE_BUFER=1M VTRACE_ROOT=/opt/vtrace VTRACE_CONFIGURE_FLAGS=--enable-werror
want="vtrace: warning: unknown setting VTRACE_BUFER (did you mean VTRACE_BUFFER?)"
[ "$rc" -eq 0 ] || fail "a typo: the run exited with $rc, expected 0"
n=`grep -c -F -x "$want" "$work/typo.err"`
[ "$n" -eq 1 ] || fail "a typo: '$want' printed $n times, expected once"
! grep -q 'VTRACE_ROOT\|VTRACE_CONFIGURE_FLAGS' "$work/typo.err" || fail "a warning for a known name"
[ -f "$work/typo.trace/vtrace.defs" ] || fail "a typo: no trace was written"
if [ -n "${VTEST_VTRACE:-}" ] && [ -f "$work/typo.trace/vtrace.defs" ]; then
    "$VTEST_VTRACE" info "$work/typo.trace" > "$work/info.out" 2>&1 || fail "a typo: vtrace info cannot read the trace"
fi

run empty VTRACE_BUFFER=
[ "$rc" -ne 0 ] || fail "VTRACE_BUFFER= (empty): the run exited with 0, expected a failure"
grep -q "VTRACE_BUFFER='' is invalid" "$work/empty.err" || fail "VTRACE_BUFFER= (empty): no message naming it"
[ ! -e "$work/empty.trace" ] || fail "VTRACE_BUFFER= (empty): a trace was written"

[ "$status" -eq 0 ] && rm -rf "$work" && echo "PASS: $me"
exit $status
