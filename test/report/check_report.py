#!/usr/bin/env python3
"""Checks a page of `vtrace report`.

  check_report.py static PAGE EXPECT.json   the page is self-contained and its embedded
                                            JSON holds the expected counts
  check_report.py dom DOM PAGE              the DOM Chromium printed after the page's
                                            script ran (--dump-dom): no error, the
                                            timeline drawn, the tables filled in
  check_report.py pixels PNG DOM WHAT...    the screenshot PNG (Chromium --screenshot of
                                            the page whose DOM is DOM) shows WHAT in the
                                            timeline's lanes, each of:
      bins:FN        FN's colour right of the detail window (bins drawn)
      events:FN      FN's colour over a lane's whole height (one call drawn as itself)
      columns:FN     FN's colour in a column lower than the lane (summed)
      computation, path, domino, hatch (a reduced trace's aggregated spans),
      detail (the window's band on the axis)
      !WHAT          WHAT is not there

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
    if "balance_gain" in expect:
        b = d.get("fix_first", {}).get("balance")
        if not b or b["gain_ns"] != expect["balance_gain"]:
            bad("load imbalance: gain %s, vtrace whatif -s balance says %s" % (b and b["gain_ns"], expect["balance_gain"]))
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
    if d["events"]["embedded"] and num("drawn-events") + num("drawn-summed") <= 0:
        bad("no call drawn on the timeline (as itself or summed in a pixel column)")
    if not d["detail"]["complete"] and num("drawn-bins") <= 0:
        bad("calls outside the detail window, and no bin drawn")
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
    if fix.get("balance") and attrs.get("fix-balance-gain") != str(fix["balance"]["gain_ns"]):
        bad("load imbalance: %r shown, the page holds %r" % (attrs.get("fix-balance-gain"), fix["balance"]["gain_ns"]))
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


def read_png(path):
    """The pixels of an 8-bit RGB or RGBA PNG (what Chromium writes) as rows of bytes,
    and the bytes per pixel."""
    import struct
    import zlib
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, lace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or lace:
                raise ValueError("%s: PNG of depth %d, colour type %d, interlace %d" % (path, depth, ctype, lace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return rows, bpp


def check_pixels(png, dom, whats):
    text = open(dom, encoding="utf-8", errors="replace").read()
    m = re.search(r'<div id="vt-summary"([^>]*)>', text)
    if not m:
        bad("no #vt-summary in %s" % dom)
        return
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1)))
    unq = lambda v: json.loads(v.replace("&quot;", '"').replace("&amp;", "&"))
    g, colors = unq(attrs["geometry"]), unq(attrs["colors"])
    rows, bpp = read_png(png)
    nr = int(attrs["ranks"])
    x0, x1 = int(g["left"] + g["label"]) + 1, int(g["left"] + g["width"]) - 9
    h = g["lane"] - 2 * g["pad"]
    lanes = [int(g["top"] + g["axis"] + r * g["lane"] + g["pad"]) for r in range(nr)]
    if lanes[-1] + g["lane"] > len(rows) or x1 > len(rows[0]) // bpp:
        bad("the timeline is not inside the screenshot (%s)" % g)
        return

    def rgb(c):
        return bytes(int(c[i:i + 2], 16) for i in (1, 3, 5))

    def px(x, y):
        return bytes(rows[y][x * bpp:x * bpp + 3])

    def count(c, xs, ys):
        return sum(1 for y in ys for x in xs if px(x, y) == c)

    lane_ys = [y for top in lanes for y in range(top, top + h)]
    for what in whats:
        neg = what.startswith("!")
        kind, _, fn = what.lstrip("!").partition(":")
        if kind in ("bins", "events", "columns") and fn not in colors:
            bad("%s: no colour for %r" % (what, fn))
            continue
        c = rgb(colors[fn] if fn else colors.get(kind, "#000000"))
        if kind == "bins":
            xs = range(max(x0, int(g["left"] + g["detail"][1]) + 3), x1)
            found = count(c, xs, lane_ys)
        elif kind in ("events", "columns"):
            found = 0
            for top in lanes:
                for x in range(x0, x1):
                    run = sum(1 for y in range(top, top + h) if px(x, y) == c)
                    found += (run >= h - 1) if kind == "events" else (0 < run < h * 0.8 and px(x, top + h - 1) == c)
        elif kind == "path":
            found = count(c, range(x0, x1), [top + g["lane"] - 2 * g["pad"] + k for top in lanes for k in range(1, 3)])
        elif kind == "detail":
            found = count(c, range(x0, x1), range(int(g["top"] + g["axis"]) - 4, int(g["top"] + g["axis"]) - 1))
        elif kind in ("computation", "domino", "hatch"):
            found = count(c, range(x0, x1), lane_ys)
        else:
            bad("unknown check %r" % what)
            continue
        enough = found >= (3 if kind == "events" else 20)
        print("%s: %s: %d" % (png, what, found))
        if enough == neg:
            bad("%s: %s (%d pixels or columns found)" % (what, "drawn, expected not" if neg else "not drawn", found))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "pixels":
        check_pixels(sys.argv[2], sys.argv[3], sys.argv[4:])
        for e in errors:
            print("%s: %s" % (sys.argv[2], e))
        return 1 if errors else 0
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
