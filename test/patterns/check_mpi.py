#!/usr/bin/env python3
"""Checks `vtrace patterns --json` of test/patterns' MPI programs against their known
waits (p2p_waits.c, coll_waits.c): per (pattern, rank), the summed severity within
TOL ms per instance of the expected one, with the expected count; listed patterns with
an expected 0 must stay below TOL ms. The programs sleep 10 to 30 ms to make the waits;
the expected waits are what the trace itself proves: the wait of RANK in a phase is the
other rank's enter of its checked call minus RANK's, both read from `vtrace dump
--json` (global times), and a phase counts as an instance only where that wait is
positive. (The programs also print their own clock readings, "enter RANK
PHASE NS"; on a loaded machine a rank can be descheduled between that reading and the
call, so those are shown, not checked.) Then a wrong expectation (+10 ms) must be
rejected.

usage: check_mpi.py PROGRAM FILE.json PROGRAM-STDOUT VTRACE TRACE
"""
import json
import sys

MS = 1000000
TOL = 3
# (pattern, rank): (phases whose waits of that rank add up, count); count None: not
# checked, and no phase: at most TOL ms
EXPECT = {
    "p2p_waits": {("Late Sender", 1): (["A", "B", "D"], 3), ("Wrong Order", 1): (["D"], 1),
                  ("Late Receiver", 0): (["C"], 1), ("Late Sender", 0): ([], None),
                  ("Late Receiver", 1): ([], None), ("Long MPI_Wait (> 1 ms)", 1): (["B"], 1)},  # at least: the whole Wait
    "coll_waits": {("Wait at Barrier", 1): (["barrier"], 1), ("Wait at Barrier", 0): ([], None),
                   ("Wait at NxN", 0): (["allreduce"], 1), ("Wait at NxN", 1): ([], None),
                   ("Late Broadcast", 1): (["bcast"], 1), ("Early Reduce", 0): (["reduce"], 1)},
}


# rank 0's checked call of each phase: (function, tag or None), to find it in the trace
RANK0 = {
    "p2p_waits": {"A": ("MPI_Send", 1), "B": ("MPI_Send", 2), "C": ("MPI_Ssend", 3), "D": ("MPI_Send", 5)},
    "coll_waits": {"barrier": ("MPI_Barrier", None), "allreduce": ("MPI_Allreduce", None),
                   "bcast": ("MPI_Bcast", None), "reduce": ("MPI_Reduce", None)},
}


# rank 1's checked call of each phase: (function, receive tag or None)
RANK1 = {
    "p2p_waits": {"A": ("MPI_Recv", 1), "B": ("MPI_Wait", None), "C": ("MPI_Recv", 3), "D": ("MPI_Recv", 5)},
    "coll_waits": {"barrier": ("MPI_Barrier", None), "allreduce": ("MPI_Allreduce", None),
                   "bcast": ("MPI_Bcast", None), "reduce": ("MPI_Reduce", None)},
}


def trace_enters(prog, vtrace, trace):
    """(rank, phase) -> the global enter of the rank's checked call of the phase."""
    import subprocess
    enter = {}
    for rank, calls, key in ((0, RANK0[prog], "tag"), (1, RANK1[prog], "rtag")):
        out = subprocess.run([vtrace, "dump", "--json", "--rank", str(rank), trace], stdout=subprocess.PIPE,
                             check=True, universal_newlines=True).stdout
        recs = [json.loads(l) for l in out.splitlines() if l.strip()]
        for ph, (fn, tag) in calls.items():
            hits = [r["enter"] for r in recs if r["name"] == fn and (tag is None or r.get(key) == tag)]
            if len(hits) != 1:
                raise ValueError("phase %s: %d records %s %s %s on rank %d" % (ph, len(hits), fn, key, tag, rank))
            enter[(rank, ph)] = hits[0]
    return enter


def clock_rate(prog, vtrace, trace, enter):
    """Trace ns per monotonic ns on rank 0."""
    import subprocess
    out = subprocess.run([vtrace, "dump", "--json", "--rank", "0", trace], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    recs = [json.loads(l) for l in out.splitlines() if l.strip()]
    tr = {}
    for ph, (fn, tag) in RANK0[prog].items():
        hits = [r["enter"] for r in recs if r["name"] == fn and (tag is None or r.get("tag") == tag)]
        if len(hits) != 1:
            raise ValueError("phase %s: %d records %s tag %s on rank 0" % (ph, len(hits), fn, tag))
        tr[ph] = hits[0]
    first = min(tr, key=lambda ph: enter[(0, ph)])
    last = max(tr, key=lambda ph: enter[(0, ph)])
    return (tr[last] - tr[first]) / (enter[(0, last)] - enter[(0, first)])


def check(expect, sums):
    bad = []
    for (pat, rank), (want, count) in sorted(expect.items()):
        ns, n = sums.get((pat, rank), (0, 0))
        tol = TOL * MS * max(count or 1, 1)
        # the plug-in sums whole MPI_Wait durations: at least the wait, more when the
        # rank is descheduled after the message came
        off = (want - ns if want > ns else 0) if pat.startswith("Long MPI_Wait") else abs(ns - want)
        if off > tol or (count is not None and n != count):
            bad.append("%s rank %d: %.3f ms in %d, expected %.3f ms (+-%d) in %s"
                       % (pat, rank, ns / MS, n, want / MS, tol // MS, count if count is not None else "any"))
    return bad


def main():
    prog, path, out, vtrace, trace = sys.argv[1:6]
    enter = {}
    with open(out) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == "enter":
                enter[(int(w[1]), w[2])] = int(w[3])
    for (r, ph), t in sorted(enter.items(), key=lambda x: (x[0][1], x[0][0])):
        if r == 1:
            print("  phase %-10s rank 1 entered %+.3f ms after rank 0" % (ph, (t - enter.get((0, ph), t)) / MS))
    try:
        tenter = trace_enters(prog, vtrace, trace)
        for (r, ph), t in sorted(tenter.items(), key=lambda x: (x[0][1], x[0][0])):
            if r == 1:
                print("  phase %-10s in the trace rank 1 entered %+.3f ms after rank 0"
                      % (ph, (t - tenter[(0, ph)]) / MS))
        # a phase makes a wait only where the trace shows the other rank entering later: on
        # a loaded machine a rank descheduled for longer than the program's sleep enters
        # after the other one, and that phase has no instance
        def waits(r, phases):
            return [w for w in (tenter[(1 - r, p)] - tenter[(r, p)] for p in phases) if w > 0]
        expect = {(pat, r): (sum(waits(r, phases)), c if c is None else len(waits(r, phases)))
                  for (pat, r), (phases, c) in EXPECT[prog].items()}
    except ValueError as e:
        print("FAIL: %s: %s" % (prog, e))
        return 1
    sums = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            if o["bound"] != "exact":
                print("FAIL: %s: a full trace's figures must be exact" % prog)
                return 1
            s = sums.setdefault((o["pattern"], o["rank"]), [0, 0])
            s[0] += o["severity_ns"]
            s[1] += o["count"]
    for (pat, rank), (ns, n) in sorted(sums.items()):
        print("  %-26s rank %d: %10.3f ms in %d" % (pat, rank, ns / MS, n))
    bad = check(expect, {k: tuple(v) for k, v in sums.items()})
    for b in bad:
        print("FAIL: %s: %s" % (prog, b))
    wrong = {k: (ns + 10 * MS, c) for k, (ns, c) in expect.items()}
    if not check(wrong, {k: tuple(v) for k, v in sums.items()}):
        print("FAIL: %s: the checker accepted a wrong expectation" % prog)
        bad.append("checker")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
