#!/bin/sh
# One command from a fresh clone: install packages, build, install into ./_install,
# trace the bundled group-exchange example with 2 ranks with the run-time reduction
# (VTRACE_MODE=both: the full and the reduced trace of one run), print both with
# `vtrace info`, and ask the reduced one what-if questions (the full one answers alike).
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
VTRACE_MODE=both VTRACE_DIR="$work/trace" "${MPIEXEC:-mpiexec.mpich}" -n 2 "$work/groups"
vtrace=$top/_install/bin/vtrace
echo "== the full trace";    "$vtrace" info "$work/trace/full" | sed -n '1,8p'
echo "== the reduced trace"; "$vtrace" info "$work/trace/reduced"
echo "== what if rank 0's bursts were 50% shorter? (reduced trace, then full trace)"
"$vtrace" whatif -s 'rank:0=-50%' "$work/trace/reduced"
"$vtrace" whatif -s 'rank:0=-50%' "$work/trace/full"
echo "== what to fix first"
"$vtrace" domino --top 3 "$work/trace/reduced" ||
    echo "(no event of this run lasted the candidate threshold, VTRACE_THRESHOLD: nothing to rank)"
echo "traces kept in $work/trace/full and $work/trace/reduced"
