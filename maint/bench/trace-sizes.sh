#!/bin/bash
# Trace sizes (issue 13): runs each program of LIST once with VTRACE_MODE=both and prints
# a markdown table (OUT/sizes.tsv holds the same figures) of, per program:
#   events    the full trace's events; kept: the reduced trace's stored records (where the
#             reduced trace would outgrow the full one, the full one is stored: "all,
#             stored", with the records and bytes vtrace reduce would have kept);
#   full, reduced   bytes of the full trace and of the run time's reduced trace (vtrace.defs
#             and the rank files, as `vtrace info` counts them), and bytes per event (of
#             the full trace's events, for every column);
#   vtrace reduce   bytes of `vtrace reduce` of the full trace (equal to reduced);
#   zstd -19  bytes of `tar -C DIR/full -cf - . | zstd -19` (config.txt included);
#   checks    the reduced trace has at most the full trace's records and bytes, and the
#             share-of-records bound of test/mpi/rt_equiv.sh: reduced bytes <= kept /
#             full records x full bytes + 1024 x ranks (its margin, negative when over).
# CALLGRIND=1 adds a run under callgrind with VTRACE_MODE=full and the column "layer Ir/ev
# run/all": the instructions of the layer (the self cost of libvtrace and libzstd, summed
# over the ranks; MPI's own, its polling included, is not in it) per event, between
# MPI_Init and MPI_Finalize (recording) and over the whole run (MPI_Init's and
# MPI_Finalize's fixed costs and every block's compression included): cgobj.py. Slow: use
# short runs.
#   maint/bench/trace-sizes.sh BUILDDIR LIST [OUT]    (OUT default: ./trace-sizes)
# LIST: one program a line, "name|directory|command" (blank lines and # comments are
# skipped); the command runs in the directory under ${MPIEXEC:-mpiexec.mpich} -n ${NP:-2}
# with LD_PRELOAD of BUILDDIR's libvtrace (the same library serves a program linked with
# it; an example's libtool wrapper is not, its .libs/ binary is). It builds nothing.
set -u
build=$(cd "${1:?usage: trace-sizes.sh BUILDDIR LIST [OUT]}" && pwd) || exit 2
list=${2:?usage: trace-sizes.sh BUILDDIR LIST [OUT]}
out=${3:-trace-sizes}
lib=$build/.libs/libvtrace.so vtrace=$build/vtrace
if [ ! -f "$lib" ] || [ ! -x "$vtrace" ]; then echo "trace-sizes.sh: $build: vtrace not built" >&2; exit 2; fi
[ -r "$list" ] || { echo "trace-sizes.sh: $list: cannot read" >&2; exit 2; }
command -v zstd > /dev/null || { echo "trace-sizes.sh: needs zstd" >&2; exit 2; }
cg=${CALLGRIND:-0}
[ "$cg" = 0 ] || command -v valgrind > /dev/null || { echo "trace-sizes.sh: CALLGRIND=1 needs valgrind" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2016 # expanded by vg.sh, per rank
printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --dump-after="MPI_Init*" --dump-before=MPI_Finalize --callgrind-out-file="$CGOUT.$PMI_RANK" "$@"\n' > "$out/vg.sh"
chmod +x "$out/vg.sh"
tsv=$out/sizes.tsv
: > "$tsv"
status=0
while IFS='|' read -r name dir cmd <&3; do
    case $name in ''|'#'*) continue ;; esac
    t=$out/$name
    rm -rf "$t" "$t.vtr" "$t".cg.*
    # shellcheck disable=SC2086 # the command is split into words as a shell would
    if ! (cd "$dir" && LD_PRELOAD=$lib VTRACE_MODE=both VTRACE_DIR=$t \
            "${MPIEXEC:-mpiexec.mpich}" -n "${NP:-2}" $cmd) < /dev/null > "$t.out" 2>&1; then
        echo "trace-sizes.sh: $name: the run failed ($t.out)" >&2; status=1; continue
    fi
    "$vtrace" reduce --json -q "$t/full" "$t.vtr" > "$t.reduce.json" 2> "$t.reduce" ||
        { echo "trace-sizes.sh: $name: vtrace reduce failed ($t.reduce)" >&2; status=1; continue; }
    for d in full reduced; do
        "$vtrace" info --json --no-match "$t/$d" > "$t.$d.json" 2> "$t.$d.err" ||
            { echo "trace-sizes.sh: $name: vtrace info $t/$d failed" >&2; status=1; continue 2; }
    done
    z=$(tar -C "$t/full" -cf - . | zstd -19 -q -c | wc -c)
    ir=-
    if [ "$cg" != 0 ]; then
        # shellcheck disable=SC2086
        if (cd "$dir" && CGOUT=$t.cg LD_PRELOAD=$lib VTRACE_MODE=full VTRACE_DIR=$t.cgtrace \
                "${MPIEXEC:-mpiexec.mpich}" -n "${NP:-2}" "$out/vg.sh" $cmd) < /dev/null > "$t.cg.out" 2>&1; then
            ir=$(python3 "$here/cgobj.py" "$t.cgtrace" "$vtrace" "$t".cg.[0-9]*) || { ir=-; status=1; }
        else
            echo "trace-sizes.sh: $name: the callgrind run failed ($t.cg.out)" >&2; status=1
        fi
        rm -rf "$t.cgtrace"
    fi
    python3 - "$name" "$t" "$z" "$ir" >> "$tsv" <<'PY' || status=1
import json, sys
name, t, z, ir = sys.argv[1:]
f, r = (json.load(open("%s.%s.json" % (t, k))) for k in ("full", "reduced"))
v = json.load(open(t + ".reduce.json"))
fr, rr, fb, rb = f["stored_records"], r["stored_records"], f["bytes"], r["bytes"]
bound = lambda recs: recs * fb // max(fr, 1) + 1024 * f["ranks"]
ok = rr <= fr and rb <= fb
print("\t".join(str(x) for x in (name, f["events"], fr, rr, int(r["stored"]), fb, rb, v["bytes_out"], z, ok and "yes" or "NO",
                                  bound(rr) - rb, v["records_stored"], v["bytes_reduced"],
                                  bound(v["records_stored"]) - v["bytes_reduced"], ir)))
PY
done 3< "$list"
python3 - "$tsv" <<'PY'
import sys
print("| code | events | records kept | full B | reduced B | vtrace reduce B | tar\\|zstd -19 B | B/ev full | B/ev reduced "
      "| B/ev zstd -19 | reduced <= full | share-of-records bound, margin B | layer Ir/ev run/all |")
print("|" + "---|" * 13)
for l in open(sys.argv[1]):
    name, ev, fr, rr, stored, fb, rb, vb, z, ok, margin, vrr, vrb, vmargin, ir = l.rstrip("\n").split("\t")
    ev, fr, margin, vmargin = int(ev), int(fr), int(margin), int(vmargin)
    pct = lambda n: "%.1f%%" % (100.0 * int(n) / max(fr, 1))
    kept, vbytes, bound = "%s (%s)" % (rr, pct(rr)), vb, "%s (%+d)" % ("within" if margin >= 0 else "OVER", margin)
    if stored == "1":   # the reduced trace would have outgrown the full one: the full one is stored
        kept = "all, stored (%s would be: %s)" % (vrr, pct(vrr))
        vbytes = "%s (stored; reduced: %s)" % (vb, vrb)
        bound += "; unstored %s (%+d)" % ("within" if vmargin >= 0 else "OVER", vmargin)
    print("| %s | %d | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s |" % (
        name, ev, kept, fb, rb, vbytes, z, int(fb) / ev, int(rb) / ev, int(z) / ev, ok, bound, ir))
PY
exit $status
