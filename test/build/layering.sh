#!/bin/sh
# The layout of src/ (CONTRIBUTING.md): which folder includes which, no source file over
# 1,000 lines, no call cycle between the files of the run-time library, of the analyses'
# library and of the vtrace command. Then the checker itself: a wrong include, a long
# file and a cycle must each be found.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
check="python3 $top_srcdir/maint/check-layering.py"
status=0
$check "$top_srcdir/src" --objects src/*/libvtrace_la-*.o || status=1
$check "$top_srcdir/src" --cycles-only --objects src/*/libvtread_la-*.o || status=1
$check "$top_srcdir/src" --cycles-only --objects src/tools/*.o || status=1

work=$(pwd)/test/build/layering.work
rm -rf "$work"
mkdir -p "$work/src/format" "$work/src/util" "$work/obj"
printf '#include "analysis/replay.h"\n#include "util/codec.h"\n' > "$work/src/format/up.c"
printf '#include "codec.h"\n' > "$work/src/util/bare.c"
awk 'BEGIN { for (i = 0; i < 1001; i++) print "/* */" }' > "$work/src/util/long.c"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$work/obj/x-a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' > "$work/obj/x-b.c"
${CC:-cc} -c -o "$work/obj/x-a.o" "$work/obj/x-a.c" && ${CC:-cc} -c -o "$work/obj/x-b.o" "$work/obj/x-b.c" || exit 1
out=$($check "$work/src" --objects "$work/obj/x-a.o" "$work/obj/x-b.o")
rc=$?
expect() {
    printf '%s\n' "$out" | grep -q "$1" || { echo "FAIL: the checker did not report: $1"; printf '%s\n' "$out"; status=1; }
}
[ $rc -eq 1 ] || { echo "FAIL: the checker exited $rc on a bad tree, expected 1"; status=1; }
expect 'src/format/up.c:1: src/format may not include "analysis/replay.h"'
expect 'src/util/bare.c:1: includes "codec.h" without its folder'
expect 'src/util/long.c: 1001 lines'
expect 'call cycle between a, b'
printf '%s\n' "$out" | grep -q 'util/codec.h' && { echo "FAIL: an allowed include was reported"; status=1; }
[ $status -eq 0 ] && rm -rf "$work"
exit $status
