#!/usr/bin/env python3
"""Compares `vtrace whatif --json` output with mc.py's expected answers
(test/model/mc_export.py), scenario by scenario: the predicted T' and every rank's
predicted end must be equal integers; a scenario text echoed by the C side must name
the same items (order free).

usage: whatif_compare.py [--got NAME] [--expect NAME] [--expect-differ] [--max-report N] CASEDIR...
  Each CASEDIR holds NAME files (default got.jsonl and expected.jsonl). The output of
  `vtrace whatif --json` may be JSON Lines (one object per scenario), one JSON array, or
  one object with a "scenarios" array; each entry needs "predicted_ns" and
  "rank_end_ns". When an entry has "predicted_end_ns", that is T' (the largest predicted
  end, an absolute time like the rank ends) and "predicted_ns", "measured_ns", "gain_ns"
  and "start_ns", when present, are checked as durations from the earliest record enter
  (how `vtrace whatif --json` reports them). Exit 0 when every case is equal, 1 otherwise (the first differences
  are printed). --expect-differ inverts the verdict: exit 0 when at least one scenario
  differs (used with broken.jsonl to show that the comparison can fail).
Standard library only.
"""
import argparse
import json
import os
import sys


def load_got(path):
    with open(path) as f:
        text = f.read()
    s = text.strip()
    if not s:
        return []
    try:
        whole = json.loads(s)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict) and isinstance(whole.get("scenarios"), list):
        return whole["scenarios"]
    if isinstance(whole, dict):
        return [whole]
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def items(text):
    return sorted(text.split())


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def compare_line(where, g, e):
    """Differences of one scenario (a list of messages, empty when equal)."""
    if not isinstance(g, dict):
        return ["%s: expected a JSON object, found %r" % (where, g)]
    out = []
    if "scenario" in g and isinstance(g["scenario"], str) and items(g["scenario"]) != items(e["scenario"]):
        out.append("%s: scenario echoed as '%s'" % (where, g["scenario"]))
    # T' (absolute): predicted_end_ns when the output has it (predicted_ns is then the
    # duration from start_ns, as `vtrace whatif` reports it), else predicted_ns.
    gp, ge = g.get("predicted_end_ns", g.get("predicted_ns")), g.get("rank_end_ns")
    if not is_int(gp) or not isinstance(ge, list) or not all(is_int(x) for x in ge):
        return out + ["%s: expected integer predicted_ns and rank_end_ns, found %s" % (where, json.dumps(g)[:200])]
    if "predicted_end_ns" in g and "start_ns" in e:
        start = e["start_ns"]
        dur = {"start_ns": start, "predicted_ns": e["predicted_ns"] - start,
               "measured_ns": e["measured_end_ns"] - start,
               "gain_ns": e["measured_end_ns"] - e["predicted_ns"]}
        for k, v in dur.items():
            if k in g and g[k] != v:
                out.append("%s: %s %s, expected %s" % (where, k, g[k], v))
    if gp != e["predicted_ns"] or ge != e["rank_end_ns"]:
        exp_ends = e["rank_end_ns"]
        bad = [r for r in range(max(len(ge), len(exp_ends)))
               if r >= len(ge) or r >= len(exp_ends) or ge[r] != exp_ends[r]]
        out.append("%s: T' %s, expected %s; rank ends %s, expected %s (ranks %s differ)"
                   % (where, gp, e["predicted_ns"], ge, exp_ends, bad))
    return out


def compare_case(d, got_name, exp_name):
    """Returns (number of scenarios, difference messages, number of differing scenarios)."""
    exp_path = os.path.join(d, exp_name)
    got_path = os.path.join(d, got_name)
    with open(exp_path) as f:
        exp = [json.loads(l) for l in f if l.strip()]
    try:
        got = load_got(got_path)
    except (OSError, ValueError) as e:
        return len(exp), ["%s: cannot read the output: %s" % (got_path, e)], len(exp)
    diffs = []
    nbad = 0
    if len(got) != len(exp):
        diffs.append("%s: %d scenarios in the output, %d expected" % (got_path, len(got), len(exp)))
        nbad += abs(len(exp) - len(got))
    for i, (g, e) in enumerate(zip(got, exp)):
        where = "%s line %d (scenario '%s')" % (got_path, i + 1, e["scenario"])
        ld = compare_line(where, g, e)
        if ld:
            nbad += 1
            diffs.extend(ld)
    return len(exp), diffs, nbad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--got", default="got.jsonl")
    ap.add_argument("--expect", default="expected.jsonl")
    ap.add_argument("--expect-differ", action="store_true")
    ap.add_argument("--max-report", type=int, default=10)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    nscen = 0
    ndiff = 0
    bad_cases = []
    reported = 0
    for d in a.cases:
        n, diffs, nbad = compare_case(d, a.got, a.expect)
        nscen += n
        if diffs:
            ndiff += nbad
            bad_cases.append(d)
            if not a.expect_differ:
                for msg in diffs:
                    if reported < a.max_report:
                        print(msg)
                    reported += 1
    if a.expect_differ:
        print("whatif_compare.py: %d of %d scenarios differ from %s in %d of %d cases"
              % (ndiff, nscen, a.expect, len(bad_cases), len(a.cases)))
        return 0 if ndiff else 1
    if ndiff:
        if reported > a.max_report:
            print("... %d more differences" % (reported - a.max_report))
        print("whatif_compare.py: %d of %d scenarios differ, in %d of %d cases; first: %s"
              % (ndiff, nscen, len(bad_cases), len(a.cases), " ".join(bad_cases[:5])))
        return 1
    print("whatif_compare.py: %d scenarios of %d cases equal to %s" % (nscen, len(a.cases), a.expect))
    return 0


if __name__ == "__main__":
    sys.exit(main())
