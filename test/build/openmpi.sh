#!/bin/sh
# vtrace built against Open MPI (configure --with-mpi=openmpi) in a build of its own, and
# a representative part of the MPI tests run with Open MPI's own launcher
# (mpiexec.openmpi): point to point blocking, nonblocking and persistent, collectives,
# probe (each against its .expect and the model), the piggyback transport's
# transparency test (pb_transparency: its logs with VTRACE_MODE=reduced compared with
# those of plain Open MPI), and the run-time equivalence (RUN_RT: the run-time reduced
# trace equals `vtrace reduce` of the full one) on p2p_blocking_pb, collectives_rt,
# probe_rt and pb_transparency_rt; the Fortran programs (mpif.h, use mpi and use mpi_f08,
# traced through libvtrace's Open MPI Fortran entry points, src/mpi/wrappers_ompi.c) in
# full, both (RUN_RT) and reduced modes (f90_usempi: LOGICAL and CHARACTER arguments and
# the Alltoallw family, its logs compared with plain Open MPI's; f90_spawn.sh: spawn,
# spawn_multiple, accept and connect over C stand-ins, against Open MPI's own binding;
# spawn_dir.sh: a world that spawns another, each traced into a directory of its own);
# Debian's hpcc and LAMMPS traced through LD_PRELOAD (app_hpcc.sh, app_lammps.sh, which
# skip when the package is not installed). Skips (77)
# when Open MPI is not installed (apt-get install openmpi-bin libopenmpi-dev).
# pb_transparency leaves out two items (PBT_SKIP), which fail under plain Open MPI
# 4.1.4 too (its reference run, VTRACE_MODE=off), so there is nothing the layer could be
# held to: 'persistent' (Open MPI sends stale data when a persistent MPI_Bsend_init
# request is started again) and 'truncate' (a receive of a larger message than the
# buffer: "malloc(): corrupted top size" in the plain run). 'unsafe' is in: two 4000-byte
# MPI_Sends before the Recvs, eager under Open MPI's vader; the layer raises
# btl_vader_eager_limit by its header (src/mpid/pb_requests.c), else they deadlock.
# 'partial' is in: a message that ends inside an element of a derived receive type is
# written by the transport as Open MPI's receive writes it (src/mpid/pb_core.c).
# The installed wrappers: --showme and its :link, :libs, :libdirs forms give the complete
# line with libvtrace, :compile none of it; vtrace's mpifort builds f77_pingpong.f into a
# program linked with libvtrace and Open MPI only.
set -u
# Under the parent's `make check`, MAKEFLAGS carries its TEST_LOGS (every test of the
# parent tree): the nested make below must run only the subset it names.
unset MAKEFLAGS MFLAGS MAKELEVEL
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
for p in mpicc.openmpi mpiexec.openmpi; do
    command -v $p > /dev/null 2>&1 || { echo "SKIP: no $p (Open MPI is not installed)"; exit 77; }
done
work=$(pwd)/test/build/openmpi.work
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 99
if ! "$top_srcdir/configure" --with-mpi=openmpi --prefix="$work/inst" > configure.out 2>&1; then
    tail -20 configure.out
    echo "FAIL: configure --with-mpi=openmpi"
    exit 1
fi
grep -q "MPI: *openmpi" configure.out || { tail -15 configure.out; echo "FAIL: configure did not find Open MPI"; exit 1; }
grep -q "MPI launcher: *.*mpiexec.openmpi" configure.out ||
    { tail -15 configure.out; echo "FAIL: the launcher is not Open MPI's"; exit 1; }
fortran="test/mpi/f77_pingpong test/mpi/f08_pingpong test/mpi/f08_pmpi test/mpi/f77_pingpong_rt
         test/mpi/f08_pmpi_rt test/mpi/f77_pingpong_red test/mpi/f08_pingpong_red
         test/mpi/f90_usempi test/mpi/f90_usempi_red test/mpi/f90_usempi_rt"
grep -q "MPI Fortran: *.*mpifort.openmpi" configure.out ||
    { tail -15 configure.out; echo "FAIL: configure did not find mpifort.openmpi"; exit 1; }
tests="test/mpi/p2p_blocking test/mpi/p2p_nonblocking test/mpi/persistent test/mpi/collectives test/mpi/probe
       test/mpi/p2p_blocking_pb test/mpi/collectives_rt test/mpi/probe_rt test/mpi/pb_transparency_rt
       $fortran test/mpi/f90_spawn.sh test/mpi/spawn_dir.sh test/mpi/app_hpcc.sh test/mpi/app_lammps.sh"
progs="$fortran test/mpi/spawn_world test/mpi/f90_spawn test/mpi/f90_spawn_plain test/mpi/f08_spawn test/mpi/p2p_blocking test/mpi/p2p_nonblocking test/mpi/persistent test/mpi/collectives test/mpi/probe
       test/mpi/p2p_blocking_pb test/mpi/collectives_rt test/mpi/probe_rt test/mpi/pb_transparency_rt test/mpi/pb_transparency"
# shellcheck disable=SC2086
if ! make -j2 vtrace vtrace-mpi libvtrace.la src/wrappers/mpicc $progs > make.out 2>&1; then
    tail -30 make.out
    echo "FAIL: the build against Open MPI"
    exit 1
fi
# The wrapper builds with Open MPI's mpicc and links libvtrace ahead of it.
grep -q "mpicc.openmpi" src/wrappers/mpicc || { echo "FAIL: src/wrappers/mpicc does not call mpicc.openmpi"; exit 1; }
# (the library and the wrappers only: what the wrappers need)
if ! make src/wrappers/mpifort src/wrappers/mpicxx src/wrappers/mpiexec install-libLTLIBRARIES install-binSCRIPTS \
        > install.out 2>&1; then
    tail -20 install.out
    echo "FAIL: make install"
    exit 1
fi
show() { "$work/inst/bin/mpicc" "$@" 2>&1; }
lv="-L$work/inst/lib -Wl,-rpath,$work/inst/lib -Wl,--push-state,--no-as-needed,-lvtrace,--pop-state"
for opt in --showme -showme "--showme x.c -o x"; do
    case "$(show $opt)" in
        "gcc $lv"*" -I"*openmpi*" -lmpi"*) ;;
        *) echo "FAIL: mpicc $opt: $(show $opt)"; exit 1 ;;
    esac
done
case "$(show --showme:link)" in "$lv -L"*" -lmpi"*) ;; *) echo "FAIL: mpicc --showme:link: $(show --showme:link)"; exit 1 ;; esac
case "$(show --showme:compile)" in *vtrace*|"") echo "FAIL: mpicc --showme:compile: $(show --showme:compile)"; exit 1 ;; esac
[ "$(show --showme:libs)" = "vtrace mpi" ] || { echo "FAIL: mpicc --showme:libs: $(show --showme:libs)"; exit 1; }
case "$(show --showme:libdirs)" in "$work/inst/lib "*) ;; *) echo "FAIL: mpicc --showme:libdirs"; exit 1 ;; esac
echo "  mpicc --showme: $(show --showme)"
"$work/inst/bin/mpifort" -o f77_wrapped "$top_srcdir/test/mpi/f77_pingpong.f" > fort.out 2>&1 ||
    { cat fort.out; echo "FAIL: vtrace's mpifort"; exit 1; }
ldd ./f77_wrapped | grep -q "$work/inst/lib/libvtrace" || { echo "FAIL: mpifort's program has no libvtrace"; exit 1; }
ldd ./f77_wrapped | grep -q libmpich && { echo "FAIL: mpifort's program is linked with MPICH"; exit 1; }
for p in p2p_blocking f77_pingpong f08_pmpi; do
    ldd ./test/mpi/$p | grep -q 'libmpi\.so\.40' || { echo "FAIL: $p is not linked with Open MPI"; exit 1; }
    ldd ./test/mpi/$p | grep -q 'libmpich' && { echo "FAIL: $p is linked with MPICH too"; exit 1; }
done
skip=persistent,truncate
# one MPI job at a time on the machine, as the parent build's tests (run-mpi-test.sh)
# (check-TESTS: only these tests, without building the whole tree)
# shellcheck disable=SC2086
PBT_SKIP_LIB=$skip make check-TESTS TESTS="$(echo $tests)" > check.out 2>&1
status=$?
# pb_transparency: what the program sees with the header on every message
# (VTRACE_MODE=reduced), compared line for line with what it sees without the layer
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
for mode in off reduced; do
    mkdir -p "pbt.$mode" && (cd "pbt.$mode" && PBT_SKIP_LIB=$skip VTRACE_MODE=$mode VTRACE_DIR=trace \
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        $lock timeout -k 10 600 mpiexec.openmpi -n 2 ../test/mpi/pb_transparency > run.out 2>&1) ||
        { tail -20 "pbt.$mode/run.out"; echo "FAIL: pb_transparency, VTRACE_MODE=$mode"; status=1; }
done
for r in 0 1; do
    cmp -s "pbt.off/pbt.$r.log" "pbt.reduced/pbt.$r.log" ||
        { diff "pbt.off/pbt.$r.log" "pbt.reduced/pbt.$r.log" | head -20
          echo "FAIL: pb_transparency: rank $r sees something else with the layer's header"; status=1; }
done
[ -d pbt.reduced/trace ] || { echo "FAIL: pb_transparency wrote no reduced trace"; status=1; }
grep -c '' pbt.off/pbt.0.log pbt.off/pbt.1.log
grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL):' check.out
n=$(grep -c -E '^(PASS|SKIP):' check.out)
want=$(echo $tests | wc -w)
[ "$n" -eq "$want" ] || status=1
if [ "$status" -ne 0 ]; then
    for t in $tests; do
        grep -q '^PASS' "$t.log" 2> /dev/null || { echo "== $t.log"; tail -25 "$t.log"; }
    done
    echo "FAIL: $n of $want tests passed (or skipped) under Open MPI"
    exit 1
fi
cd / && rm -rf "$work"
exit 0
