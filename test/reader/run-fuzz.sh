#!/bin/sh
# Builds a libFuzzer target with clang and runs it: the reader's (test/reader/fuzz_reader.c)
# or, with FUZZ_TARGET=analyses, the analyses' (test/analysis/fuzz_analyses.c: the
# replay, critical and domino paths, reduce, patterns, clusters on each trace read).
#   test/reader/run-fuzz.sh [SECONDS [WORKDIR]]      (defaults: 60, /tmp/vt-fuzz)
# Environment: CC (default clang), FUZZ_CRC=1 to keep the CRC check (by default the
# fuzz build defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which makes the reader
# ignore CRC mismatches so that mutated payloads reach the parsers), FUZZ_ARGS for
# more libFuzzer options. The seed corpus is made by test/reader/synth.c, and, when
# VTRACE names a built vtrace command, its reduced trace too (REDUCED blocks).
# Crashes are written to WORKDIR/artifacts; the exit status is libFuzzer's.
set -eu
secs=${1:-60}
work=${2:-/tmp/vt-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"

zlibs="-lz"
# (as configure's AC_USE_SYSTEM_EXTENSIONS: qsort_r, vasprintf, renameat2)
echo '#define _GNU_SOURCE 1' >"$work/vt_config.h"
if pkg-config --exists libzstd 2>/dev/null; then
    echo '#define HAVE_ZSTD 1' >>"$work/vt_config.h"
    zlibs="$zlibs $(pkg-config --libs libzstd)"
fi
inc="-I$work -I$top/src -I$top/test/reader"
mode="-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
[ "${FUZZ_CRC:-0}" = 1 ] && mode=""

target=${FUZZ_TARGET:-reader}
reader_src="$(echo "$top"/src/format/reader*.c "$top"/src/format/match*.c) $top/src/format/clockfix.c
    $top/src/format/evcols.c $top/src/format/rcols.c $top/src/format/blockio.c $top/src/format/evdict.c
    $top/src/format/commid.c $top/src/util/blockpool.c"
case $target in
reader) src="$top/test/reader/fuzz_reader.c $reader_src" ;;
analyses)
    src="$top/test/analysis/fuzz_analyses.c $reader_src $top/src/format/rrec.c $top/src/format/stored.c
        $top/src/util/settings.c $top/src/util/aside.c $top/src/util/dpd.c $top/src/model/*.c $top/src/analysis/*.c"
    zlibs="$zlibs -lm" ;;
*) echo "run-fuzz.sh: FUZZ_TARGET is reader or analyses, not $target" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
$CC -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DVT_READER_MAX_RAW='(16u << 20)' $mode $inc $src -o "$work/fuzz_$target" $zlibs
# shellcheck disable=SC2086
$CC -std=gnu11 -g -O1 $inc "$top/test/reader/synth_main.c" "$top/test/reader/synth.c" \
    "$top/src/format/blockio.c" "$top/src/format/evdict.c" "$top/src/format/evcols.c" "$top/src/format/rcols.c" "$top/src/util/blockpool.c" \
    -o "$work/synth" $zlibs

# seeds: the synthetic trace in several shapes, each as one concatenated input
i=0
for opts in "" "--zstd 3 --per-block 1000" "--per-block 1" "--per-block 3" "--unmatched" "--cols --per-block 5" \
    "--cols --zstd 3 --per-block 1000" "--shared --zstd 3 --per-block 8"; do
    rm -rf "$work/seeds/t"
    # shellcheck disable=SC2086
    "$work/synth" "$work/seeds/t" $opts
    cat "$work/seeds/t/vtrace.defs" "$work/seeds/t"/rank-*.vte >"$work/corpus/seed-$i"
    i=$((i + 1))
done
if [ -n "${VTRACE:-}" ] && [ -x "$VTRACE" ]; then
    "$work/synth" "$work/seeds/t"
    rm -rf "$work/seeds/r"
    "$VTRACE" reduce --threshold 100ns --no-compress "$work/seeds/t" "$work/seeds/r" >/dev/null
    cat "$work/seeds/r/vtrace.defs" "$work/seeds/r"/rank-*.vte >"$work/corpus/seed-reduced"
    rm -rf "$work/seeds/r"
    "$VTRACE" reduce --threshold 100ns "$work/seeds/t" "$work/seeds/r" >/dev/null   # REDUCED_COLS, zstd
    cat "$work/seeds/r/vtrace.defs" "$work/seeds/r"/rank-*.vte >"$work/corpus/seed-reduced-cols"
fi
# REDUCED_COLS of format 1.3 and 1.4 (kept traces; the reduce above writes 1.5's form)
for old in "$top"/test/reader/v1.3/p2p-reduced "$top"/test/reader/v1.4/pipeline-reduced; do
    cat "$old/vtrace.defs" "$old"/rank-*.vte >"$work/corpus/seed-$(basename "$(dirname "$old")")-$(basename "$old")"
done
printf 'kw1="VTRACE\\x00E"\nkw2="VTRACE\\x00D"\nkw3="VBLK"\nkw4="MPI_Recv"\nkw5="MPI_Irecv"\nkw6="MPI_Mprobe"\nkw7="MPI_Start"\nkw8="cnptbPTBoqrRkmfO"\n' \
    >"$work/dict"

# shellcheck disable=SC2086
exec "$work/fuzz_$target" -max_total_time="$secs" -dict="$work/dict" -artifact_prefix="$work/artifacts/" \
    -print_final_stats=1 ${FUZZ_ARGS:-} "$work/corpus"
