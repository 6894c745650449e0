#!/bin/sh
# vtrace reduce and compensate copy every rank's RANKDEFS (vt_trace_raw_block); the reader
# serves it from the rank's bytes kept when the trace was opened (trace_keep in
# format/reader.c) where they fit, else from its file. One trace reduced (stored, and
# --no-store) and compensated with nothing kept (VTRACE_TEST_KEEP=0), some ranks kept
# (a budget of half the trace's bytes: the rest read from their files) and all kept
# must give the same outputs, byte for byte.
set -u
VTRACE=${VTRACE:-./vtrace}
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
work=test/model/reduce_kept.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: reduce_kept.sh: $*"; exit 1; }
"$VTRACE" synth -q -n 64 -i 20 "$work/full" > /dev/null || fail "vtrace synth"
half=$(cat "$work"/full/rank-*.vte | wc -c)
half=$((half / 2))
for keep in 0 "$half" ""; do
    k=${keep:-all}
    VTRACE_TEST_KEEP=$keep "$VTRACE" reduce "$work/full" "$work/st.$k" > "$work/st.$k.out" 2>&1 ||
        fail "reduce, VTRACE_TEST_KEEP=$keep: $(cat "$work/st.$k.out")"
    VTRACE_TEST_KEEP=$keep "$VTRACE" reduce --no-store "$work/full" "$work/red.$k" > "$work/red.$k.out" 2>&1 ||
        fail "reduce --no-store, VTRACE_TEST_KEEP=$keep: $(cat "$work/red.$k.out")"
    VTRACE_TEST_KEEP=$keep "$VTRACE" compensate "$work/full" "$work/comp.$k" > "$work/comp.$k.out" 2>&1 ||
        fail "compensate, VTRACE_TEST_KEEP=$keep: $(cat "$work/comp.$k.out")"
done
grep -q "marked stored" "$work/st.all.out" || fail "the stored case is not stored: $(cat "$work/st.all.out")"
grep -q "marked stored" "$work/red.all.out" && fail "--no-store stored the trace"
for k in 0 "$half"; do
    for o in st red comp; do
        # (the output names OUT)
        sed "s|/$o\.$k|/$o.all|" "$work/$o.$k.out" | cmp -s - "$work/$o.all.out" || fail "$o: VTRACE_TEST_KEEP=$k prints otherwise than all kept"
        diff -r "$work/$o.$k" "$work/$o.all" > /dev/null || fail "$o: VTRACE_TEST_KEEP=$k writes otherwise than all kept"
    done
done
# that the kept bytes were read: with all kept, a rank file is opened once (when the
# trace is opened), with none kept again for its RANKDEFS and its events
if command -v strace > /dev/null 2>&1; then
    for keep in 0 ""; do
        VTRACE_TEST_KEEP=$keep strace -f -e trace=openat -o "$work/strace.${keep:-all}" \
            "$VTRACE" reduce --no-store "$work/full" "$work/strace.out" > /dev/null 2>&1 || fail "reduce under strace"
    done
    n=$(grep -c 'rank-000005.vte", O_RDONLY' "$work/strace.all")
    [ "$n" = 1 ] || fail "all kept: rank 5's file opened $n times, not once"
    n=$(grep -c 'rank-000005.vte", O_RDONLY' "$work/strace.0")
    [ "$n" -ge 3 ] || fail "none kept: rank 5's file opened $n times, not 3 or more"
else
    echo "no strace: the reads of the kept bytes are not counted"
fi
echo "PASS: reduce_kept.sh"
