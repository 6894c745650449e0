#!/bin/sh
# Runs that end abnormally (test/crash/faults.c, 2 ranks): rank 1 is killed by SIGTERM,
# SIGSEGV or SIGKILL, calls MPI_Abort or exits without MPI_Finalize, in the modes full,
# reduced and both. For each: the exit status and the output are those of the same run
# without tracing (VTRACE_MODE=off); `vtrace info` reads the trace, calls it incomplete
# and says how rank 1 ended; every rank's readable records are those its flushed blocks
# hold (full traces), the faulting rank's all its calls where its handler wrote them;
# an analysis runs on the readable part and says so (compensate too). Then VTRACE_FLUSH_INTERVAL bounds
# what SIGKILL loses, and a full disk (a small tmpfs, where the test may mount one)
# keeps what was written. Environment: VTEST_MPIEXEC, VTEST_VTRACE, VTEST_PYTHON.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
MPIEXEC=${VTEST_MPIEXEC:-}
PROG=${PROG:-test/crash/faults}
timeout=${VTEST_TIMEOUT:-120}
[ -n "$MPIEXEC" ] || { echo "no mpiexec: skipping"; exit 77; }
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$PROG" ] || { echo "$PROG not built"; exit 1; }
lock=
command -v flock > /dev/null 2>&1 && lock="flock ${VTEST_LOCK:-${TMPDIR:-/tmp}/vtrace-mpiexec.lock}"
check="$PYTHON $top_srcdir/test/crash/check_crash.py $VTRACE"
work=test/crash/crash.work
rm -rf "$work" && mkdir -p "$work" || exit 99
work=$(cd "$work" && pwd)
N=20000
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME MODE KIND [ARGS...]: the program under mpiexec; its status in $rc, output in
# $work/NAME.out (stdout) and $work/NAME.err
run() {
    name=$1 mode=$2 kind=$3
    shift 3
    $lock env VTRACE_MODE="$mode" VTRACE_DIR="$work/$name" VTRACE_BUFFER=64k "$@" \
        timeout -k 10 "$timeout" "$MPIEXEC" -n 2 "$PROG" "$kind" $N 1 $PAUSE > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
}
PAUSE=0

for kind in term segv kill abort exit; do
    case $kind in
        term) reason="killed by signal 15" ;;
        segv) reason="killed by signal 11" ;;
        kill) reason="(killed by SIGKILL" ;;
        abort) reason="MPI_Abort with code 3" ;;
        exit) reason="exited without MPI_Finalize (status 2)" ;;
    esac
    # (when a rank aborts, mpiexec may take the job down before it forwards that rank's
    # last line: on a loaded machine, up to three untraced runs are asked for it)
    for again in 1 2 3; do
        run plain_$kind off $kind
        grep -q "rank 1: fault $kind after $N" "$work/plain_$kind.out" && break
    done
    plain_rc=$rc
    grep -q "rank 1: fault $kind after $N" "$work/plain_$kind.out" || fail "$kind: the untraced run printed no fault line"
    for mode in full both reduced; do
        name=${mode}_$kind
        run "$name" $mode $kind
        name_rc=$rc mode_was=$mode
        echo "$name: exit status $rc (untraced $plain_rc)"
        if [ "$rc" != "$plain_rc" ]; then
            # when one rank ends and mpiexec takes the others down, which status it reports
            # races, traced or not (2 or 9 for exit, about 1 run in 12 even on a calm
            # machine): the untraced and the traced run again, three times at most, until
            # one status is seen in both
            seen_plain=" $plain_rc " seen_traced=" $name_rc "
            for again in 1 2 3; do
                run plain_${kind}_$again off $kind   # (run sets name and mode)
                seen_plain="$seen_plain$rc "
                case $seen_traced in *" $rc "*) break ;; esac
                run "${mode_was}_$kind" $mode_was $kind
                seen_traced="$seen_traced$rc "
                case $seen_plain in *" $rc "*) break ;; esac
            done
            name=${mode_was}_$kind mode=$mode_was
            case $seen_plain in *" $rc "*) ;; *) fail "$name: exit status$seen_traced(traced), untraced$seen_plain" ;; esac
            rc=$name_rc
        fi
        # the program's own lines (mpiexec's report of a failed job names the pids)
        grep -E '^(rank |done)' "$work/plain_$kind.out" > "$work/plain_$kind.lines"
        grep -E '^(rank |done)' "$work/$name.out" > "$work/$name.lines"
        if ! cmp -s "$work/plain_$kind.lines" "$work/$name.lines" && ! grep -q "fault $kind" "$work/$name.lines"; then
            # the same race as above, in the traced run: once more
            run "$name" $mode $kind
            grep -E '^(rank |done)' "$work/$name.out" > "$work/$name.lines"
        fi
        cmp -s "$work/plain_$kind.lines" "$work/$name.lines" || fail "$name: the output differs from the untraced run's"
        case $mode in
            full) dirs=$work/$name ;;
            both) dirs="$work/$name/full $work/$name/reduced" ;;
            reduced) dirs=$work/$name/reduced ;;
        esac
        for d in $dirs; do
            opts=
            case $d in */reduced) ;; *) opts=--full ;; esac
            # the handler writes what the buffer holds: every call the rank made
            [ "$kind" != kill ] && [ -n "$opts" ] && opts="$opts --all-sendrecv $N"
            # ... and its last MPI_Recv, waiting for the next record (MPI_Abort's is last)
            [ "$kind" != kill ] && [ -n "$opts" ] && opts="$opts --last $([ "$kind" = abort ] && echo MPI_Abort || echo MPI_Recv)"
            [ "$kind" = kill ] && [ -n "$opts" ] && opts="$opts --flushed"
            $check "$d" 1 "$reason" $opts || fail "$name: $d"
            "$VTRACE" whatif "$d" > "$work/$name.whatif" 2>&1 || fail "$name: vtrace whatif $d: $(tail -1 "$work/$name.whatif")"
            grep -q "is incomplete" "$work/$name.whatif" || fail "$name: vtrace whatif $d does not say the trace is incomplete"
        done
    done
done

# SIGKILL after 600 ms of calls with a 32 MB buffer: nothing flushed without the flush
# timer; with it (100 ms), every Sendrecv of the loop before the pause is on disk
run kill_nointerval full kill env VTRACE_BUFFER=32M
$check "$work/kill_nointerval" 1 "(killed by SIGKILL" --full || fail "kill_nointerval"
# SIGTERM before the first flush (a 32 MB buffer): the handler's definitions name rank
# 1's call sites (function, file and line: each named when first seen), not addresses
run term_noflush full term env VTRACE_BUFFER=32M
$check "$work/term_noflush" 1 "killed by signal 15" --full --all-sendrecv $N || fail "term_noflush"
"$VTRACE" dump "$work/term_noflush" > "$work/term_noflush.dump" 2>&1 || fail "term_noflush: vtrace dump"
awk '$1 ~ /^1:/ { for (i = 1; i <= NF; i++) if ($i ~ /^site=/) { n++; if ($i !~ /^site=main\(faults\.c:[0-9]+\)$/) bad = $i } }
     END { if (bad != "" || n < '"$N"') { print "term_noflush: " n " sites, unnamed: " bad; exit 1 } }' \
    "$work/term_noflush.dump" || fail "term_noflush: rank 1's call sites are not named"
PAUSE=600
run kill_interval full kill env VTRACE_BUFFER=32M VTRACE_FLUSH_INTERVAL=100ms
PAUSE=0
$check "$work/kill_interval" 1 "(killed by SIGKILL" --full --all-sendrecv $N || fail "kill_interval"
# ... and the reduced trace, made readable at each flush of the full one (its last
# blocks provisional, replaced as the run goes on), holds the records decided by then;
# their function table in vtrace.defs (format 1.5, as from 8 ranks on)
PAUSE=600
run kill_interval_both both kill env VTRACE_BUFFER=32M VTRACE_FLUSH_INTERVAL=100ms VTRACE_TEST_SHARE_FUNCS=1
run kill_interval_reduced reduced kill env VTRACE_BUFFER=32M VTRACE_FLUSH_INTERVAL=100ms
PAUSE=0
$check "$work/kill_interval_both/full" 1 "(killed by SIGKILL" --full --all-sendrecv $N || fail "kill_interval_both"
$check "$work/kill_interval_both/reduced" 1 "(killed by SIGKILL" --covers "$work/kill_interval_both/full" ||
    fail "kill_interval_both: reduced"
$check "$work/kill_interval_reduced/reduced" 1 "(killed by SIGKILL" --flushed || fail "kill_interval_reduced"
for d in "$work/kill_interval_both/reduced" "$work/kill_interval_reduced/reduced"; do
    "$VTRACE" whatif "$d" > "$d.whatif" 2>&1 || fail "vtrace whatif $d: $(tail -1 "$d.whatif")"
    # the measured run ends where the records end: rank 1 (which went on calling MPI in
    # its pause) after the start, none before it (rank 0, blocked in a call all along,
    # may have flushed nothing: it ends at the start)
    awk '/rank ends/ { for (i = 6; i <= NF; i++) if ($i < 0) bad = 1; if ($7 <= 0) bad = 1; found = 1 }
         END { exit !(found && !bad) }' \
        "$d.whatif" || fail "vtrace whatif $d: the ranks' measured ends: $(grep 'rank ends' "$d.whatif")"
done

# vtrace reduce of an incomplete full trace predicts what the full trace predicts, to the
# nanosecond: a rank the replay stopped waiting in a call ends there, at the call's enter,
# and a send that call posted, received by another rank, is no error in the reduced
# trace (3 ranks: a rank's last Sendrecv sends to its right and waits on its left)
$lock env VTRACE_MODE=full VTRACE_DIR="$work/kill3" VTRACE_BUFFER=64k VTRACE_FLUSH_INTERVAL=100ms \
    timeout -k 10 "$timeout" "$MPIEXEC" -n 3 "$PROG" kill 1000 1 600 > "$work/kill3.out" 2> "$work/kill3.err"
for d in "$work/kill_interval" "$work/kill3"; do
    rm -rf "$d.red"
    "$VTRACE" reduce "$d" "$d.red" > "$d.red.out" 2>&1 || { fail "vtrace reduce $d: $(tail -1 "$d.red.out")"; continue; }
    for x in "$d" "$d.red"; do
        "$VTRACE" whatif --json -s all=-10% -s fn:MPI_Sendrecv=-50% "$x" > "$x.wj" 2> "$x.wj.err" ||
            fail "vtrace whatif $x: $(tail -1 "$x.wj.err")"
        "$VTRACE" critical-path "$x" 2> /dev/null | grep "predicted run time" > "$x.T" ||
            fail "vtrace critical-path $x"
    done
    cmp -s "$d.wj" "$d.red.wj" || fail "$d: whatif of the reduced trace differs: $(cat "$d.wj" "$d.red.wj")"
    cmp -s "$d.T" "$d.red.T" || fail "$d: critical-path's T' of the reduced trace differs: $(cat "$d.T" "$d.red.T")"
done

# compensate covers the readable part of an incomplete trace as the replay does: its
# output reads, is incomplete with the same ends, and holds the records read less those
# after the cut it reports
for d in "$work/full_term" "$work/kill_interval"; do
    rm -rf "$d.comp"
    "$VTRACE" compensate "$d" "$d.comp" > "$d.comp.out" 2>&1 || fail "vtrace compensate $d: $(tail -1 "$d.comp.out")"
    $PYTHON - "$VTRACE" "$d" "$d.comp" "$d.comp.out" << 'PY' || fail "compensate $d: the output is not the input's readable part"
import json, re, subprocess, sys
vt, src, out, log = sys.argv[1:5]
def info(d):
    return json.loads(subprocess.run([vt, "info", "--json", d], capture_output=True, text=True, check=True).stdout)
a, b = info(src), info(out)
m = re.search(r"their (\d+) later records are not in", open(log).read())
cut = int(m.group(1)) if m else 0
assert b["incomplete"], "the output is not called incomplete"
def how(r):  # how the rank ended, without where its file is cut (the output's layout differs)
    return re.sub(r" \(byte \d+\)", "", r["ended"].split(";")[0])
assert [how(r) for r in a["per_rank"]] == [how(r) for r in b["per_rank"]], \
    ([r["ended"] for r in a["per_rank"]], [r["ended"] for r in b["per_rank"]])
assert b["events"] == a["events"] - cut, (a["events"], b["events"], cut)
PY
    "$VTRACE" whatif "$d.comp" > "$d.comp.whatif" 2>&1 || fail "vtrace whatif $d.comp: $(tail -1 "$d.comp.whatif")"
done

# the latency L calibrated at MPI_Init: how, in the configuration (at least 20 round
# trips; half the fastest is at most half their median), and vtrace info shows it
$PYTHON - "$work/kill_interval/config.txt" << 'PY' || fail "the calibration of L in config.txt"
import re, sys
text = open(sys.argv[1]).read()
L = int(re.search(r"^VTRACE_MODEL_L=(\d+)ns$", text, re.M).group(1))
m = re.search(r"^VTRACE_MODEL_L_CALIBRATION=min of (\d+), median (\d+)ns$", text, re.M)
assert m, "no VTRACE_MODEL_L_CALIBRATION line"
assert int(m.group(1)) >= 20 and L <= int(m.group(2)), (L, m.groups())
PY
"$VTRACE" info "$work/kill_interval" 2> /dev/null | grep -q "^model: *latency L [0-9]*ns (measured at MPI_Init" || fail "vtrace info shows no model line"

# a full disk: a 256 KB tmpfs (mounting needs root; skipped otherwise)
disk=$work/disk
mkdir -p "$disk"
if mount -t tmpfs -o size=256k vtrace-test "$disk" 2> /dev/null; then
    $lock env VTRACE_DIR="$disk/t" VTRACE_BUFFER=64k timeout -k 10 "$timeout" "$MPIEXEC" -n 2 "$PROG" none 400000 \
        > "$work/disk.out" 2> "$work/disk.err"
    rc=$?
    [ "$rc" = 0 ] || fail "full disk: the program exited with $rc"
    grep -q "^done" "$work/disk.out" || fail "full disk: the program did not finish"
    grep -q "No space left on device" "$work/disk.err" || fail "full disk: no warning naming the full disk"
    cp -r "$disk/t" "$work/disk_trace"
    umount "$disk"
    for r in 0 1; do
        $check "$work/disk_trace" $r "" --full --flushed || fail "full disk: rank $r"
    done
    "$VTRACE" info "$work/disk_trace" | grep "^ended" || true
else
    echo "full disk: cannot mount a tmpfs here (not root?): that part is skipped"
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
