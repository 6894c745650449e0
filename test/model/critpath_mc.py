#!/usr/bin/env python3
"""Properties of `vtrace critical-path` on random traces (mc_export.py cases: mc.py's
random programs with scenarios), each implied by the model (design/model.md) and the
definitions of vtrace-critical-path(1):

For the baseline and the first MC_CP_NSCEN scenarios of scenarios.txt:
  1. predicted_ns equals `vtrace whatif --json`'s predicted_ns for the same scenario,
     and length_ns equals it (the path covers the whole run);
  2. the parts add up exactly: startup + segments + edges = length; the segments and
     edges join end to end (first segment at start + startup, each edge from the end of
     a segment to the start of the next, the last segment ending at T'); per rank, per
     call site and per function each sum to the segments' time; "consistent" is true;
  3. every candidate has slack >= 0, every candidate on the path slack 0, and the
     candidates are exactly those of `vtrace whatif --list-candidates` (baseline);
  4. shortening never lengthens, and slack is exact where the model makes it so:
     a. an off-path candidate with slack > 0: adding "e=elim" leaves T' unchanged (every
        chain through e is shorter than T' and only gets shorter);
     b. a candidate on the path: adding "e=-1ns" gives T' or T' - 1 (each chain passes
        e once, so no chain loses more than 1 ns; monotone);
     c. (baseline only) a candidate computation burst e (a local event: its shortening
        moves exactly the chains through it): with σ = "e=-k" (k = its duration, and a
        random k), T'(baseline) = T'(σ) + max(0, k - slack_σ(e)), slack_σ from
        `vtrace critical-path -s σ`.
Then the same checks must reject deliberately corrupted answers (a wrong predicted_ns,
a path candidate with slack, a segment moved by 1 ns, slack off by one in 4c): proof
that they can fail.

usage: critpath_mc.py --vtrace PATH CASEDIR...     (CASEDIR holds trace/, scenarios.txt)
Standard library only.
"""
import argparse
import copy
import json
import os
import random
import subprocess
import sys

NSCEN = int(os.environ.get("MC_CP_NSCEN", "2"))
K = int(os.environ.get("MC_CP_EVENTS", "4"))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(repr(c) for c in cmd), p.returncode, p.stderr.strip()))
    return p.stdout


def critpath(vt, trace, scen):
    return json.loads(run([vt, "critical-path", "--json", "-s", scen, trace]))


def whatif(vt, trace, scens):
    cmd = [vt, "whatif", "--json"]
    for s in scens:
        cmd += ["-s", s]
    out = [json.loads(l) for l in run(cmd + [trace]).splitlines() if l.strip()]
    return [j["predicted_ns"] for j in out]


def join(a, b):
    return (a + " " + b).strip()


def check_structure(j, pred_whatif, cand_list=None):
    """Checks 1-3 on one critical-path JSON object; returns a list of problems."""
    p = []
    if j["predicted_ns"] != pred_whatif:
        p.append("predicted_ns %d, whatif says %d" % (j["predicted_ns"], pred_whatif))
    if j["length_ns"] != j["predicted_ns"]:
        p.append("length_ns %d != predicted_ns %d" % (j["length_ns"], j["predicted_ns"]))
    segs, edges = j["segments"], j["edges"]
    seg_sum = sum(s["end_ns"] - s["start_ns"] for s in segs)
    edge_sum = sum(e["ns"] for e in edges)
    if any(s["ns"] != s["end_ns"] - s["start_ns"] for s in segs):
        p.append("a segment's ns is not end - start")
    if seg_sum != j["segments_ns"] or edge_sum != j["edges_ns"]:
        p.append("segments/edges sums %d/%d, reported %d/%d" % (seg_sum, edge_sum, j["segments_ns"], j["edges_ns"]))
    if j["startup_ns"] + seg_sum + edge_sum != j["length_ns"]:
        p.append("startup %d + segments %d + edges %d != length %d" % (j["startup_ns"], seg_sum, edge_sum, j["length_ns"]))
    if len(edges) != len(segs) - 1 or not segs:
        p.append("%d segments and %d edges" % (len(segs), len(edges)))
    else:
        if segs[0]["start_ns"] != j["start_ns"] + j["startup_ns"]:
            p.append("first segment starts at %d, not start + startup" % segs[0]["start_ns"])
        if segs[-1]["end_ns"] != j["predicted_end_ns"] or j["predicted_end_ns"] - j["start_ns"] != j["predicted_ns"]:
            p.append("last segment ends at %d, T' is %d" % (segs[-1]["end_ns"], j["predicted_end_ns"]))
        if "%d:" % j["end_rank"] != segs[-1]["last"][:len("%d:" % j["end_rank"])]:
            p.append("the path does not end on end_rank %d" % j["end_rank"])
        for i, e in enumerate(edges):
            if segs[i]["end_ns"] + e["ns"] != segs[i + 1]["start_ns"]:
                p.append("edge %d does not join segment %d (end %d + %d) to %d (start %d)"
                         % (i, i, segs[i]["end_ns"], e["ns"], i + 1, segs[i + 1]["start_ns"]))
            if e["from"] != segs[i]["last"] or e["to"] != segs[i + 1]["first"]:
                p.append("edge %d goes %s -> %s, the segments %s .. %s" % (i, e["from"], e["to"], segs[i]["last"],
                                                                         segs[i + 1]["first"]))
    for what in ("per_rank", "per_site", "per_function"):
        s = sum(x["ns"] for x in j[what])
        if s != seg_sum:
            p.append("%s sums to %d, the segments to %d" % (what, s, seg_sum))
    if not j["consistent"]:
        p.append("consistent is false")
    for c in j["candidates"]:
        if c["slack_ns"] < 0:
            p.append("%s has slack %d < 0" % (c["event"], c["slack_ns"]))
        if c["on_path"] and c["slack_ns"] != 0:
            p.append("%s is on the path with slack %d" % (c["event"], c["slack_ns"]))
    if cand_list is not None:
        got = {c["event"]: c["duration_ns"] for c in j["candidates"]}
        if got != cand_list:
            p.append("candidates differ from whatif --list-candidates: %d vs %d"
                     % (len(got), len(cand_list)))
    return p


def check_exact(t_base, t_sigma, k, slack_sigma):
    """4c: T'(baseline) = T'(σ) + max(0, k - slack_σ(e))."""
    want = t_sigma + max(0, k - slack_sigma)
    return [] if t_base == want else ["T' %d, but T'(σ) %d + max(0, %d - slack %d) = %d"
                                      % (t_base, t_sigma, k, slack_sigma, want)]


def pick(xs, n, rnd):
    xs = list(xs)
    return xs if len(xs) <= n else rnd.sample(xs, n)


def check_case(vt, d, rnd, stats):
    trace = os.path.join(d, "trace")
    probs = []
    scens = [""]
    with open(os.path.join(d, "scenarios.txt")) as f:
        scens += [l.split("#")[0].strip() for l in f if l.split("#")[0].strip()][:NSCEN]
    preds = whatif(vt, trace, scens)
    cands = {}
    for l in run([vt, "whatif", "--list-candidates", trace]).splitlines():
        x = l.split()
        cands[x[0]] = int(x[1])
    saved = None
    for si, (scen, pw) in enumerate(zip(scens, preds)):
        j = critpath(vt, trace, scen)
        if si == 0:
            saved = j
        where = "%s '%s'" % (d, scen[:60])
        probs += ["%s: %s" % (where, m) for m in check_structure(j, pw, cands if si == 0 else None)]
        stats["scenarios"] += 1
        T = j["predicted_ns"]
        off = [c for c in j["candidates"] if c["slack_ns"] > 0]
        on = [c for c in j["candidates"] if c["on_path"]]
        tests = [(c, "elim") for c in pick(off, K, rnd)] + [(c, "-1ns") for c in pick(on, K, rnd)]
        if tests:
            got = whatif(vt, trace, [join(scen, "%s=%s" % (c["event"], how)) for c, how in tests])
            for (c, how), t in zip(tests, got):
                stats["4ab"] += 1
                if how == "elim" and t != T:
                    probs.append("%s: %s has slack %d but eliminating it gives T' %d, not %d"
                                 % (where, c["event"], c["slack_ns"], t, T))
                if how == "-1ns" and t not in (T, T - 1):
                    probs.append("%s: %s is on the path; shortening it by 1 ns gives T' %d, not %d or %d"
                                 % (where, c["event"], t, T, T - 1))
        if si == 0:
            bursts = [c for c in j["candidates"] if c["what"] == "(computation)" and c["duration_ns"] > 0]
            for c in pick(bursts, K, rnd):
                for k in (c["duration_ns"], rnd.randint(1, c["duration_ns"])):
                    sj = critpath(vt, trace, "%s=-%dns" % (c["event"], k))
                    sl = {x["event"]: x["slack_ns"] for x in sj["candidates"]}[c["event"]]
                    stats["4c"] += 1
                    stats.setdefault("exact", []).append((T, sj["predicted_ns"], k, sl))
                    probs += ["%s: %s=-%dns: %s" % (where, c["event"], k, m)
                              for m in check_exact(T, sj["predicted_ns"], k, sl)]
    return probs, saved, preds[0]


def self_test(saved, stats):
    """The checks must reject corrupted answers; returns a list of problems."""
    j, pw = saved
    probs = []

    def must_fail(what, j2, pw2=None):
        if not check_structure(j2, pw if pw2 is None else pw2):
            probs.append("the checks accept %s" % what)
    must_fail("a wrong predicted_ns", j, pw + 1)
    j2 = copy.deepcopy(j)
    j2["segments"][-1]["start_ns"] += 1
    must_fail("a segment moved by 1 ns", j2)
    on = [i for i, c in enumerate(j["candidates"]) if c["on_path"]]
    if on:
        j2 = copy.deepcopy(j)
        j2["candidates"][on[0]]["slack_ns"] = 1
        must_fail("a candidate on the path with slack 1", j2)
    ex = [e for e in stats.get("exact", []) if e[2] > e[3]]   # k > slack: T' depends on the slack
    if ex:
        t, ts, k, sl = ex[0]
        if not check_exact(t, ts, k, sl - 1) or not check_exact(t, ts, k, sl + 1):
            probs.append("the exact-slack check accepts a slack off by one")
    else:
        probs.append("no exact-slack check where the slack matters (more seeds?)")
    return probs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    rnd = random.Random(12345)
    stats = {"scenarios": 0, "4ab": 0, "4c": 0}
    nfail = 0
    saved = None
    for d in a.cases:
        try:
            probs, j, pw = check_case(a.vtrace, d, rnd, stats)
        except Exception as e:   # a command failed or printed no JSON
            probs, j = ["%s: %s" % (d, e)], None
        if saved is None and j is not None and j["candidates"] and any(c["on_path"] for c in j["candidates"]):
            saved = (j, pw)
        for m in probs[:5]:
            print("FAIL: " + m)
        nfail += bool(probs)
    if saved is None:
        print("FAIL: no case to self-test the checks with")
        nfail += 1
    else:
        for m in self_test(saved, stats):
            print("FAIL: " + m)
            nfail += 1
    print("critpath_mc: %d cases, %d scenarios, %d shortening checks, %d exact-slack checks, %d failing"
          % (len(a.cases), stats["scenarios"], stats["4ab"], stats["4c"], nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
