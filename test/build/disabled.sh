#!/bin/sh
# configure --disable-vtrace installs wrappers that add nothing: the library defines
# no MPI function, so a program linked with it runs on MPI alone and writes no trace.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(pwd)/test/build/disabled.work
rm -rf "$work"
mkdir -p "$work/build"
cd "$work/build" || exit 1
# the parent build's MPI (its C wrapper, from test/mpi/Makefile.mk's LOG_COMPILER)
if ! "$top_srcdir/configure" --disable-vtrace ${VTEST_MPI_CC:+--with-mpi="$VTEST_MPI_CC"} --prefix="$work/inst" \
        > configure.out 2>&1; then
    tail -20 configure.out
    exit 1
fi
grep -q "recording: *no" configure.out || { echo "FAIL: configure does not report recording: no"; exit 1; }
make -j2 libvtrace.la src/wrappers/mpicc > make.out 2>&1 || { tail -20 make.out; exit 1; }
n=$(nm -D --defined-only .libs/libvtrace.so | grep -c ' MPI_\| PMPI_\| mpi_')
[ "$n" -eq 0 ] || { echo "FAIL: the disabled library defines $n MPI symbols"; exit 1; }
cat > hello.c <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("rank %d done\n", r);
    return 0;
}
C
# The wrapper links the library ahead of MPI (here from the build tree).
sed "s|^libdir=.*|libdir=$work/build/.libs|" src/wrappers/mpicc > mpicc.local
sh mpicc.local -o hello hello.c || exit 1
ldd ./hello | grep -q libvtrace || { echo "FAIL: hello is not linked with libvtrace"; exit 1; }
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
VTRACE_DIR="$work/trace" $lock timeout 60 "${VTEST_MPIEXEC:-mpiexec.mpich}" -n 2 ./hello > out.txt 2>&1 || { cat out.txt; exit 1; }
[ "$(grep -c done out.txt)" -eq 2 ] || { cat out.txt; exit 1; }
[ ! -e "$work/trace" ] || { echo "FAIL: a trace was written"; exit 1; }
cd / && rm -rf "$work"
exit 0
