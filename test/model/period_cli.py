#!/usr/bin/env python3
"""`vtrace period` on a hand-made trace with a known structure: rank 0 runs 30
iterations of (Barrier, Allreduce) every 20 us, then 25 iterations of (Barrier, Bcast,
Allreduce) every 30 us; rank 1 runs a pseudo-random sequence of calls. The JSON output must give
exactly two stretches on rank 0 with periods 2 and 3, their iteration counts (the
detector needs a window of N samples to see a period, so the counts are checked against
what the definition allows) and iteration times, and nothing for rank 1.

usage: period_cli.py --vtrace PATH --work DIR"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vtwrite  # noqa: E402

FUNCS = [("MPI_Init", ""), ("MPI_Barrier", "coq"), ("MPI_Bcast", "coqbB"), ("MPI_Allreduce", "coqbB"),
         ("MPI_Finalize", "")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    w = vtwrite.TraceWriter(2, funcs=FUNCS)
    for r in range(2):
        w.rank(r).comms.append(vtwrite.Comm(1, [r], how="self"))
    r0, t, q = w.rank(0), 0, 0
    r0.record("MPI_Init", 0, 1000)
    t = 10000
    for i in range(30):
        r0.record("MPI_Barrier", t, t + 1000, c=0, q=q, o=-1)
        r0.record("MPI_Allreduce", t + 10000, t + 11000, c=0, q=q + 1, o=-1, b=8, B=8)
        q += 2
        t += 20000
    for i in range(25):
        r0.record("MPI_Barrier", t, t + 1000, c=0, q=q, o=-1)
        r0.record("MPI_Bcast", t + 10000, t + 11000, c=0, q=q + 1, o=0, b=8, B=8)
        r0.record("MPI_Allreduce", t + 20000, t + 21000, c=0, q=q + 2, o=-1, b=8, B=8)
        q += 3
        t += 30000
    r0.record("MPI_Finalize", t, t + 1000)
    r1 = w.rank(1)
    r1.record("MPI_Init", 0, 1000)
    t, q, x = 10000, 0, 12345
    for i in range(200):  # a pseudo-random sequence of three calls: no period
        x = (x * 1103515245 + 12345) % (1 << 31)
        fn = ["MPI_Barrier", "MPI_Bcast", "MPI_Allreduce"][(x >> 16) % 3]
        r1.record(fn, t, t + 100, c=0, q=q, o=0 if fn == "MPI_Bcast" else -1, **({} if fn == "MPI_Barrier" else dict(b=8, B=8)))
        q += 1
        t += 1000
    r1.record("MPI_Finalize", t, t + 100)
    w.write(a.work, "VTRACE_MODE=full\n")
    N = 8
    p = subprocess.run([a.vtrace, "period", "--json", "--window", str(N), "--max-period", "16", a.work],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        print("FAIL: vtrace period exited %d: %s" % (p.returncode, p.stderr))
        return 1
    got = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    fails = []
    r0s = [g for g in got if g["rank"] == 0]
    if [g for g in got if g["rank"] == 1]:
        fails.append("rank 1 never repeats, yet: %s" % [g for g in got if g["rank"] == 1])
    if [g["period"] for g in r0s] != [2, 3]:
        fails.append("rank 0: periods %s, expected [2, 3]" % [g["period"] for g in r0s])
    else:
        a2, a3 = r0s
        # calls 1..60 are period 2 (call 0 is MPI_Init); 61..135 period 3
        if a2["first_call"] != 1 or not 55 <= a2["last_call"] <= 62:
            fails.append("period 2 spans calls %d-%d, expected 1 to about 60" % (a2["first_call"], a2["last_call"]))
        if a2["calls"] != ["MPI_Barrier", "MPI_Allreduce"]:
            fails.append("period 2 iteration %s" % a2["calls"])
        if a2["iteration_ns"]["min"] != 20000 or a2["iteration_ns"]["max"] != 20000:
            fails.append("period 2 iteration time %s, expected 20000 ns" % a2["iteration_ns"])
        if a3["calls"] not in (["MPI_Barrier", "MPI_Bcast", "MPI_Allreduce"], ["MPI_Bcast", "MPI_Allreduce", "MPI_Barrier"],
                               ["MPI_Allreduce", "MPI_Barrier", "MPI_Bcast"]):
            fails.append("period 3 iteration %s" % a3["calls"])
        if a3["last_call"] != 135 or a3["iterations"] < 20:
            fails.append("period 3 spans calls %d-%d (%d iterations), expected to 135, >= 20 iterations"
                         % (a3["first_call"], a3["last_call"], a3["iterations"]))
        if a3["iteration_ns"]["min"] != 30000 or a3["iteration_ns"]["max"] != 30000:
            fails.append("period 3 iteration time %s, expected 30000 ns" % a3["iteration_ns"])
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        shutil.rmtree(a.work)
        print("PASS: period_cli (%d stretches)" % len(got))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
