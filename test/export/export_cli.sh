#!/bin/sh
# vtrace export --format=perfetto|paraver: the synthetic trace (test/reader/synth), its
# reduced trace, and the trace of examples/halo on 2 ranks (full and reduced), each
# export checked by check_export.py against `vtrace dump --json` and the message counts
# (`vtrace info --json` for a full trace, `vtrace reduce`'s "recorded" for a reduced
# one); the checker is shown to catch broken files; and the errors a user can make:
# unknown format, missing OUT (exit 2), an OUT that cannot be created or written, a full
# disk (exit 1, naming the file).
set -u
me=export_cli.sh
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
SYNTH=${SYNTH:-./test/reader/synth}
PYTHON=${VTEST_PYTHON:-python3}
CHECK="$top_srcdir/test/export/check_export.py"
work=test/export/export_cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
command -v "$PYTHON" > /dev/null 2>&1 || { echo "SKIP: $me: no python3"; exit 77; }
fail=0
bad() { echo "FAIL: $me: $*"; fail=1; }

# expect STATUS PATTERN CMD...: exit status and a pattern in stdout+stderr
expect() {
    st=$1 pat=$2
    shift 2
    "$@" > "$work/out" 2>&1
    rc=$?
    if [ "$rc" != "$st" ] || ! grep -q -e "$pat" "$work/out"; then
        cat "$work/out"
        bad "'$*' exited $rc (expected $st) or does not print '$pat'"
    fi
}

messages() { # messages of a full trace
    "$VTRACE" info --json "$1" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["messages"])'
}

# export_both NAME DIR MESSAGES: both formats of DIR, checked
export_both() {
    name=$1 dir=$2 n=$3
    "$VTRACE" dump --json "$dir" > "$work/$name.jsonl" || { bad "dump $dir"; return; }
    if "$VTRACE" export --quiet --format=perfetto "$dir" "$work/$name.json"; then
        "$PYTHON" "$CHECK" perfetto "$work/$name.json" "$work/$name.jsonl" "$n" || bad "perfetto export of $name"
    else
        bad "export --format=perfetto $dir"
    fi
    if "$VTRACE" export --quiet --format paraver "$dir" "$work/$name"; then
        "$PYTHON" "$CHECK" paraver "$work/$name" "$work/$name.jsonl" "$n" || bad "paraver export of $name"
    else
        bad "export --format paraver $dir"
    fi
}

# reduce FULL RED THRESHOLD: prints the recorded messages
reduce() {
    "$VTRACE" reduce --threshold "$3" "$1" "$2" > "$work/reduce.out" || { cat "$work/reduce.out"; return 1; }
    sed -n 's/^messages .* \([0-9][0-9]*\) recorded$/\1/p' "$work/reduce.out"
}

"$SYNTH" "$work/t" > /dev/null || { echo "FAIL: $me: cannot make the synthetic trace"; exit 1; }
n=$(messages "$work/t")
[ -n "$n" ] && [ "$n" -gt 0 ] || bad "the synthetic trace has no messages ($n)"
export_both synth "$work/t" "$n"
nr=$(reduce "$work/t" "$work/r" 100ns) || bad "vtrace reduce"
[ -n "$nr" ] && [ "$nr" -gt 0 ] || bad "the reduced synthetic trace records no message ($nr)"
export_both synth-reduced "$work/r" "$nr"

# The checker catches broken files (so a passing check means something).
cat "$work/synth.json" | "$PYTHON" -c '
import sys
out = [l for l in sys.stdin if "\"ph\":\"f\"" not in l or "\"id\":3," not in l]
sys.stdout.write("".join(out))' > "$work/broken.json"
"$PYTHON" "$CHECK" perfetto "$work/broken.json" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: a flow without finish passes"
sed 's/"dur":0.300/"dur":9.300/' "$work/synth.json" > "$work/broken.json"
"$PYTHON" "$CHECK" perfetto "$work/broken.json" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: overlapping slices pass"
grep -v '"thread_name","pid":2,' "$work/synth.json" > "$work/broken.json"
"$PYTHON" "$CHECK" perfetto "$work/broken.json" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: an unnamed thread passes"
head -c 2000 "$work/synth.json" > "$work/broken.json"
"$PYTHON" "$CHECK" perfetto "$work/broken.json" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: truncated JSON passes"
grep -v vtrace:aggregated "$work/synth-reduced.json" > "$work/broken.json"
"$PYTHON" "$CHECK" perfetto "$work/broken.json" "$work/synth-reduced.jsonl" "$nr" > /dev/null &&
    bad "checker: a reduced export without aggregated slices passes"
for f in prv pcf row; do cp "$work/synth.$f" "$work/broken.$f"; done
awk 'NR == 3 { held = $0; next } NR == 4 { print; print held; next } { print }' "$work/synth.prv" > "$work/broken.prv"
"$PYTHON" "$CHECK" paraver "$work/broken" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: unsorted records pass"
grep -v '^3:' "$work/synth.prv" > "$work/broken.prv"
"$PYTHON" "$CHECK" paraver "$work/broken" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: missing communications pass"
cp "$work/synth.prv" "$work/broken.prv"
grep -v 'MPI_Send$' "$work/synth.pcf" > "$work/broken.pcf"
"$PYTHON" "$CHECK" paraver "$work/broken" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: an unnamed event value passes"
sed '1s/:1:3(1:1,1:2,1:1)$/:1:3(1:1,1:2,1:2)/' "$work/synth.prv" > "$work/broken.prv"
cp "$work/synth.pcf" "$work/broken.pcf"
"$PYTHON" "$CHECK" paraver "$work/broken" "$work/synth.jsonl" "$n" > /dev/null &&
    bad "checker: a wrong header passes"

# Errors.
expect 2 "unknown format 'vampir'" "$VTRACE" export --format=vampir "$work/t" "$work/x"
expect 2 "expected DIR and OUT" "$VTRACE" export --format=perfetto "$work/t"
expect 2 "missing --format" "$VTRACE" export "$work/t" "$work/x"
expect 2 "unknown option" "$VTRACE" export --frobnicate --format=paraver "$work/t" "$work/x"
expect 1 "vtrace.defs" "$VTRACE" export --format=perfetto "$work/nothere" "$work/x.json"
expect 1 "/proc/vtrace-no-such-dir/x.json: cannot create" \
    "$VTRACE" export --format=perfetto "$work/t" /proc/vtrace-no-such-dir/x.json
expect 1 "/proc/vtrace-no-such-dir/x.prv: cannot create" \
    "$VTRACE" export --format=paraver "$work/t" /proc/vtrace-no-such-dir/x
if [ -w /dev/full ]; then
    expect 1 "/dev/full: cannot write: No space left on device" \
        "$VTRACE" export --format=perfetto "$work/t" /dev/full
    ln -s /dev/full "$work/full.prv"
    expect 1 "full.prv: cannot write: No space left on device" \
        "$VTRACE" export --format=paraver "$work/r" "$work/full"
    rm -f "$work/full.prv" && ln -s /dev/full "$work/full.pcf"
    expect 1 "full.pcf: cannot write: No space left on device" \
        "$VTRACE" export --format=paraver "$work/t" "$work/full"
fi

# A real run: examples/halo on 2 ranks, under the machine's one MPI lock.
# the launcher configure found (MPICH's or Open MPI's), never a bare mpiexec from PATH
mpiexec=${VTEST_MPIEXEC:-}
if [ -z "$mpiexec" ] || [ ! -x ./examples/halo ] || ! command -v flock > /dev/null 2>&1; then
    echo "$me: no mpiexec, flock or examples/halo: the halo part is skipped"
else
    if flock "${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}" env VTRACE_DIR="$work/halo" \
        timeout -k 10 120 "$mpiexec" -n 2 ./examples/halo 20 1024 100 > "$work/halo.out" 2>&1; then
        n=$(messages "$work/halo")
        [ -n "$n" ] && [ "$n" -ge 80 ] || bad "the halo trace has $n messages (expected 4 per iteration and more)"
        export_both halo "$work/halo" "$n"
        nr=$(reduce "$work/halo" "$work/halo-r" 50us) || bad "vtrace reduce of the halo trace"
        export_both halo-reduced "$work/halo-r" "$nr"
    else
        cat "$work/halo.out"
        bad "examples/halo did not run"
    fi
fi

[ "$fail" = 0 ] || exit 1
[ -n "${VT_KEEP:-}" ] || rm -rf "$work"
echo "PASS: $me"
