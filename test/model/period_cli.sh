#!/bin/sh
# vtrace period on a hand-made trace with known periods and a change of period
# (test/model/period_cli.py), and its command-line errors. Skips (77) without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
command -v python3 > /dev/null 2>&1 || { echo "no python3: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
python3 "$top_srcdir/test/model/period_cli.py" --vtrace "$VTRACE" --work test/model/period_cli.work || exit 1
fail() { echo "FAIL: period_cli.sh: $*"; exit 1; }
"$VTRACE" period --window 0 x > /dev/null 2>&1; [ $? = 2 ] || fail "--window 0 is not a usage error"
"$VTRACE" period --frob x > /dev/null 2>&1; [ $? = 2 ] || fail "an unknown option is not a usage error"
"$VTRACE" period test/model/no-such-trace > /dev/null 2>&1; [ $? = 1 ] || fail "a missing trace does not fail with 1"
echo "PASS: period_cli.sh"
