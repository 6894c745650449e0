#!/bin/sh
# LOG_COMPILER of the MPI integration tests: automake's test driver calls
#     run-mpi-test.sh test/mpi/NAME
# for every test. NAME's line in test/mpi/testlist says how to run it:
#     NAME NPROCS [VAR=value ...]
# VAR=value pairs are exported to the program, except these, which tell this
# script what to do:
#     RUN_ARGS=a,b,c      arguments of the program (commas become spaces)
#     RUN_EXIT=fail       the program must fail (default: it must exit 0)
#     RUN_STDERR=REGEX    its standard error must match REGEX (grep -E)
#     RUN_TRACE=none      it must write nothing: no trace, no file at all in its
#                         work directory (default: a trace, checked as below)
#     RUN_BUILD=profile   build the program at test time from test/mpi/NAME's
#                         source (RUN_SOURCE=FILE) with 'mpicc -profile=vtrace'
#                         and a vtrace.conf in the work directory
#     RUN_PRELOAD=yes     run the program (linked without vtrace) with
#                         LD_PRELOAD=libvtrace.so; first check that without it
#                         no trace is written
#     RUN_MODEL=DUR       also check that the reduced trace (vtrace reduce, candidate
#                         threshold DUR) answers every what-if question as the full
#                         trace does (test/model/reduce_equiv.sh)
#     RUN_TRACE=model     a trace checked by RUN_MODEL only (no NAME.expect)
#     RUN_TRACE=check:S   a trace checked by the script test/mpi/S (arguments: the vtrace
#                         command and the trace; run in the work directory, with the
#                         test's VAR=value pairs in its environment)
#     RUN_TRACE=unchecked a trace (trace/vtrace.defs), its content not checked
#     RUN_EXPECT=OTHER    check the trace against test/mpi/OTHER.expect (the same program
#                         built under another name, run another way)
#                         (NAME.MPI.expect, MPI as configure's VT_MPI, takes the place of
#                         NAME.expect where it exists)
#     RUN_RT=yes          VTRACE_MODE=both: the run-time reduction wrote
#                         trace/reduced, and it holds exactly the records `vtrace reduce`
#                         makes of trace/full and predicts what it predicts
#                         (test/mpi/rt_equiv.sh), and its bytes are within its
#                         share of the records (issue 13)
#     RUN_RT=unbounded    the same but the share-of-records bound (testlist says why)
# With VTRACE_MODE=both the checks above look at the full trace, trace/full.
#     RUN_COMPARE=V=x,... first run the program as a reference, in the subdirectory ref/
#                         of the work directory, with V=x,... after the test's own
#                         settings (VTRACE_MODE=off: MPICH alone); the files *.log the
#                         two runs write in their directories must be the same, byte for
#                         byte (the differences are shown)
#     RUN_PROBE=VAR       before any other run, run the program with VAR=probe and the
#                         RUN_COMPARE settings (MPI as it is), in the subdirectory probe/;
#                         the last line it prints is VAR's value in every run after
#                         (pb_transparency: the MPI's eager limit, PBT_EAGER)
# A program not listed in testlist is run as it is (this script is automake's
# LOG_COMPILER for the whole tree).
#
# Each test runs in its own work directory, test/mpi/NAME.dir in the build tree
# (removed when the test passes, kept when it fails; VTEST_KEEP=yes keeps it),
# with VTRACE_DIR=NAME.dir/trace. The trace is then checked by check_trace.py
# against test/mpi/NAME.expect and the dynamic.expect.* files the program wrote.
# Everything runs under 'timeout' (VTEST_TIMEOUT seconds, default 120), so a hang
# fails the test instead of stalling make check.
#
# Environment, from test/mpi/Makefile.mk: VTEST_SRCDIR and VTEST_BUILDDIR (absolute
# top source and build directories), VTEST_MPIEXEC, VTEST_MPI_CC, VTEST_PYTHON,
# VTEST_VTRACE (the vtrace command of the build tree).
# Exit status: 0 pass, 1 fail, 77 skip, 99 hard error (automake's conventions).

prog=$1
name=`basename "$prog"`
srcdir=${VTEST_SRCDIR:-}
builddir=${VTEST_BUILDDIR:-}
list="$srcdir/test/mpi/testlist"

line=
if [ -n "$srcdir" ] && [ -f "$list" ]; then
    line=`sed -e 's/#.*//' "$list" | awk -v n="$name" '$1 == n { print; exit }'`
fi
if [ -z "$line" ]; then
    exec "$@"
fi

hard_error() { echo "run-mpi-test: $name: $*" >&2; exit 99; }
failed() { echo "FAIL: $name: $*" >&2; status=1; }

[ -n "$builddir" ] || hard_error "VTEST_BUILDDIR is not set"
if [ -z "$VTEST_MPIEXEC" ]; then
    echo "SKIP: $name: no mpiexec found by configure"
    exit 77
fi
if [ -z "$VTEST_PYTHON" ]; then
    echo "SKIP: $name: no python3 found by configure"
    exit 77
fi
vtrace=$VTEST_VTRACE
[ -x "$vtrace" ] || hard_error "the vtrace command ($vtrace) is not built"

set -f  # no globbing of the words (RUN_STDERR holds a regular expression)
set -- $line
set +f
nprocs=$2
shift 2
run_args= run_exit=0 run_stderr= run_trace=yes run_build= run_source= run_preload= run_model= run_compare= run_expect= run_rt= run_probe=
envs=
for kv in "$@"; do
    case "$kv" in
        RUN_ARGS=*) run_args=`echo "${kv#RUN_ARGS=}" | tr ',' ' '` ;;
        RUN_EXIT=*) run_exit=${kv#RUN_EXIT=} ;;
        RUN_STDERR=*) run_stderr=${kv#RUN_STDERR=} ;;
        RUN_TRACE=*) run_trace=${kv#RUN_TRACE=} ;;
        RUN_BUILD=*) run_build=${kv#RUN_BUILD=} ;;
        RUN_SOURCE=*) run_source=${kv#RUN_SOURCE=} ;;
        RUN_PRELOAD=*) run_preload=${kv#RUN_PRELOAD=} ;;
        RUN_MODEL=*) run_model=${kv#RUN_MODEL=} ;;
        RUN_EXPECT=*) run_expect=${kv#RUN_EXPECT=} ;;
        RUN_RT=yes) run_rt=bounded ;;
        RUN_RT=unbounded) run_rt=unbounded ;;
        RUN_PROBE=*) run_probe=${kv#RUN_PROBE=} ;;
        RUN_COMPARE=*) run_compare=`echo "${kv#RUN_COMPARE=}" | tr ',' ' '` ;;
        RUN_*) hard_error "unknown runner setting $kv in $list" ;;
        *=*) envs="$envs $kv" ;;
        *) hard_error "bad word '$kv' in $list (expected VAR=value)" ;;
    esac
done

case "$prog" in
    /*) exe=$prog ;;
    *) exe=`pwd`/$prog ;;
esac
work="$builddir/test/mpi/$name.dir"
rm -rf "$work"
mkdir -p "$work" || hard_error "cannot create $work"
cd "$work" || hard_error "cannot enter $work"
trace="$work/trace"
timeout=${VTEST_TIMEOUT:-120}
status=0

# One lock for every build tree of the machine (VTEST_LOCK to choose another).
lock=
if command -v flock > /dev/null 2>&1; then
    lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
fi

# Runs the program: run_mpi EXE [VAR=value ...]. Its output is shown in the log and
# kept in run.out and run.err; its exit status in $rc.
run_mpi() {
    x=$1
    shift
    echo "+ env$envs $* VTRACE_DIR=$trace timeout -k 10 $timeout $VTEST_MPIEXEC -n $nprocs $x $run_args"
    # One MPI job at a time, even under make -jN: MPICH busy-polls, and two 2-rank jobs
    # on 2 cores can stall each other for minutes (seen with plain MPICH too).
    $lock env $envs "$@" VTRACE_DIR="$trace" timeout -k 10 "$timeout" "$VTEST_MPIEXEC" -n "$nprocs" "$x" $run_args \
        > run.out 2> run.err
    rc=$?
    sed 's/^/  stdout| /' run.out
    sed 's/^/  stderr| /' run.err
    echo "  exit status $rc"
    case "$rc" in 124|137) failed "timed out after $timeout s" ;; esac
    return 0
}

# Fails unless nothing was written in the work directory besides our own files.
expect_no_files() {
    left=`ls -A | grep -v -x -e run.out -e run.err -e 'dynamic\.expect\..*' -e vtrace.conf -e "$exe_name"`
    if [ -n "$left" ]; then
        failed "$1: files were written: `echo $left`"
        ls -lR $left
    fi
}

exe_name=run.exe
if [ "$run_build" = profile ]; then
    [ -n "$run_source" ] || hard_error "RUN_BUILD=profile needs RUN_SOURCE"
    [ -n "$VTEST_MPI_CC" ] || hard_error "VTEST_MPI_CC is not set"
    # MPICH's mpicc reads PROFILE.conf from its sysconfdir or the current directory.
    echo "PROFILE_PRELIB=\"-L$builddir/.libs -Wl,-rpath,$builddir/.libs -Wl,--push-state,--no-as-needed -lvtrace -Wl,--pop-state\"" > vtrace.conf
    echo "+ $VTEST_MPI_CC -profile=vtrace -o $exe_name $srcdir/test/mpi/$run_source"
    if ! "$VTEST_MPI_CC" -profile=vtrace -o "$exe_name" "$srcdir/test/mpi/$run_source"; then
        echo "FAIL: $name: building with mpicc -profile=vtrace failed"
        exit 1
    fi
    if command -v readelf > /dev/null 2>&1; then
        readelf -d "$exe_name" | grep 'NEEDED' | sed 's/^/  /'
        readelf -d "$exe_name" | grep -q 'NEEDED.*libvtrace' || failed "$exe_name does not link libvtrace"
        # MPICH prefers PROFILE.conf from its sysconfdir to ours
        readelf -d "$exe_name" | grep -q "PATH.*$builddir/.libs" ||
            failed "$exe_name does not use $builddir/.libs (is there a vtrace.conf in MPICH's sysconfdir?)"
    fi
    exe=$work/$exe_name
elif [ -n "$run_build" ]; then
    hard_error "unknown RUN_BUILD=$run_build"
fi

if [ "$run_preload" = yes ]; then
    lib="$builddir/.libs/libvtrace.so"
    [ -f "$lib" ] || hard_error "$lib is not built"
    echo "# control run: without LD_PRELOAD nothing may be traced"
    run_mpi "$exe"
    [ "$rc" = 0 ] || failed "the control run exited with $rc"
    expect_no_files "without LD_PRELOAD"
    rm -rf "$trace" dynamic.expect.*
    echo "# traced run"
    run_mpi "$exe" LD_PRELOAD="$lib"
elif [ -n "$run_compare" ]; then
    if [ -n "$run_probe" ]; then
        echo "# probe run ($run_probe=probe $run_compare), in probe/"
        mkdir probe && cd probe || hard_error "cannot create $work/probe"
        run_mpi "$exe" $run_compare "$run_probe=probe"
        value=`tail -n 1 run.out`
        [ "$rc" = 0 ] && [ -n "$value" ] || failed "the probe run exited with $rc, printing '$value'"
        cd "$work" && rm -rf probe
        echo "# $run_probe=$value in the runs below"
        envs="$envs $run_probe=$value"
    fi
    echo "# reference run ($run_compare), in ref/"
    mkdir ref && cd ref || hard_error "cannot create $work/ref"
    test_trace=$trace
    trace="$work/ref/trace"
    run_mpi "$exe" $run_compare
    [ "$rc" = 0 ] || failed "the reference run exited with $rc"
    trace=$test_trace
    cd "$work" || hard_error "cannot enter $work"
    echo "# run under test"
    run_mpi "$exe"
else
    run_mpi "$exe"
fi

if [ "$run_exit" = fail ]; then
    [ "$rc" != 0 ] || failed "the program exited with 0, expected a failure"
elif [ "$rc" != 0 ]; then
    failed "the program exited with $rc"
fi
if [ -n "$run_stderr" ] && ! grep -E -q -e "$run_stderr" run.err; then
    failed "its standard error does not match '$run_stderr'"
fi

if [ -n "$run_compare" ]; then
    logs=`ls ref/*.log *.log 2> /dev/null | sed 's,^ref/,,' | sort -u`
    [ -n "$logs" ] || failed "neither run wrote a *.log file to compare"
    for f in $logs; do
        if [ ! -f "ref/$f" ] || [ ! -f "$f" ]; then
            failed "$f: written by one run only"
        elif ! cmp -s "ref/$f" "$f"; then
            failed "$f differs from the reference run's"
            diff -u "ref/$f" "$f" | head -n 200
        fi
    done
    [ "$status" = 0 ] && echo "# the logs of both runs are the same:" $logs
fi

# VTRACE_MODE=both writes DIR/full and DIR/reduced
tracedir=$trace
case " $envs " in *" VTRACE_MODE=both "*) trace=$tracedir/full ;; esac

if [ "$run_trace" = none ]; then
    expect_no_files "a run that must write nothing"
elif [ "$run_trace" = yes ]; then
    expect="$srcdir/test/mpi/${run_expect:-$name}.expect"
    # where an MPI's bindings differ (Open MPI's mpi_f08 starts the layer in MPI_Init)
    [ -f "$srcdir/test/mpi/${run_expect:-$name}.$VTEST_MPI.expect" ] &&
        expect="$srcdir/test/mpi/${run_expect:-$name}.$VTEST_MPI.expect"
    [ -f "$expect" ] || hard_error "$expect is missing"
    dyn=`ls dynamic.expect.* 2> /dev/null | tr "\n" " "`
    echo "+ $VTEST_PYTHON check_trace.py --vtrace $vtrace $trace $expect $dyn"
    timeout "$timeout" "$VTEST_PYTHON" "$srcdir/test/mpi/check_trace.py" --vtrace "$vtrace" "$trace" "$expect" $dyn \
        || failed "the trace does not hold what the program did"
elif [ "${run_trace%%:*}" = check ]; then
    script="$srcdir/test/mpi/${run_trace#check:}"
    [ -f "$script" ] || hard_error "$script is missing"
    [ -f "$trace/vtrace.defs" ] || failed "no trace was written"
    [ "$status" = 0 ] && { env $envs sh "$script" "$vtrace" "$trace" || failed "$script failed"; }
elif [ "$run_trace" = unchecked ]; then
    [ -f "$trace/vtrace.defs" ] || failed "no trace was written"
elif [ "$run_trace" = model ]; then
    [ -n "$run_model" ] || hard_error "RUN_TRACE=model needs RUN_MODEL"
    [ -f "$trace/vtrace.defs" ] || failed "no trace was written"
else
    hard_error "unknown RUN_TRACE=$run_trace"
fi
if [ -n "$run_rt" ] && [ "$status" = 0 ]; then
    timeout "$timeout" sh "$srcdir/test/mpi/rt_equiv.sh" "$vtrace" "$tracedir" "$work/rt" "$run_rt" ||
        failed "the run-time reduced trace is not what vtrace reduce makes of the full trace"
fi
if [ -n "$run_model" ] && [ "$status" = 0 ]; then
    timeout "$timeout" sh "$srcdir/test/model/reduce_equiv.sh" "$vtrace" "$trace" "$run_model" "$work/model" ||
        failed "the reduced trace does not predict what the full trace predicts"
fi

cd "$builddir" || exit 99
if [ "$status" = 0 ]; then
    [ "$VTEST_KEEP" = yes ] || rm -rf "$work"
    echo "PASS: $name"
else
    echo "(work directory kept: $work)"
fi
exit $status
