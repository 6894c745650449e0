#!/bin/sh
# Golden critical paths: hand-made traces with hand-computed critical paths, time per
# rank and slack (derivations in critpath_golden.py), checked against
# `vtrace critical-path --json`; ends with a deliberately wrong expectation the checker
# must reject. Skips (77) without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
exec "$PYTHON" "$top_srcdir/test/model/critpath_golden.py" --vtrace "$VTRACE" --work test/model/critpath_golden.work "$@"
