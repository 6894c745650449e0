#!/bin/sh
# A site install as HPC users meet it (issue 17): configure --with-mpi=DIR (a directory
# of MPI wrappers that is not the default, so nothing can be hard-wired) and
# --with-mpi-module, make install into a temporary prefix, then
#   1. the wrappers: -show, -compile-info, -link-info (and MPICH's -compile_info,
#      -link_info) print the complete line with libvtrace ahead of MPI; -show -c has no
#      libraries; the MPI wrapper called is DIR's;
#   2. CMake, a find_package(MPI) project: with -DMPI_C_COMPILER=PREFIX/bin/mpicc, with
#      CC=PREFIX/bin/mpicc, and with nothing but PREFIX/bin first on PATH (as the module
#      sets it: FindMPI takes the compiler beside the first mpiexec, PREFIX/bin/mpiexec,
#      which starts the configured MPI's); a find_package(vtrace) project linking MPI::MPI_C before
#      vtrace::vtrace; and MPI's own mpicc as the control, which must come out untraced;
#   3. mpicc -profile: MPICH's mpicc with the path form, vtrace's with -profile=vtrace;
#      without the library both fail with a message; MPICH's own behaviour for a
#      missing profile (a warning, status 0, untraced) is checked so README.vtrace
#      stays right;
#   4. the module file, with Environment Modules or Lmod: it requires the MPI's module
#      (prereq), and loaded it puts vtrace's mpicc first on PATH and sets VTRACE_ROOT,
#      VTRACE_LIB, VTRACE_PROFILE and CMAKE_PREFIX_PATH.
# Every binary said to be traced shows libvtrace under ldd and writes a trace in a run.
set -u
me=site_install.sh
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$(pwd)
work=$builddir/test/build/site_install.work
mpicc_mpich=$(command -v mpicc.mpich || true)
mpiexec=${VTEST_MPIEXEC:-$(command -v mpiexec.mpich || true)}
[ -n "$mpicc_mpich" ] && [ -n "$mpiexec" ] || { echo "$me: needs MPICH (mpicc.mpich, mpiexec.mpich); skipping"; exit 77; }
# VTEST_SITE_REUSE=1 (for working on this test): keep an earlier install of it
if [ -z "${VTEST_SITE_REUSE:-}" ] || [ ! -x "$work/inst/bin/mpicc" ]; then
    rm -rf "$work"
    reuse=
else
    reuse=yes
fi
mkdir -p "$work/mpi/bin" "$work/src" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
inst=$work/inst
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"

# the MPI: scripts in a directory of their own, calling MPICH's wrappers
for w in mpicc mpicxx mpifort mpiexec; do
    real=$(command -v "$w.mpich" || true)
    [ -n "$real" ] || continue
    printf '#!/bin/sh\nexec %s "$@"\n' "$real" > "$work/mpi/bin/$w" && chmod +x "$work/mpi/bin/$w"
done
cd "$work/src" || exit 99
if [ -z "$reuse" ]; then
    "$top_srcdir/configure" --prefix="$inst" --with-mpi="$work/mpi" --with-mpi-module=mpich/site-test \
        > configure.out 2>&1 || { tail -20 configure.out; fail "configure"; }
    make -j2 install > make.out 2>&1 || make install > make.out 2>&1 || { tail -20 make.out; fail "make install"; }
fi
cd "$work" || exit 99
grep -q "^real=\"$work/mpi/bin/mpicc\"" "$inst/bin/mpicc" || fail "bin/mpicc does not call the configured $work/mpi/bin/mpicc"
grep -q "^real=\"$work/mpi/bin/mpiexec\"" "$inst/bin/mpiexec" || fail "bin/mpiexec does not call the configured $work/mpi/bin/mpiexec"
grep -n '/usr/bin\|mpich' "$top_srcdir/src/wrappers/mpicc.in" "$top_srcdir/src/wrappers/mpiexec.in" &&
    fail "src/wrappers names an MPI itself"

cat > app.c <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int r, s = 0, one = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    printf("rank %d sum %d\n", r, s);
    return s == 2 ? 0 : 1;
}
C
traced() { # traced EXE WHAT: ldd shows the installed libvtrace and a run writes a trace
    case "$1" in /*) ;; *) set -- "$PWD/$1" "$2" ;; esac
    ldd "$1" | grep -q "$inst/lib/libvtrace.so" || { ldd "$1"; fail "$2: $1 is not linked with $inst/lib/libvtrace.so"; }
    rm -rf "$work/trace"
    VTRACE_DIR="$work/trace" $lock timeout 60 "$mpiexec" -n 2 "$1" > run.out 2>&1 || { cat run.out; fail "$2: the run"; }
    "$inst/bin/vtrace" info "$work/trace" > info.out 2>&1 || { cat info.out; fail "$2: no readable trace"; }
    grep -q '^MPI_Allreduce  *2 ' info.out || { cat info.out; fail "$2: the trace lacks the Allreduce calls"; }
    echo "  traced: $2"
}
untraced() {
    ldd "$1" | grep -q libvtrace && fail "$2: $1 is linked with libvtrace"
    echo "  not traced, as expected: $2"
}

# 1. the wrappers' lines
show() { "$inst/bin/mpicc" "$@" 2>&1; }
for opt in -show -compile-info -compile_info -link-info -link_info; do
    line=$(show $opt -o x x.c)
    case "$line" in
        *"-L$inst/lib"*"-lvtrace"*"-lmpich"*) ;;
        *) fail "mpicc $opt: '$line' lacks libvtrace ahead of -lmpich" ;;
    esac
done
case "$(show -show -c x.c)" in *vtrace*) fail "mpicc -show -c adds libvtrace to a compile" ;; esac
echo "  mpicc -show, -compile-info, -compile_info, -link-info, -link_info: $(show -link-info)"
"$inst/bin/mpicc" -o app_wrap app.c || fail "building with bin/mpicc"
traced app_wrap "bin/mpicc"

# 2. CMake
if command -v cmake > /dev/null 2>&1; then
    mkdir -p cm_mpi cm_vt
    cat > cm_mpi/CMakeLists.txt <<'C'
cmake_minimum_required(VERSION 3.13)
project(app C)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(app ../app.c)
target_link_libraries(app PRIVATE MPI::MPI_C)
C
    cat > cm_vt/CMakeLists.txt <<'C'
cmake_minimum_required(VERSION 3.13)
project(app C)
find_package(MPI REQUIRED COMPONENTS C)
find_package(vtrace 0.1 REQUIRED)
add_executable(app ../app.c)
# MPI first on purpose: vtrace::vtrace's link option still puts libvtrace ahead
target_link_libraries(app PRIVATE MPI::MPI_C vtrace::vtrace)
C
    cmbuild() { # cmbuild NAME SRC [env and cmake args...]
        name=$1 src=$2
        shift 2
        mkdir -p "b_$name" && (cd "b_$name" && env "$@" ../"$src" > cmake.out 2>&1 && make VERBOSE=1 > make.out 2>&1) ||
            { cat "b_$name/cmake.out" "b_$name/make.out" 2>/dev/null | tail -30; fail "cmake build $name"; }
    }
    cmbuild compiler cm_mpi cmake -DMPI_C_COMPILER="$inst/bin/mpicc"
    traced b_compiler/app "cmake -DMPI_C_COMPILER=PREFIX/bin/mpicc, find_package(MPI)"
    cmbuild cc cm_mpi CC="$inst/bin/mpicc" cmake
    traced b_cc/app "CC=PREFIX/bin/mpicc cmake, find_package(MPI)"
    cmbuild path cm_mpi PATH="$inst/bin:$PATH" cmake
    traced b_path/app "plain find_package(MPI) with PREFIX/bin first on PATH (the module loaded)"
    cmbuild package cm_vt CMAKE_PREFIX_PATH="$inst" cmake -DMPI_C_COMPILER="$mpicc_mpich"
    traced b_package/app "find_package(vtrace), MPI::MPI_C then vtrace::vtrace"
    cmbuild control cm_mpi cmake -DMPI_C_COMPILER="$mpicc_mpich"
    untraced b_control/app "cmake with MPICH's own mpicc"
else
    echo "$me: no cmake (maint/install-deps.sh installs it); the CMake part is skipped"
fi

# 3. mpicc -profile
mkdir -p prof && cd prof || exit 99
"$mpicc_mpich" -profile="$inst/etc/vtrace" -o app_prof ../app.c || fail "mpicc.mpich -profile=PREFIX/etc/vtrace"
traced app_prof "MPICH's mpicc -profile=PREFIX/etc/vtrace"
"$inst/bin/mpicc" -profile=vtrace -o app_prof2 ../app.c || fail "bin/mpicc -profile=vtrace"
traced app_prof2 "vtrace's mpicc -profile=vtrace"
sysconf=$(sed -n 's/^sysconfdir=//p' "$mpicc_mpich" | head -n 1)
if [ ! -e "$sysconf/vtrace.conf" ]; then
    "$mpicc_mpich" -profile=vtrace -o app_none ../app.c > none.out 2>&1 || fail "MPICH's mpicc now fails for a missing profile: update README.vtrace"
    grep -q "vtrace.conf not found" none.out || { cat none.out; fail "MPICH's mpicc said nothing of the missing profile"; }
    untraced app_none "MPICH's mpicc -profile=vtrace with no vtrace.conf in $sysconf (a warning only: README.vtrace)"
fi
mkdir -p "$work/aside" && mv "$inst"/lib/libvtrace.so* "$inst"/lib/libvtrace.a "$work/aside/" || exit 99
"$mpicc_mpich" -profile="$inst/etc/vtrace" -o app_gone ../app.c > gone.out 2>&1 && fail "mpicc -profile built without libvtrace"
grep -q "libvtrace.so is missing" gone.out || { cat gone.out; fail "mpicc -profile: no message for the missing library"; }
"$inst/bin/mpicc" -o app_gone ../app.c > gone2.out 2>&1 && fail "bin/mpicc built without libvtrace"
grep -q "libvtrace.so is missing" gone2.out || { cat gone2.out; fail "bin/mpicc: no message for the missing library"; }
mv "$work/aside"/* "$inst/lib/" || exit 99
echo "  without libvtrace: both routes fail ($(cat gone.out))"
cd "$work" || exit 99

# 4. the module file
init=
for f in /usr/share/modules/init/sh /usr/share/lmod/lmod/init/sh /etc/profile.d/lmod.sh; do
    [ -r "$f" ] && { init=$f; break; }
done
if [ -z "$init" ]; then
    echo "$me: neither Environment Modules nor Lmod is installed (maint/install-deps.sh installs one); skipping the module file"
    echo "PASS: $me (without the module file)"
    exit 77
fi
mkdir -p mods/mpich && printf '#%%Module1.0\nsetenv SITE_MPI loaded\n' > mods/mpich/site-test
grep -q '^prereq mpich/site-test$' "$inst/share/modulefiles/vtrace/0.1.0" || fail "the module file lacks prereq mpich/site-test"
bash -c '
    . "$1" > /dev/null 2>&1
    module purge > /dev/null 2>&1
    export MODULEPATH="$2/share/modulefiles:$3/mods"
    module load vtrace > load1.out 2>&1
    if [ -z "${VTRACE_ROOT:-}" ]; then
        grep -q "mpich/site-test" load1.out || { cat load1.out; echo "FAIL: the refusal does not name the MPI module"; exit 1; }
        echo "  module load vtrace without its MPI: refused, naming mpich/site-test"
    else
        [ "${SITE_MPI:-}" = loaded ] || { echo "FAIL: vtrace loaded without its MPI module"; exit 1; }
        echo "  module load vtrace: loaded its MPI module mpich/site-test first"
        module purge > /dev/null 2>&1
    fi
    module load mpich/site-test vtrace || exit 1
    [ "$(command -v mpicc)" = "$2/bin/mpicc" ] || { echo "FAIL: mpicc is $(command -v mpicc)"; exit 1; }
    [ "$VTRACE_ROOT" = "$2" ] && [ "$VTRACE_LIB" = "$2/lib/libvtrace.so" ] &&
        [ "$VTRACE_PROFILE" = "$2/etc/vtrace" ] || { echo "FAIL: VTRACE_ROOT/LIB/PROFILE"; env | grep VTRACE; exit 1; }
    case ":$CMAKE_PREFIX_PATH:" in *":$2:"*) ;; *) echo "FAIL: CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"; exit 1 ;; esac
    mpicc -profile=vtrace -o app_mod app.c || exit 1
' sh "$init" "$inst" "$work" || fail "the module file ($init)"
traced app_mod "mpicc -profile=vtrace with the module loaded ($init)"
echo "PASS: $me"
cd / && rm -rf "$work"
