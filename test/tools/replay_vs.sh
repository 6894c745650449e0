#!/bin/sh
# maint/bench/replay-vs.sh (issue 15): two builds timed in alternating runs on traces
# each makes with its own synth; one line a rank count with both medians, their rates
# and the ratio; exit status 0 when the predictions agree, 1 when they differ (a "build"
# whose vtrace alters a prediction), 2 for a missing build.
set -u
me=replay_vs.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
script=$srcdir/maint/bench/replay-vs.sh
work=$builddir/test/tools/replay_vs.work
rm -rf "$work" && mkdir -p "$work/fake" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
/usr/bin/time -f '%U' true >/dev/null 2>&1 || { echo "SKIP: $me: GNU time (/usr/bin/time) not installed"; exit 77; }
[ -x "$builddir/vtrace" ] || fail "$builddir/vtrace not built"

RANKS="2 16" EVENTS=3000 sh "$script" "$builddir" "$builddir" 3 > "$work/same.out" 2> "$work/same.err"
rc=$?
[ "$rc" -eq 0 ] || fail "the same build twice: exit status $rc, expected 0: $(cat "$work/same.err")"
grep -q '^processor: ' "$work/same.out" || fail "no processor line: $(cat "$work/same.out")"
for n in 2 16; do
    line=$(grep "^$n " "$work/same.out") || fail "no line for $n ranks: $(cat "$work/same.out")"
    # ranks, records (about EVENTS: whole iterations), 2 x (median (min-max) rate), ratio
    echo "$line" | awk '{ r = $2; if (r < 2000 || r > 3100) exit 1; if ($NF !~ /^([0-9.]+x|-)$/) exit 1 }' ||
        fail "$n ranks: expected about 3000 records and a ratio: $line"
done
grep -q '^load average after: ' "$work/same.out" || fail "no load average after the runs"

# a build that predicts something else
cat > "$work/fake/vtrace" <<FAKE
#!/bin/sh
if [ "\$1" = whatif ]; then
    "$builddir/vtrace" "\$@" | sed 's/predicted [0-9]/predicted 9/'
else
    exec "$builddir/vtrace" "\$@"
fi
FAKE
chmod +x "$work/fake/vtrace"
RANKS=2 EVENTS=3000 sh "$script" "$builddir" "$work/fake" 1 > "$work/diff.out" 2> "$work/diff.err"
rc=$?
[ "$rc" -eq 1 ] || fail "predictions that differ: exit status $rc, expected 1"
grep -q 'the two builds predict differently' "$work/diff.err" || fail "no message for predictions that differ: $(cat "$work/diff.err")"

sh "$script" "$builddir" "$work/nothing" > /dev/null 2> "$work/missing.err"
rc=$?
[ "$rc" -eq 2 ] || fail "a missing build directory: exit status $rc, expected 2"
grep -q 'nothing: not a directory' "$work/missing.err" || fail "no message naming the missing build: $(cat "$work/missing.err")"
rm -rf "$work"
echo "PASS: $me"
