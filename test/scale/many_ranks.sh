#!/bin/sh
# Every command on a 65,536-rank synthetic trace (halo1d, one exchange: 7 records a rank)
# under 'ulimit -n 1024' and a 6 GB address space: test/scale/many_ranks.py.
# VTEST_SCALE_RANKS sets another rank count.
set -u
VTRACE=${VTEST_VTRACE:-${VTRACE:-./vtrace}}
[ -x "$VTRACE" ] || { echo "many_ranks.sh: $VTRACE not built"; exit 99; }
command -v "${VTEST_PYTHON:-python3}" > /dev/null 2>&1 || { echo "no python3: skipping"; exit 77; }
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
otf2=1
"$VTRACE" export --format=otf2 /nonexistent /nonexistent 2>&1 | grep -q 'built without OTF2' && otf2=0
exec "${VTEST_PYTHON:-python3}" "$top_srcdir/test/scale/many_ranks.py" --vtrace "$VTRACE" \
    --work test/scale/many_ranks.work --ranks "${VTEST_SCALE_RANKS:-65536}" --otf2 $otf2
