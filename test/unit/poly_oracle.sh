#!/bin/sh
# Oracle test of src/model/poly.c against the reference simulation
# (shared/design/reference/mc.py): test/unit/poly_oracle writes random operation
# sequences with its results, test/unit/poly_oracle.py replays them with mc.py's algebra
# and compares every result. Then the same script with a deliberately wrong
# canonicalisation in the replay must be caught (the comparison can fail).
#
# Run by `make check` from the top build directory. Environment:
#   VTRACE_SHARED       the shared/ directory (default: $srcdir/../shared); exit 77 (skip)
#                       when mc.py is not there
#   POLY_ORACLE_SEEDS   seeds (default "1 2 3"), POLY_ORACLE_N sequences per seed (1000)
set -u
srcdir=${srcdir:-$(dirname "$0")/../..}
VTRACE_SHARED=${VTRACE_SHARED:-$srcdir/../shared}
export VTRACE_SHARED
oracle=./test/unit/poly_oracle
replay=$srcdir/test/unit/poly_oracle.py
seeds=${POLY_ORACLE_SEEDS:-1 2 3}
n=${POLY_ORACLE_N:-1000}

if [ ! -f "$VTRACE_SHARED/design/reference/mc.py" ]; then
  echo "poly_oracle.sh: $VTRACE_SHARED/design/reference/mc.py not found; skipping"
  exit 77
fi
python=
for p in ${PYTHON3:-} python3; do
  if command -v "$p" >/dev/null 2>&1; then python=$p; break; fi
done
if [ -z "$python" ]; then
  echo "poly_oracle.sh: no python3; skipping"
  exit 77
fi
if [ ! -x "$oracle" ]; then
  echo "poly_oracle.sh: $oracle not built" >&2
  exit 99
fi

tmp=${TMPDIR:-/tmp}/poly_oracle.$$
trap 'rm -f "$tmp"' EXIT INT TERM
total=0
for seed in $seeds; do
  "$oracle" "$seed" "$n" >"$tmp"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "poly_oracle.sh: $oracle $seed $n failed (exit $rc)" >&2
    exit 1
  fi
  "$python" "$replay" <"$tmp"
  rc=$?
  case $rc in
    0) total=$((total + n)) ;;
    77) exit 77 ;;
    *) echo "poly_oracle.sh: seed $seed: replay with mc.py differs (exit $rc); reproduce: $oracle $seed $n | $python $replay" >&2
       exit 1 ;;
  esac
done

# The check must be able to fail: mc.py with a canonicalisation that keeps dominated
# terms has to disagree with the C results.
"$oracle" 1 50 >"$tmp" || exit 1
"$python" "$replay" --break <"$tmp" >/dev/null
rc=$?
if [ $rc -ne 1 ]; then
  echo "poly_oracle.sh: the replay with a broken canonicalisation did not report a difference (exit $rc)" >&2
  exit 1
fi
echo "poly_oracle.sh: $total sequences equal to mc.py; a broken canonicalisation is caught"
exit 0
