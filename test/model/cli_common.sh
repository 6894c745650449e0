# Sourced by the tests of vtrace's commands on the reader tests' synthetic trace
# (test/model/critpath_cli.sh, whatif_cli.sh; test/report/report_cli.sh), after they set
# $work: VTRACE and SYNTH (the build's, or as the environment says), fail (0; 1 once a
# check failed) and expect.
VTRACE=${VTRACE:-./vtrace}
SYNTH=${SYNTH:-./test/reader/synth}
fail=0

# expect STATUS PATTERN -- COMMAND...: COMMAND exits with STATUS and its output (stdout
# or stderr) matches PATTERN (grep); else FAIL, the output shown, and fail=1
expect() {
    want=$1 pattern=$2
    shift 3
    "$@" > "$work/out" 2> "$work/err"
    got=$?
    if [ "$got" -ne "$want" ] || ! grep -q -- "$pattern" "$work/out" "$work/err"; then
        echo "FAIL: $* -> exit $got (want $want), output:"
        cat "$work/out" "$work/err"
        fail=1
    fi
}
