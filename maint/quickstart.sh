#!/bin/sh
# One command from a fresh clone: install packages, build, install into ./_install,
# trace the bundled group-exchange example with 2 ranks and print `vtrace info`.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "${VTRACE_SKIP_DEPS:-0}" = 1 ] || sh maint/install-deps.sh
[ -x configure ] || ./autogen.sh > /dev/null
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure --prefix="$top/_install" > configure.out
make -j2 > make.out
make install > install.out
cd "$top"
work=$(mktemp -d)
"$top/_install/bin/mpicc" -O2 -o "$work/groups" examples/groups.c
VTRACE_DIR="$work/trace" mpiexec -n 2 "$work/groups"
"$top/_install/bin/vtrace" info "$work/trace"
echo "trace kept in $work/trace"
