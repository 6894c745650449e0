#!/bin/sh
# The trace format, the model and the analyses built with AddressSanitizer and
# UndefinedBehaviorSanitizer (a build of their own): the unit tests, the reader's
# corruption tests, the golden and damaged-trace command tests, every command on
# mutants of test traces (test/tools/fuzz_commands.sh), then each libFuzzer
# harness (test/reader/run-fuzz.sh: the reader's and the analyses') for a short run on
# the corpus of test traces. Any report of a sanitizer fails. The fuzzers need clang with
# libFuzzer; without it they are skipped with a message (the rest still runs).
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
topbuild=$(pwd)
work=$topbuild/test/build/sanitizers.work
secs=${VTEST_FUZZ_SECONDS:-15}
rm -rf "$work"
mkdir -p "$work/build"
cd "$work/build" || exit 99
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if ! "$top_srcdir/configure" CFLAGS="-O1 -g $san" LDFLAGS="$san" --prefix="$work/inst" > configure.out 2>&1; then
    tail -20 configure.out
    exit 1
fi
units="test/unit/test_evcols test/unit/test_poly test/unit/test_rankreduce test/unit/test_clockfix
       test/unit/test_dpd test/unit/test_settings test/reader/test_reader test/reader/test_corrupt"
# shellcheck disable=SC2086
make -j2 vtrace test/reader/synth $units > make.out 2>&1 || { tail -30 make.out; exit 1; }
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in $units; do
    [ -x "$t" ] || continue   # a cmocka test is not built without cmocka
    if ! "./$t" > "$work/$(basename "$t").log" 2>&1; then
        tail -30 "$work/$(basename "$t").log"
        echo "FAIL: sanitizers.sh: $t"
        status=1
    fi
done
for t in golden.sh corrupt_cli.sh; do
    if ! srcdir="$top_srcdir" VTEST_NO_ULIMIT=1 sh "$top_srcdir/test/reader/$t" > "$work/$t.log" 2>&1; then
        tail -30 "$work/$t.log"
        echo "FAIL: sanitizers.sh: test/reader/$t"
        status=1
    fi
done
# every command on damaged traces (the MPI programs of the top build make some seeds)
if ! (cd "$topbuild" && VTEST_VTRACE="$work/build/vtrace" VTEST_WORK="$work/fuzz_commands" \
    VTEST_FUZZ_MUTANTS=${VTEST_FUZZ_MUTANTS:-6} sh "$top_srcdir/test/tools/fuzz_commands.sh") > "$work/fuzz_commands.log" 2>&1; then
    grep -A12 'FAIL' "$work/fuzz_commands.log" | head -40
    echo "FAIL: sanitizers.sh: test/tools/fuzz_commands.sh (mutants kept in $work/fuzz_commands/run/failed)"
    status=1
else
    tail -1 "$work/fuzz_commands.log"
fi
# the fuzzers, briefly, seeded with the test traces (synthetic, compressed, reduced)
cc=${FUZZ_CC:-clang}
if command -v "$cc" > /dev/null 2>&1 && echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
    "$cc" -x c -fsanitize=fuzzer - -o "$work/probe" > /dev/null 2>&1; then
    for target in reader analyses; do
        if ! FUZZ_TARGET=$target CC=$cc VTRACE="$work/build/vtrace" \
            sh "$top_srcdir/test/reader/run-fuzz.sh" "$secs" "$work/fuzz-$target" > "$work/fuzz-$target.log" 2>&1; then
            grep -A20 'ERROR\|runtime error' "$work/fuzz-$target.log" | head -40
            echo "FAIL: sanitizers.sh: the $target fuzzer found a crash (in $work/fuzz-$target/artifacts)"
            status=1
        else
            echo "fuzz $target: $(grep -o 'number_of_executed_units: *[0-9]*' "$work/fuzz-$target.log") in ${secs}s, no report"
        fi
    done
else
    echo "sanitizers.sh: no $cc with libFuzzer: the fuzzers are skipped"
fi
[ $status -eq 0 ] && rm -rf "$work"
exit $status
