#!/usr/bin/env python3
"""Golden critical paths: small hand-made traces (vtwrite.py, through golden_rules.py's
helpers) with the critical path, the time per rank and the slack of the candidates
computed by hand, checked against `vtrace critical-path --json`.

usage: critpath_golden.py --vtrace PATH [--work DIR] [--keep]

Conventions: those of golden_rules.py (times in us, θ = 10 us, L = 1 us, G = 0; record
i of a rank has sequence number 2i+1 and the burst before it 2i; every rank starts with
MPI_Init, seq 1, after a burst seq 0 of length 0). Predicted times: t' = t - d.

The path is written bottom-up as segments (rank, first event, last event, predicted
start, predicted end) and the edges between them (kind, from event, to event, the
contributor's call, time on the edge). A completion's own share of the path is
E' - (T - D) of its critical contributor; a message edge is λ_m; a gate or posting edge
is 0 in these same-clock traces. The slack of e is T' minus the longest chain of
dependencies through e, i.e. L(e) - E'(e) with L the latest end that keeps T'.

At the end a deliberately wrong expectation must be rejected by the checker.
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
sys.path.insert(0, HERE)
from golden_rules import Case, INIT, FIN, SEND, RECV, ALLREDUCE, ns  # noqa: E402


class CP:
    """Expected critical path of one scenario. path: ("seg", rank, first, last, start_us,
    end_us) and ("edge", kind, from, to, via, us) items, bottom-up."""

    def __init__(self, scenario, predicted, end_rank, startup, path, per_rank, slack, per_function=None):
        self.scenario = scenario
        self.predicted = ns(predicted)
        self.end_rank = end_rank
        self.startup = ns(startup)
        self.segments = [(p[1], p[2], p[3], ns(p[4]), ns(p[5])) for p in path if p[0] == "seg"]
        self.edges = [(p[1], p[2], p[3], p[4], ns(p[5])) for p in path if p[0] == "edge"]
        self.per_rank = [ns(x) for x in per_rank]
        self.slack = {k: ns(v) for k, v in slack.items()}
        self.per_function = {k: ns(v) for k, v in (per_function or {}).items()}


CASES = []   # (Case, [CP, ...])

# ==================================================================================
# 1. A chain: rank 2 waits for rank 1, which waited for rank 0.
#   rank 0: s2 burst 0-40 (cand 40) | s3 Send[40,41] ->1 | s4 41-45 | s5 Fin 45
#   rank 1: s2 burst 0-10 (cand 10) | s3 Recv[10,42] <-0 (cand 32) | s4 42-62 (cand 20) |
#           s5 Send[62,63] ->2 | s6 63-65 | s7 Fin 65
#   rank 2: s2 burst 0-5 | s3 Recv[5,64] <-1 (cand 59) | s4 64-70 | s5 Fin 70
# Baseline (d = 0 everywhere, predicted = measured), T' = 70 on rank 2.
#   2:3 Recv: local (5, 0) -> 0 + (63 - 5) = 58; message (40... no: S = 62, λ_m =
#       min(1, 64 - 62) = 1, T = 63, D = 0) -> 0: the message. Own share 64 - 63 = 1;
#       edge message 1:4 -> 2:3 via the send 1:5: 63 - 62 = 1.
#   1:3 Recv: local (10, 0) -> 31; message (41, 0) -> 0: the message; own 42 - 41 = 1;
#       edge message 0:2 -> 1:3 via 0:3: 41 - 40 = 1.
#   rank 0 from 0:2 down to 0:0, startup 0.
#   Path: [0: 0:0..0:2, 0-40] msg 1 [1: 1:3..1:4, 41-62] msg 1 [2: 2:3..2:5, 63-70]
#   per rank 40, 21 (1 + 20), 7 (1 + 6 + 0);  40 + 1 + 21 + 1 + 7 = 70.
#   Slack of 1:2 (ends 10): its edges to 1:3 are the local contributor,
#   10 - 10 + (E - M) = 42 - 41 = 1, and the candidate cap (0): L = 42 - 1 = 41,
#   slack 31 (it could last until the message arrives at 41).
# 0:2=elim: d0 = 40, the message carries D = 40. 1:3: local 0 + (41 - 10) = 31,
#   message 40 + 0 = 40: the local contributor wins, d1 = 31 (cap 32 does not bind):
#   rank 1's own time is critical now. 1:3 ends 11, 1:4 31, the send at 31 with D = 31.
#   2:3: local 58, message 31: d2 = 31, ends 33 (own 33 - (63 - 31) = 1), 2:5 at 39.
#   rank ends 5, 34, 39: T' = 39.
#   Path: [1: 1:0..1:4, 0-31] msg 1 [2: 2:3..2:5, 32-39]; per rank 0, 31, 7.
#   Slack of 0:2 (ends 0): its message edge to 1:3 weighs 1 - 0 + (42 - 41) = 2 and 1:3
#   must end by 11: L = 9; its own rank: 39 - 0 - 4 - 1 = 34. Slack 9 (with 0:2
#   shortened by 31 only, D = 31 and d1 = min(31, 31): T' unchanged; by 30, T' = 40).
# ==================================================================================
CHAIN = Case(
    "chain", "",
    [[INIT(), SEND(40, 41, 1), FIN(45)],
     [INIT(), RECV(10, 42, 0), SEND(62, 63, 2), FIN(65)],
     [INIT(), RECV(5, 64, 1), FIN(70)]],
    [], {"0:2": 40, "1:2": 10, "1:3": 32, "1:4": 20, "2:3": 59})
CASES.append((CHAIN, [
    CP("", 70, 2, 0,
       [("seg", 0, "0:0", "0:2", 0, 40), ("edge", "message", "0:2", "1:3", "0:3", 1),
        ("seg", 1, "1:3", "1:4", 41, 62), ("edge", "message", "1:4", "2:3", "1:5", 1),
        ("seg", 2, "2:3", "2:5", 63, 70)],
       [40, 21, 7], {"0:2": 0, "1:2": 31, "1:3": 0, "1:4": 0, "2:3": 0},
       {"(computation)": 66, "MPI_Recv": 2, "MPI_Init": 0, "MPI_Finalize": 0}),
    CP("0:2=elim", 39, 2, 0,
       [("seg", 1, "1:0", "1:4", 0, 31), ("edge", "message", "1:4", "2:3", "1:5", 1),
        ("seg", 2, "2:3", "2:5", 32, 39)],
       [0, 31, 7], {"0:2": 9, "1:2": 0, "1:3": 0, "1:4": 0, "2:3": 0}),
]))

# ==================================================================================
# 2. A collective: the latest arriver is critical (golden_rules' case 7).
#   rank 0: s2 0-30 (cand 30) | s3 Allreduce[30,52] (cand 22) | s4 52-60 | Fin 60
#   rank 1: s2 0-50 (cand 50) | s3 Allreduce[50,52]           | s4 52-58 | Fin 58
#   rank 2: s2 0-20 (cand 20) | s3 Allreduce[20,52] (cand 32) | s4 52-55 | Fin 55
# Baseline: gate members (T - D) 30, 50, 20: rank 1 arrived last (M = 50). T' = 60 on
#   rank 0: 0:5, 0:4 (8), 0:3 own 52 - 50 = 2, edge collective 1:2 -> 0:3 via 1:3 (0),
#   1:2 (50) .. 1:0.  Path [1: 1:0..1:2, 0-50] coll 0 [0: 0:3..0:5, 50-60].
#   per rank 10, 50, 0; per function computation 58, Allreduce 2.
#   Slack: the gate must be ready by L(0:3) - (52 - 50) = 50 (0:3 is on the path);
#   0:2 ends 30: slack 20; 2:2 ends 20: slack 30; 2:3 ends 52, its rank needs
#   3 more: L = 57, slack 5.
# 1:2=elim: members 30, 0, 20: rank 0 is last, M = 50, base = min(20, 50, 30) = 20 for
#   all (caps 22, 32 do not bind). Ends 40, 38, 35: T' = 40 on rank 0, and the gate's
#   latest member is rank 0 itself: no edge, one segment [0: 0:0..0:5, 0-40].
#   Slack: gate L = 32 - 2 = 30: 1:2 (ends 0) 30; 2:2 (ends 20) 10; 2:3 (ends 32,
#   L = 40 - 3) 5.
# ==================================================================================
COLL = Case(
    "collective", "",
    [[INIT(), ALLREDUCE(30, 52, 0), FIN(60)],
     [INIT(), ALLREDUCE(50, 52, 0), FIN(58)],
     [INIT(), ALLREDUCE(20, 52, 0), FIN(55)]],
    [], {"0:2": 30, "0:3": 22, "1:2": 50, "2:2": 20, "2:3": 32})
CASES.append((COLL, [
    CP("", 60, 0, 0,
       [("seg", 1, "1:0", "1:2", 0, 50), ("edge", "collective", "1:2", "0:3", "1:3", 0),
        ("seg", 0, "0:3", "0:5", 50, 60)],
       [10, 50, 0], {"0:2": 20, "0:3": 0, "1:2": 0, "2:2": 30, "2:3": 5},
       {"(computation)": 58, "MPI_Allreduce": 2, "MPI_Init": 0, "MPI_Finalize": 0}),
    CP("1:2=elim", 40, 0, 0,
       [("seg", 0, "0:0", "0:5", 0, 40)],
       [40, 0, 0], {"0:2": 0, "0:3": 0, "1:2": 30, "2:2": 10, "2:3": 5}),
]))

# ==================================================================================
# 3. No communication; rank 1 starts 5 us late. Eliminating rank 0's burst moves the
#    path (and the end) to rank 1; the stretch before rank 1's start is startup.
#   rank 0: Init[0,0] | s2 0-50 (cand 50) | Fin 50
#   rank 1: Init[5,5] | s2 5-45 (cand 40) | Fin 45
# Baseline: T' 50 on rank 0, slack of 1:2 50 - 45 = 5.
# 0:2=elim: ends 0 and 45: T' 45 on rank 1, startup 5, slack of 0:2 45 - 0 = 45.
# both eliminated: ends 0 and 5: T' 5 on rank 1 (startup 5, a path of length 0).
# ==================================================================================
SOLO = Case(
    "independent", "",
    [[INIT(), FIN(50)],
     [("MPI_Init", 5, 5, {}), FIN(45)]],
    [], {"0:2": 50, "1:2": 40})
CASES.append((SOLO, [
    CP("", 50, 0, 0, [("seg", 0, "0:0", "0:3", 0, 50)], [50, 0], {"0:2": 0, "1:2": 5}),
    CP("0:2=elim", 45, 1, 5, [("seg", 1, "1:0", "1:3", 5, 45)], [0, 40], {"0:2": 45, "1:2": 0}),
    CP("0:2=elim 1:2=elim", 5, 1, 5, [("seg", 1, "1:0", "1:3", 5, 5)], [0, 0], {"0:2": 5, "1:2": 0}),
]))

# ==================================================================================
# 4. A synchronous send: the sender waits for the receiver to post.
#   rank 0: s2 0-10 (cand 10) | s3 Ssend[10,40] ->1 (cand 30) | s4 40-60 (cand 20) | Fin 60
#   rank 1: s2 0-35 (cand 35) | s3 Recv[35,41] <-0 | s4 41-50 | Fin 50
#   λ_m = min(1, 41 - 10) = 1: the message is ready at 11.
# Baseline: 0:3's contributors: own message (11, 0) -> 0 + (35 - 11) = 24, the posting
#   (P = 35, 0) -> 0: the posting is critical; own 40 - 35 = 5, edge sync 1:2 -> 0:3 via
#   the posting call 1:3 (0). T' 60 on rank 0.
#   Path [1: 1:0..1:2, 0-35] sync 0 [0: 0:3..0:5, 35-60]; per rank 25, 35.
#   Slack of 0:2 (ends 10): through its message edge to 0:3, 11 - 10 + (40 - 35) = 6,
#   L = 40 - 6 = 34: slack 24 (S + 1 may reach 35).
# 1:2=-20us: d1 = 20: the posting (35, 20) -> 20, own message 24: d0 = 20, 0:3 ends
#   20, rank 0 60 - 20 = 40; rank 1 ends 30. Path [1: 0-15] sync 0 [0: 15-40].
#   Slack of 0:2: L = 20 - 6 = 14: 4.
# 1:2=elim: d1 = 35: the posting -> 35, own message -> 24: the sender's own message is
#   critical now: own 16 - 11 = 5, edge sync 0:2 -> 0:3 via 0:3 of λ_m = 1. T' 36.
#   Path [0: 0:0..0:2, 0-10] sync 1 [0: 0:3..0:5, 11-36]; per rank 35, 0.
#   Slack of 1:2 (ends 0): posting edge 0 - 0 + (40 - 35) = 5 to 0:3 (ends 16): 11.
# ==================================================================================
SYNC = Case(
    "synchronous", "",
    [[INIT(), SEND(10, 40, 1, fn="MPI_Ssend"), FIN(60)],
     [INIT(), RECV(35, 41, 0), FIN(50)]],
    [], {"0:2": 10, "0:3": 30, "0:4": 20, "1:2": 35})
CASES.append((SYNC, [
    CP("", 60, 0, 0,
       [("seg", 1, "1:0", "1:2", 0, 35), ("edge", "sync", "1:2", "0:3", "1:3", 0),
        ("seg", 0, "0:3", "0:5", 35, 60)],
       [25, 35], {"0:2": 24, "0:3": 0, "0:4": 0, "1:2": 0}),
    CP("1:2=-20us", 40, 0, 0,
       [("seg", 1, "1:0", "1:2", 0, 15), ("edge", "sync", "1:2", "0:3", "1:3", 0),
        ("seg", 0, "0:3", "0:5", 15, 40)],
       [25, 15], {"0:2": 4, "0:3": 0, "0:4": 0, "1:2": 0}),
    CP("1:2=elim", 36, 0, 0,
       [("seg", 0, "0:0", "0:2", 0, 10), ("edge", "sync", "0:2", "0:3", "0:3", 1),
        ("seg", 0, "0:3", "0:5", 11, 36)],
       [35, 0], {"0:2": 0, "0:3": 0, "0:4": 0, "1:2": 11}),
]))


def wrong():
    """The chain's baseline claiming the path starts on rank 1 (as if 1:3 waited for its
    own burst): must be rejected."""
    return (CHAIN, [CP("", 70, 2, 0,
                       [("seg", 1, "1:0", "1:4", 0, 62), ("edge", "message", "1:4", "2:3", "1:5", 1),
                        ("seg", 2, "2:3", "2:5", 63, 70)],
                       [0, 62, 7], {"1:2": 0})])


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def check(case, cps, vtrace, work):
    d = os.path.join(work, case.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    case.writer().write(d, case.cfg)
    fails = []
    rc, out, err = run([vtrace, "whatif", "--list-candidates", d])
    got = {l.split()[0]: int(l.split()[1]) for l in out.splitlines() if len(l.split()) >= 3}
    if rc != 0 or got != {k: ns(v) for k, v in case.cands.items()}:
        fails.append("%s: candidates %s (exit %d), the derivation assumes %s" % (case.name, got, rc, case.cands))
    for e in cps:
        cmd = [vtrace, "critical-path", "--json", "--scenario", e.scenario, d]
        rc, out, err = run(cmd)
        where = "%s '%s'" % (case.name, e.scenario)
        if rc != 0:
            fails.append("%s: exit %d: %s" % (where, rc, err.strip()))
            continue
        j = json.loads(out)
        probs = []

        def want(what, got_, exp):
            if got_ != exp:
                probs.append("%s %r, expected %r" % (what, got_, exp))
        want("scenario", j["scenario"], e.scenario)
        want("predicted_ns", j["predicted_ns"], e.predicted)
        want("length_ns", j["length_ns"], e.predicted)
        want("end_rank", j["end_rank"], e.end_rank)
        want("startup_ns", j["startup_ns"], e.startup)
        want("consistent", j["consistent"], True)
        want("segments", [(s["rank"], s["first"], s["last"], s["start_ns"], s["end_ns"]) for s in j["segments"]],
             e.segments)
        want("edges", [(x["kind"], x["from"], x["to"], x["via"], x["ns"]) for x in j["edges"]], e.edges)
        want("per_rank", [x["ns"] for x in j["per_rank"]], e.per_rank)
        cands = {c["event"]: c for c in j["candidates"]}
        want("slack", {k: cands[k]["slack_ns"] if k in cands else None for k in e.slack}, e.slack)
        onpath = {k for s in j["segments"] for k in [s["first"], s["last"]]}
        for k in onpath & set(cands):
            if not cands[k]["on_path"]:
                probs.append("%s starts or ends a segment but is not marked on_path" % k)
        if e.per_function:
            want("per_function", {x["function"]: x["ns"] for x in j["per_function"]}, e.per_function)
        if probs:
            fails.append("%s: %s" % (where, "; ".join(probs)))
    return fails


def main():
    ap = argparse.ArgumentParser(description="hand-computed critical paths")
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--work", default="critpath_golden.work")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    nfail = nscen = 0
    for case, cps in CASES:
        fails = check(case, cps, a.vtrace, a.work)
        nscen += len(cps)
        for m in fails:
            print("FAIL: " + m)
        nfail += len(fails)
        print("%-14s %-4s %d scenarios" % (case.name, "ok" if not fails else "FAIL", len(cps)))
    fails = check(*wrong(), a.vtrace, a.work)
    if fails:
        print("deliberately-wrong rejected as it must be: %s" % fails[0][:200])
    else:
        print("FAIL: the checker accepted a deliberately wrong critical path")
        nfail += 1
    print("%d scenarios, %d failures" % (nscen, nfail))
    if nfail == 0 and not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
