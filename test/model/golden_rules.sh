#!/bin/sh
# Golden rules: one small hand-made trace per rule of the prediction model, each with
# hand-computed predicted ends (derivations in golden_rules.py), checked against
# `vtrace whatif --json`. Ends with a deliberately wrong expectation that the checker
# must reject. Skips (77) without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
exec "$PYTHON" "$top_srcdir/test/model/golden_rules.py" --vtrace "$VTRACE" --work test/model/golden_rules.work "$@"
