#!/bin/sh
# What a rank adds to a real trace's definitions (issue 13; doc/format.md, "What rank
# files share"): examples/halo on 2 and 8 ranks, both with the trace's function table
# and dictionary in vtrace.defs (VTRACE_TEST_SHARE_FUNCS=1; from 8 ranks on the default).
# The definitions (rank files' header, FUNCS, RANKDEFS and END, and vtrace.defs) of the
# 8-rank trace exceed those of the 2-rank one by at most BUDGET bytes a rank added: a
# rank's last RANKDEFS is compressed against rank 0's (about 120 bytes; 300 without the
# dictionary). `vtrace compensate` of the 8-rank trace keeps the shared table: its rank
# files hold no FUNCS block (the whole table, 7.5 KB, in each before).
. "$(dirname "$0")/common.sh"
mpi_timeout=300 fail_stops=yes
budget=240
prog=$builddir/examples/halo
need_mpiexec
need_built "$prog"
new_work
for n in 2 8; do
    locked env VTRACE_MODE=full VTRACE_TEST_SHARE_FUNCS=1 VTRACE_DIR="$work/t$n" "$VTEST_MPIEXEC" -n $n "$prog" \
        > "$work/out$n" 2>&1 || { cat "$work/out$n"; fail "the run on $n ranks failed"; }
    "$vtrace" info "$work/t$n" > "$work/info$n" 2>&1 || { cat "$work/info$n"; fail "vtrace info cannot read the trace of $n ranks"; }
    grep -q '^flags: *complete' "$work/info$n" || { cat "$work/info$n"; fail "the trace of $n ranks is not complete"; }
done
"$vtrace" compensate "$work/t8" "$work/comp" > "$work/comp.out" 2>&1 || { cat "$work/comp.out"; fail "vtrace compensate"; }
"$vtrace" info "$work/comp" > "$work/info.comp" 2>&1 || { cat "$work/info.comp"; fail "vtrace info cannot read the compensated trace"; }
"${VTEST_PYTHON:-python3}" - "$work" "$budget" <<'PY'
import os, struct, sys
work, budget = sys.argv[1], int(sys.argv[2])
def blocks(path):
    d = open(path, "rb").read()
    off = 16
    while off + 24 <= len(d):
        typ, codec = d[off + 4], d[off + 5]
        n = 24 + struct.unpack_from("<I", d, off + 8)[0]
        yield typ, codec, n
        off += n
    if off != len(d):
        sys.exit("FAIL: defs_ranks.sh: %s: blocks end at %d, the file at %d" % (path, off, len(d)))
def definitions(d):
    """bytes of the trace's definitions, of its events; the rank files' FUNCS blocks"""
    defs, ev, funcs = os.path.getsize(os.path.join(d, "vtrace.defs")), 0, 0
    for f in sorted(os.listdir(d)):
        if f.startswith("rank-"):
            defs += 16
            for typ, codec, n in blocks(os.path.join(d, f)):
                if typ in (2, 5, 6, 7):
                    ev += n
                else:
                    defs += n
                funcs += typ == 1
    return defs, ev, funcs
(d2, e2, _), (d8, e8, _) = definitions(work + "/t2"), definitions(work + "/t8")
cost = (d8 - d2) / 6.0
print("definitions: %d bytes on 2 ranks (events %d), %d on 8 (events %d): %.1f bytes a rank added (budget %d)"
      % (d2, e2, d8, e8, cost, budget))
if cost > budget:
    sys.exit("FAIL: defs_ranks.sh: a rank adds %.1f bytes of definitions, more than %d" % (cost, budget))
dc, _, funcs = definitions(work + "/comp")
print("compensated 8-rank trace: definitions %d bytes, %d FUNCS blocks in its rank files" % (dc, funcs))
if funcs:
    sys.exit("FAIL: defs_ranks.sh: vtrace compensate wrote a function table into the rank files (%d FUNCS blocks)" % funcs)
if not any(t == 1 for t, _, _ in blocks(work + "/comp/vtrace.defs")):
    sys.exit("FAIL: defs_ranks.sh: the compensated trace's vtrace.defs has no function table")
PY
status=$?
finish
