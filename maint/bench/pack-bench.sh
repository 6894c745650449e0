#!/bin/sh
# What packing event blocks in columns costs and saves (doc/format.md, EVENTS_COLS):
#   maint/bench/pack-bench.sh BUILDDIR [ITERATIONS]
# traces test/mpi/halo_c1 (a halo exchange with an allreduce; ITERATIONS, default 50000)
# on 2 ranks with VTRACE_COMPRESS=0, then packs, unpacks and compresses rank 0's event
# blocks (maint/bench/pack-bench.c): ns per record and bytes per record. Also prints the
# processor and the load: figures from a loaded machine are not comparable.
set -eu
build=$(cd "${1:?usage: pack-bench.sh BUILDDIR [ITERATIONS]}" && pwd)
iters=${2:-50000}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${TMPDIR:-/tmp}/vt-pack-bench
rm -rf "$work" && mkdir -p "$work"
cc -O2 -std=gnu11 -I"$top/src" -I"$build/src" -o "$work/pack-bench" "$top/maint/bench/pack-bench.c" \
    "$top/src/format/evcols.c" "$top/src/format/rcols.c" "$top/src/util/blockpool.c" -lzstd
VTRACE_MODE=full VTRACE_COMPRESS=0 VTRACE_DIR="$work/trace" mpiexec.mpich -n 2 "$build/test/mpi/halo_c1" "$iters" 1 \
    > /dev/null
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/pack-bench" "$work/trace/rank-000000.vte" "$work/trace/vtrace.defs"
