#!/bin/sh
# vtrace export --format=otf2 on the reader tests' synthetic trace and on its reduced
# trace: otf2-print reads the archives, otf2_check.py (OTF2 Python bindings) checks
# them against `vtrace dump --json`; the check rejects damaged archives and a lost
# receive; the errors a user can make. Skips (77) only when vtrace was built without OTF2.
set -u
SYNTH=${SYNTH:-./test/reader/synth}
. "$(dirname "$0")/otf2_lib.sh"
work=test/export/otf2.work
rm -rf "$work"
mkdir -p "$work"
"$SYNTH" "$work/t" > /dev/null || { echo "cannot make the synthetic trace"; exit 1; }
"$VTRACE" reduce --threshold 100ns "$work/t" "$work/r" > /dev/null || { echo "FAIL: vtrace reduce"; exit 1; }

"$VTRACE" export --format=otf2 --quiet "$work/t" "$work/full" || { echo "FAIL: export of the full trace"; fail=1; }
check_archive "$work/full" "$work/t"
# otf2-print sees them too: 81 records besides MARKER; 10 messages (blocking, non-blocking, persistent); 39 collectives.
for want in "ENTER 81" "LEAVE 81" "MPI_SEND 7" "MPI_ISEND 3" "MPI_RECV 6" "MPI_IRECV 4" "MPI_COLLECTIVE_END 39"; do
    set -- $want
    got=$(grep -c "^$1 " "$work/full.print")
    [ "$got" = "$2" ] || { echo "FAIL: otf2-print shows $got $1 events, expected $2"; fail=1; }
done
grep -q 'MPI_COLLECTIVE_END .*Operation: BCAST, Communicator: "MPI_COMM_WORLD" <0>, Root: 0' "$work/full.print" ||
    { echo "FAIL: no Bcast with root 0 on MPI_COMM_WORLD"; fail=1; }
otf2-print -G "$work/full/traces.otf2" > "$work/full.defs" 2>&1 || { echo "FAIL: otf2-print -G"; fail=1; }
for pat in 'CLOCK_PROPERTIES.*Ticks per Seconds: 1000000000' 'REGION .*"MPI_Send".*Role: POINT2POINT.*Paradigm: MPI' \
           'REGION .*"MPI_Bcast".*Role: COLL_ONE2ALL' 'SYSTEM_TREE_NODE .*"node0"' 'SYSTEM_TREE_NODE .*"node1"' \
           'GROUP .*Type: COMM_LOCATIONS' 'COMM .*"MPI_COMM_WORLD"'; do
    grep -q -- "$pat" "$work/full.defs" || { echo "FAIL: definitions lack /$pat/"; fail=1; }
done

"$VTRACE" export --format=otf2 --quiet "$work/r" "$work/red" || { echo "FAIL: export of the reduced trace"; fail=1; }
check_archive "$work/red" "$work/r" --reduced
grep -q '^ENTER .*"vtrace:aggregated"' "$work/red.print" || { echo "FAIL: no vtrace:aggregated region"; fail=1; }

# The check can fail: a receive lost, the dump of another trace, a damaged archive.
if "$PY" "$CHECK" "$work/full/traces.otf2" "$work/full.dump.jsonl" --drop-recv 3 > "$work/out" 2>&1 ||
    ! grep -q 'sends, 0 receives' "$work/out"; then
    echo "FAIL: the check accepts an archive with a receive removed"; cat "$work/out"; fail=1
fi
if "$PY" "$CHECK" "$work/full/traces.otf2" "$work/red.dump.jsonl" --reduced > "$work/out" 2>&1; then
    echo "FAIL: the check accepts an archive against another trace's dump"; fail=1
fi
cp -r "$work/full" "$work/bad"
head -c 100 "$work/full/traces/1.evt" > "$work/bad/traces/1.evt"
if otf2-print "$work/bad/traces.otf2" > /dev/null 2>&1 &&
    "$PY" "$CHECK" "$work/bad/traces.otf2" "$work/full.dump.jsonl" > "$work/out" 2>&1; then
    echo "FAIL: a truncated event file is accepted"; fail=1
fi

# Errors a user can make.
expect() {   # expect STATUS PATTERN -- command...
    want=$1 pattern=$2
    shift 3
    "$@" > "$work/out" 2> "$work/err"
    got=$?
    if [ "$got" -ne "$want" ] || ! grep -q -- "$pattern" "$work/out" "$work/err"; then
        echo "FAIL: $* -> exit $got (want $want, /$pattern/), output:"
        cat "$work/out" "$work/err"
        fail=1
    fi
}
expect 2 "unknown format 'otf3'" -- "$VTRACE" export --format=otf3 "$work/t" "$work/x"
expect 2 'expected DIR and OUT' -- "$VTRACE" export --format=otf2 "$work/t"
expect 2 'missing --format' -- "$VTRACE" export "$work/t" "$work/x"
touch "$work/file"
expect 1 'cannot create the output directory' -- "$VTRACE" export --format=otf2 "$work/t" "$work/file/sub"
expect 1 'cannot create the output directory' -- "$VTRACE" export --format=otf2 "$work/t" "$work/no/such/dir"
expect 1 'exists and is not a directory' -- "$VTRACE" export --format=otf2 "$work/t" "$work/file"
# an OUT that holds an archive (VTRACE_OVERWRITE): kept and the export refused, or moved
# aside (the default) and written anew
expect 1 'holds a trace already and VTRACE_OVERWRITE=refuse' -- env VTRACE_OVERWRITE=refuse \
    "$VTRACE" export --format=otf2 "$work/t" "$work/full"
expect 0 'held a trace: it is now .*/full.old-' -- "$VTRACE" export --format=otf2 "$work/t" "$work/full"
[ -f "$work/full/traces.otf2" ] && [ -f "$(ls -d "$work"/full.old-* | head -n 1)/traces.otf2" ] ||
    { echo "FAIL: the archive moved aside or the new one is missing"; fail=1; }
expect 1 'vtrace.defs' -- "$VTRACE" export --format=otf2 "$work/nothing" "$work/y"
if [ "$(id -u)" -ne 0 ]; then   # root writes anywhere
    mkdir "$work/ro" && chmod 555 "$work/ro"
    expect 1 'cannot write in the output directory' -- "$VTRACE" export --format=otf2 "$work/t" "$work/ro"
    chmod 755 "$work/ro"
fi
[ "$fail" -eq 0 ] && rm -rf "$work" "$work".*
exit "$fail"
