#!/usr/bin/env python3
"""`vtrace clusters` on a hand-made trace with known phases (seed 003's clustering of
computation bursts, offline).

usage: clusters_cli.py --vtrace PATH [--work DIR] [--keep]

The trace (4 ranks, written with test/model/vtwrite.py plus a call-site table):
every rank runs in lockstep (each call is an MPI_Allreduce whose exit is the latest
enter + 20 us), every iteration has
  * a burst ending at call site A (solve_a): 100 us +- 2% (uniform, seeded),
  * a burst ending at call site B (solve_b): 1 ms +- 2%,
and in the first half ("noisy") also a burst ending at call site C_r (one per rank) of
200 us * 10^(0.026 j), j a permutation of 0..39 per rank: never 5 of them within 0.05
decades, so DBSCAN (eps 0.05, min-points 5) calls every one noise, and each noisy
iteration has at least 15% of noise time (so no noisy window is stable at 90%). The
second half ("stable") has A and B only. A last burst per rank (call site F, ended by
MPI_Finalize, the same length on every rank: 4 points, noise) pads the run so that the
phase change is exactly at the start of window 10 of 20.

Checked: 2 clusters (B first: the larger time), their sizes, means within 1%, min/max
within +-2%, call sites with symbols, 164 noise bursts, the absence of counters stated
(text and JSON), the timeline (stable half: B everywhere), windows 1-9 unstable and
10-12 stable, the region starting at the phase change, its iterations (period 2); the
reduced trace of the same run (every burst a candidate: the same clusters) and one with
a threshold of 500 us (only B and the larger noise bursts are candidates: one cluster,
the stated restriction). Finally a deliberately wrong expectation must be rejected by
the same checks (the test can fail).

Standard library only.
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import vtwrite  # noqa: E402

US = 1000
NR = 4
NOISY = 40
FUNCS = [("MPI_Init", ""), ("MPI_Allreduce", "coqbB"), ("MPI_Finalize", "")]
MODULE = "/opt/app/bin/app"
# call-site table of every rank: (offset, symbol)
SITES = [(0x1000, "main"), (0x2a10, "solve_a"), (0x3b20, "solve_b")] + \
    [(0x4c30 + 0x10 * r, "scatter_noise") for r in range(NR)] + [(0x5d40, "main")]
S_INIT, S_A, S_B, S_C0, S_F = 0, 1, 2, 3, 3 + NR
COLL = 20 * US


class SiteRank(vtwrite.Rank):
    """vtwrite's rank with a call-site table: record(..., cs=INDEX)."""

    def record(self, fname, enter, exit_, cs=0, **fields):
        super().record(fname, enter, exit_, **fields)
        fid, e, x, f = self.records[-1]
        self.records[-1] = (fid, e, x, dict(f, _cs=cs))

    def _encode_record(self, rec, prev):
        fid, enter, exit_, fields = rec
        cs = fields.get("_cs", 0)
        plain = (fid, enter, exit_, {k: v for k, v in fields.items() if k != "_cs"})
        head = vtwrite.uvar(vtwrite.CODE_FIRST_FN + fid) + vtwrite.svar(enter - prev) + vtwrite.uvar(exit_ - enter)
        out = super()._encode_record(plain, prev)
        assert out[len(head)] == 0
        return head + vtwrite.uvar(cs) + out[len(head) + 1:]

    def rankdefs_payload(self):
        base = super().rankdefs_payload()
        assert base[0] == 0  # vtwrite writes no call sites
        tab = vtwrite.uvar(len(SITES))
        for off, sym in SITES:
            tab += vtwrite.uvar(0x400000 + off) + vtwrite.string(MODULE) + vtwrite.uvar(off) + vtwrite.string(sym)
        return tab + base[1:]


def r10(x):
    """Round to 10 ns (so that the phase change falls exactly on a window boundary)."""
    return int(round(x / 10.0)) * 10


def make_trace(directory, threshold_us=10):
    rnd = random.Random(3)
    w = vtwrite.TraceWriter(NR, funcs=FUNCS)
    w.ranks = [SiteRank(w, r) for r in range(NR)]
    for r in range(NR):
        w.rank(r).comms.append(vtwrite.Comm(1, range(NR), how="world"))
        w.rank(r).record("MPI_Init", 0, 0, cs=S_INIT)
    exp = {"A": [], "B": [], "noise": 0}
    t = [0]
    seq = [0]

    def step(durs, sites):
        """One burst per rank, then the Allreduce that ends it (lockstep)."""
        enters = [t[0] + d for d in durs]
        ex = max(enters) + COLL
        for r in range(NR):
            w.rank(r).record("MPI_Allreduce", enters[r], ex, cs=sites[r], c=0, o=-1, q=seq[0], b=8, B=8)
        seq[0] += 1
        t[0] = ex

    def ab():
        da = [r10(100 * US * (1 + rnd.uniform(-0.02, 0.02))) for _ in range(NR)]
        step(da, [S_A] * NR)
        exp["A"] += da
        db = [r10(1000 * US * (1 + rnd.uniform(-0.02, 0.02))) for _ in range(NR)]
        step(db, [S_B] * NR)
        exp["B"] += db

    for i in range(NOISY):
        ab()
        dn = [r10(200 * US * 10 ** (0.026 * ((i * 17 + r * 11) % NOISY))) for r in range(NR)]
        step(dn, [S_C0 + r for r in range(NR)])
        exp["noise"] += NR
    P = t[0]  # the phase change: the first stable burst starts here
    it_max = 102 * US + 1020 * US + 2 * COLL  # the longest a stable iteration can be
    k = 0
    stable_start = len(exp["A"])
    while t[0] + it_max + 20 * US <= 2 * P:  # the pad is at least 20 us
        ab()
        k += 1
    pad = 2 * P - t[0]
    assert pad >= 10 * US, pad
    for r in range(NR):
        w.rank(r).record("MPI_Finalize", 2 * P, 2 * P, cs=S_F)
    exp["noise"] += NR
    exp["P"] = P
    exp["stable_iters"] = k
    exp["stable_start"] = stable_start
    cfg = ("VTRACE_MODE=full\nVTRACE_THRESHOLD=%dns\nVTRACE_CANDIDATES=all\n"
           "VTRACE_MODEL_L=1000ns\nVTRACE_MODEL_G=0ns\nVTRACE_MODEL_TRDV=1048576\n" % (threshold_us * US))
    w.write(directory, cfg)
    # rank 0's burst starts (the region's iterations are counted on rank 0)
    exp["rank0_starts"] = []
    prev = None
    for fid, e, x, f in w.rank(0).records:
        if prev is not None:
            exp["rank0_starts"].append(prev)
        prev = x
    return exp


class Checker:
    def __init__(self):
        self.errors = []

    def ok(self, cond, what):
        if not cond:
            self.errors.append(what)

    def near(self, got, want, rel, what):
        self.ok(abs(got - want) <= rel * abs(want), "%s: got %s, expected %s (+-%g%%)" % (what, got, want, rel * 100))


def run(vt, args, expect_rc=0):
    p = subprocess.run([vt] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != expect_rc:
        raise SystemExit("FAIL: %s: exit %d (expected %d)\n%s%s" % (" ".join(args), p.returncode, expect_rc,
                                                                     p.stdout, p.stderr))
    return p


def check_full(c, js, exp, nclusters=2, reduced=False):
    """The clusters, noise, counters note, timeline, windows and region of the full run."""
    c.ok(js["hardware_counters"] == "unavailable", "hardware_counters is %r" % js.get("hardware_counters"))
    c.ok("unavailable" in js["features_note"] and "log10" in js["features_note"], "features_note: %r" % js["features_note"])
    c.ok(js["features"] == ["log10_duration", "call_site"], "features: %r" % js["features"])
    c.ok(js["reduced"] is reduced, "reduced: %r" % js["reduced"])
    c.ok(len(js["clusters"]) == nclusters, "%d clusters, expected %d" % (len(js["clusters"]), nclusters))
    if len(js["clusters"]) != nclusters:
        return
    total = sum(exp["A"]) + sum(exp["B"])
    for cl, name, sym, durs in ((js["clusters"][0], "B", "solve_b", exp["B"]), (js["clusters"][1], "A", "solve_a", exp["A"])):
        c.ok(cl["bursts"] == len(durs), "cluster %s: %d bursts, expected %d" % (name, cl["bursts"], len(durs)))
        c.near(cl["duration_ns"]["mean"], sum(durs) / len(durs), 0.01, "cluster %s mean" % name)
        c.near(cl["duration_ns"]["mean"], 100 * US if name == "A" else 1000 * US, 0.01, "cluster %s nominal mean" % name)
        c.ok(cl["duration_ns"]["min"] == min(durs) and cl["duration_ns"]["max"] == max(durs),
             "cluster %s min/max %s/%s, expected %s/%s" % (name, cl["duration_ns"]["min"], cl["duration_ns"]["max"],
                                                         min(durs), max(durs)))
        c.ok(cl["time_ns"] == sum(durs), "cluster %s time %d, expected %d" % (name, cl["time_ns"], sum(durs)))
        c.ok(cl["ranks"] == NR, "cluster %s on %d ranks" % (name, cl["ranks"]))
        site = cl["call_sites"][0]
        c.ok(site["symbol"] == sym and site["module"] == MODULE, "cluster %s call site %r" % (name, site))
        c.ok(sym in site["label"] and "app+0x" in site["label"], "cluster %s label %r" % (name, site["label"]))
        if not reduced:
            c.ok(site["function"] == "MPI_Allreduce", "cluster %s function %r" % (name, site["function"]))
    c.ok(js["noise"]["bursts"] == exp["noise"], "noise: %d bursts, expected %d" % (js["noise"]["bursts"], exp["noise"]))
    c.ok(js["bursts"] == len(exp["A"]) + len(exp["B"]) + exp["noise"], "bursts: %d" % js["bursts"])
    c.ok(js["computation_ns"] > total, "computation time %d <= A+B %d" % (js["computation_ns"], total))

    # timeline: in the stable half, B (cluster 1) dominates every window of every rank
    tl = js["timeline"]
    c.ok(tl["windows"] == 60 and len(tl["ranks"]) == NR, "timeline shape")
    half = tl["windows"] // 2
    for r, row in enumerate(tl["ranks"]):
        c.ok(all(x == 1 for x in row[half + 1:]), "timeline rank %d, stable half: %r" % (r, row[half + 1:]))
    c.ok(any(0 in row[:half] for row in tl["ranks"]), "timeline: no noise-dominated window in the noisy half")

    # stability and region
    wins = js["windows"]
    c.ok(len(wins) == 20, "%d windows" % len(wins))
    for w in range(1, 10):
        c.ok(not wins[w]["stable"], "window %d (noisy) stable: %r" % (w, wins[w]))
    for w in range(10, 13):
        c.ok(wins[w]["stable"], "window %d (stable phase) not stable: %r" % (w, wins[w]))
    c.ok(wins[10]["start_ns"] == exp["P"], "window 10 starts at %d, the phase change at %d" % (wins[10]["start_ns"], exp["P"]))
    reg = js["region"]
    c.ok(reg["found"], "no region found")
    if reg["found"]:
        c.ok(reg["first_window"] == 10 and reg["last_window"] == 12, "region windows %d-%d" % (reg["first_window"], reg["last_window"]))
        c.ok(reg["start_ns"] == exp["P"], "region starts at %d, expected the phase change %d" % (reg["start_ns"], exp["P"]))
        c.ok(reg["stable_until_window"] >= 17, "stable only until window %d" % reg["stable_until_window"])
        it = reg["iterations"]
        n0 = sum(1 for s in exp["rank0_starts"] if reg["start_ns"] <= s < reg["end_ns"])
        c.ok(it is not None and it["source"] == "period" and it["period_bursts"] == 2 and it["count"] == n0 // 2,
             "iterations %r, expected %d (period 2)" % (it, n0 // 2))


def reference_dbscan(durs, eps, minpts, floor):
    """DBSCAN by its definition, brute force: (size, min, max) of every cluster, noise.
    Border points join the nearest core point's cluster (the smaller one on a tie)."""
    xs = sorted(math.log10(max(d, floor, 1)) for d in durs)
    n = len(xs)
    core = [sum(1 for y in xs if abs(y - x) <= eps) >= minpts for x in xs]
    label = [-1] * n
    ncl = 0
    for i in range(n):  # expand clusters from unvisited core points (breadth first)
        if not core[i] or label[i] >= 0:
            continue
        label[i] = ncl
        todo = [i]
        while todo:
            j = todo.pop()
            for k in range(n):
                if core[k] and label[k] < 0 and abs(xs[k] - xs[j]) <= eps:
                    label[k] = ncl
                    todo.append(k)
        ncl += 1
    for i in range(n):
        if not core[i]:
            best = None
            for k in range(n):
                if core[k] and abs(xs[k] - xs[i]) <= eps:
                    d = abs(xs[k] - xs[i])
                    if best is None or d < best[0]:
                        best = (d, k)
            if best:
                label[i] = label[best[1]]
    out = []
    for c in range(ncl):
        mem = [durs_sorted for durs_sorted, l in zip(sorted(durs), label) if l == c]
        out.append((len(mem), min(mem), max(mem)))
    return sorted(out), label.count(-1)


def random_case(vt, work, c):
    """Random burst lengths on one call site (three modes, scattered points): the
    clusters and noise equal the brute-force DBSCAN's, for a few eps / min-points / floors
    (5% of the bursts are under 1 us: with the default floor they make one cluster)."""
    rnd = random.Random(11)
    w = vtwrite.TraceWriter(NR, funcs=FUNCS)
    w.ranks = [SiteRank(w, r) for r in range(NR)]
    durs = []
    t = 0
    for r in range(NR):
        w.rank(r).comms.append(vtwrite.Comm(1, range(NR), how="world"))
        w.rank(r).record("MPI_Init", 0, 0, cs=S_INIT)
    for q in range(150):
        ds = []
        for r in range(NR):
            u = rnd.random()
            if u < 0.05:
                lg = rnd.uniform(1, 3)  # under the floor (1 us)
            elif u < 0.15:
                lg = rnd.uniform(3, 7)
            else:
                lg = rnd.choice((4.7, 4.9, 5.5)) + rnd.gauss(0, 0.03)
            ds.append(int(10 ** lg))
        ex = t + max(ds) + COLL
        for r in range(NR):
            w.rank(r).record("MPI_Allreduce", t + ds[r], ex, cs=S_A, c=0, o=-1, q=q, b=8, B=8)
        durs += ds
        t = ex
    d = os.path.join(work, "random")
    w.write(d, "VTRACE_MODE=full\n")
    for eps, k, floor in ((0.05, 5, 1000), (0.02, 3, 1000), (0.1, 12, 1000), (0.01, 1, 1000), (0.05, 5, 1)):
        js = json.loads(run(vt, ["clusters", "--json", "--quiet", "--eps", str(eps), "--min-points", str(k),
                                 "--floor", str(floor), d]).stdout)
        got = sorted((x["bursts"], x["duration_ns"]["min"], x["duration_ns"]["max"]) for x in js["clusters"])
        want, noise = reference_dbscan(durs, eps, k, floor)
        c.ok(got == want, "random, eps %g, min-points %d: clusters %r, expected %r" % (eps, k, got, want))
        c.ok(js["noise"]["bursts"] == noise, "random, eps %g, min-points %d: noise %d, expected %d" %
             (eps, k, js["noise"]["bursts"], noise))
        c.ok(len(want) >= 2 and (noise > 0 or k == 1), "random case too easy: %r, noise %d" % (want, noise))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--work", default="clusters_cli.work")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    vt = a.vtrace
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    full = os.path.join(a.work, "full")
    exp = make_trace(full)
    c = Checker()

    js = json.loads(run(vt, ["clusters", "--json", "--quiet", full]).stdout)
    check_full(c, js, exp)

    text = run(vt, ["clusters", "--quiet", full]).stdout
    c.ok("hardware counters unavailable" in text, "text output does not say that counters are unavailable")
    c.ok("log10(burst duration)" in text, "text output does not say what replaced the counters")
    c.ok("representative region: windows 10-12" in text, "text region line missing")
    c.ok("solve_b@app+0x3b20" in text and "solve_a@app+0x2a10" in text, "text: call sites with symbols missing")
    tl_lines = [l for l in text.splitlines() if l.startswith("  rank ")]
    c.ok(len(tl_lines) == NR and all(l.rstrip().endswith("1|") for l in tl_lines), "text timeline: %r" % tl_lines)

    # options change the result: a huge eps merges the noise of each call site into clusters
    js2 = json.loads(run(vt, ["clusters", "--json", "--quiet", "--eps", "2", full]).stdout)
    c.ok(js2["noise"]["bursts"] == NR, "--eps 2: noise %d, expected %d (site F)" % (js2["noise"]["bursts"], NR))
    js3 = json.loads(run(vt, ["clusters", "--json", "--quiet", "--stable", "30", "--windows", "40", full]).stdout)
    c.ok(not js3["region"]["found"], "--stable 30 of 40 windows: a region was found")

    # the reduced trace of the same run: every burst is a candidate (theta 10 us)
    red = os.path.join(a.work, "reduced")
    run(vt, ["reduce", full, red])
    jr = json.loads(run(vt, ["clusters", "--json", "--quiet", red]).stdout)
    c.ok("candidate" in jr["bursts_seen"], "reduced: bursts_seen %r" % jr["bursts_seen"])
    check_full(c, jr, exp, reduced=True)
    tr = run(vt, ["clusters", "--quiet", red]).stdout
    c.ok("only its candidate bursts" in tr, "reduced text does not say that only candidate bursts are seen")
    # theta 500 us: only B and the noise bursts over 500 us are candidates
    red5 = os.path.join(a.work, "reduced500")
    run(vt, ["reduce", "--threshold", "500us", full, red5])
    j5 = json.loads(run(vt, ["clusters", "--json", "--quiet", red5]).stdout)
    big = sum(1 for j in range(NOISY) if 200 * US * 10 ** (0.026 * j) >= 500 * US) * NR
    c.ok(len(j5["clusters"]) == 1 and j5["clusters"][0]["bursts"] == len(exp["B"]),
         "theta 500 us: clusters %r" % [(x["bursts"], x["call_sites"][0]["symbol"]) for x in j5["clusters"]])
    c.ok(j5["noise"]["bursts"] == big + NR, "theta 500 us: noise %d, expected %d" % (j5["noise"]["bursts"], big + NR))

    random_case(vt, a.work, c)

    # the checks can fail: a wrong expectation must be rejected
    bad = dict(exp, noise=exp["noise"] + 1, P=exp["P"] + 10)
    cb = Checker()
    check_full(cb, js, bad)
    c.ok(len(cb.errors) >= 2, "a wrong expectation was not rejected: %r" % cb.errors)

    if c.errors:
        for e in c.errors:
            print("FAIL: clusters_cli.py: " + e)
        return 1
    if not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
    print("PASS: clusters_cli.py (%d bursts, %d clusters, noise %d, region from %.3f ms)" %
          (js["bursts"], len(js["clusters"]), js["noise"]["bursts"], js["region"]["start_ns"] / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
