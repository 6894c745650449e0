#!/bin/sh
# rt_equiv.sh can fail: with a deliberately broken rule in the run-time reduction the
# reduced trace of test/mpi/model_halo_rt's run must differ from `vtrace reduce` of its
# full trace (model.md §7.6). VTRACE_TEST_RT_BROKEN=noR3: messages merged although R3
# fails; stale-d: the headers keep the first difference each rank sent (what a missing
# vt_rankreduce.d_version step would do: the sender encodes d only when it moved).
. "$(dirname "$0")/common.sh"
prog=$builddir/test/mpi/model_halo_rt
need_mpiexec
need_built "$prog"
# A broken rule shows only where the run gives it a message to get wrong: on a loaded
# machine a run can wait on every message (none folded), and then stale-d changes
# nothing. Each rule gets up to 5 runs; one that makes rt_equiv fail is enough.
for rule in noR3 stale-d; do
    shown=
    for attempt in 1 2 3 4 5; do
        new_work
        locked env VTRACE_MODE=both VTRACE_THRESHOLD=100us VTRACE_TEST_RT_BROKEN=$rule VTRACE_DIR="$work/trace" \
            "$VTEST_MPIEXEC" -n 2 "$prog" 30 4096 300 > "$work/out" 2>&1 ||
            { cat "$work/out"; fail "the run failed"; exit 1; }
        if ! sh "$srcdir/test/mpi/rt_equiv.sh" "$vtrace" "$work/trace" "$work/rt" > "$work/eq" 2>&1; then
            echo "ok: broken rule $rule (run $attempt): `grep FAIL "$work/eq" | head -1`"
            shown=1
            break
        fi
        echo "run $attempt: the broken rule $rule changed nothing in this run; again"
    done
    if [ -z "$shown" ]; then
        cat "$work/eq"
        fail "with the broken rule $rule, rt_equiv.sh passed in 5 runs: it cannot fail"
    fi
done
finish
