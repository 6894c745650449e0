"""The layer's instructions per event, for maint/bench/trace-sizes.sh.
   cgobj.py TRACE VTRACE CALLGRIND_FILE...  reads the callgrind files of a run with
   VTRACE_MODE=full (every rank's parts, dumped after MPI_Init* and before MPI_Finalize)
   and prints two figures: the self cost (Ir) of the objects libvtrace and libzstd
   between MPI_Init and MPI_Finalize over the events recorded there (recording alone:
   a block written then is in it, one written by MPI_Finalize is not), and the same over
   the whole run and all events of the full trace TRACE (`VTRACE info --json`), the
   fixed costs of MPI_Init and MPI_Finalize and the compression of every block included.
   Self costs are read from the raw callgrind format (names compressed: an object's name
   is given at its first ob= or cob=, later its id alone): a cost line belongs to the
   current object (ob=), code inlined from other files (fi=/fe=) included; the line
   after calls= is a callee's inclusive cost and is skipped."""
import json
import re
import subprocess
import sys

LAYER = re.compile(r"/lib(vtrace|zstd)\.so[.0-9]*$")


def layer_ir(path):
    """(the part's trigger, the layer's self Ir in it)"""
    names, ob, skip, total, trigger = {}, "", False, 0, ""
    for line in open(path):
        if skip:
            skip = False
            continue
        if line.startswith(("ob=", "cob=")):
            m = re.match(r"c?ob=(?:\((\d+)\))?\s*(.*)", line.rstrip("\n"))
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith("ob="):
                ob = names.get(m.group(1), m.group(2))
        elif line.startswith("calls="):
            skip = True
        elif line.startswith("desc: Trigger:"):
            trigger = line.split(":", 2)[2].strip()
        elif line[:1] in "0123456789+-*" and LAYER.search(ob):
            f = line.split()
            if len(f) > 1:
                total += int(f[1])
    return trigger, total


trace, vtrace, files = sys.argv[1], sys.argv[2], sys.argv[3:]
info = json.loads(subprocess.run([vtrace, "info", "--json", "--no-match", trace], capture_output=True,
                                 text=True, check=True).stdout)
parts = {}   # rank file -> [(part, trigger, Ir)]; FILE.R is the last part, FILE.R.N part N
for p in files:
    m = re.search(r"\.(\d+)(?:\.(\d+))?$", p)
    trigger, ir = layer_ir(p)
    parts.setdefault(m.group(1), []).append((int(m.group(2)) if m.group(2) else 1 << 30, trigger, ir))
whole = run = 0
for rank, ps in parts.items():
    ps.sort()
    whole += sum(ir for _, _, ir in ps)
    # the part that ends at the first dump before MPI_Finalize begins at the last dump
    # after MPI_Init (the layer's own MPI_Init returns last)
    r = [ir for _, trig, ir in ps if "dump-before=MPI_Finalize" in trig]
    if not r:
        sys.exit("cgobj.py: rank %s: no part ends before MPI_Finalize" % rank)
    run += r[0]
fixed = sum(v["events"] for k, v in info["functions"].items() if re.fullmatch(r"MPI_(Init|Init_thread|Finalize)", k))
print("%.0f/%.0f" % (run / max(info["events"] - fixed, 1), whole / info["events"]))
