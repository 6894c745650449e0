#!/usr/bin/env python3
"""Checks a page of `vtrace report`.

  check_report.py static PAGE EXPECT.json   the page is self-contained and its embedded
                                            JSON holds the expected counts
  check_report.py dom DOM PAGE              the DOM Chromium printed after the page's
                                            script ran (--dump-dom): no error, the
                                            timeline drawn, the tables filled in

EXPECT.json: {"nranks": N, "events": N, "messages": N, "markers": N, "aggregated": ">0",
"domino": ["R:S", ...], "max_events": N}; a key that is absent is not checked.
Prints what is wrong and exits 1; exits 0 when the page passes."""
import json
import re
import sys

errors = []


def bad(msg):
    errors.append(msg)


def page_data(text):
    m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', text, re.S)
    if not m:
        bad("no <script id=vt-data> element")
        return None
    try:
        return json.loads(m.group(1))
    except ValueError as e:
        bad("the embedded JSON does not parse: %s" % e)
        return None


def check_static(page, expect):
    text = open(page, encoding="utf-8").read()
    if re.search(r"https?://", text, re.I):
        bad("the page names an http(s):// address")
    for m in re.finditer(r"<(script|img|iframe|link|embed|object|audio|video|source)\b[^>]*>", text, re.I):
        tag = m.group(0)
        if re.search(r"\b(src|href)\s*=", tag, re.I):
            bad("external resource: %s" % tag[:120])
    if re.search(r"@import|url\(\s*['\"]?(?!data:)", text):
        bad("the CSS loads something (@import or url())")
    if "</html>" not in text:
        bad("the page is not complete (no </html>)")
    d = page_data(text)
    if d is None:
        return
    if d.get("format") != "vtrace-report":
        bad("format is %r" % d.get("format"))
    for k in ("events", "messages", "markers", "aggregated"):
        c = d[k]
        if len(c["data"]) != c["embedded"] or c["embedded"] + c["omitted"] != c["total"]:
            bad("%s: embedded %d, %d rows, omitted %d, total %d do not add up"
                % (k, c["embedded"], len(c["data"]), c["omitted"], c["total"]))
        if "max_events" in expect and c["embedded"] > expect["max_events"]:
            bad("%s: %d embedded, over --max-events %d" % (k, c["embedded"], expect["max_events"]))
    if "nranks" in expect and d["nranks"] != expect["nranks"]:
        bad("nranks %d, expected %d" % (d["nranks"], expect["nranks"]))
    for k in ("events", "messages", "markers"):
        if k in expect and d[k]["total"] != expect[k]:
            bad("%s total %d, expected %d" % (k, d[k]["total"], expect[k]))
    if expect.get("aggregated") == ">0" and d["aggregated"]["total"] == 0:
        bad("a reduced trace without aggregated stretches")
    if expect.get("aggregated") == 0 and d["aggregated"]["total"] != 0:
        bad("aggregated stretches in a full trace")
    if "domino" in expect:
        got = [s["event"] for s in d["domino"]]
        if got != expect["domino"]:
            bad("domino path %s, vtrace domino says %s" % (got, expect["domino"]))
        for s in d["domino"]:
            if "start" not in s:
                bad("domino step %d has no time on the timeline" % s["step"])
    if "fix_first" in expect:
        rows = d.get("fix_first", {}).get("rank", [])
        if not rows or rows[0]["what"] != expect["fix_first"]:
            bad("what to fix first by rank: %s first, vtrace domino --by rank says %s" %
                (rows[0]["what"] if rows else None, expect["fix_first"]))
    if expect.get("critical_path") and not (d["critical_path"]["available"] and d["critical_path"]["consistent"]):
        bad("no consistent critical path: %s" % d["critical_path"].get("error"))
    if expect.get("whatif") is not None and len(d["whatif"]) != expect["whatif"]:
        bad("%d what-if rows, expected %d" % (len(d["whatif"]), expect["whatif"]))
    if not d["profile"]:
        bad("empty profile")
    if abs(sum(p["share"] for p in d["profile"]) - 1) > 1e-3:
        bad("profile shares do not add up to 1")
    if d["events"]["omitted"] and "left out" not in text and "omitted" not in text:
        bad("events were left out and the page does not say so")
    for r in d["events"]["data"]:
        if not (0 <= r[0] < d["nranks"]) or r[2] < 0 or not (-1 <= r[3] < len(d["functions"])):
            bad("bad event row %s" % r)
            break


def check_dom(dom, page):
    text = open(dom, encoding="utf-8", errors="replace").read()
    d = page_data(open(page, encoding="utf-8").read())
    m = re.search(r'<body[^>]*data-vt-status="([a-z]*)"', text)
    if not m:
        bad("no data-vt-status on <body>: the script did not run")
    elif m.group(1) != "ok":
        bad("data-vt-status is %r" % m.group(1))
    m = re.search(r'<div id="vt-errors">(.*?)</div>', text, re.S)
    if m is None:
        bad("no #vt-errors element")
    elif m.group(1).strip():
        bad("the page reports errors: %s" % re.sub(r"<[^>]*>", "", m.group(1)).strip()[:2000])
    m = re.search(r'<div id="vt-summary"([^>]*)>', text)
    if not m:
        bad("no #vt-summary: the script did not finish")
        return
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1)))
    if d is None:
        return

    def num(k):
        try:
            return int(attrs.get(k, "-1"))
        except ValueError:
            return -1
    if num("events") != d["events"]["embedded"]:
        bad("the script read %d events, the page holds %d" % (num("events"), d["events"]["embedded"]))
    if d["events"]["embedded"] and num("drawn-events") <= 0:
        bad("no call drawn on the timeline")
    if d["messages"]["embedded"] and num("drawn-messages") <= 0:
        bad("no message drawn on the timeline")
    if d["aggregated"]["embedded"] and num("drawn-aggregated") <= 0:
        bad("no aggregated stretch drawn")
    if d["critical_path"]["available"] and d["critical_path"]["segments"]["embedded"] and num("drawn-path") <= 0:
        bad("the critical path is not drawn")
    if [s for s in d["domino"] if "start" in s] and num("drawn-domino") <= 0:
        bad("the domino path is not drawn")
    spans = [s for s in d.get("spans", []) if s[1] > s[0]]
    if num("drawn-computation") != len(spans):
        bad("computation drawn on %d lanes, %d ranks have a run" % (num("drawn-computation"), len(spans)))
    fix = d.get("fix_first", {})
    for k in ("rank", "function"):
        if num("fix-%s-rows" % k) != len(fix.get(k, [])):
            bad("what to fix first by %s: %d rows drawn, the page holds %d" % (k, num("fix-%s-rows" % k), len(fix.get(k, []))))
    if d["candidates"] and not fix.get("rank"):
        bad("candidates but no 'what to fix first' by rank")
    if fix.get("rank") and attrs.get("fix-first-rank") != fix["rank"][0]["what"]:
        bad("what to fix first: %r shown first, the page's first row is %r" % (attrs.get("fix-first-rank"), fix["rank"][0]["what"]))
    if num("range-rows") < 1:
        bad("no statistics of the run's range")
    pat = d.get("patterns", {})
    if pat.get("available") and num("pattern-rows") != len(pat.get("totals", [])):
        bad("wait-state table: %d rows, the page holds %d patterns" % (num("pattern-rows"), len(pat.get("totals", []))))
    if not pat.get("available") and d.get("analysis_error") is None:
        bad("no wait-state patterns: %s" % pat.get("error"))
    rows = len(re.findall(r'<tr class="vt-prof-row"', text))
    if rows != len(d["profile"]) or num("profile-rows") != rows:
        bad("profile table: %d rows, summary says %d, profile has %d" % (rows, num("profile-rows"), len(d["profile"])))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("static", "dom"):
        sys.stderr.write(__doc__)
        return 2
    if sys.argv[1] == "static":
        check_static(sys.argv[2], json.load(open(sys.argv[3])))
    else:
        check_dom(sys.argv[2], sys.argv[3])
    for e in errors:
        print("%s: %s" % (sys.argv[2], e))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
