#!/usr/bin/env python3
"""Golden wait-state patterns: small hand-made traces (test/model/vtwrite.py: same
clock, offsets 0, no call sites) with severities computed by hand, checked against
`vtrace patterns --json` (sums of the findings per (pattern, rank)).

usage: golden_patterns.py --vtrace PATH --plugin LONGWAIT.so [--work DIR] [--keep]

Conventions: times in microseconds; every rank starts with MPI_Init [0,0] and ends with
MPI_Finalize [E,E]; the run time is the sum over ranks of E (init at 0). A wait pattern
(Late Sender, Wrong Order, Late Receiver, Wait at Barrier, Wait at NxN, Early Reduce,
Late Broadcast) not listed for a rank in a case must be absent (0) for it; costs are
checked only where listed.

At the end a deliberately wrong expectation must be rejected by the same checker.
Standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import vtwrite  # noqa: E402

US = 1000
WAITS = ["Late Sender", "Wrong Order", "Late Receiver", "Wait at Barrier", "Wait at NxN", "Early Reduce",
         "Late Broadcast"]
FUNCS = [
    ("MPI_Init", ""), ("MPI_Send", "cptb"), ("MPI_Ssend", "cptb"), ("MPI_Isend", "cptbr"), ("MPI_Irecv", "cr"),
    ("MPI_Recv", "cPTB"), ("MPI_Wait", "k"), ("MPI_Barrier", "cq"), ("MPI_Allreduce", "coqbB"),
    ("MPI_Bcast", "coqbB"), ("MPI_Reduce", "coqbB"), ("MPI_Finalize", ""),
]


def config(trdv=1 << 20):
    return "VTRACE_MODE=full\nVTRACE_THRESHOLD=10us\nVTRACE_MODEL_L=1us\nVTRACE_MODEL_TRDV=%d\n" % trdv


def INIT():
    return ("MPI_Init", 0, 0, {})


def FIN(t):
    return ("MPI_Finalize", t, t, {})


def SEND(a, b, dst, tag=0, nbytes=8, fn="MPI_Send"):
    return (fn, a, b, dict(c=0, p=dst, t=tag, b=nbytes))


def ISEND(a, b, dst, req, tag=0, nbytes=8):
    return ("MPI_Isend", a, b, dict(c=0, p=dst, t=tag, b=nbytes, r=req))


def RECV(a, b, src, tag=0, nbytes=8):
    return ("MPI_Recv", a, b, dict(c=0, P=src, T=tag, B=nbytes))


def IRECV(a, b, req):
    return ("MPI_Irecv", a, b, dict(c=0, r=req))


def WAIT(a, b, req, side, peer, tag=0, nbytes=8):
    return ("MPI_Wait", a, b, dict(k=[(req, 1 if side == "r" else 0, peer, tag, nbytes)]))


def COLL(fn, a, b, q, root=-1):
    if fn == "MPI_Barrier":
        return (fn, a, b, dict(c=0, q=q))
    return (fn, a, b, dict(c=0, o=root, q=q, b=8, B=8))


class Case:
    def __init__(self, name, what, progs, expect, cfg=None, plugin=None, env=None, reduce=False):
        self.name, self.what, self.progs, self.expect = name, what, progs, expect
        self.cfg = cfg or config()
        self.plugin = plugin      # extra expectations need the example plug-in
        self.env = env or {}
        self.reduce = reduce      # also check the reduced trace (vtrace reduce)

    def write(self, d):
        n = len(self.progs)
        w = vtwrite.TraceWriter(n, funcs=FUNCS)
        for r, prog in enumerate(self.progs):
            rk = w.rank(r)
            rk.comms.append(vtwrite.Comm(1, range(n), how="world"))
            for fname, a, b, fields in prog:
                rk.record(fname, int(a * US), int(b * US), **fields)
        w.write(d, self.cfg)

    def total_us(self):
        return sum(p[-1][2] for p in self.progs)


CASES = []

# Late Sender, blocking receive: rank 1 Recv [20,52], the send enters at 50:
#   wait = min(50 - 20, 52 - 20) = 30.  P2P costs: rank 0 Send 2; rank 1 32 - 30 = 2.
CASES.append(Case("late-sender", "blocking receive entered before the send", [
    [INIT(), SEND(50, 52, 1), FIN(60)],
    [INIT(), RECV(20, 52, 0), FIN(61)]],
    {("Late Sender", 1): (30, 1), ("P2P Communication", 0): (2, 1), ("P2P Communication", 1): (2, 1)},
    reduce=True))

# Late Sender in MPI_Wait: Irecv [10,11], Wait [12,40]; the send enters at 30: 30 - 12 = 18.
# The cap: Recv [70,75] and its send entering at 100 (a clock error): min(30, 5) = 5.
# Example plug-in (LONGWAIT_MIN_NS=10000): the Wait of 28 us is a long wait.
CASES.append(Case("late-sender-wait", "the Wait of an Irecv; the cap by the call's duration", [
    [INIT(), SEND(30, 31, 1, tag=1), SEND(100, 101, 1, tag=2), FIN(110)],
    [INIT(), IRECV(10, 11, 5), WAIT(12, 40, 5, "r", 0, tag=1), RECV(70, 75, 0, tag=2), FIN(110)]],
    {("Late Sender", 1): (23, 2), ("P2P Communication", 1): (1 + 28 - 18 + 0, 3),
     ("Long MPI_Wait (> 1 ms)", 1): (28, 1)},
    plugin=True, env={"LONGWAIT_MIN_NS": "10000"}))

# Late Receiver (VTRACE_MODEL_TRDV=1024):
#   Ssend [10,42], its receive posted at 40:                 30
#   Send of 2048 B (synchronous by size) [50,82], posted at 80: 30
#   Isend of 2048 B [90,91] + Wait [92,130], posted at 125:   125 - 92 = 33
#   a Send of 8 B (eager) [140,150] to a receive posted at 148: not a wait
# Rank 1's receives are all entered after their sends: no Late Sender.
CASES.append(Case("late-receiver", "synchronous sends (Ssend, by size, Isend+Wait) before the receive", [
    [INIT(), SEND(10, 42, 1, fn="MPI_Ssend"), SEND(50, 82, 1, tag=1, nbytes=2048),
     ISEND(90, 91, 1, 7, tag=2, nbytes=2048), WAIT(92, 130, 7, "s", 1, tag=2, nbytes=2048),
     SEND(140, 150, 1, tag=3), FIN(160)],
    [INIT(), RECV(40, 41, 0), RECV(80, 81, 0, tag=1, nbytes=2048), RECV(125, 126, 0, tag=2, nbytes=2048),
     RECV(148, 149, 0, tag=3), FIN(160)]],
    {("Late Receiver", 0): (93, 3)}, cfg=config(trdv=1024)))

# Wrong order: tag 4 sent at 10, tag 5 at 50; rank 1 receives tag 5 first, Recv [20,51]:
#   Late Sender 30, and tag 4 (sent earlier) is received later: Wrong Order 30.
CASES.append(Case("wrong-order", "a Late Sender while an earlier-sent message waits", [
    [INIT(), SEND(10, 11, 1, tag=4), SEND(50, 51, 1, tag=5), FIN(60)],
    [INIT(), RECV(20, 51, 0, tag=5), RECV(52, 53, 0, tag=4), FIN(60)]],
    {("Late Sender", 1): (30, 1), ("Wrong Order", 1): (30, 1)}))

# The same messages received in order: Late Sender 5 (Recv [5,11], send at 10) + 30
# (Recv [20,51], send at 50); no Wrong Order.
CASES.append(Case("in-order", "Late Senders in sending order: no Wrong Order", [
    [INIT(), SEND(10, 11, 1, tag=4), SEND(50, 51, 1, tag=5), FIN(60)],
    [INIT(), RECV(5, 11, 0, tag=4), RECV(20, 51, 0, tag=5), FIN(60)]],
    {("Late Sender", 1): (35, 2)}))

# Collectives, 3 ranks (enters / exits):
#   Barrier q0    10/31  30/31  20/32    last 30: waits 20, 0, 10
#   Allreduce q1  40/61  45/61  60/61    last 60: waits 20, 15, 0
#   Bcast q2 root 1: 70/81 80/81 75/82   root enters 80: rank 0 10, rank 2 5
#   Reduce q3 root 2: 90/91 100/101 85/101  last other 100: root 2 waits 15
#   Barrier q4    110/115 150/151 120/151  last 150: rank 0 min(40, 5) = 5, rank 2 30
# Synchronization costs (barrier time - waits): rank 0 21 + 5 - 25 = 1, rank 1 2, rank 2 43 - 40 = 3.
# Collective costs: rank 0 (21-20) + (11-10) + 1 = 3; rank 2 1 + (7-5) + (16-15) = 4.
CASES.append(Case("collectives", "Wait at Barrier, Wait at NxN, Late Broadcast, Early Reduce", [
    [INIT(), COLL("MPI_Barrier", 10, 31, 0), COLL("MPI_Allreduce", 40, 61, 1), COLL("MPI_Bcast", 70, 81, 2, 1),
     COLL("MPI_Reduce", 90, 91, 3, 2), COLL("MPI_Barrier", 110, 115, 4), FIN(160)],
    [INIT(), COLL("MPI_Barrier", 30, 31, 0), COLL("MPI_Allreduce", 45, 61, 1), COLL("MPI_Bcast", 80, 81, 2, 1),
     COLL("MPI_Reduce", 100, 101, 3, 2), COLL("MPI_Barrier", 150, 151, 4), FIN(160)],
    [INIT(), COLL("MPI_Barrier", 20, 32, 0), COLL("MPI_Allreduce", 60, 61, 1), COLL("MPI_Bcast", 75, 82, 2, 1),
     COLL("MPI_Reduce", 85, 101, 3, 2), COLL("MPI_Barrier", 120, 151, 4), FIN(160)]],
    {("Wait at Barrier", 0): (25, 2), ("Wait at Barrier", 2): (40, 2),
     ("Wait at NxN", 0): (20, 1), ("Wait at NxN", 1): (15, 1),
     ("Late Broadcast", 0): (10, 1), ("Late Broadcast", 2): (5, 1), ("Early Reduce", 2): (15, 1),
     ("Synchronization", 0): (1, 2), ("Synchronization", 1): (2, 2), ("Synchronization", 2): (3, 2),
     ("Collective Communication", 0): (3, 3), ("Collective Communication", 2): (4, 3)}))


def run_patterns(vtrace, d, plugin=None, env=None):
    cmd = [vtrace, "patterns", "--json"] + (["--plugin", plugin] if plugin else []) + [d]
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=e)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def check(case, found, total_us, nranks):
    """Problems (strings) of FOUND (JSON objects) against case.expect."""
    bad = []
    sums = {}
    for f in found:
        k = (f["pattern"], f["rank"])
        s = sums.setdefault(k, [0, 0])
        s[0] += f["severity_ns"]
        s[1] += f["count"]
        want_share = f["severity_ns"] / (total_us * US)
        if abs(f["share"] - want_share) > 1e-5:
            bad.append("%s rank %d: share %s, expected %.6f" % (k[0], k[1], f["share"], want_share))
        if f["bound"] != "exact" or f["reduced"]:
            bad.append("%s rank %d: a full trace's figure must be exact" % k)
    for (pat, rank), (us, count) in sorted(case.expect.items()):
        got = sums.get((pat, rank), [0, 0])
        if got != [us * US, count]:
            bad.append("%s rank %d: %d ns in %d, expected %d ns in %d" % (pat, rank, got[0], got[1], us * US, count))
    for pat in WAITS:
        for r in range(nranks):
            if (pat, r) not in case.expect and sums.get((pat, r), [0, 0])[0]:
                bad.append("%s rank %d: %d ns, expected none" % (pat, r, sums[(pat, r)][0]))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--work", default="golden_patterns.work")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    failures = 0
    for case in CASES:
        d = os.path.join(a.work, case.name)
        case.write(d)
        try:
            found = run_patterns(a.vtrace, d, a.plugin if case.plugin else None, case.env)
            bad = check(case, found, case.total_us(), len(case.progs))
            if not case.plugin:
                # the streamed analysis (the default) and the one with the trace in memory
                mem = run_patterns(a.vtrace, d, None, dict(case.env or {}, VTRACE_TEST_PATTERNS_IN_MEMORY="1"))
                if mem != found:
                    bad.append("streamed %s, in memory %s" % (found, mem))
        except (RuntimeError, ValueError) as e:
            bad = [str(e)]
        if case.reduce and not bad:
            # a reduced trace: the same Late Sender (its message is not merged), as a lower bound
            rd = d + ".reduced"
            p = subprocess.run([a.vtrace, "reduce", d, rd],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            if p.returncode != 0:
                bad.append("vtrace reduce failed: " + p.stderr.strip())
            else:
                try:
                    red = run_patterns(a.vtrace, rd)
                    ls = [f for f in red if f["pattern"] == "Late Sender"]
                    if not red or any(not f["reduced"] for f in red):
                        bad.append("reduced trace: findings not marked reduced")
                    if [(f["rank"], f["severity_ns"], f["bound"]) for f in ls] != [(1, 30 * US, "lower")]:
                        bad.append("reduced trace: Late Sender %s, expected rank 1, 30000 ns, lower bound" % ls)
                    if any(f["bound"] != "upper" for f in red if f["kind"] == "cost"):
                        bad.append("reduced trace: costs must be upper bounds")
                except RuntimeError as e:
                    bad.append(str(e))
        print("%s %s: %s" % ("ok  " if not bad else "FAIL", case.name, case.what))
        for b in bad:
            print("     " + b)
        failures += bool(bad)
    # the checker must be able to fail
    wrong = Case("wrong", "", CASES[0].progs, {("Late Sender", 1): (31, 1)})
    wrong.write(os.path.join(a.work, "wrong"))
    if check(wrong, run_patterns(a.vtrace, os.path.join(a.work, "wrong")), wrong.total_us(), 2):
        print("ok   the checker rejects a wrong expectation")
    else:
        print("FAIL the checker accepted a wrong expectation")
        failures += 1
    if not failures and not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
    print("%d of %d cases failed" % (failures, len(CASES) + 1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
