#!/bin/sh
# The vtrace command on damaged traces and bad command lines: exit status 1 with
# "vtrace: FILE: offset N: expected ..." on stderr for bad input (never a crash),
# 2 with the usage for bad options. Run from the top build directory.
set -u
top=$(pwd)
vtrace=$top/vtrace
synth=$top/test/reader/synth
work=$top/test/reader/cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
"$synth" "$work/good" || exit 99
fail=0

# expect STATUS PATTERN CMD...: exit status and a stderr line matching PATTERN (grep -E)
expect() {
    want=$1 pat=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL: '$*' exited with $rc, expected $want"
        cat "$work/err"
        fail=1
    elif [ -n "$pat" ] && ! grep -Eq "$pat" "$work/err"; then
        echo "FAIL: '$*': stderr does not match '$pat':"
        cat "$work/err"
        fail=1
    fi
}

# fresh copy of the good trace as $work/t
fresh() {
    rm -rf "$work/t" && cp -r "$work/good" "$work/t" || exit 99
}

# patch FILE OFFSET OCTAL-BYTE: overwrite one byte
patch() {
    printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null || exit 99
}

expect 0 '' "$vtrace" info "$work/good"
expect 0 '' "$vtrace" dump "$work/good"
expect 0 '' "$vtrace" --version
expect 0 '' "$vtrace" help
expect 0 '' "$vtrace" help dump
expect 0 '' "$vtrace" info --help
grep -q '^usage: vtrace info' "$work/out" || { echo "FAIL: info --help"; fail=1; }

# usage errors
expect 2 'usage: vtrace' "$vtrace"
expect 2 "unknown command 'frobnicate'" "$vtrace" frobnicate "$work/good"
expect 2 "unknown option '--bogus'" "$vtrace" info --bogus "$work/good"
expect 2 "see 'vtrace dump --help'" "$vtrace" dump --rank
expect 2 'rank number' "$vtrace" dump --rank x "$work/good"
expect 2 'the trace has 3 ranks' "$vtrace" dump --rank 3 "$work/good"
expect 2 'missing trace directory' "$vtrace" info
expect 2 'more than one' "$vtrace" info "$work/good" "$work/good"
expect 2 "unknown command 'nope'" "$vtrace" help nope

err='^vtrace: .*/t/'
# truncated rank file (missing END)
for n in 0 10 16 40 300 700; do
    fresh
    head -c $n "$work/good/rank-000001.vte" >"$work/t/rank-000001.vte"
    expect 1 "${err}rank-000001\\.vte: offset [0-9]+: expected" "$vtrace" info "$work/t"
done
fresh
size=$(wc -c <"$work/good/rank-000002.vte")
head -c $((size - 24)) "$work/good/rank-000002.vte" >"$work/t/rank-000002.vte"
expect 1 "${err}rank-000002\\.vte: offset $((size - 24)): expected block header or END, found end of file" \
    "$vtrace" info "$work/t"
# flipped bytes (payload: CRC; header fields)
for off in 20 30 100 400 900; do
    fresh
    patch "$work/t/rank-000000.vte" $off 377
    expect 1 "${err}rank-000000\\.vte: offset [0-9]+: expected" "$vtrace" info "$work/t"
    expect 1 "${err}rank-000000\\.vte: offset [0-9]+: expected" "$vtrace" dump "$work/t"
done
# wrong major version, wrong magic
fresh
patch "$work/t/rank-000001.vte" 8 003
expect 1 "${err}rank-000001\\.vte: offset 8: expected major version 1 to 2, found 3" "$vtrace" info "$work/t"
fresh
patch "$work/t/vtrace.defs" 0 130
expect 1 "${err}vtrace\\.defs: offset 0: expected magic VTRACE" "$vtrace" dump "$work/t"
# missing rank file, missing directory
fresh
rm "$work/t/rank-000002.vte"
expect 1 "${err}rank-000002\\.vte: offset 0: expected the rank file of rank 2, found none" "$vtrace" info "$work/t"
expect 1 '^vtrace: .*/nonexistent/vtrace\.defs: offset 0: expected' "$vtrace" info "$work/nonexistent"
# unmatched message: info fails, --no-match and dump do not
rm -rf "$work/u" && "$synth" "$work/u" --unmatched || exit 99
expect 1 '^vtrace: .*/u/rank-000000\.vte: offset [0-9]+: expected a receive matching send record 1 of rank 0' \
    "$vtrace" info "$work/u"
expect 0 '' "$vtrace" info --no-match "$work/u"
expect 0 '' "$vtrace" dump "$work/u"

# a FIFO in place of a trace file is refused at once, not waited on
for f in vtrace.defs rank-000001.vte; do
    fresh
    rm -f "$work/t/$f" && mkfifo "$work/t/$f" || exit 99
    expect 1 "$f: offset 0: expected .*a regular file" timeout 10 "$vtrace" info "$work/t"
done
# the commands that load a rank's records, on a trace whose first event block claims 2^31
# records (the block header is the file's word until its records are read): an error
# about the records, within 2 GB (ulimit -v), never an allocation of the claimed size
fresh
python3 - "$work/t/rank-000000.vte" <<'PY' || exit 99
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off = 16
while off + 24 <= len(d):
    typ, stored = d[off + 4], struct.unpack_from("<I", d, off + 8)[0]
    if typ in (2, 6):
        struct.pack_into("<I", d, off + 20, 0x7fffffff)
        break
    off += 24 + stored
open(sys.argv[1], "wb").write(d)
PY
for cmd in patterns "compensate" "whatif" "critical-path" "reduce"; do
    out=
    case $cmd in compensate | reduce) out="$work/out-$cmd" ;; esac
    # (a sanitizer build maps its shadow memory beyond any ulimit -v; it aborts on a huge
    # allocation by itself: test/build/sanitizers.sh sets VTEST_NO_ULIMIT)
    expect 1 'rank-000000\.vte: offset [0-9]+: expected' sh -c "${VTEST_NO_ULIMIT:+:} ulimit -v 2000000; exec \"\$0\" \"\$@\"" \
        "$vtrace" $cmd "$work/t" $out
done
# a bad value in the configuration string: the file, the offset and what was expected,
# its bytes shown printable
fresh
python3 - "$work/t/vtrace.defs" <<'PY' || exit 99
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
def uvar(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1; v |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            return v, i
def put(v):
    o = bytearray()
    while True:
        if v < 0x80:
            return bytes(o + bytes([v]))
        o.append(v & 0x7f | 0x80); v >>= 7
off = 16
typ, codec, stored = d[off + 4], d[off + 5], struct.unpack_from("<I", d, off + 8)[0]
assert typ == 4 and codec == 0
p = bytes(d[off + 24:off + 24 + stored])
i = 0
for _ in range(2):
    n, i = uvar(p, i); i += n
n, j = uvar(p, i)
cfg = p[j:j + n] + b"VTRACE_THRESHOLD=\x01ms\n"
p = p[:i] + put(len(cfg)) + cfg + p[j + n:]
hdr = struct.pack("<IBBHIIII", 0x4B4C4256, 4, 0, 0, len(p), len(p), zlib.crc32(p), 0)
open(sys.argv[1], "wb").write(bytes(d[:off]) + hdr + p + bytes(d[off + 24 + stored:]))
PY
# every command that reads the model's parameters from it says so (T: the trace)
for cmd in "whatif T" "domino T" "critical-path T" "patterns T" "reduce T $work/t.red" "compensate T $work/t.cmp" \
    "export --format=paraver T $work/t.prv" "export --format=perfetto T $work/t.json" "report -o $work/t.html T"; do
    expect 1 "vtrace\\.defs: offset [0-9]+: expected a valid VTRACE_THRESHOLD, found '\\\\x01ms' \\(in the configuration string\\)" \
        "$vtrace" $(echo "$cmd" | sed "s|T|$work/t|")
done
# a mutant of the analyses' fuzzer (test/analysis/fuzz_analyses.c): a call on rank 0
# entered 2^63 ns and more after the previous exit; its burst length overflowed int64
# in the candidates' search (domino, aggregate, whatif/reduce --threshold auto)
damaged=$(cd "${srcdir:-.}/test/reader/damaged" && pwd) || exit 99
expect 1 '^vtrace: .*/time-jump/rank-000000\.vte: offset 16: record 46: expected the call.s enter and exit times less than 2\^63 ns' \
    "$vtrace" domino "$damaged/time-jump"
# a mutant of the reader's fuzzer: a reduced record's message sent 2^63 ns after the
# receive's enter (the send time overflowed int64 in the reduced records' decoder)
for cmd in info dump whatif critical-path patterns; do
    expect 1 '^vtrace: .*/send-time-overflow/rank-000000\.vte: offset 283: expected a send time - enter that keeps the time within 2\^63 ns' \
        "$vtrace" $cmd "$damaged/send-time-overflow"
done

[ $fail = 0 ] && rm -rf "$work"
exit $fail
