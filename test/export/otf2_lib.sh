# Shared by test/export/otf2*.sh (sourced): the vtrace command, the OTF2 tools, and
# check_archive ARCHIVE_DIR TRACE_DIR [--reduced]: otf2-print reads it (exit 0) and
# otf2_check.py agrees with `vtrace dump --json`. Sets fail=1 on a failure.
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
fail=0
# Built without OTF2: the only reason to skip (and the message must say how to get it).
if "$VTRACE" export --help | grep -q '^  otf2 .*not in this build'; then
    tmp=${TMPDIR:-/tmp}/vtrace-otf2-none.$$
    rm -rf "$tmp"
    if "${SYNTH:-./test/reader/synth}" "$tmp" > /dev/null 2>&1; then
        "$VTRACE" export --format=otf2 "$tmp" "$tmp.out" > "$tmp.msg" 2>&1
        grep -q 'built without OTF2' "$tmp.msg" && grep -q 'configure --with-otf2' "$tmp.msg" ||
            { echo "FAIL: the message of a build without OTF2 does not say how to get it:"; cat "$tmp.msg"; exit 1; }
        [ ! -e "$tmp.out" ] || { echo "FAIL: a build without OTF2 wrote $tmp.out"; exit 1; }
    fi
    rm -rf "$tmp" "$tmp.msg"
    echo "SKIP: vtrace was built without OTF2"
    exit 77
fi
# The tools a build with OTF2 is checked with (maint/install-deps.sh installs them).
command -v otf2-print > /dev/null || { echo "FAIL: otf2-print not found (apt-get install otf2-tools)"; exit 1; }
PY=
for p in ${VTEST_PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c 'import otf2' > /dev/null 2>&1; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "FAIL: no python3 with the OTF2 bindings (apt-get install python3-otf2)"; exit 1; }
CHECK="$top_srcdir/test/export/otf2_check.py"

check_archive() {   # check_archive OUT TRACE [--reduced]
    out=$1 tr=$2
    shift 2
    if ! otf2-print "$out/traces.otf2" > "$out.print" 2> "$out.print.err"; then
        echo "FAIL: otf2-print $out/traces.otf2:"; head -5 "$out.print.err"; fail=1
    fi
    "$VTRACE" dump --json "$tr" > "$out.dump.jsonl" || { echo "FAIL: vtrace dump $tr"; fail=1; }
    "$PY" "$CHECK" "$out/traces.otf2" "$out.dump.jsonl" "$@" || { echo "FAIL: otf2_check.py $out"; fail=1; }
    # otf2-print counts the same events (it reads the archive through the C library).
    for ev in ENTER LEAVE MPI_SEND MPI_RECV MPI_COLLECTIVE_BEGIN; do
        printf '%s=%s ' "$ev" "$(grep -c "^$ev " "$out.print")"
    done
    echo
}
