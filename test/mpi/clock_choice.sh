#!/bin/sh
# VTRACE_CLOCK (issue 18; README.vtrace, section 3): examples/halo on 2 ranks.
#   tsc: VTRACE_MODE=both; where the processor says its TSC is invariant (constant_tsc and
#        nonstop_tsc in /proc/cpuinfo, which Linux sets from cpuid 0x80000007), the layer
#        records that every rank read the TSC and that it kept time with CLOCK_MONOTONIC
#        to MPI_Finalize, `vtrace info` shows it, and the run-time reduced trace is the
#        one `vtrace reduce` writes (rt_equiv.sh); elsewhere rank 0 warns and the layer
#        records monotonic.
#   tsc with VTRACE_TEST_CLOCK_SKEW=5ms (the TSC seen 5 ms ahead at the check): a warning,
#        and the trace's configuration says the TSC drifted.
#   monotonic: the layer records monotonic, and the tsc assertion fails on that trace (it
#        can fail).
#   auto: the TSC exactly where the kernel's clocksource is tsc.
#   a bad value: the run ends at MPI_Init with the settings' message and no trace.
. "$(dirname "$0")/common.sh"
mpi_timeout=300
prog=$builddir/examples/halo
need_mpiexec
need_built "$prog"
new_work

# clock_line DIR: vtrace info's clock line of the trace in DIR, in $line
clock_line() {
    "$vtrace" info "$1" > "$1.info" 2>&1 || { cat "$1.info"; fail "vtrace info $1"; }
    line=`grep '^clock:' "$1.info"`
    echo "  $1: $line"
}

# is_tsc DIR: the layer's record says every rank read the TSC and it kept time
is_tsc() {
    clock_line "$1"
    case $line in
    "clock:     tsc (VTRACE_CLOCK=$2); kept time: the TSC at most "*"ns from CLOCK_MONOTONIC at MPI_Finalize (bound "*"ns)") ;;
    *) return 1 ;;
    esac
    grep -q -x 'VTRACE_CLOCK_USED=tsc' "$1/config.txt" 2> /dev/null || [ ! -f "$1/config.txt" ] || return 1
    return 0
}

# is_monotonic DIR: every rank read clock_gettime, nothing to check
is_monotonic() {
    clock_line "$1"
    [ "$line" = "clock:     monotonic (clock_gettime) (VTRACE_CLOCK=$2)" ]
}

invariant=0
if [ "`uname -m`" = x86_64 ] && grep -q '^flags.* constant_tsc' /proc/cpuinfo &&
    grep -q '^flags.* nonstop_tsc' /proc/cpuinfo; then
    invariant=1
fi
source=`cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null`
echo "  invariant TSC: $invariant, kernel clocksource: ${source:-unknown}"

run_case tsc VTRACE_CLOCK=tsc VTRACE_MODE=both
[ "$rc" -eq 0 ] || fail "VTRACE_CLOCK=tsc: the run exited with $rc"
for kind in full reduced; do
    if [ "$invariant" = 1 ]; then
        is_tsc "$work/tsc/$kind" tsc || fail "VTRACE_CLOCK=tsc ($kind): '$line', expected the TSC, kept time"
    else
        is_monotonic "$work/tsc/$kind" tsc || fail "VTRACE_CLOCK=tsc without an invariant TSC ($kind): '$line'"
    fi
done
if [ "$invariant" = 1 ]; then
    ! grep -q 'VTRACE_CLOCK\|TSC' "$work/tsc.err" || fail "VTRACE_CLOCK=tsc: a warning of the clock"
else
    grep -q 'VTRACE_CLOCK=tsc: the processor does not say its TSC is invariant' "$work/tsc.err" ||
        fail "VTRACE_CLOCK=tsc without an invariant TSC: no warning"
fi
sh "$srcdir/test/mpi/rt_equiv.sh" "$vtrace" "$work/tsc" "$work/rt_equiv" || fail "VTRACE_CLOCK=tsc: rt_equiv.sh"

if [ "$invariant" = 1 ]; then
    run_case skew VTRACE_CLOCK=tsc VTRACE_TEST_CLOCK_SKEW=5ms
    [ "$rc" -eq 0 ] || fail "VTRACE_TEST_CLOCK_SKEW=5ms: the run exited with $rc"
    n=`grep -c 'warning: the TSC did not keep time: on rank [01] it was [45]\.[0-9]* ms from CLOCK_MONOTONIC' \
        "$work/skew.err"`
    [ "$n" -eq 1 ] || fail "VTRACE_TEST_CLOCK_SKEW=5ms: $n warnings of the drift, expected one"
    clock_line "$work/skew"
    # the 5 ms, give or take the TSC's own drift (within its bound: under 1 ms here)
    drift=`echo "$line" | sed -n 's/^clock:     tsc (VTRACE_CLOCK=tsc); drifted: the TSC \([0-9]*\)ns from CLOCK_MONOTONIC at MPI_Finalize on rank [01] (bound [0-9]*ns): the trace.s times may be wrong$/\1/p'`
    [ -n "$drift" ] && [ "$drift" -gt 4000000 ] && [ "$drift" -lt 6000000 ] ||
        fail "VTRACE_TEST_CLOCK_SKEW=5ms: '$line', expected a drift of 5 ms"
fi

run_case monotonic VTRACE_CLOCK=monotonic
[ "$rc" -eq 0 ] || fail "VTRACE_CLOCK=monotonic: the run exited with $rc"
is_monotonic "$work/monotonic" monotonic || fail "VTRACE_CLOCK=monotonic: '$line'"
# the tsc assertion can fail: it does on a trace that did not read the TSC
! is_tsc "$work/monotonic" monotonic || fail "the tsc assertion holds of a VTRACE_CLOCK=monotonic trace"

run_case auto
[ "$rc" -eq 0 ] || fail "VTRACE_CLOCK unset: the run exited with $rc"
if [ "$source" = tsc ]; then
    is_tsc "$work/auto" auto || fail "VTRACE_CLOCK unset, clocksource tsc: '$line'"
else
    is_monotonic "$work/auto" auto || fail "VTRACE_CLOCK unset, clocksource $source: '$line'"
fi

run_case bad VTRACE_CLOCK=rdtsc
[ "$rc" -ne 0 ] || fail "VTRACE_CLOCK=rdtsc: the run exited with 0, expected the settings' failure"
grep -q -x "vtrace: VTRACE_CLOCK='rdtsc' is invalid: expected one of auto, tsc, monotonic" "$work/bad.err" ||
    fail "VTRACE_CLOCK=rdtsc: no message naming it and the accepted values"
[ ! -e "$work/bad" ] || fail "VTRACE_CLOCK=rdtsc: a trace was written"

finish
