#!/bin/sh
# Golden wait-state patterns: hand-made traces with hand-computed severities
# (derivations in golden_patterns.py), the example plug-in, a reduced trace; ends with a
# deliberately wrong expectation that the checker must reject. Skips (77) without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTEST_VTRACE:-./vtrace}
PYTHON=${VTEST_PYTHON:-python3}
PLUGIN=${PLUGIN:-examples/plugins/.libs/longwait.so}
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
[ -f "$PLUGIN" ] || { echo "$PLUGIN not built"; exit 1; }
exec "$PYTHON" "$top_srcdir/test/patterns/golden_patterns.py" --vtrace "$VTRACE" --plugin "$PLUGIN" \
    --work test/patterns/golden.work "$@"
