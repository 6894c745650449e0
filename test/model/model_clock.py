#!/usr/bin/env python3
"""The model clock of a trace recorded with the run-time reduction (doc/piggyback.md):
VTRACE_MODEL_CLOCK=init in its configuration makes every tool use the clock offsets
measured at MPI_Init, as the run time did when it decided, instead of interpolating to
the second synchronisation. A 2-rank trace whose rank 1 drifts by 1 ms between the two
synchronisations: rank 1's predicted end differs by exactly that drift between the
configurations with and without the line.
    model_clock.py VTRACE WORKDIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vtwrite  # noqa: E402

vtrace, work = sys.argv[1], sys.argv[2]
DRIFT = 1000000
ends = {}
for name, extra in (("interpolated", ""), ("init", "VTRACE_MODEL_CLOCK=init\n")):
    w = vtwrite.TraceWriter(2, funcs=[("MPI_Init", ""), ("MPI_Barrier", "coq"), ("MPI_Finalize", "")])
    for r in range(2):
        rk = w.rank(r)
        rk.comms.append(vtwrite.Comm(1, range(2), how="world"))
        rk.record("MPI_Init", 0, 1000)
        rk.record("MPI_Finalize", 5000000, 5000000)
    w.rank(1).clock = (0, DRIFT)
    d = os.path.join(work, name)
    w.write(d, "VTRACE_THRESHOLD=1ms\n" + extra)
    out = subprocess.run([vtrace, "whatif", "--json", d], check=True, capture_output=True, text=True).stdout
    ends[name] = json.loads(out.splitlines()[0])["rank_end_ns"]
print("rank ends, interpolated offsets:", ends["interpolated"], " init offsets:", ends["init"])
if ends["interpolated"][0] != ends["init"][0] or ends["interpolated"][1] - ends["init"][1] != DRIFT:
    print("FAIL: model_clock: expected rank 1 to end %d ns earlier on the init clock" % DRIFT)
    sys.exit(1)
print("PASS: model_clock")
