#!/bin/sh
# Definitions at 16K ranks (issue 13's test on synthetic traces): test/scale/defs_scale.py.
set -u
VTRACE=${VTEST_VTRACE:-${VTRACE:-./vtrace}}
[ -x "$VTRACE" ] || { echo "defs_scale.sh: $VTRACE not built"; exit 99; }
command -v "${VTEST_PYTHON:-python3}" > /dev/null 2>&1 || { echo "no python3: skipping"; exit 77; }
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
exec "${VTEST_PYTHON:-python3}" "$top_srcdir/test/scale/defs_scale.py" --vtrace "$VTRACE" --work test/scale/defs_scale.work
