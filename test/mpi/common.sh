# Sourced by the MPI test scripts of test/mpi, first thing after their header comment:
#     . "$(dirname "$0")/common.sh"
# It sets what they share: me (the script's name); builddir, srcdir and vtrace from the
# VTEST_* variables test/mpi/Makefile.mk passes (run by hand: the build directory it runs
# in, the tree the script is in, the build's vtrace); lock, the flock every MPI run of the
# tests takes (two MPI jobs at once stall a small machine); status and fail; and the
# helpers need_mpiexec, need_built, new_work, locked, run_case and finish below.
# Exit status of the tests: 0 pass, 1 fail, 77 skip, 99 hard error (automake's conventions).
# shellcheck disable=SC2034,SC2154 # what is set here the scripts use; $prog they set
set -u
me=${0##*/}
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
vtrace=${VTEST_VTRACE:-$builddir/vtrace}
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
# seconds an MPI run may take (locked) unless VTEST_TIMEOUT says; a script may set more
mpi_timeout=120
status=0
# fail_stops=yes: the first failure ends the test (its later checks read what failed)
fail_stops=

# fail MESSAGE: the test fails, at its end (finish) or here (fail_stops=yes)
fail() {
    echo "FAIL: $me: $*"
    status=1
    [ -z "$fail_stops" ] || exit 1
}

# need_mpiexec: skip (77) where configure found no mpiexec
need_mpiexec() {
    [ -n "${VTEST_MPIEXEC:-}" ] || { echo "$me: no mpiexec; skipping"; exit 77; }
}

# need_built PROGRAM...: a hard error (99) where one is not built
need_built() {
    for p in "$@"; do
        [ -x "$p" ] || { echo "$me: $p is not built" >&2; exit 99; }
    done
}

# new_work: $work, the test's work directory in the build tree, empty
new_work() {
    work=$builddir/test/mpi/${me%.sh}.work
    rm -rf "$work" && mkdir -p "$work" || exit 99
}

# locked COMMAND...: COMMAND (an MPI run) under the lock and under timeout
locked() {
    $lock timeout -k 10 "${VTEST_TIMEOUT:-$mpi_timeout}" "$@"
}

# run_case NAME VAR=value...: $prog on 2 ranks in $work with VAR=value... and its trace
# in $work/NAME; its output in $work/NAME.out and NAME.err (shown), its exit status in $rc
run_case() {
    name=$1
    shift
    echo "+ env $* $VTEST_MPIEXEC -n 2 $prog"
    (cd "$work" && locked env "$@" VTRACE_DIR="$work/$name" "$VTEST_MPIEXEC" -n 2 "$prog" > "$name.out" 2> "$name.err")
    rc=$?
    sed 's/^/  stderr| /' "$work/$name.err"
    echo "  exit status $rc"
}

# finish: exit with $status; the work directory removed where the test passed, kept where
# it failed
finish() {
    if [ "$status" -eq 0 ]; then
        rm -rf "$work"
        echo "PASS: $me"
    else
        echo "(work directory kept: $work)"
    fi
    exit "$status"
}
