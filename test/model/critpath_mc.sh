#!/bin/sh
# Properties of `vtrace critical-path` on random traces of the reference simulation
# (test/model/mc_export.py, mc.py's random programs; checks in critpath_mc.py): T' as
# `vtrace whatif` predicts it, the parts of the path adding up to its length exactly,
# slack >= 0 and 0 on the path, shortening never lengthening, and the slack of
# computation bursts exact against `vtrace whatif`; then the checks must reject
# corrupted answers. Run by `make check` from the top build directory. Environment:
#   VTRACE         the vtrace command (default ./vtrace)
#   VTRACE_SHARED  the shared/ directory holding design/reference/mc.py (default
#                  <source top>/../shared); exit 77 (skip) when mc.py is not there
#   MC_SEEDS       seeds (default 36), MC_FIRST_SEED (default 1), MC_VARIANTS
#                  (default default,quant,skew); MC_CP_NSCEN scenarios per case besides
#                  the baseline (default 2), MC_CP_EVENTS events per check (default 4)
#   MC_KEEP=1      keep test/model/critpath_mc.work (always kept on failure)
set -u
me=critpath_mc.sh
here=$(cd "$(dirname "$0")" && pwd) || exit 99
VTRACE=${VTRACE:-$(pwd)/vtrace}
VTRACE_SHARED=${VTRACE_SHARED:-$here/../../../shared}
export VTRACE_SHARED
seeds=${MC_SEEDS:-36}
first=${MC_FIRST_SEED:-1}
variants=${MC_VARIANTS:-default,quant,skew}
work=$(pwd)/test/model/critpath_mc.work
if [ ! -f "$VTRACE_SHARED/design/reference/mc.py" ]; then
  echo "$me: $VTRACE_SHARED/design/reference/mc.py not found; skipping"
  exit 77
fi
python=
for p in ${PYTHON3:-} python3; do
  if command -v "$p" >/dev/null 2>&1; then python=$p; break; fi
done
[ -n "$python" ] || { echo "$me: no python3; skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$me: $VTRACE not found (set VTRACE=path/to/vtrace)" >&2; exit 99; }
rm -rf "$work" && mkdir -p "$work" || exit 99
last=$((first + seeds - 1))
"$python" "$here/mc_export.py" --out "$work" --seeds "$first-$last" --variants "$variants" --nscen 4 >"$work/cases"
rc=$?
case $rc in
  0) ;;
  77) echo "$me: mc_export.py skipped (mc.py not found)"; exit 77 ;;
  *) echo "$me: mc_export.py failed (exit $rc)" >&2; exit 1 ;;
esac
# shellcheck disable=SC2046
if ! "$python" "$here/critpath_mc.py" --vtrace "$VTRACE" $(cat "$work/cases"); then
  echo "$me: FAILED (seeds $first-$last, variants $variants); kept in $work" >&2
  exit 1
fi
[ "${MC_KEEP:-0}" = 1 ] || rm -rf "$work"
exit 0
