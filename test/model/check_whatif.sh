#!/bin/sh
# Oracle test of `vtrace whatif` against the reference simulation
# (shared/design/reference/mc.py): test/model/mc_export.py writes mc.py's random programs
# as vtrace traces with what-if scenarios and mc.py's full-replay answers; every trace
# must be accepted by `vtrace info` (the reader, message matching included), and
# `vtrace whatif --json --scenario-file` must give, for every scenario, the same
# predicted T' and the same predicted end of every rank, to the nanosecond
# (test/model/whatif_compare.py). Then the comparison must be able to fail: the answers
# of a deliberately wrong rule (lambda_m without its cap E - S, broken.jsonl) must differ.
#
# usage: check_whatif.sh [--validate-only | --self-test]
#   --validate-only  only export and check that `vtrace info` accepts every trace
#                    (does not need `vtrace whatif`)
#   --self-test      as the default mode, with test/model/trace_replay.py (a Python
#                    replay that reads only the exported trace files) in place of
#                    `vtrace whatif`: checks the bridge itself (make check runs it
#                    through test/model/bridge_selftest.sh)
# Run by `make check` from the top build directory. Environment:
#   VTRACE          the vtrace command (default: ./vtrace, the top build directory's)
#   VTRACE_SHARED   the shared/ directory holding design/reference/mc.py (default:
#                   <source top>/../shared); exit 77 (skip) when mc.py is not there
#   MC_SEEDS        number of seeds N (default 200), MC_FIRST_SEED first seed (default 1)
#   MC_VARIANTS     mc_export.py variants (default default,quant,skew)
#   MC_NSCEN        random scenarios per case (default 12)
#   MC_KEEP=1       keep the work directory test/model/MODE.work (check, validate or
#                   selftest; always kept on failure)
# Exit 77 (skip) when `vtrace whatif` does not exist yet (it prints "unknown command"),
# in the default mode only.
set -u
me=check_whatif.sh
mode=check
case ${1:-} in
  --validate-only) mode=validate ;;
  --self-test) mode=selftest ;;
  "") ;;
  *) echo "usage: $me [--validate-only | --self-test]" >&2; exit 99 ;;
esac
here=$(cd "$(dirname "$0")" && pwd) || exit 99
VTRACE=${VTRACE:-$(pwd)/vtrace}
VTRACE_SHARED=${VTRACE_SHARED:-$here/../../../shared}
export VTRACE_SHARED
seeds=${MC_SEEDS:-200}
first=${MC_FIRST_SEED:-1}
variants=${MC_VARIANTS:-default,quant,skew}
nscen=${MC_NSCEN:-12}
work=$(pwd)/test/model/$mode.work
mkdir -p "$(pwd)/test/model" || exit 99

if [ ! -f "$VTRACE_SHARED/design/reference/mc.py" ]; then
  echo "$me: $VTRACE_SHARED/design/reference/mc.py not found; skipping"
  exit 77
fi
python=
for p in ${PYTHON3:-} python3; do
  if command -v "$p" >/dev/null 2>&1; then python=$p; break; fi
done
if [ -z "$python" ]; then
  echo "$me: no python3; skipping"
  exit 77
fi
if [ ! -x "$VTRACE" ]; then
  echo "$me: $VTRACE not found (set VTRACE=path/to/vtrace)" >&2
  exit 99
fi
# A hung replay must not stall the suite.
to=
if command -v timeout >/dev/null 2>&1; then to="timeout 60"; fi

if [ "$mode" = check ]; then
  "$VTRACE" whatif --help >/dev/null 2>"$work.probe" </dev/null
  if grep -q "unknown command" "$work.probe" 2>/dev/null; then
    rm -f "$work.probe"
    echo "$me: '$VTRACE whatif' does not exist yet; skipping (run with --validate-only to check the traces)"
    exit 77
  fi
  rm -f "$work.probe"
fi

rm -rf "$work" && mkdir -p "$work" || exit 99
last=$((first + seeds - 1))
extra=
[ "$mode" = validate ] || extra=--broken

# Export in two processes (two cores): first half and second half of the seeds.
mid=$((first + seeds / 2))
export_part() { # lo hi list
  if [ "$1" -le "$2" ]; then
    "$python" "$here/mc_export.py" --out "$work" --seeds "$1-$2" --variants "$variants" --nscen "$nscen" $extra >"$3"
  else
    : >"$3"
  fi
}
export_part "$first" $((mid - 1)) "$work/list.1" &
pid1=$!
export_part "$mid" "$last" "$work/list.2"
rc2=$?
wait $pid1
rc1=$?
for rc in $rc1 $rc2; do
  case $rc in
    0) ;;
    77) echo "$me: mc_export.py skipped (mc.py not found)"; exit 77 ;;
    *) echo "$me: mc_export.py failed (exit $rc); reproduce: $python $here/mc_export.py --out /tmp/mc --seeds $first-$last --variants $variants" >&2
       exit 1 ;;
  esac
done
cat "$work/list.1" "$work/list.2" >"$work/cases"
ncases=$(wc -l <"$work/cases")

fail=0
nbad=0
while read -r d; do
  if ! $to "$VTRACE" info "$d/trace" >"$d/info.out" 2>&1; then
    nbad=$((nbad + 1))
    if [ $nbad -le 5 ]; then
      echo "FAIL: vtrace info rejects $d/trace:"
      sed 's/^/  /' "$d/info.out"
    fi
    fail=1
    continue
  fi
  [ "$mode" = check ] || continue
  rm -f "$d/got.jsonl"
  $to "$VTRACE" whatif --json --scenario-file "$d/scenarios.txt" "$d/trace" >"$d/got.jsonl" 2>"$d/whatif.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    nbad=$((nbad + 1))
    if [ $nbad -le 5 ]; then
      echo "FAIL: vtrace whatif exited with $rc on $d:"
      head -5 "$d/whatif.err" | sed 's/^/  /'
      echo "  reproduce: $VTRACE whatif --json --scenario-file $d/scenarios.txt $d/trace"
    fi
    fail=1
  fi
done <"$work/cases"

if [ "$mode" = validate ]; then
  if [ $fail -ne 0 ]; then
    echo "$me: $nbad of $ncases traces rejected (seeds $first-$last, variants $variants); kept in $work" >&2
    exit 1
  fi
  echo "$me: vtrace info accepts all $ncases traces (seeds $first-$last, variants $variants), every message matched"
  [ "${MC_KEEP:-0}" = 1 ] || rm -rf "$work"
  exit 0
fi

if [ "$mode" = selftest ]; then
  # Two processes: the case list in halves.
  half=$(((ncases + 1) / 2))
  head -n "$half" "$work/cases" >"$work/cases.1"
  tail -n +"$((half + 1))" "$work/cases" >"$work/cases.2"
  # shellcheck disable=SC2046
  "$python" "$here/trace_replay.py" --batch $(cat "$work/cases.1") &
  pid1=$!
  rc2=0
  if [ -s "$work/cases.2" ]; then
    # shellcheck disable=SC2046
    "$python" "$here/trace_replay.py" --batch $(cat "$work/cases.2")
    rc2=$?
  fi
  wait $pid1
  rc1=$?
  if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
    echo "FAIL: trace_replay.py failed (exit $rc1, $rc2)"
    fail=1
  fi
fi

# shellcheck disable=SC2046
if [ $fail -ne 0 ]; then
  :
elif ! "$python" "$here/whatif_compare.py" $(cat "$work/cases"); then
  fail=1
elif ! "$python" "$here/whatif_compare.py" --expect broken.jsonl --expect-differ $(cat "$work/cases"); then
  echo "$me: the answers of a deliberately broken rule (uncapped lambda_m) equal the replay's everywhere: the comparison cannot fail" >&2
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "$me: FAILED over $ncases cases (seeds $first-$last, variants $variants); kept in $work" >&2
  echo "$me: one case: $python $here/mc_export.py --out /tmp/mc --variants VARIANT SEED, then" >&2
  echo "$me:   $VTRACE whatif --json --scenario-file /tmp/mc/sSEED-VARIANT/scenarios.txt /tmp/mc/sSEED-VARIANT/trace" >&2
  exit 1
fi
what="vtrace whatif"
[ "$mode" = selftest ] && what="trace_replay.py (reading only the exported traces)"
echo "$me: $what equals mc.py on all $ncases cases (seeds $first-$last, variants $variants)"
[ "${MC_KEEP:-0}" = 1 ] || rm -rf "$work"
exit 0
