#!/bin/sh
# VTRACE_FILTER (issue 17). test/mpi/filtered runs with VTRACE_MODE=both and a filter
# naming MPI_Allreduce, MPI_Barrier and the call site fence_a:
#   1. the full trace holds no record of the filtered functions, and MPI_Win_fence only
#      from fence_b; the profile still counts every call (Allreduce, Barrier, both fences);
#   2. the messages (each with its header) are all matched;
#   3. rt_equiv.sh: the run-time reduced trace is `vtrace reduce` of the filtered full
#      trace, record for record and byte for byte, with the same predictions;
#   4. the site form MODULE+0xOFFSET (as vtrace dump writes it) filters fence_b;
#   5. bad filter files end the run in MPI_Init with a message naming file and line.
. "$(dirname "$0")/common.sh"
fail_stops=yes
prog=$builddir/test/mpi/filtered
need_mpiexec
need_built "$prog"
new_work
# without its debug information, so that vtrace dump names call sites as the filter's
# site: entries do (SYMBOL@MODULE+0xOFFSET), not as function (file:line)
cp "$prog" "$work/filtered" && strip -g "$work/filtered" || exit 99
prog=$work/filtered
iters=20
run() { # run FILTER DIR: the program under the filter, both modes
    rm -rf "$2"
    locked env VTRACE_MODE=both VTRACE_THRESHOLD=20us VTRACE_DIR="$2" \
        VTRACE_FILTER="$1" "$VTEST_MPIEXEC" -n 2 "$prog" $iters > "$work/out" 2> "$work/err"
}
cat > "$work/f1" <<'EOF'
# vtrace filter of test/mpi/filter.sh
MPI_Allreduce
MPI_Barrier        # every 5th iteration
site:fence_a
EOF
run "$work/f1" "$work/t1" || { cat "$work/err"; fail "the filtered run failed"; }
"$vtrace" dump "$work/t1/full" > "$work/dump1" || fail "vtrace dump"
grep -q ' MPI_Allreduce \| MPI_Barrier ' "$work/dump1" && fail "filtered functions are in the trace"
grep -q 'fence_a' "$work/dump1" && fail "a call from the filtered site fence_a is in the trace"
nb=$(grep -c ' MPI_Win_fence site=fence_b@' "$work/dump1")
[ "$nb" -eq $((2 * iters)) ] || fail "$nb fences from fence_b in the trace, expected $((2 * iters))"
"$vtrace" info --json "$work/t1/full" > "$work/info1" || fail "vtrace info --json"
python3 - "$work/info1" $iters <<'PY' || fail "profile or matching"
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
want = {"MPI_Allreduce": (n, 0), "MPI_Barrier": (n // 5, 0), "MPI_Win_fence": (2 * n, n)}
for r in d["per_rank"]:
    f = r["functions"]
    for name, (calls, events) in want.items():
        got = (f[name]["calls"], f[name]["events"]) if name in f else (0, 0)
        if got != (calls, events):
            sys.exit("FAIL: rank %d %s: %d calls, %d events in the profile; expected %d, %d"
                     % (r["rank"], name, got[0], got[1], calls, events))
if d["messages"] != 3 * n or d["unmatched"]:
    sys.exit("FAIL: %d messages matched, %d unmatched; expected %d and none" % (d["messages"], d["unmatched"], 3 * n))
print("  profile: Allreduce %d, Barrier %d calls per rank and no events; fences %d calls, %d events; "
      "%d messages matched" % (n, n // 5, 2 * n, n, d["messages"]))
PY
sh "$srcdir/test/mpi/rt_equiv.sh" "$vtrace" "$work/t1" "$work/eq" || fail "filtered full and reduced traces disagree"

# the module+offset form of fence_b's site, from the trace
site=$(sed -n 's/.* MPI_Win_fence site=fence_b@\([^ ]*\).*/\1/p' "$work/dump1" | head -n 1)
[ -n "$site" ] || fail "no site of fence_b in the dump"
printf 'MPI_Allreduce\nsite:%s\n' "$site" > "$work/f2"
run "$work/f2" "$work/t2" || { cat "$work/err"; fail "the run filtering site:$site failed"; }
"$vtrace" dump "$work/t2/full" > "$work/dump2" || fail "vtrace dump"
grep -q 'fence_b' "$work/dump2" && fail "site:$site left calls from fence_b in the trace"
[ "$(grep -c ' MPI_Win_fence site=fence_a@' "$work/dump2")" -eq $((2 * iters)) ] || fail "fence_a's calls missing"
echo "  site:$site filters fence_b's calls, fence_a's stay"

bad() { # bad CONTENT PATTERN: a filter the layer refuses, with a message matching PATTERN
    printf "$1" > "$work/bad"
    run "$work/bad" "$work/tb"
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "filter '$1': exit status $rc, expected a refusal"
    grep -q "$2" "$work/err" || { cat "$work/err"; fail "filter '$1': no message matching '$2'"; }
    echo "  refused: $(grep vtrace: "$work/err" | head -n 1)"
}
bad '# ok\nMPI_Barrier\nMPI_Barier\n' "VTRACE_FILTER: $work/bad:3: expected an MPI function vtrace wraps.*MPI_Barier"
bad 'MPI_Send\n' "VTRACE_FILTER: $work/bad:1: MPI_Send cannot be left out of the trace"
bad 'MPI_Wait*\n' "VTRACE_FILTER: $work/bad:1: 'MPI_Wait\\*' matches no MPI function that can be left out"
bad 'MPI_Barrier MPI_Bcast\n' "VTRACE_FILTER: $work/bad:1: expected one entry per line"
bad '\n\nsite:\n' "VTRACE_FILTER: $work/bad:3: expected a call site after 'site:'"
bad 'Barrier\n' "VTRACE_FILTER: $work/bad:1: expected an MPI function name"
rm -f "$work/missing"
bad_missing() {
    run "$work/missing" "$work/tb" && fail "a missing filter file was accepted"
    grep -q "VTRACE_FILTER: $work/missing: No such file" "$work/err" || { cat "$work/err"; fail "missing file: no message"; }
}
bad_missing
finish
