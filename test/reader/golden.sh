#!/bin/sh
# Golden test: 'vtrace info' and 'vtrace dump' of the synthetic trace must equal the
# files in test/reader/golden/ (hand-checked). Run from the top build directory (as
# 'make check' does). VT_UPDATE_GOLDEN=1 rewrites the golden files instead.
set -u
srcdir=${srcdir:-.}
golden=$(cd "$srcdir/test/reader/golden" && pwd) || exit 99
top=$(pwd)
vtrace=$top/vtrace
synth=$top/test/reader/synth
work=$top/test/reader/golden.work
rm -rf "$work" && mkdir -p "$work" || exit 99
"$synth" "$work/synth-trace" || exit 99
"$synth" "$work/synth-zstd" --zstd 3 --per-block 1000 || exit 99
"$synth" "$work/synth-cols" --cols --per-block 5 || exit 99
"$synth" "$work/synth-cols-zstd" --cols --zstd 3 --per-block 1000 || exit 99
cd "$work" || exit 99

fail=0
check() {
    name=$1
    shift
    "$@" >"$name" 2>"$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: '$*' exited with $rc:"
        cat "$name.err"
        fail=1
    fi
    if [ "${VT_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$name" "$golden/$name"
    elif ! diff -u "$golden/$name" "$name"; then
        echo "FAIL: '$*' differs from test/reader/golden/$name"
        fail=1
    fi
}

check info.txt "$vtrace" info synth-trace
check info.json "$vtrace" info --json synth-trace
check dump.txt "$vtrace" dump synth-trace
check dump-rank1.jsonl "$vtrace" dump --json --rank 1 synth-trace

# zstd blocks decode to the same records
"$vtrace" dump synth-zstd >dump-zstd.txt || fail=1
if ! cmp -s "$golden/dump.txt" dump-zstd.txt; then
    echo "FAIL: the dump of the zstd trace differs from the raw one"
    diff -u "$golden/dump.txt" dump-zstd.txt | head -20
    fail=1
fi
# blocks packed in columns (EVENTS_COLS), raw and compressed, decode to the same records
for t in synth-cols synth-cols-zstd; do
    "$vtrace" dump "$t" >"dump-$t.txt" || fail=1
    if ! cmp -s "$golden/dump.txt" "dump-$t.txt"; then
        echo "FAIL: the dump of $t differs from the raw trace's"
        diff -u "$golden/dump.txt" "dump-$t.txt" | head -20
        fail=1
    fi
done
# ... and predict the same (collectives wait for their communicator's members, which
# synth-cols lists compactly: ranges)
"$vtrace" whatif -q --random 30 --json synth-trace > whatif-raw.txt &&
    "$vtrace" whatif -q --random 30 --json synth-cols > whatif-cols.txt && cmp -s whatif-raw.txt whatif-cols.txt ||
    { echo "FAIL: synth-cols predicts otherwise than synth-trace"; fail=1; }
"$vtrace" patterns synth-trace | tail -n +2 > patterns-raw.txt && "$vtrace" patterns synth-cols | tail -n +2 > patterns-cols.txt &&
    cmp -s patterns-raw.txt patterns-cols.txt || { echo "FAIL: synth-cols's wait states differ"; fail=1; }
# --version names the format version the files are written in
version=$(od -An -tu2 -j8 -N4 synth-trace/rank-000000.vte | awk '{print $1 "." $2}')
"$vtrace" --version | grep -q "(trace format $version)" || { echo "FAIL: vtrace --version does not name format $version"; "$vtrace" --version; fail=1; }
# --no-match gives the same profile, without messages
"$vtrace" info --no-match synth-trace | grep -q '^messages:  not matched' || { echo "FAIL: --no-match"; fail=1; }

[ $fail = 0 ] && cd "$top" && rm -rf "$work"
exit $fail
