#!/bin/sh
# rt_equiv.sh can fail: with a deliberately broken rule in the run-time reduction the
# reduced trace of test/mpi/model_halo_rt's run must differ from `vtrace reduce` of its
# full trace (model.md §7.6). VTRACE_TEST_RT_BROKEN=noR3: messages merged although R3
# fails; stale-d: the headers keep the first difference each rank sent (what a missing
# vt_rankreduce.d_version step would do: the sender encodes d only when it moved).
set -u
me=rt_broken.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$builddir/test/mpi/model_halo_rt
[ -n "${VTEST_MPIEXEC:-}" ] || { echo "$me: no mpiexec; skipping"; exit 77; }
[ -x "$prog" ] || { echo "$me: $prog is not built" >&2; exit 99; }
work=$builddir/test/mpi/rt_broken.work
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
status=0
# A broken rule shows only where the run gives it a message to get wrong: on a loaded
# machine a run can wait on every message (none folded), and then stale-d changes
# nothing. Each rule gets up to 5 runs; one that makes rt_equiv fail is enough.
for rule in noR3 stale-d; do
    shown=
    for attempt in 1 2 3 4 5; do
        rm -rf "$work" && mkdir -p "$work" || exit 99
        $lock env VTRACE_MODE=both VTRACE_THRESHOLD=100us VTRACE_TEST_RT_BROKEN=$rule VTRACE_DIR="$work/trace" \
            timeout -k 10 "${VTEST_TIMEOUT:-120}" "$VTEST_MPIEXEC" -n 2 "$prog" 30 4096 300 > "$work/out" 2>&1 ||
            { cat "$work/out"; echo "FAIL: $me: the run failed"; exit 1; }
        if ! sh "$srcdir/test/mpi/rt_equiv.sh" "${VTEST_VTRACE:-$builddir/vtrace}" "$work/trace" "$work/rt" > "$work/eq" 2>&1; then
            echo "ok: broken rule $rule (run $attempt): `grep FAIL "$work/eq" | head -1`"
            shown=1
            break
        fi
        echo "run $attempt: the broken rule $rule changed nothing in this run; again"
    done
    if [ -z "$shown" ]; then
        cat "$work/eq"
        echo "FAIL: $me: with the broken rule $rule, rt_equiv.sh passed in 5 runs: it cannot fail"
        status=1
    fi
done
[ "$status" = 0 ] && rm -rf "$work"
exit $status
