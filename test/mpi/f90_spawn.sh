#!/bin/sh
# Open MPI's Fortran process creation and connection calls with CHARACTER arguments
# (MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_accept, MPI_Comm_connect) through
# libvtrace's own entry points (src/mpi/wrappers_ompi.c): test/mpi/f90_spawn, linked with
# libvtrace, and test/mpi/f90_spawn_plain, linked with Open MPI alone, both with the C
# stand-ins of test/mpi/spawn_stub.c, which log the strings, argument vectors, infos and
# sentinels they receive instead of starting processes; test/mpi/f08_spawn, the same
# calls through mpi_f08 (full and both modes). In full, reduced and both modes:
#   1. both logs (the C layer's, spawn_stub.RANK.log, and the program's, f90_spawn.RANK.log)
#      are those of the plain build, byte for byte;
#   2. full: the trace holds the calls (test/mpi/f90_spawn.expect); both: the run-time
#      reduced trace is `vtrace reduce` of the full one (rt_equiv.sh); reduced: a reduced
#      trace with the calls in its profile.
# Under MPICH the Fortran binding converts the strings itself and calls the traced C entry
# point, which the stand-ins would replace: skipped (77).
. "$(dirname "$0")/common.sh"
fail_stops=yes
[ "${VTEST_MPI:-}" = openmpi ] || { echo "$me: Open MPI only (this build: ${VTEST_MPI:-?}); skipping"; exit 77; }
need_mpiexec
need_built "$builddir/test/mpi/f90_spawn" "$builddir/test/mpi/f90_spawn_plain" "$builddir/test/mpi/f08_spawn"
new_work
run() { # run DIR PROGRAM [VAR=value...]
    d=$1 p=$2
    shift 2
    mkdir -p "$work/$d" && cd "$work/$d" || exit 99
    locked env "$@" VTRACE_DIR="$work/$d/trace" \
        "$VTEST_MPIEXEC" -n 2 "$builddir/test/mpi/$p" > out 2> err ||
        { cat out err; fail "$p ($*) failed"; }
    cd "$work" || exit 99
}
run plain f90_spawn_plain
[ -e plain/trace ] && fail "the plain build wrote a trace"
grep -q 'spawn_multiple count=2 | command=\[a.out\] argv={\[-x\],\[1\]}' plain/spawn_stub.0.log ||
    { cat plain/spawn_stub.0.log; fail "the plain build's log is not what Open MPI's binding passes"; }
for run in f90_spawn:full f90_spawn:reduced f90_spawn:both f08_spawn:full f08_spawn:both; do
    p=${run%:*} mode=${run#*:}
    run $p.$mode $p VTRACE_MODE=$mode VTRACE_THRESHOLD=20us
    for f in spawn_stub.0.log spawn_stub.1.log f90_spawn.0.log f90_spawn.1.log; do
        cmp -s "plain/$f" "$p.$mode/$f" ||
            { diff -u "plain/$f" "$p.$mode/$f"; fail "$p, $mode: $f differs from plain Open MPI's"; }
    done
done
for p in f90_spawn f08_spawn; do
    "$VTEST_PYTHON" "$srcdir/test/mpi/check_trace.py" --vtrace "$vtrace" $p.full/trace "$srcdir/test/mpi/f90_spawn.expect" ||
        fail "$p, full: the trace does not hold what the program did"
    sh "$srcdir/test/mpi/rt_equiv.sh" "$vtrace" $p.both/trace "$work/rt.$p" ||
        fail "$p, both: the run-time reduced trace is not what vtrace reduce makes of the full trace"
done
r=f90_spawn.reduced
"$vtrace" info $r/trace > $r/info || { cat $r/info; fail "reduced: vtrace info"; }
grep -q '^kind: *reduced' $r/info || fail "reduced: not a reduced trace"
"$vtrace" info --json $r/trace > $r/info.json || fail "reduced: vtrace info --json"
"$VTEST_PYTHON" - $r/info.json <<'PY' || fail "reduced: the profile"
import json, sys
f = json.load(open(sys.argv[1]))["functions"]
want = {"MPI_Comm_spawn": 6, "MPI_Comm_spawn_multiple": 4, "MPI_Comm_accept": 2, "MPI_Comm_connect": 2}
bad = ["%s %s" % (n, (f.get(n) or {}).get("calls")) for n, c in want.items() if (f.get(n) or {}).get("calls") != c]
if bad:
    sys.exit("FAIL: calls " + ", ".join(bad) + "; expected %s" % want)
PY
echo "$me: the C layer received the same arguments from libvtrace's entry points (use mpi, mpi_f08) as from Open MPI's in every mode:"
sed 's/^/  /' plain/spawn_stub.0.log
finish
