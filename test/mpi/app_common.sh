# Sourced by the tests of unmodified, Debian-packaged MPI programs (app_netpipe.sh,
# app_hpcc.sh, app_lammps.sh): app_run traces the program through LD_PRELOAD in VTRACE_MODE=both on 2
# ranks, app_check_trace checks that both traces read (`vtrace info`) and hold the run's
# messages, and that the run-time reduced trace equals `vtrace reduce` of the full one
# (rt_equiv.sh). The program's own checks are the test's. The rest (fail, finish, the lock)
# is test/mpi/common.sh's.
# Environment (test/mpi/Makefile.mk): VTEST_SRCDIR, VTEST_BUILDDIR, VTEST_MPI, VTEST_MPIEXEC,
# VTEST_VTRACE. Exit status: 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/common.sh"
mpi_timeout=180
app_setup() {   # app_setup NAME MPI PROGRAM PACKAGE; NAME: the script's name without .sh
    app=$1
    [ "${VTEST_MPI:-}" = "$2" ] || { echo "SKIP: $app: runs in a build for $2 (this one: ${VTEST_MPI:-none})"; exit 77; }
    prog=`command -v "$3"` || { echo "SKIP: $app: no $3 (apt-get install $4)"; exit 77; }
    need_mpiexec
    lib=$builddir/.libs/libvtrace.so
    [ -f "$lib" ] || { echo "FAIL: $app: $lib is not built"; exit 1; }
    new_work
    cd "$work" || exit 1
}

# app_run ARGS...: the program on 2 ranks, traced through LD_PRELOAD (Open MPI's launcher
# is told to pass it with -x; MPICH's passes the environment).
app_run() {
    case "$VTEST_MPI" in
        openmpi) pass="-x LD_PRELOAD=$lib" ;;
        *) pass= ;;
    esac
    echo "+ VTRACE_MODE=both VTRACE_DIR=trace LD_PRELOAD=$lib $VTEST_MPIEXEC $pass -n 2 $prog $*"
    # shellcheck disable=SC2086
    locked env VTRACE_MODE=both VTRACE_DIR=trace LD_PRELOAD="$lib" "$VTEST_MPIEXEC" $pass -n 2 "$prog" "$@" > run.out 2> run.err
    rc=$?
    tail -15 run.out | sed 's/^/  stdout| /'
    tail -15 run.err | sed 's/^/  stderr| /'
    [ "$rc" = 0 ] || fail "the program exited with $rc"
}

# app_run_plain ARGS...: the same without vtrace (the reference of a program whose output
# must not change), output in plain.out; nothing may be traced
app_run_plain() {
    mkdir plain && (cd plain && locked "$VTEST_MPIEXEC" -n 2 "$prog" "$@" > ../plain.out 2> ../plain.err)
    rc=$?
    [ "$rc" = 0 ] || { tail -15 plain.out plain.err; fail "the plain run exited with $rc"; }
    [ -z "$(ls plain)" ] || fail "the plain run wrote $(ls plain)"
}

app_check_trace() {
    for t in full reduced; do
        "$VTEST_VTRACE" info "trace/$t" > "info.$t" 2>&1 || { cat "info.$t"; fail "vtrace info trace/$t"; continue; }
        grep -q '^ranks: *2$' "info.$t" || fail "trace/$t: not 2 ranks"
        grep -q '^flags: *complete' "info.$t" || { grep '^flags' "info.$t"; fail "trace/$t is not complete"; }
    done
    sed -n '/^events/p; /^messages/p' info.full
    n=`sed -n 's/^messages: *\([0-9]*\) matched.*/\1/p' info.full`
    [ "${n:-0}" -gt 0 ] || fail "trace/full holds no matched message"
    # $1: "unbounded" leaves out rt_equiv.sh's share-of-records bound (the caller says why)
    sh "$VTEST_SRCDIR/test/mpi/rt_equiv.sh" "$VTEST_VTRACE" trace rt_equiv "${1:-bounded}" || fail "run-time reduction"
}
