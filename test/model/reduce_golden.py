#!/usr/bin/env python3
"""`vtrace reduce` on hand-made traces: every case of golden_rules.py (one per model
rule) and cases the reference simulation never generates, where model.md's probe
window needs vtrace's reading (doc/model-notes.md):
  probe-window-completion  a rank probes a message, receives another one (a completion
                           inside the window), then receives the probed message
  probe-window-nested      two probes open at once, their receives in reverse order
  probe-window-sends       messages sent inside the window carry the probe's atom
  probe-recv-candidate     the receive of a probed message is itself a candidate
For each: `vtrace reduce --check` (model.md §7.4 at every event, over the case's
scenarios, each candidate eliminated alone and 50 random ones) must pass, and
`vtrace whatif --json` must give identical lines from the full and the reduced trace
for the same scenarios and 200 random ones.

usage: reduce_golden.py --vtrace PATH [--work DIR] [--keep]
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_rules as G  # noqa: E402


def window_cases():
    # times in us; θ = 10 us; ranks start with MPI_Init at 0
    cases = []
    # rank 0 sends the probed message late; rank 2 sends another one; rank 1 probes 0,
    # receives 2 (a completion in the window), then receives 0's message.
    cases.append(G.Case(
        "probe-window-completion", "a completion inside a probe window",
        [[G.INIT(), G.SEND(40, 41, 1, tag=1), G.FIN(70)],
         [G.INIT(), G.RECV(5, 42, 0, tag=1, fn="MPI_Probe"), G.RECV(60, 75, 2, tag=2), G.RECV(80, 81, 0, tag=1),
          G.FIN(95)],
         [G.INIT(), G.SEND(70, 71, 1, tag=2), G.FIN(90)]],
        [], {}))
    cases.append(G.Case(
        "probe-window-nested", "two probe windows open at once",
        [[G.INIT(), G.SEND(30, 31, 1, tag=1), G.FIN(50)],
         [G.INIT(), G.RECV(5, 32, 0, tag=1, fn="MPI_Probe"), G.RECV(45, 62, 2, tag=2, fn="MPI_Probe"),
          G.RECV(75, 76, 2, tag=2), G.RECV(90, 91, 0, tag=1), G.FIN(110)],
         [G.INIT(), G.SEND(60, 61, 1, tag=2), G.FIN(80)]],
        [], {}))
    cases.append(G.Case(
        "probe-window-sends", "messages sent inside a probe window",
        [[G.INIT(), G.SEND(30, 31, 1, tag=1), G.RECV(35, 70, 2, tag=3), G.FIN(90)],
         [G.INIT(), G.RECV(5, 32, 0, tag=1, fn="MPI_Probe"), G.SEND(50, 51, 2, tag=2), G.RECV(70, 71, 0, tag=1),
          G.FIN(85)],
         [G.INIT(), G.RECV(20, 52, 1, tag=2), G.SEND(65, 66, 0, tag=3), G.FIN(80)]],
        [], {}))
    cases.append(G.Case(
        "probe-recv-candidate", "the receive of a probed message is a candidate",
        [[G.INIT(), G.SEND(40, 41, 1, tag=1), G.FIN(60)],
         [G.INIT(), G.RECV(5, 42, 0, tag=1, fn="MPI_Probe"), G.RECV(50, 75, 0, tag=1), G.FIN(90)]],
        [], {}))
    return cases


def run(cmd, out=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if out:
        with open(out, "w") as f:
            f.write(p.stdout)
    return p.returncode, p.stdout, p.stderr


def check(case, vtrace, work):
    d = os.path.join(work, case.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    case.writer().write(d, case.cfg)
    rc, out, err = run([vtrace, "whatif", "-l", d])
    if rc:
        return "whatif -l: " + err.strip()
    alone = [l.split()[0] + "=elim" for l in out.splitlines() if l.strip()]
    scen = os.path.join(work, case.name + ".scen")
    with open(scen, "w") as f:
        f.write("\n".join([""] + [e.scenario for e in case.expects] + alone) + "\n")
    # the default limits, roomy ones (the probe substitution stays exact) and the
    # tightest (everything overflows to atoms)
    for limits in ([], ["--m", "7", "--K", "8"], ["--m", "1", "--K", "1"]):
        red = d + ".red"
        if os.path.isdir(red):
            shutil.rmtree(red)
        rc, out, err = run([vtrace, "reduce", "--check", "-f", scen, "-r", "50"] + limits + [d, red])
        if rc:
            return "reduce --check %s: %s" % (" ".join(limits), (out + err).strip().splitlines()[-1])
        for what in (["-f", scen], ["--random", "200", "--seed", "9"]):
            rc1, a, e1 = run([vtrace, "whatif", "--json"] + what + [d])
            rc2, b, e2 = run([vtrace, "whatif", "--json"] + what + [red])
            if rc1 or rc2:
                return "whatif: " + (e1 + e2).strip()
            if a != b:
                for x, y in zip(a.splitlines(), b.splitlines()):
                    if x != y:
                        return "predictions differ (%s):\n  full    %s\n  reduced %s" % (" ".join(limits), x, y)
                return "predictions differ (line counts)"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--work", default="reduce_golden.work")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    bad = 0
    cases = G.CASES + window_cases()
    for case in cases:
        msg = check(case, a.vtrace, a.work)
        print("%-24s %s" % (case.name, "ok" if msg is None else "FAIL " + msg))
        bad += msg is not None
    print("%d cases, %d failures" % (len(cases), bad))
    if not a.keep and not bad:
        shutil.rmtree(a.work)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
