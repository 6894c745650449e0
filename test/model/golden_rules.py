#!/usr/bin/env python3
"""Golden rules: one small hand-made trace per rule of the prediction model
(design/model.md §2-§3; the seed paper's Fig. 3 cases and patterns C1, C2), with the
predicted end of every rank computed by hand, checked against `vtrace whatif --json`.

usage: golden_rules.py --vtrace PATH [--work DIR] [--keep] [--only NAME,...]

Each case writes a trace with vtwrite.py (same clock, offsets 0) into WORK/NAME/,
checks that `vtrace whatif --list-candidates` lists exactly the candidates named in
the derivation (this pins θ and the sequence numbers), then runs every scenario of the
case in one `vtrace whatif --json -s ... -s ...` call and compares `rank_end_ns` (and
`predicted_end_ns`, their maximum) with the hand-computed values. C1/C2 scenarios also
check that every rank moved by the same amount (identical differences).

At the end, a deliberately wrong expectation goes through the same checker, which must
reject it (proof that the checker can fail); that rejection does not fail the test.
An expectation marked `disagree=` is a known disagreement between this file and the
tool: it is reported but does not fail the test (none at the time of writing).

Conventions of every derivation below (doc/man/vtrace-whatif.1, model.md):
  * times in microseconds (us); the trace holds ns, the expected ends are converted;
  * record i of a rank has sequence number 2i+1, the computation burst before it 2i;
    every rank starts with MPI_Init at [0,0] (seq 1; the burst before it, seq 0, lasts
    0), and ends with MPI_Finalize (a local event) at its last time: rank end = E_last;
  * d is the rank's difference (measured - predicted); it starts at 0 and the predicted
    end of a rank is E_last - d;
  * "cand" marks an event of at least θ (candidate); a candidate not named by the
    scenario has δ = 0. A local event adds its δ to d. A completion with contributors
    (T_k, D_k) gets d = min_k (D_k + (M - T_k)), M = max_k T_k; if it is a candidate,
    then d = min(d + δ, d_before + (E - R)) (candidate rule);
  * λ(s) = L + G*s, λ_m = min(λ(s), E - S) with E the receiver's exit (for both ends);
  * a message carries D = the sender's d before its sending call;
  * defaults: θ = 10 us, L = 1 us, G = 0, T_rdv = 1 MiB (everything eager unless Ssend),
    VTRACE_CANDIDATES=all.
Scenario shortenings: `elim` = the whole duration, `-P%` = floor(dur * P / 100).

Standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vtwrite  # noqa: E402

US = 1000  # ns per us

FUNCS = [
    ("MPI_Init", ""),
    ("MPI_Send", "cptb"),
    ("MPI_Ssend", "cptb"),
    ("MPI_Isend", "cptbr"),
    ("MPI_Issend", "cptbr"),
    ("MPI_Irecv", "cr"),
    ("MPI_Recv", "cPTB"),
    ("MPI_Probe", "cPTB"),
    ("MPI_Wait", "k"),
    ("MPI_Waitall", "k"),
    ("MPI_Sendrecv", "cptbPTB"),
    ("MPI_Allreduce", "coqbB"),
    ("MPI_Finalize", ""),
]


def ns(x_us):
    """Microseconds (int or a float with at most 3 decimals) -> integer ns."""
    return int(round(x_us * US))


def config(theta_us=10, L_ns=1000, G_ns=0, trdv=1 << 20):
    return ("VTRACE_MODE=full\n"
            "VTRACE_THRESHOLD=%dns\n"
            "VTRACE_CANDIDATES=all\n"
            "VTRACE_MODEL_L=%dns\n"
            "VTRACE_MODEL_G=%dns\n"
            "VTRACE_MODEL_TRDV=%d\n" % (ns(theta_us), L_ns, G_ns, trdv))


class Expect:
    def __init__(self, scenario, ends_us, same_shift=False, disagree=None):
        self.scenario = scenario
        self.ends = [ns(e) for e in ends_us]
        self.same_shift = same_shift   # C1/C2: every rank gains the same
        self.disagree = disagree       # text: known disagreement, reported, not failed


class Case:
    """progs: per rank, a list of (function, enter_us, exit_us, fields)."""

    def __init__(self, name, rule, progs, expects, cands, cfg=None):
        self.name = name
        self.rule = rule
        self.progs = progs
        self.expects = expects
        self.cands = cands             # {"R:SEQ": duration_us}
        self.cfg = cfg or config()

    def writer(self):
        n = len(self.progs)
        w = vtwrite.TraceWriter(n, funcs=FUNCS)
        for r, prog in enumerate(self.progs):
            rk = w.rank(r)
            rk.comms.append(vtwrite.Comm(1, range(n), how="world"))
            for fname, enter, exit_, fields in prog:
                rk.record(fname, ns(enter), ns(exit_), **fields)
        return w

    def measured_ends(self):
        return [ns(prog[-1][2]) for prog in self.progs]


# Shorthands for records.
def INIT():
    return ("MPI_Init", 0, 0, {})


def FIN(t):
    return ("MPI_Finalize", t, t, {})


def SEND(a, b, dst, tag=0, nbytes=8, fn="MPI_Send"):
    return (fn, a, b, dict(c=0, p=dst, t=tag, b=nbytes))


def ISEND(a, b, dst, req, tag=0, nbytes=8, fn="MPI_Isend"):
    return (fn, a, b, dict(c=0, p=dst, t=tag, b=nbytes, r=req))


def RECV(a, b, src, tag=0, nbytes=8, fn="MPI_Recv"):
    return (fn, a, b, dict(c=0, P=src, T=tag, B=nbytes))


def IRECV(a, b, req):
    return ("MPI_Irecv", a, b, dict(c=0, r=req))


def WAIT(a, b, done, fn="MPI_Waitall"):
    """done: (request, 'r' or 's', peer, tag, bytes)."""
    return (fn, a, b, dict(k=[(req, 1 if side == "r" else 0, peer, tag, nb) for req, side, peer, tag, nb in done]))


def SENDRECV(a, b, peer, tag=0, nbytes=8):
    return ("MPI_Sendrecv", a, b, dict(c=0, p=peer, t=tag, b=nbytes, P=peer, T=tag, B=nbytes))


def ALLREDUCE(a, b, q):
    return ("MPI_Allreduce", a, b, dict(c=0, o=-1, q=q, b=8, B=8))


CASES = []

# ==================================================================================
# 1a. Eager send, blocking receive, the receiver waits: paper Fig. 3(a),
#     d_q' = min(d_p, d_q + w).  Also rule 8 (candidate rule on a long receive).
#
#   rank 0: s1 Init[0,0] | s2 burst 0-50 (cand 50) | s3 Send[50,52] ->1, 8 B |
#           s4 burst 52-60 | s5 Finalize[60,60]                       end 60
#   rank 1: s1 Init[0,0] | s2 burst 0-20 (cand 20) | s3 Recv[20,52] <-0 (cand 32) |
#           s4 burst 52-61 | s5 Finalize[61,61]                       end 61
#
#   Send: eager, local; the message carries S = 50, D0 = d0 after s2 = δ(0:2).
#   Recv 1:3: R = 20, E = 52; λ_m = min(1, 52-50) = 1.
#     contributors (T, D): local (20, d1), message (51, D0);  M = 51, w = M - R = 31
#     d1 = min(d1 + 31, D0 + 0)                       [= min(d_p, d_q + w)]
#     candidate rule (32 us): d1 = min(d1 + δ(1:3), d1_before + 32)
#   ''                  d0 = 0;  d1 = min(0+31, 0) = 0                  -> [60, 61]
#   0:2=elim            D0 = 50; d1 = min(31, 50) = 31                  -> [10, 30]
#   0:2=-50%            D0 = 25; d1 = min(31, 25) = 25                  -> [35, 36]
#   1:2=elim            d1_before = 20; d1 = min(51, 0) = 0             -> [60, 61]
#   0:2=elim 1:2=elim   D0 = 50, d1_before = 20; d1 = min(51, 50) = 50  -> [10, 11]
# Rule 8, the receive eliminated (it cannot end before it starts):
#   1:3=elim            base min(31, 0) = 0; min(0+32, 0+32) = 32       -> [60, 29]
#   0:2=elim 1:3=elim   base 31; min(31+32, 0+32) = 32 (cap binds)      -> [10, 29]
#       (without the cap d1 = 63 and rank 1 would end at -2: before it started)
#   0:2=-20% 1:3=-25%   D0 = 10, δ = 8: base min(31, 10) = 10;
#                       min(10+8, 0+32) = 18 (cap does not bind)        -> [50, 43]
#   1:2=elim 1:3=elim   d1_before = 20; base min(51, 0) = 0;
#                       min(0+32, 20+32) = 32                           -> [60, 29]
# ==================================================================================
CASES.append(Case(
    "eager-3a", "eager send, receiver waits (Fig. 3(a)); candidate rule on a long receive (rule 8)",
    [[INIT(), SEND(50, 52, 1), FIN(60)],
     [INIT(), RECV(20, 52, 0), FIN(61)]],
    [Expect("", [60, 61]),
     Expect("0:2=elim", [10, 30]),
     Expect("0:2=-50%", [35, 36]),
     Expect("1:2=elim", [60, 61]),
     Expect("0:2=elim 1:2=elim", [10, 11]),
     Expect("1:3=elim", [60, 29]),
     Expect("0:2=elim 1:3=elim", [10, 29]),
     Expect("0:2=-20% 1:3=-25%", [50, 43]),
     Expect("1:2=elim 1:3=elim", [60, 29])],
    {"0:2": 50, "1:2": 20, "1:3": 32}))

# ==================================================================================
# 1b. Eager send, the message was already there: Fig. 3(b), d_q' = min(d_p + x, d_q).
#
#   rank 0: s2 burst 0-10 (cand 10) | s3 Send[10,12] ->1 | s4 burst 12-20 | s5 Fin 20
#   rank 1: s2 burst 0-40 (cand 40) | s3 Recv[40,42] <-0 | s4 burst 42-50 | s5 Fin 50
#
#   Recv 1:3: R = 40, E = 42; S = 10, λ_m = min(1, 32) = 1, arrival T = 11,
#     x = R - T = 29.  Contributors (40, d1), (11, D0); M = 40
#     d1 = min(d1 + 0, D0 + 29)
#   ''                  min(0, 29) = 0                        -> [20, 50]
#   1:2=elim            d1 = 40: min(40, 0+29) = 29            -> [20, 21]
#   1:2=-25%            d1 = 10: min(10, 29) = 10              -> [20, 40]
#   0:2=elim            D0 = 10: min(0, 39) = 0                -> [10, 50]
#   0:2=elim 1:2=elim   min(40, 10+29) = 39                    -> [10, 11]
# ==================================================================================
CASES.append(Case(
    "eager-3b", "eager send, message already there (Fig. 3(b))",
    [[INIT(), SEND(10, 12, 1), FIN(20)],
     [INIT(), RECV(40, 42, 0), FIN(50)]],
    [Expect("", [20, 50]),
     Expect("1:2=elim", [20, 21]),
     Expect("1:2=-25%", [20, 40]),
     Expect("0:2=elim", [10, 50]),
     Expect("0:2=elim 1:2=elim", [10, 11])],
    {"0:2": 10, "1:2": 40}))

# ==================================================================================
# 1c / 5. Synchronous mode, waiting at the receiver: Fig. 3(c). MPI_Ssend to a
#     blocking MPI_Recv posted early.
#
#   rank 0: s2 burst 0-50 (cand 50) | s3 Ssend[50,53] ->1 | s4 burst 53-60 | s5 Fin 60
#   rank 1: s2 burst 0-20 (cand 20) | s3 Recv[20,52] <-0 (cand 32) | s4 52-61 | Fin 61
#
#   S = 50, λ_m = min(1, E_recv - S = 2) = 1, T = 51; P_q = R = 20 (the Recv posts it).
#   Receiver 1:3: local (20, d1), remote (51, D0).
#   Sender 0:3 (blocking synchronous: no local contributor): (51, D0), (P_q=20, d1).
#   Same pair on both sides, M = 51:  d0 = d1 = min(D0, d1 + 31)   (C1: equal after)
#   ''                  0                                      -> [60, 61]
#   0:2=elim            min(50, 31) = 31                       -> [29, 30]
#   0:2=-40%            min(20, 31) = 20                       -> [40, 41]
#   1:2=elim            min(0, 51) = 0                         -> [60, 61]
#   0:2=elim 1:2=elim   min(50, 51) = 50                       -> [10, 11]
#   (Compare 1a: an eager sender keeps its whole gain, 0:2=elim ends rank 0 at 10.)
# ==================================================================================
CASES.append(Case(
    "sync-3c", "Ssend to a Recv posted early: receiver waits (Fig. 3(c))",
    [[INIT(), SEND(50, 53, 1, fn="MPI_Ssend"), FIN(60)],
     [INIT(), RECV(20, 52, 0), FIN(61)]],
    [Expect("", [60, 61]),
     Expect("0:2=elim", [29, 30], same_shift=True),
     Expect("0:2=-40%", [40, 41], same_shift=True),
     Expect("1:2=elim", [60, 61]),
     Expect("0:2=elim 1:2=elim", [10, 11], same_shift=True)],
    {"0:2": 50, "1:2": 20, "1:3": 32}))

# ==================================================================================
# 1d / 5. Synchronous mode, waiting at the sender: Fig. 3(d). MPI_Ssend to a blocking
#     MPI_Recv posted late.
#
#   rank 0: s2 burst 0-10 (cand 10) | s3 Ssend[10,42] ->1 (cand 32) | s4 42-50 | Fin 50
#   rank 1: s2 burst 0-40 (cand 40) | s3 Recv[40,41] <-0 | s4 burst 41-50 | Fin 50
#
#   S = 10, λ_m = min(1, 41-10) = 1, T = 11; P_q = R = 40; M = 40.
#   Both ends: d = min(D0 + 29, d1)                  [= min(d_p + w, d_q)]
#   Sender's candidate rule (0:3, 32 us): d0 = min(d + δ(0:3), d0_before + 32)
#   ''                  0                                      -> [50, 50]
#   1:2=elim            min(0+29, 40) = 29                     -> [21, 21]
#   1:2=-50%            min(29, 20) = 20                       -> [30, 30]
#   0:2=elim            D0 = 10: min(39, 0) = 0                -> [50, 50]
#   0:3=elim            base 0; d0 = min(0+32, 0+32) = 32      -> [18, 50]
#   1:2=-50% 0:3=-25%   base 20; d0 = min(20+8, 0+32) = 28, d1 = 20 -> [22, 30]
# ==================================================================================
CASES.append(Case(
    "sync-3d", "Ssend to a Recv posted late: sender waits (Fig. 3(d))",
    [[INIT(), SEND(10, 42, 1, fn="MPI_Ssend"), FIN(50)],
     [INIT(), RECV(40, 41, 0), FIN(50)]],
    [Expect("", [50, 50]),
     Expect("1:2=elim", [21, 21], same_shift=True),
     Expect("1:2=-50%", [30, 30], same_shift=True),
     Expect("0:2=elim", [50, 50]),
     Expect("0:3=elim", [18, 50]),
     Expect("1:2=-50% 0:3=-25%", [22, 30])],
    {"0:2": 10, "0:3": 32, "1:2": 40}))

# ==================================================================================
# 2. λ_m's cap: a 1000-byte eager message with L = 1 us, G = 10 ns/B: λ = 11 us, but the
#    receive exits 5 us after the send entered, so λ_m = min(11, 5) = 5.
#
#   rank 0: s2 burst 0-30 (cand 30) | s3 Send[30,31] ->1, 1000 B | s4 31-40 | Fin 40
#   rank 1: s2 burst 0-20 (cand 20) | s3 Recv[20,35] <-0 (cand 15) | s4 35-44 | Fin 44
#
#   Recv: R = 20, E = 35; T = 30 + 5 = 35 (uncapped it would be 41); M = 35
#     d1 = min(d1 + 15, D0)              (uncapped: min(d1 + 21, D0))
#   ''                  0                                          -> [40, 44]
#   0:2=elim            min(15, 30) = 15   (uncapped 21 -> 23)     -> [10, 29]
#   0:2=-20%            D0 = 6: min(15, 6) = 6                     -> [34, 38]
#   0:2=elim 1:2=elim   min(20+15, 30) = 30                        -> [10, 14]
#   0:2=elim 1:2=-25%   d1 = 5: min(20, 30) = 20 (uncapped 26 -> 18) -> [10, 24]
# ==================================================================================
CASES.append(Case(
    "lambda-cap", "λ_m = min(L + G s, E - S)",
    [[INIT(), SEND(30, 31, 1, nbytes=1000), FIN(40)],
     [INIT(), RECV(20, 35, 0, nbytes=1000), FIN(44)]],
    [Expect("", [40, 44]),
     Expect("0:2=elim", [10, 29]),
     Expect("0:2=-20%", [34, 38]),
     Expect("0:2=elim 1:2=elim", [10, 14]),
     Expect("0:2=elim 1:2=-25%", [10, 24])],
    {"0:2": 30, "1:2": 20, "1:3": 15},
    cfg=config(G_ns=10)))

# ==================================================================================
# 3. Fan-in: Irecv + Irecv + Waitall on rank 2 completing messages from ranks 0 and 1;
#    rank 0 sends with Isend and completes it with a Waitall (eager: local).
#
#   rank 0: s2 burst 0-30 (cand 30) | s3 Isend[30,31] ->2 req 1 | s4 31-35 |
#           s5 Waitall[35,36] {req 1, send} (local) | s6 36-40 | s7 Fin 40
#   rank 1: s2 burst 0-50 (cand 50) | s3 Send[50,51] ->2 | s4 51-55 | s5 Fin 55
#   rank 2: s2 burst 0-2 | s3 Irecv[2,3] req 1 | s4 burst 3-3 | s5 Irecv[3,4] req 2 |
#           s6 burst 4-10 | s7 Waitall[10,52] {req 1 <-0, req 2 <-1} (cand 42) |
#           s8 burst 52-60 | s9 Fin 60
#
#   Waitall 2:7: R = 10, E = 52.
#     from 0: S = 30, λ_m = min(1, 22) = 1, T = 31, D0 = δ(0:2)
#     from 1: S = 50, λ_m = min(1, 2) = 1,  T = 51, D1 = δ(1:2)
#     local (10, d2 = 0).  M = 51
#     d2 = min(0 + 41, D0 + 20, D1 + 0); candidate rule: min(d2 + δ(2:7), 0 + 42)
#   ''                      min(41, 20, 0) = 0                 -> [40, 55, 60]
#   1:2=elim                min(41, 20, 50) = 20               -> [40, 5, 40]
#   1:2=-10%                min(41, 20, 5) = 5                 -> [40, 50, 55]
#   0:2=elim                min(41, 50, 0) = 0                 -> [10, 55, 60]
#   0:2=elim 1:2=elim       min(41, 50, 50) = 41               -> [10, 5, 19]
#   1:2=elim 2:7=-50%       base 20, δ = 21: min(41, 42) = 41  -> [40, 5, 19]
# ==================================================================================
CASES.append(Case(
    "fanin-waitall", "Irecv + Isend + Waitall, two messages from two senders",
    [[INIT(), ISEND(30, 31, 2, 1), WAIT(35, 36, [(1, "s", 2, 0, 8)]), FIN(40)],
     [INIT(), SEND(50, 51, 2), FIN(55)],
     [INIT(), IRECV(2, 3, 1), IRECV(3, 4, 2),
      WAIT(10, 52, [(1, "r", 0, 0, 8), (2, "r", 1, 0, 8)]), FIN(60)]],
    [Expect("", [40, 55, 60]),
     Expect("1:2=elim", [40, 5, 40]),
     Expect("1:2=-10%", [40, 50, 55]),
     Expect("0:2=elim", [10, 55, 60]),
     Expect("0:2=elim 1:2=elim", [10, 5, 19]),
     Expect("1:2=elim 2:7=-50%", [40, 5, 19])],
    {"0:2": 30, "1:2": 50, "2:7": 42}))

# ==================================================================================
# 4. Sendrecv exchange between two ranks (eager halves).
#
#   rank 0: s2 burst 0-40 (cand 40) | s3 Sendrecv[40,42] <->1 | s4 42-50 | s5 Fin 50
#   rank 1: s2 burst 0-20 (cand 20) | s3 Sendrecv[20,42] <->0 (cand 22) | s4 42-45 | Fin 45
#
#   Each message carries the sender's d before its Sendrecv (d0 = δ(0:2), d1 = δ(1:2)).
#   Rank 0: R = 40, E = 42; from 1: S = 20, λ_m = 1, T = 21; M = 40
#     d0' = min(d0 + 0, d1 + 19)
#   Rank 1: R = 20, E = 42; from 0: S = 40, λ_m = min(1, 2) = 1, T = 41; M = 41
#     d1' = min(d1 + 21, d0 + 0); candidate rule: min(d1' + δ, d1 + 22)
#   ''                  d0' = 0,  d1' = 0                             -> [50, 45]
#   0:2=elim            d0' = min(40, 19) = 19, d1' = min(21, 40) = 21 -> [31, 24]
#   1:2=elim            d0' = min(0, 39) = 0,   d1' = min(41, 0) = 0   -> [50, 45]
#   0:2=elim 1:2=elim   d0' = min(40, 39) = 39, d1' = min(41, 40) = 40 -> [11, 5]
#   0:2=-25%            d0' = min(10, 19) = 10, d1' = min(21, 10) = 10 -> [40, 35]
# ==================================================================================
CASES.append(Case(
    "sendrecv", "Sendrecv exchange",
    [[INIT(), SENDRECV(40, 42, 1), FIN(50)],
     [INIT(), SENDRECV(20, 42, 0), FIN(45)]],
    [Expect("", [50, 45]),
     Expect("0:2=elim", [31, 24]),
     Expect("1:2=elim", [50, 45]),
     Expect("0:2=elim 1:2=elim", [11, 5]),
     Expect("0:2=-25%", [40, 35])],
    {"0:2": 40, "1:2": 20, "1:3": 22}))

# ==================================================================================
# 5. MPI_Issend + MPI_Wait: the sender's Wait adds its own local (W, d0(W)).
#
#   rank 0: s2 burst 0-10 (cand 10) | s3 Issend[10,11] ->1 req 1 | s4 burst 11-60 (cand 49) |
#           s5 Wait[60,61] {req 1, send} | s6 61-65 | s7 Fin 65
#   rank 1: s2 burst 0-20 (cand 20) | s3 Recv[20,22] <-0 | s4 22-30 | s5 Fin 30
#
#   S = 10, λ_m = min(1, 22-10) = 1, T = 11; P_q = R = 20.
#   Receiver 1:3: (20, d1), (11, D0); M = 20:        d1' = min(d1, D0 + 9)
#   Sender's Wait 0:5: (11, D0), (20, d1(P_q)), (60, d0(W)); M = 60:
#                                                     d0' = min(D0 + 49, d1 + 40, d0(W))
#   D0 = δ(0:2), d0(W) = δ(0:2) + δ(0:4)
#   ''                  d0' = 0; d1' = 0                                 -> [65, 30]
#   1:2=elim            d1' = min(20, 9) = 9; d0' = min(49, 60, 0) = 0    -> [65, 21]
#       (without the Wait's own contributor, M = 20 and d0' = min(9, 20) = 9 -> 56)
#   0:4=elim            d0' = min(49, 40, 49) = 40; d1' = 0               -> [25, 30]
#   0:4=elim 1:2=elim   d0' = min(49, 60, 49) = 49; d1' = 9               -> [16, 21]
#   0:4=-50%            d0(W) = 24.5: d0' = min(49, 40, 24.5) = 24.5      -> [40.5, 30]
#   0:2=elim 0:4=elim   D0 = 10, d0(W) = 59: d0' = min(59, 40, 59) = 40;
#                       d1' = min(0, 19) = 0                              -> [25, 30]
# ==================================================================================
CASES.append(Case(
    "issend-wait", "Issend + Wait: the Wait's own contributor",
    [[INIT(), ISEND(10, 11, 1, 1, fn="MPI_Issend"), WAIT(60, 61, [(1, "s", 1, 0, 8)], fn="MPI_Wait"), FIN(65)],
     [INIT(), RECV(20, 22, 0), FIN(30)]],
    [Expect("", [65, 30]),
     Expect("1:2=elim", [65, 21]),
     Expect("0:4=elim", [25, 30]),
     Expect("0:4=elim 1:2=elim", [16, 21]),
     Expect("0:4=-50%", [40.5, 30]),
     Expect("0:2=elim 0:4=elim", [25, 30])],
    {"0:2": 10, "0:4": 49, "1:2": 20}))

# ==================================================================================
# 5. A standard MPI_Send of T_rdv bytes is synchronous (by size). L = 1 us, G = 10 ns/B,
#    T_rdv = 1000: λ(1000) = 11 us, capped by the RECEIVER's exit at both ends.
#
#   rank 0: s2 burst 0-30 (cand 30) | s3 Send[30,38] ->1, 1000 B | s4 38-45 | s5 Fin 45
#   rank 1: s2 burst 0-35 (cand 35) | s3 Recv[35,37] <-0, 1000 B | s4 37-40 | s5 Fin 40
#
#   λ_m = min(11, E_recv - S = 37 - 30) = 7, T = 37; P_q = R = 35.
#   Both ends (sender: (37, D0), (35, d1); receiver: (35, d1), (37, D0)); M = 37:
#     d = min(D0, d1 + 2)
#   (eager it would leave the sender at D0; capped by the sender's own exit 38 the
#    slack would be 3; uncapped 6.)
#   ''                  0                                      -> [45, 40]
#   0:2=elim            min(30, 2) = 2                         -> [43, 38]
#   1:2=elim            min(0, 37) = 0                         -> [45, 40]
#   0:2=elim 1:2=elim   min(30, 37) = 30                       -> [15, 10]
#   0:2=elim 1:2=-10%   d1 = 3.5: min(30, 5.5) = 5.5           -> [39.5, 34.5]
# ==================================================================================
CASES.append(Case(
    "send-rdv-size", "standard Send of >= T_rdv bytes is synchronous; λ_m capped at the receiver's exit",
    [[INIT(), SEND(30, 38, 1, nbytes=1000), FIN(45)],
     [INIT(), RECV(35, 37, 0, nbytes=1000), FIN(40)]],
    [Expect("", [45, 40]),
     Expect("0:2=elim", [43, 38], same_shift=True),
     Expect("1:2=elim", [45, 40]),
     Expect("0:2=elim 1:2=elim", [15, 10], same_shift=True),
     Expect("0:2=elim 1:2=-10%", [39.5, 34.5], same_shift=True)],
    {"0:2": 30, "1:2": 35},
    cfg=config(G_ns=10, trdv=1000)))

# ==================================================================================
# 5. The blocking synchronous send has no local contributor. With one clock that is
#    invisible ((S, D0) is dominated by (S + λ_m, D0)); it shows when the receiver's
#    clock reads behind (a clock offset the trace does not correct), so that
#    E_recv < S and λ_m < 0 (model.md: M <= E need not hold; no assertion).
#
#   rank 0: s2 burst 0-50 (cand 50) | s3 Ssend[50,53] ->1 | s4 53-60 | s5 Fin 60
#   rank 1: s2 burst 0-20 (cand 20) | s3 Recv[20,45] <-0 (cand 25) | s4 45-50 | Fin 50
#
#   λ_m = min(1, 45 - 50) = -5, T = 45; P_q = R = 20; M = 45.
#   Both: d = min(D0, d1 + 25); receiver's candidate rule min(d + δ, d1 + 25).
#   (With a local (50, D0) at the sender, M = 50 and d0 = min(D0, d1 + 30).)
#   ''                  0                                      -> [60, 50]
#   0:2=elim            min(50, 25) = 25  (local: 30 -> 30)    -> [35, 25]
#   1:2=elim            min(0, 45) = 0; cand min(0, 20+25)     -> [60, 50]
#   0:2=elim 1:2=elim   min(50, 45) = 45; cand min(45, 45)     -> [15, 5]
# ==================================================================================
CASES.append(Case(
    "ssend-no-local", "blocking Ssend: no local contributor (visible under a clock offset)",
    [[INIT(), SEND(50, 53, 1, fn="MPI_Ssend"), FIN(60)],
     [INIT(), RECV(20, 45, 0), FIN(50)]],
    [Expect("", [60, 50]),
     Expect("0:2=elim", [35, 25]),
     Expect("1:2=elim", [60, 50]),
     Expect("0:2=elim 1:2=elim", [15, 5])],
    {"0:2": 50, "1:2": 20, "1:3": 25}))

# ==================================================================================
# 6. MPI_Probe then MPI_Recv: the probe is the completion, the receive is local.
#
#   rank 0: s2 burst 0-40 (cand 40) | s3 Send[40,41] ->1 | s4 41-50 | s5 Fin 50
#   rank 1: s2 burst 0-10 (cand 10) | s3 Probe[10,42] <-0 (cand 32) |
#           s4 burst 42-54 (cand 12) | s5 Recv[54,55] <-0 (local) | s6 55-60 | s7 Fin 60
#
#   Probe 1:3: R = 10, E = 42; S = 40, λ_m = min(1, 2) = 1, T = 41; M = 41
#     d1 = min(d1 + 31, D0); candidate rule min(d1 + δ(1:3), d1_before + 32)
#   then s4 adds δ(1:4); the Recv adds nothing.
#   ''                  0                                      -> [50, 60]
#   0:2=elim            min(31, 40) = 31                       -> [10, 29]
#       (were the Recv the completion and the probe local: (54, 0), (41, 40),
#        M = 54 -> d1 = 0 -> 60)
#   0:2=elim 1:4=elim   31 + 12 = 43                           -> [10, 17]
#   0:2=-50%            min(31, 20) = 20                       -> [30, 40]
#   1:2=elim            d1 = 10: min(41, 0) = 0                -> [50, 60]
#   1:3=elim            base 0; min(0+32, 0+32) = 32           -> [50, 28]
# ==================================================================================
CASES.append(Case(
    "probe-recv", "Probe is the completion, the later Recv is local",
    [[INIT(), SEND(40, 41, 1), FIN(50)],
     [INIT(), RECV(10, 42, 0, fn="MPI_Probe"), RECV(54, 55, 0), FIN(60)]],
    [Expect("", [50, 60]),
     Expect("0:2=elim", [10, 29]),
     Expect("0:2=elim 1:4=elim", [10, 17]),
     Expect("0:2=-50%", [30, 40]),
     Expect("1:2=elim", [50, 60]),
     Expect("1:3=elim", [50, 28])],
    {"0:2": 40, "1:2": 10, "1:3": 32, "1:4": 12}))

# ==================================================================================
# 7. Blocking collective as a gate: MPI_Allreduce on MPI_COMM_WORLD (3 ranks, q = 0).
#
#   rank 0: s2 burst 0-30 (cand 30) | s3 Allreduce[30,52] (cand 22) | s4 52-60 | Fin 60
#   rank 1: s2 burst 0-50 (cand 50) | s3 Allreduce[50,52]           | s4 52-58 | Fin 58
#   rank 2: s2 burst 0-20 (cand 20) | s3 Allreduce[20,52] (cand 32) | s4 52-55 | Fin 55
#
#   Gate: (30, d0), (50, d1), (20, d2); M = 50
#     g = min(d0 + 20, d1 + 0, d2 + 30), the same for every member, then each member's
#     candidate rule: rank 0 min(g + δ(0:3), d0 + 22), rank 2 min(g + δ(2:3), d2 + 32).
#   ''                  g = 0                                         -> [60, 58, 55]
#   1:2=elim            g = min(20, 50, 30) = 20                      -> [40, 38, 35]
#   1:2=-10%            g = min(20, 5, 30) = 5                        -> [55, 53, 50]
#   0:2=elim 1:2=elim   g = min(50, 50, 30) = 30                      -> [30, 28, 25]
#   The member's own call a candidate:
#   1:2=elim 0:3=elim   g = 20; d0 = min(20+22, 0+22) = 22 (cap)      -> [38, 38, 35]
#   2:2=elim 2:3=elim   d2 = 20: g = min(20, 0, 50) = 0;
#                       d2 = min(0+32, 20+32) = 32                    -> [60, 58, 23]
#   2:2=elim 2:3=-50%   g = 0; d2 = min(0+16, 52) = 16                -> [60, 58, 39]
# ==================================================================================
CASES.append(Case(
    "allreduce-gate", "blocking collective as a gate; candidate rule on the collective call",
    [[INIT(), ALLREDUCE(30, 52, 0), FIN(60)],
     [INIT(), ALLREDUCE(50, 52, 0), FIN(58)],
     [INIT(), ALLREDUCE(20, 52, 0), FIN(55)]],
    [Expect("", [60, 58, 55]),
     Expect("1:2=elim", [40, 38, 35], same_shift=True),
     Expect("1:2=-10%", [55, 53, 50], same_shift=True),
     Expect("0:2=elim 1:2=elim", [30, 28, 25], same_shift=True),
     Expect("1:2=elim 0:3=elim", [38, 38, 35]),
     Expect("2:2=elim 2:3=elim", [60, 58, 23]),
     Expect("2:2=elim 2:3=-50%", [60, 58, 39])],
    {"0:2": 30, "0:3": 22, "1:2": 50, "2:2": 20, "2:3": 32}))

# ==================================================================================
# 9. Pattern C1 (paper IV-B): after a synchronous communication both ranks have the same
#    difference, so the next (eager) message satisfies R3: it cannot change the
#    prediction. Shown by predictions: every scenario moves both ranks by the same d.
#
#   rank 0: s2 burst 0-30 (cand 30) | s3 Ssend[30,37] ->1 | s4 37-45 |
#           s5 Send[45,46] ->1 | s6 46-55 | s7 Fin 55
#   rank 1: s2 burst 0-35 (cand 35) | s3 Recv[35,36] <-0 | s4 36-44 |
#           s5 Recv[44,47] <-0 | s6 47-56 | s7 Fin 56
#
#   Ssend: S = 30, λ_m = min(1, 36-30) = 1, T = 31; P_q = 35; M = 35
#     both: d = min(D0 + 4, d1)                       -> d0 = d1 = d (C1)
#   Eager Send: S = 45, λ_m = min(1, 47-45) = 1, T = 46; Recv R = 44; M = 46
#     d1 = min(d + 2, d + 0) = d  (R3: D = d_q(R))
#   ends: [55 - d, 56 - d]
#   ''                          d = 0                          -> [55, 56]
#   0:2=elim                    min(34, 0) = 0                 -> [55, 56]
#   1:2=elim                    min(4, 35) = 4                 -> [51, 52]
#   0:2=elim 1:2=elim           min(34, 35) = 34               -> [21, 22]
#   0:2=-50% 1:2=elim           min(19, 35) = 19               -> [36, 37]
#   1:2=-20%                    min(4, 7) = 4                  -> [51, 52]
# ==================================================================================
CASES.append(Case(
    "pattern-C1", "C1: identical differences after a synchronous communication",
    [[INIT(), SEND(30, 37, 1, fn="MPI_Ssend"), SEND(45, 46, 1, tag=1), FIN(55)],
     [INIT(), RECV(35, 36, 0), RECV(44, 47, 0, tag=1), FIN(56)]],
    [Expect("", [55, 56], same_shift=True),
     Expect("0:2=elim", [55, 56], same_shift=True),
     Expect("1:2=elim", [51, 52], same_shift=True),
     Expect("0:2=elim 1:2=elim", [21, 22], same_shift=True),
     Expect("0:2=-50% 1:2=elim", [36, 37], same_shift=True),
     Expect("1:2=-20%", [51, 52], same_shift=True)],
    {"0:2": 30, "1:2": 35}))

# ==================================================================================
# 9. Pattern C1 for a group: two MPI_Allreduce on MPI_COMM_WORLD (q = 0, 1) with an
#    eager message 0 -> 2 between them. After the first gate all three ranks share d,
#    so the message and the second gate change nothing (R3).
#
#   rank 0: s2 0-30 (cand 30) | s3 Allreduce[30,39] q0 | s4 39-45 | s5 Send[45,46] ->2 |
#           s6 46-50 | s7 Allreduce[50,56] q1 | s8 56-60 | s9 Fin 60
#   rank 1: s2 0-35 (cand 35) | s3 Allreduce[35,39] q0 | s4 39-48 |
#           s5 Allreduce[48,56] q1 | s6 56-62 | s7 Fin 62
#   rank 2: s2 0-38 (cand 38) | s3 Allreduce[38,39] q0 | s4 39-42 | s5 Recv[42,47] <-0 |
#           s6 47-54 | s7 Allreduce[54,56] q1 | s8 56-58 | s9 Fin 58
#
#   Gate q0: (30, d0), (35, d1), (38, d2); M = 38: g = min(d0 + 8, d1 + 3, d2)
#   Message: S = 45, T = 46 (λ_m = min(1, 2)); Recv R = 42; M = 46:
#     d2 = min(g + 4, g) = g
#   Gate q1: (50, g), (48, g), (54, g); M = 54: min(g + 4, g + 6, g) = g
#   ends [60 - g, 62 - g, 58 - g]
#   ''                          g = 0                          -> [60, 62, 58]
#   2:2=elim                    min(8, 3, 38) = 3              -> [57, 59, 55]
#   1:2=elim 2:2=elim           min(8, 38, 38) = 8             -> [52, 54, 50]
#   0:2=elim 1:2=elim 2:2=elim  min(38, 38, 38) = 38           -> [22, 24, 20]
#   0:2=-50% 1:2=elim 2:2=elim  min(23, 38, 38) = 23           -> [37, 39, 35]
# ==================================================================================
CASES.append(Case(
    "pattern-C1-group", "C1 in a group: identical differences after a collective",
    [[INIT(), ALLREDUCE(30, 39, 0), SEND(45, 46, 2), ALLREDUCE(50, 56, 1), FIN(60)],
     [INIT(), ALLREDUCE(35, 39, 0), ALLREDUCE(48, 56, 1), FIN(62)],
     [INIT(), ALLREDUCE(38, 39, 0), RECV(42, 47, 0), ALLREDUCE(54, 56, 1), FIN(58)]],
    [Expect("", [60, 62, 58], same_shift=True),
     Expect("2:2=elim", [57, 59, 55], same_shift=True),
     Expect("1:2=elim 2:2=elim", [52, 54, 50], same_shift=True),
     Expect("0:2=elim 1:2=elim 2:2=elim", [22, 24, 20], same_shift=True),
     Expect("0:2=-50% 1:2=elim 2:2=elim", [37, 39, 35], same_shift=True)],
    {"0:2": 30, "1:2": 35, "2:2": 38}))

# ==================================================================================
# 9. Pattern C2 (paper Fig. 5, a round trip): an eager message where the receiver
#    waits with d_p <= d_q + w gives d_q' = d_p (Fig. 3(a)), so the reply satisfies R3.
#
#   rank 0: s2 0-30 (cand 30) | s3 Send[30,31] ->1 | s4 31-35 | s5 Recv[35,44] <-1 |
#           s6 44-50 | s7 Fin 50
#   rank 1: s2 0-10 (cand 10) | s3 Recv[10,32] <-0 (cand 22) | s4 32-41 |
#           s5 Send[41,42] ->0 | s6 42-50 | s7 Fin 50
#
#   Message 1: S = 30, λ_m = min(1, 2) = 1, T = 31; R = 10, w = 21; M = 31
#     d1 = min(d1 + 21, D0)         C2 holds when D0 <= d1 + 21: then d1 = D0
#   Message 2 (reply): S = 41, λ_m = min(1, 44-41) = 1, T = 42; R = 35; M = 42
#     d0 = min(d0 + 7, d1)          with C2: d0 = d1 = D0 (R3)
#   ''                  d1 = 0, d0 = 0                                -> [50, 50]
#   0:2=-50%            D0 = 15 <= 21: d1 = 15; d0 = min(22, 15) = 15 -> [35, 35]
#   0:2=elim 1:2=elim   D0 = 30 <= 31: d1 = min(31, 30) = 30;
#                       d0 = min(37, 30) = 30                          -> [20, 20]
#   1:2=elim            D0 = 0: d1 = min(31, 0) = 0; d0 = 0             -> [50, 50]
#   Without C2 (the reply is then what aligns rank 0):
#   0:2=elim            D0 = 30 > 21: d1 = min(21, 30) = 21;
#                       d0 = min(30 + 7, 21) = 21 (rank 0 loses 9)      -> [29, 29]
# ==================================================================================
CASES.append(Case(
    "pattern-C2", "C2: eager round trip with the receiver waiting",
    [[INIT(), SEND(30, 31, 1), RECV(35, 44, 1, tag=1), FIN(50)],
     [INIT(), RECV(10, 32, 0), SEND(41, 42, 0, tag=1), FIN(50)]],
    [Expect("", [50, 50], same_shift=True),
     Expect("0:2=-50%", [35, 35], same_shift=True),
     Expect("0:2=elim 1:2=elim", [20, 20], same_shift=True),
     Expect("1:2=elim", [50, 50], same_shift=True),
     Expect("0:2=elim", [29, 29], same_shift=True)],
    {"0:2": 30, "1:2": 10, "1:3": 22}))


# ==================================================================================
# The deliberately wrong expectation: case 1a with 0:2=elim, claiming rank 1 simply
# adopts the sender's difference (d1 = D0 = 50, end 11) instead of
# min(d1 + w, D0) = 31 (end 30). The checker must reject it.
# ==================================================================================
def wrong_case():
    base = CASES[0]
    return Case("deliberately-wrong", "a wrong expectation the checker must reject",
                base.progs, [Expect("0:2=elim", [10, 11])], base.cands, base.cfg)


# ---------------------------------------------------------------- checker

def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def check_case(case, vtrace, work):
    """Returns (failures, known): lists of message strings."""
    failures, known = [], []
    d = os.path.join(work, case.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    case.writer().write(d, case.cfg)

    rc, out, err = run([vtrace, "whatif", "--list-candidates", d])
    if rc != 0:
        return ["%s: vtrace whatif --list-candidates exited %d: %s" % (case.name, rc, err.strip())], known
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "ns":
            got[parts[0]] = int(parts[1])
    want = {k: ns(v) for k, v in case.cands.items()}
    if got != want:
        failures.append("%s: candidates %s, the derivation assumes %s" % (case.name, got, want))

    cmd = [vtrace, "whatif", "--json"]
    for e in case.expects:
        cmd += ["-s", e.scenario]
    cmd.append(d)
    rc, out, err = run(cmd)
    if rc != 0:
        return failures + ["%s: %s exited %d: %s" % (case.name, " ".join(repr(c) for c in cmd), rc, err.strip())], known
    lines = [json.loads(l) for l in out.splitlines() if l.strip()]
    if len(lines) != len(case.expects):
        return failures + ["%s: %d output lines for %d scenarios" % (case.name, len(lines), len(case.expects))], known
    measured = case.measured_ends()
    for e, j in zip(case.expects, lines):
        probs = []
        if j.get("scenario") != e.scenario:
            probs.append("scenario echoed as %r" % j.get("scenario"))
        if j.get("rank_end_ns") != e.ends:
            probs.append("rank_end_ns %s, expected %s" % (j.get("rank_end_ns"), e.ends))
        if j.get("predicted_end_ns") != max(e.ends):
            probs.append("predicted_end_ns %s, expected %d" % (j.get("predicted_end_ns"), max(e.ends)))
        if e.same_shift and isinstance(j.get("rank_end_ns"), list):
            gains = {m - g for m, g in zip(measured, j["rank_end_ns"])}
            if len(gains) != 1:
                probs.append("ranks gained differently %s (C1/C2: identical differences)" % sorted(gains))
        if not probs:
            if e.disagree:
                known.append("%s '%s': marked as a disagreement (%s) but now agrees: remove the mark"
                             % (case.name, e.scenario, e.disagree))
            continue
        msg = "%s '%s': %s" % (case.name, e.scenario, "; ".join(probs))
        if e.disagree:
            known.append("KNOWN DISAGREEMENT %s [%s]" % (msg, e.disagree))
        else:
            failures.append(msg)
    return failures, known


def main():
    ap = argparse.ArgumentParser(description="hand-computed what-if predictions, one small trace per model rule")
    ap.add_argument("--vtrace", required=True, help="the vtrace executable")
    ap.add_argument("--work", default="golden_rules.work", help="directory for the traces")
    ap.add_argument("--keep", action="store_true", help="keep the traces")
    ap.add_argument("--only", default="", help="comma-separated case names")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    os.makedirs(a.work, exist_ok=True)
    nfail = nscen = 0
    for case in CASES:
        if only and case.name not in only:
            continue
        failures, known = check_case(case, a.vtrace, a.work)
        nscen += len(case.expects)
        for m in known:
            print(m)
        for m in failures:
            print("FAIL: " + m)
        nfail += len(failures)
        print("%-18s %-4s %d scenarios  (%s)" % (case.name, "ok" if not failures else "FAIL", len(case.expects), case.rule))
    # The checker must be able to fail.
    failures, _ = check_case(wrong_case(), a.vtrace, a.work)
    if failures:
        print("deliberately-wrong rejected as it must be: %s" % failures[0])
    else:
        print("FAIL: the checker accepted a deliberately wrong expectation")
        nfail += 1
    print("%d scenarios, %d failures" % (nscen, nfail))
    if nfail == 0 and not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
