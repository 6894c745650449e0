#!/bin/sh
# maint/bench/interleave.c (issue 18, fourteenth pass): ping-pong variants interleaved in
# one 2-rank job. Built with the plain MPI compiler; run without the layer and with
# libvtrace.so preloaded in reduced mode: one line a variant, the first variant's ratios
# exactly 1, every time positive; with the layer, a reduced trace whose profile counts
# the M variants' sends and none of the P variants' (PMPI). Bad variants and a bad CYCLES end
# with status 2 and a message; ablation bits without an ablation build are reported.
. "$(dirname "$0")/common.sh"
need_mpiexec
[ -n "${VTEST_MPI_CC:-}" ] || { echo "$me: no MPI compiler; skipping"; exit 77; }
lib=$builddir/.libs/libvtrace.so
need_built "$vtrace"
[ -f "$lib" ] || { echo "$me: $lib is not built" >&2; exit 99; }
new_work
prog=$work/interleave
$VTEST_MPI_CC -O2 -o "$prog" "$srcdir/maint/bench/interleave.c" -ldl > "$work/cc.err" 2>&1 ||
    { cat "$work/cc.err"; fail "cannot build interleave.c"; finish; }

# run NAME ARGS...: 2 ranks, output in NAME.out, NAME.err, status in $rc
run() {
    name=$1
    shift
    (cd "$work" && locked env CYCLES=${cycles:-3} BLOCK=20 "$@" > "$name.out" 2> "$name.err")
    rc=$?
    sed 's/^/  | /' "$work/$name.out" "$work/$name.err"
}

# check_lines NAME VARIANT...: one line a variant, in order, the first's ratios 1.000x
check_lines() {
    name=$1
    shift
    n=0
    for v in "$@"; do
        n=$((n + 1))
        line=`sed -n "${n}p" "$work/$name.out"`
        case $line in
        "$v "*" median "*" ns "*"x  paired "*"x  q25 "*" ns "*x) ;;
        *) fail "$name: line $n is not variant $v's: '$line'" ;;
        esac
        if [ $n -eq 1 ]; then
            echo "$line" | grep -q ' 1.000x  paired  1.000x  q25 .* 1.000x$' || fail "$name: the first variant's ratios are not 1"
        fi
        echo "$line" | awk '{ if ($3 <= 0 || $7 <= 0) exit 1 }' || fail "$name: a time not positive: $line"
    done
    [ "`wc -l < "$work/$name.out"`" -eq $n ] || fail "$name: not $n lines"
}

echo "+ plain"
run plain "$VTEST_MPIEXEC" -n 2 "$prog" P8 M8 M64
[ $rc -eq 0 ] || fail "plain run: exit status $rc"
check_lines plain P8 M8 M64

echo "+ the layer preloaded, reduced"
run layer "$VTEST_MPIEXEC" -n 2 env LD_PRELOAD="$lib" VTRACE_MODE=reduced VTRACE_DIR="$work/trace" "$prog" P8 M8 M0:5
[ $rc -eq 0 ] || fail "layer run: exit status $rc"
check_lines layer P8 M8 M0:5
grep -q 'M0:5: no vt_abl_set' "$work/layer.err" || fail "ablation bits without an ablation build not reported"
"$vtrace" info "$work/trace" > "$work/info" 2>&1 || { cat "$work/info"; fail "vtrace info of the layer run's trace"; }
# the profile counts every call: 3 cycles x 2 M variants x (50 + 20) trips a rank, a send
# each; the P variants' PMPI calls none
sends=`awk '$1 == "MPI_Send" { print $2 }' "$work/info"`
[ "$sends" = 840 ] || fail "the profile counts $sends MPI_Send calls, not 840"
grep -q '^kind: *reduced' "$work/info" || fail "the trace is not a reduced one"

for bad in X8 P M-1 P5000 M8:zz P8x; do
    echo "+ bad variant $bad"
    run "bad" "$VTEST_MPIEXEC" -n 2 "$prog" P8 "$bad"
    [ $rc -eq 2 ] || fail "variant $bad: exit status $rc, not 2"
    grep -q '^usage: mpiexec -n 2 interleave' "$work/bad.err" || fail "variant $bad: no usage message"
done
echo "+ CYCLES=0"
cycles=0 run badc "$VTEST_MPIEXEC" -n 2 "$prog" P8
[ $rc -eq 2 ] || fail "CYCLES=0: exit status $rc, not 2"
grep -q 'CYCLES and BLOCK must be positive' "$work/badc.err" || fail "CYCLES=0: no message"
finish
