#!/bin/sh
# vtrace reduce against the reference simulation (shared/design/reference/mc.py), on
# mc.py's random programs exported by test/model/mc_export.py --runtime:
#   - model.md §7.4: `vtrace reduce --check` over every scenario of the case (the
#     baseline, each candidate eliminated alone, random ones): at every event the
#     symbolic difference evaluated at the scenario equals the replay's numeric one;
#   - §7.1: `vtrace whatif --json` gives identical lines (T' and every rank's end) on
#     the full and on the reduced trace, for every scenario;
#   - §7.2: the reduced records and the polynomial after every event are mc.py's
#     run-time reduction's, record for record (test/model/reduce_vs_mc.py);
#   - §7.6: each deliberately broken rule (--broken-rule nofold, noR3) makes the
#     predictions of some case differ: the comparison can fail.
# Environment: VTRACE (default ./vtrace), VTRACE_SHARED (default <source>/../shared; exit
# 77 when mc.py is not there), MC_SEEDS (default 60), MC_FIRST_SEED (1), MC_VARIANTS
# (default,quant,skew), MC_KEEP=1 keeps test/model/reduce.work.
set -u
me=check_reduce.sh
here=$(cd "$(dirname "$0")" && pwd) || exit 99
VTRACE=${VTRACE:-$(pwd)/vtrace}
VTRACE_SHARED=${VTRACE_SHARED:-$here/../../../shared}
export VTRACE_SHARED
seeds=${MC_SEEDS:-60}
first=${MC_FIRST_SEED:-1}
variants=${MC_VARIANTS:-default,quant,skew}
work=$(pwd)/test/model/reduce.work
if [ ! -f "$VTRACE_SHARED/design/reference/mc.py" ]; then
  echo "$me: $VTRACE_SHARED/design/reference/mc.py not found; skipping"
  exit 77
fi
command -v python3 > /dev/null 2>&1 || { echo "$me: no python3; skipping"; exit 77; }
[ -x "$VTRACE" ] || { echo "$me: $VTRACE not found" >&2; exit 99; }
rm -rf "$work" && mkdir -p "$work" || exit 99
last=$((first + seeds - 1))
python3 "$here/mc_export.py" --out "$work" --seeds "$first-$last" --variants "$variants" --runtime \
  > "$work/cases" || { echo "$me: mc_export.py failed"; exit 1; }

n=0 bad=0 known=0
for d in $(cat "$work/cases"); do
  n=$((n + 1))
  if ! "$VTRACE" reduce --check -f "$d/scenarios.txt" --polys "$d/polys.txt" "$d/trace" "$d/red" > "$d/reduce.out" 2>&1; then
    bad=$((bad + 1)); echo "FAIL $d: reduce --check: $(tail -1 "$d/reduce.out")"; continue
  fi
  "$VTRACE" whatif --json -f "$d/scenarios.txt" "$d/trace" > "$d/full.jsonl" 2> "$d/full.err"
  "$VTRACE" whatif --json -f "$d/scenarios.txt" "$d/red" > "$d/red.jsonl" 2> "$d/red.err"
  if [ ! -s "$d/full.jsonl" ] || ! cmp -s "$d/full.jsonl" "$d/red.jsonl"; then
    bad=$((bad + 1)); echo "FAIL $d: predictions differ: $(head -c 300 "$d/red.err" "$d/red.jsonl")"; continue
  fi
  "$VTRACE" dump --json "$d/red" > "$d/dump.jsonl" || { bad=$((bad + 1)); echo "FAIL $d: dump"; continue; }
  python3 "$here/reduce_vs_mc.py" "$d" "$d/dump.jsonl" "$d/polys.txt"
  case $? in
    0) ;;
    3) known=$((known + 1)) ;;
    *) bad=$((bad + 1)); echo "FAIL $d: records or polynomials differ from mc.py's" ;;
  esac
done
echo "$me: $n cases: $bad failed, $known outside what mc.py judges (a candidate receive after a probe)"

# The checks must be able to fail.
for rule in nofold noR3; do
  differ=0
  for d in $(cat "$work/cases"); do
    "$VTRACE" reduce --broken-rule "$rule" "$d/trace" "$d/broken-$rule" > /dev/null 2>&1 || continue
    "$VTRACE" whatif --json -f "$d/scenarios.txt" "$d/broken-$rule" > "$d/broken.jsonl" 2> /dev/null
    cmp -s "$d/full.jsonl" "$d/broken.jsonl" || differ=$((differ + 1))
  done
  echo "$me: with the broken rule $rule, $differ of $n cases predict differently"
  [ "$differ" -gt 0 ] || { echo "FAIL: the broken rule $rule went unnoticed"; bad=$((bad + 1)); }
done
[ "${MC_KEEP:-}" = 1 ] || [ "$bad" != 0 ] || rm -rf "$work"
[ "$bad" = 0 ]
