#!/bin/sh
# vtrace reduce on hand-made traces (test/model/reduce_golden.py): every golden rule's
# case and the probe windows the reference simulation never makes; model.md §7.4 at
# every event and identical predictions from the full and the reduced trace, with the
# default, roomy and tightest polynomial limits. Skips (77) without python3.
set -u
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
VTRACE=${VTRACE:-./vtrace}
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" > /dev/null 2>&1 || { echo "no $PYTHON: skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$VTRACE not built"; exit 1; }
exec "$PYTHON" "$top_srcdir/test/model/reduce_golden.py" --vtrace "$VTRACE" --work test/model/reduce_golden.work "$@"
