#!/bin/sh
# vtrace reduce from the command line, on the reader tests' synthetic trace: the
# summary, the files it writes (a reduced trace every command reads), and its errors:
# bad options and arguments (exit 2), a reduced trace given as FULL, a missing trace,
# a write failure, a scenario naming an event the reduced trace does not hold (exit 1,
# with a message saying why).
set -u
me=reduce_cli.sh
VTRACE=${VTRACE:-./vtrace}
SYNTH=${SYNTH:-./test/reader/synth}
work=test/model/reduce_cli.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
"$SYNTH" "$work/t" > /dev/null || fail "cannot make the synthetic trace"

# expect STATUS PATTERN CMD...: exit status and a pattern in stdout+stderr
expect() {
    st=$1 pat=$2
    shift 2
    "$@" > "$work/out" 2>&1
    rc=$?
    [ "$rc" = "$st" ] || { cat "$work/out"; fail "'$*' exited $rc, expected $st"; }
    grep -q -e "$pat" "$work/out" || { cat "$work/out"; fail "'$*' does not print '$pat'"; }
}

expect 0 "reduced records" "$VTRACE" reduce --threshold 100ns "$work/t" "$work/r"
expect 0 "kind:      reduced" "$VTRACE" info "$work/r"
expect 0 "^0:[0-9]* [0-9]* [0-9]* COMP " "$VTRACE" dump "$work/r"
expect 0 '"records_out":' "$VTRACE" reduce --json --threshold 100ns "$work/t" "$work/r2"
expect 0 "all equal" "$VTRACE" reduce --check --random 5 --threshold 100ns --no-write "$work/t"
expect 2 "unknown option '--frobnicate'" "$VTRACE" reduce --frobnicate "$work/t" "$work/x"
expect 2 "expected FULL and OUT" "$VTRACE" reduce "$work/t"
expect 2 "OUT must differ from FULL" "$VTRACE" reduce "$work/t" "$work/t"
expect 2 "an integer from 1 to 7" "$VTRACE" reduce --m 9 "$work/t" "$work/x"
expect 2 "all or bursts" "$VTRACE" reduce --candidates some "$work/t" "$work/x"
expect 2 "nofold or noR3" "$VTRACE" reduce --broken-rule other "$work/t" "$work/x"
expect 1 "already a reduced trace" "$VTRACE" reduce "$work/r" "$work/x"
expect 1 "vtrace.defs" "$VTRACE" reduce "$work/nothere" "$work/x"
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$work/ro" && chmod 555 "$work/ro"
    expect 1 "cannot" "$VTRACE" reduce "$work/t" "$work/ro/sub/deeper"
fi
expect 1 "cannot create" "$VTRACE" reduce "$work/t" /proc/vtrace-no-such-dir/x
# a reduced trace holds candidates only, and its own threshold
ev=$("$VTRACE" whatif -l "$work/r" | head -1 | cut -d' ' -f1)
[ -n "$ev" ] || fail "the reduced trace lists no candidate"
expect 0 "predicted" "$VTRACE" whatif -s "$ev=elim" "$work/r"
expect 1 "is not a candidate of this reduced trace" "$VTRACE" whatif -s "0:999999=elim" "$work/r"
rm -rf "$work"
echo "PASS: $me"
