#!/bin/sh
# Call sites as function (file:line) (analysis/symbols.h): examples/halo.c built with -g
# by the MPI compiler and traced through LD_PRELOAD on 2 ranks. The lines of its MPI
# calls are found in the source with grep, not written here. Every command and export
# that names call sites names them (dump text and JSON, patterns, critical-path, domino,
# info, report, perfetto, paraver .pcf, OTF2 when built); then the binary is moved and
# stripped: module+offset without debug information, lines again with --debug-dir
# (NAME.debug) and with VTRACE_DEBUG_PATH (.build-id/xx/yyyy.debug); then another build
# at the recorded path: module+offset and a note, never its lines. Skips (77) without
# mpiexec, without objcopy/strip/readelf, or when vtrace was built without libdw.
. "$(dirname "$0")/common.sh"
V=$vtrace
cc=${VTEST_MPI_CC:-mpicc}
lib=$builddir/.libs/libvtrace.so
src=$srcdir/examples/halo.c
need_mpiexec
for tool in objcopy strip readelf; do
    command -v $tool > /dev/null 2>&1 || { echo "$me: no $tool; skipping"; exit 77; }
done
[ -f "$lib" ] || { echo "$me: $lib is not built" >&2; exit 99; }
new_work
mkdir "$work/bin" "$work/moved" "$work/dbg" || exit 99

# The lines of the calls, from the source.
line_of() { grep -n "$1(" "$src" | head -n 1 | cut -d: -f1; }
allreduce=$(line_of MPI_Allreduce)
waitall=$(line_of MPI_Waitall)
mpi_lines=$(grep -n 'MPI_[A-Z][a-z_]*(' "$src" | cut -d: -f1 | tr '\n' ' ')
[ -n "$allreduce" ] && [ -n "$waitall" ] || { echo "$me: no MPI_Allreduce/MPI_Waitall in $src" >&2; exit 99; }
echo "$src: MPI_Allreduce at line $allreduce, MPI_Waitall at $waitall; MPI calls at $mpi_lines"

app=$work/bin/halo
"$cc" -g -O0 -o "$app" "$src" || { echo "$me: cannot build $src" >&2; exit 99; }
iters=20
echo "+ LD_PRELOAD=$lib $VTEST_MPIEXEC -n 2 $app $iters 1024 100"
if ! locked env LD_PRELOAD="$lib" VTRACE_DIR="$work/t" "$VTEST_MPIEXEC" -n 2 "$app" $iters 1024 100 > "$work/run.out" 2>&1; then
    cat "$work/run.out"
    fail "the traced run failed"
    exit 1
fi
t=$work/t
"$V" info "$t" > "$work/info.out" || fail "vtrace info"
if ! grep -q "define HAVE_LIBDW 1" "$builddir/src/vt_config.h"; then
    echo "$me: vtrace was built without libdw; skipping"
    exit 77
fi

# every command and export
"$V" dump "$t" > "$work/dump.out" || fail "vtrace dump"
n=$(grep -c "MPI_Allreduce .*site=main(halo.c:$allreduce)\( \|$\)" "$work/dump.out")
[ "$n" -eq $((2 * iters)) ] || fail "dump: $n MPI_Allreduce records at main(halo.c:$allreduce), expected $((2 * iters))"
"$V" dump --json "$t" > "$work/dump.json" || fail "vtrace dump --json"
grep -q "\"site\":\"main (halo.c:$waitall)\"" "$work/dump.json" ||
    fail "dump --json: no site \"main (halo.c:$waitall)\""
"$V" patterns "$t" > "$work/patterns.out" || fail "vtrace patterns"
grep -q "Collective Communication .* main (halo.c:$allreduce)\$" "$work/patterns.out" ||
    fail "patterns: no Collective Communication row at main (halo.c:$allreduce)"
"$V" patterns --json "$t" > "$work/patterns.json" || fail "vtrace patterns --json"
grep -q "\"source\":\"main (halo.c:$allreduce)\"" "$work/patterns.json" ||
    fail "patterns --json: no source main (halo.c:$allreduce)"
"$V" critical-path -q "$t" > "$work/cp.out" || fail "vtrace critical-path"
sed -n '/^per call site/,/^$/p' "$work/cp.out" | grep -q "main (halo.c:$allreduce) " ||
    fail "critical-path: main (halo.c:$allreduce) is not in the time per call site"
"$V" domino -q --threshold 1us "$t" > "$work/domino.out" || fail "vtrace domino"
steps=$(grep -c '^ *[0-9][0-9]* [0-9]*:[0-9]' "$work/domino.out")
named=0
for l in $mpi_lines; do
    k=$(grep '^ *[0-9][0-9]* [0-9]*:[0-9]' "$work/domino.out" | grep -c "main (halo.c:$l)\$")
    named=$((named + k))
done
[ "$steps" -gt 0 ] && [ "$named" -eq "$steps" ] ||
    fail "domino: $named of $steps steps name the line of an MPI call of halo.c"
# whatif's site: selector by FILE:LINE, FILE and FUNCTION: the bursts ending at the
# Allreduce line gain; the whole file and main at least as much; a line with no MPI
# call matches nothing (and says so)
"$V" whatif --json --threshold 1us -s "site:halo.c:$allreduce=elim" -s "site:halo.c=elim" -s "site:main=elim" \
    -s "site:halo.c:1=elim" "$t" > "$work/whatif.json" 2> "$work/whatif.err" || fail "vtrace whatif site:"
"${VTEST_PYTHON:-python3}" - "$work/whatif.json" <<'PY' || fail "whatif site:FILE:LINE, FILE, FUNCTION: $(cat "$work/whatif.json")"
import json, sys
g = [json.loads(l)["gain_ns"] for l in open(sys.argv[1])]
assert g[0] > 0 and g[1] >= g[0] and g[2] >= g[0] and g[3] == 0, g
PY
grep -q "site:halo.c:1 matches no candidate event" "$work/whatif.err" || fail "whatif: no note for site:halo.c:1"
grep -Eq "^sites: +([0-9]+) call sites, \\1 with function, file and line" "$work/info.out" ||
    fail "info: not every call site has a line: $(grep '^sites:' "$work/info.out")"
"$V" report -q -o "$work/report.html" "$t" || fail "vtrace report"
grep -q "main (halo.c:$allreduce)" "$work/report.html" || fail "report: no main (halo.c:$allreduce)"
"$V" export --format=perfetto -q "$t" "$work/p.json" || fail "perfetto export"
grep -q "\"call site\":\"main (halo.c:$waitall)\"" "$work/p.json" || fail "perfetto: no call site main (halo.c:$waitall)"
"$V" export --format=paraver -q "$t" "$work/pv" || fail "paraver export"
grep -Eq "^[0-9]+ +main \\(halo.c:$allreduce\\)\$" "$work/pv.pcf" || fail "paraver .pcf: no value main (halo.c:$allreduce)"
# Extrae's caller types: the function and "LINE (FILE)" of each call, at its entry
"${VTEST_PYTHON:-python3}" - "$work/pv.pcf" "$work/pv.prv" "$allreduce" <<'PY' || fail "paraver: caller types 70000001/80000001"
import re, sys
pcf, prv, line = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines(), sys.argv[3]
def values(t):
    m = re.search(r"EVENT_TYPE\n0 +%d +[^\n]*\nVALUES\n(.*?)\n\n" % t, pcf, re.S)
    return dict(l.split(None, 1)[::-1] for l in m.group(1).splitlines() if l.split()[0] != "0") if m else {}
fn, ln = values(70000001), values(80000001)
assert "main" in fn and "%s (halo.c)" % line in ln, (fn, ln)
want = "70000001:%s:80000001:%s" % (fn["main"], ln["%s (halo.c)" % line])
calls = [l for l in prv if l.startswith("2:") and ":50000002:10:" in l]   # MPI_Allreduce's entries
assert calls and all(want in l for l in calls), (want, calls[:2])
PY
if "$V" export --format=otf2 -q "$t" "$work/o2" 2> "$work/o2.err" && command -v otf2-print > /dev/null 2>&1; then
    otf2-print -G "$work/o2/traces.otf2" > "$work/o2.defs" 2>&1
    grep -Eq "^SOURCE_CODE_LOCATION .*halo.c\" <[0-9]+>, Line Number: $allreduce\$" "$work/o2.defs" ||
        fail "OTF2: no source-code location halo.c:$allreduce"
else
    echo "$me: no OTF2 export here ($(cat "$work/o2.err")); not checked"
fi

# moved and stripped: the recorded path is gone
id=$(readelf -n "$app" | sed -n 's/.*Build ID: *//p')
[ -n "$id" ] || { echo "$me: $app has no GNU build-id" >&2; exit 99; }
objcopy --only-keep-debug "$app" "$work/halo.debug" && cp "$app" "$work/moved/halo" && strip "$work/moved/halo" &&
    mv "$app" "$work/bin/halo.orig" || exit 99
first_site() { "$V" dump --rank 0 "$@" "$t" 2> "$work/err" | sed -n 's/.*MPI_Allreduce .*site=\([^ ]*\).*/\1/p' | head -n 1; }
s=$(first_site)
case $s in halo+0x*) ;; *) fail "moved binary: site '$s', expected module+offset halo+0x...";; esac
s=$(first_site --debug-dir "$work/moved")
case $s in halo+0x*) ;; *) fail "stripped binary, no debug file: site '$s', expected halo+0x...";; esac
cp "$work/halo.debug" "$work/moved/halo.debug"
s=$(first_site --debug-dir "$work/moved")
[ "$s" = "main(halo.c:$allreduce)" ] || fail "--debug-dir with halo.debug: site '$s', expected main(halo.c:$allreduce)"
rm "$work/moved/halo.debug"
mkdir -p "$work/dbg/.build-id/$(echo "$id" | cut -c1-2)"
cp "$work/halo.debug" "$work/dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
s=$(VTRACE_DEBUG_PATH="$work/dbg" first_site)
[ "$s" = "main(halo.c:$allreduce)" ] ||
    fail "VTRACE_DEBUG_PATH with .build-id/xx/yyyy.debug: site '$s', expected main(halo.c:$allreduce)"

# another build at the recorded path: its lines would be wrong
"$cc" -g -O1 -DHALO_OTHER_BUILD -o "$app" "$src" || exit 99
id2=$(readelf -n "$app" | sed -n 's/.*Build ID: *//p')
[ "$id2" != "$id" ] || { echo "$me: the second build has the same build-id" >&2; exit 99; }
s=$(first_site)
case $s in halo+0x*) ;; *) fail "another build: site '$s', expected module+offset halo+0x...";; esac
grep -q "not the one traced" "$work/err" || fail "another build: no note on stderr ($(cat "$work/err"))"
"$V" dump "$t" 2> /dev/null | grep -q "halo.c:" && fail "another build: dump names lines of halo.c"
echo "ok: sites as main (halo.c:LINE) in every output; moved, stripped and rebuilt binaries handled"
finish
