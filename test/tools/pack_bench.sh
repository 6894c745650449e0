#!/bin/sh
# maint/bench/pack-bench.sh: packs, unpacks and compresses the event blocks of a real
# rank file, reading the function table from vtrace.defs when the rank file has none
# (format 1.5); a rank file of packed blocks, or one without a table, is refused by name.
set -u
me=pack_bench.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$builddir/test/tools/pack_bench.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
command -v mpiexec.mpich >/dev/null 2>&1 || { echo "SKIP: $me: mpiexec.mpich not installed"; exit 77; }
[ -x "$builddir/test/mpi/halo_c1" ] || fail "$builddir/test/mpi/halo_c1 not built"

TMPDIR=$work sh "$srcdir/maint/bench/pack-bench.sh" "$builddir" 300 > "$work/out" 2> "$work/err" ||
    fail "exit status $?: $(cat "$work/err")"
bench=$work/vt-pack-bench
[ ! -s "$work/err" ] || fail "unexpected stderr: $(cat "$work/err")"
grep -q '^cpu: .*; load: ' "$work/out" || fail "no processor and load line: $(cat "$work/out")"
# 300 iterations of the halo exchange on rank 0: 6 records an iteration and a few more
awk '/ records, / { n = $2; if (n >= 1800 && n < 1850) ok = 1 } END { exit !ok }' "$work/out" ||
    fail "expected about 1800 records: $(cat "$work/out")"
grep -Eq '^  pack [0-9.]+ ns/record, unpack [0-9.]+ ns/record$' "$work/out" || fail "no pack line: $(cat "$work/out")"
[ "$(grep -c '^  zstd [139]: ' "$work/out")" -eq 3 ] || fail "expected three zstd lines: $(cat "$work/out")"
[ ! -s "$bench/trace/rank-000000.vte" ] && fail "no rank file kept"

# the table is in vtrace.defs: without it the rank file cannot be packed
"$bench/pack-bench" "$bench/trace/rank-000000.vte" > "$work/nodefs.out" 2>&1 && fail "ran without the function table"
grep -q "no function table in $bench/trace/rank-000000.vte" "$work/nodefs.out" ||
    fail "expected 'no function table in FILE': $(cat "$work/nodefs.out")"

# a trace written as usual holds packed blocks
VTRACE_MODE=full VTRACE_DIR="$work/packed" mpiexec.mpich -n 2 "$builddir/test/mpi/halo_c1" 100 1 > /dev/null 2>&1 ||
    fail "the packed trace did not run"
"$bench/pack-bench" "$work/packed/rank-000000.vte" "$work/packed/vtrace.defs" > "$work/packed.out" 2>&1 &&
    fail "packed blocks accepted"
grep -q 'holds packed blocks; write it with VTRACE_COMPRESS=0' "$work/packed.out" ||
    fail "expected 'holds packed blocks': $(cat "$work/packed.out")"

# files that are not what they are given as
printf 'not a trace, and long enough to hold a header' > "$work/junk.vte"
"$bench/pack-bench" "$work/junk.vte" > "$work/junk.out" 2>&1 && fail "junk accepted"
grep -q "cannot read $work/junk.vte: expected a vtrace rank file" "$work/junk.out" ||
    fail "expected 'cannot read FILE: expected a vtrace rank file': $(cat "$work/junk.out")"
"$bench/pack-bench" "$bench/trace/rank-000000.vte" "$bench/trace/rank-000001.vte" > "$work/swap.out" 2>&1 &&
    fail "a rank file accepted as vtrace.defs"
grep -q "cannot read $bench/trace/rank-000001.vte: expected a vtrace definitions file" "$work/swap.out" ||
    fail "expected 'expected a vtrace definitions file': $(cat "$work/swap.out")"
echo "PASS: $me"
