#!/usr/bin/env python3
"""What a reduced trace's kept records cost against the full trace's (issue 13;
doc/format.md, "What a reduced trace costs"). For a full trace FULL and its reduction
REDUCED (`vtrace reduce FULL REDUCED`, or a run's DIR/full and DIR/reduced):

1. the share-of-records bound of test/mpi/rt_equiv.sh and its margin;
2. per column, the bytes a record takes in each trace (each column compressed alone with
   zstd -3, scaled to the event blocks' bytes: proportions, as maint/bench/colsizes.py),
   and the floor: the kept records' own enters and durations alone against the bound;
3. the send times a reduced record holds that the sender's reduced records hold too, and
   the times a reduced record holds that the full trace kept in other records (a
   message's send time S, a synchronous one's posting time P), and other encodings of
   them and of the enters and durations, each as the column it would make (split as 1.5
   splits it, zstd -3 alone), against the current one: where a better predictor would pay.
usage: maint/bench/keptcost.py VTRACE FULL REDUCED   (VTRACE: the vtrace command)"""
import collections, json, math, subprocess, sys


def zz(x):
    return (x << 1) if x >= 0 else ((-x) << 1) - 1


def uvar(u):
    b = bytearray()
    while u >= 0x80:
        b.append(u & 0x7F | 0x80)
        u >>= 7
    b.append(u)
    return bytes(b)


def column(vals):
    """The bytes zstd -3 makes of VALS as a split column of 1.5 (count, low bytes, high parts)."""
    raw = uvar(len(vals)) + bytes(v & 0xFF for v in vals) + b"".join(uvar(v >> 8) for v in vals)
    return len(subprocess.run(["zstd", "-3", "-q", "-c"], input=raw, capture_output=True).stdout) if vals else 0


def entropy(vals):
    """Bytes a value a coder of the values' bit lengths (an order-0 code of them, their
    entropy) and of the bits below each value's leading one (as they are: they are the
    noise) would take: what a bit-level coder of its own could reach on these columns
    (its table, at most 64 lengths, is left out). The values as symbols would promise
    less, but thousands of them are distinct: their table would cost more than it saves."""
    n = max(len(vals), 1)
    count = collections.Counter(v.bit_length() for v in vals)
    h = -sum(k * math.log2(k / n) for k in count.values())
    return (h + sum(max(v.bit_length() - 1, 0) for v in vals)) / 8 / n


def blocks(path):
    """Column sizes of a trace, through colsizes.py's parsing."""
    out = subprocess.run([sys.executable, sys.path[0] + "/colsizes.py", path], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    total = int(out[0].split()[1])
    cols = {}
    for item in out[2].split(":", 1)[1].split(","):
        name, fig = item.strip().rsplit(" ", 1)
        cols[name] = [int(x) for x in fig.split("/")]
    ev = [int(kv.split()[1]) for kv in out[1].split(":", 1)[1].split(",") if kv.split()[0] in ("EVENTS_COLS", "REDUCED_COLS")]
    return total, sum(ev), cols


def info(vtrace, path):
    return json.loads(subprocess.run([vtrace, "info", "--json", "--no-match", path], capture_output=True, text=True,
                                     check=True).stdout)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    vtrace, full, red = sys.argv[1:]
    fi, ri = info(vtrace, full), info(vtrace, red)
    if ri.get("stored"):
        sys.exit("keptcost.py: %s is stored (the full trace): vtrace reduce --no-store" % red)
    fb, rb = fi["bytes"], ri["bytes"]
    fr, rr = fi["stored_records"], ri["stored_records"]
    bound = rr * fb // max(fr, 1) + 1024 * fi["ranks"]
    print("records %d of %d kept (%.1f%%); bytes full %d, reduced %d; bound %d: %s by %d"
          % (rr, fr, 100.0 * rr / max(fr, 1), fb, rb, bound, "within" if rb <= bound else "over", abs(rb - bound)))
    _, fev, fcol = blocks(full)
    _, rev, rcol = blocks(red)
    scale = lambda cols, ev: ev / max(sum(v[1] for k, v in cols.items() if k != "(records)"), 1)
    fs, rs = scale(fcol, fev), scale(rcol, rev)
    print("event blocks: full %d (%.2f B a record), reduced %d (%.2f B a record)" % (fev, fev / max(fr, 1), rev,
                                                                                   rev / max(rr, 1)))
    print("  B a record, per column:  full: %s" % ", ".join("%s %.2f" % (k, v[1] * fs / max(fr, 1))
                                                             for k, v in fcol.items() if k != "(records)"))
    print("                        reduced: %s" % ", ".join("%s %.2f" % (k, v[1] * rs / max(rr, 1))
                                                             for k, v in rcol.items() if k != "(records)"))
    own = (rcol["enters"][1] + rcol["durs"][1]) * rs
    left = bound - (rb - rev)
    print("  floor: the kept records' enters and durations alone take %d; the bound leaves %d for event blocks"
          % (own, left))
    recs = [json.loads(line) for line in subprocess.run([vtrace, "dump", "--json", red], capture_output=True, text=True,
                                                        check=True).stdout.splitlines()]
    c = {k: [] for k in ("S: (S-exit)-(S'-exit') (1.5)", "S: S-enter (1.3)", "S: S-exit", "S: S-S' (sender's last)",
                         "P: P-enter (current)", "P: P-P' (rank's last)", "P: P-S",
                         "enter-prev (current)", "enter-prev vs its site's last",
                         "duration (current)", "duration vs its site's last")}
    lastS, lastP, lastsite, prevexit = {}, {}, {}, {}
    for r in recs:
        rank, en, ex = r["rank"], r["enter"], r["exit"]
        e, d = en - prevexit.get(rank, en), ex - en
        site = lastsite.get((rank, r.get("fn"), r.get("site")), (0, 0))
        c["enter-prev (current)"].append(zz(e))
        c["enter-prev vs its site's last"].append(zz(e - site[0]))
        c["duration (current)"].append(d)
        c["duration vs its site's last"].append(zz(d - site[1]))
        lastsite[(rank, r.get("fn"), r.get("site"))] = (e, d)
        prevexit[rank] = ex
        for m in r.get("msgs", []):
            key, S = (rank, m["src"]), m["S"]
            y, py = S - ex, lastS.get(key, (0, None))
            c["S: (S-exit)-(S'-exit') (1.5)"].append(zz(y - py[0]))
            c["S: S-enter (1.3)"].append(zz(S - en))
            c["S: S-exit"].append(zz(y))
            c["S: S-S' (sender's last)"].append(zz(S - py[1] if py[1] is not None else S - en))
            lastS[key] = (y, S)
            if m["sync"]:
                P = m["P"]
                c["P: P-enter (current)"].append(zz(P - en))
                c["P: P-P' (rank's last)"].append(zz(P - lastP.get(rank, en)))
                c["P: P-S"].append(zz(P - S))
                lastP[rank] = P
    # A send time the sender's reduced records hold too (as rt_equiv.sh counts them): the
    # sending call kept, its enter S (a blocking synchronous send always is), or the burst
    # before it, its end S. What leaving those out of the receiver's record would save.
    kept = set()
    for r in recs:
        kept.add((r["rank"], r["seq"], r["enter"]))
        if r["kind"] == "CAND" and "fn" not in r:
            kept.add((r["rank"], r["seq"] + 1, r["exit"]))
    twice, lat = {0: [], 1: []}, {}
    for r in recs:
        for m in r.get("msgs", []):
            key, y = (r["rank"], m["src"]), m["S"] - r["exit"]
            if (m["src"], m["send_seq"], m["S"]) in kept:
                twice[m["sync"]].append(zz(y - lat.get(key, 0)))
            lat[key] = y
    for sync, v in sorted(twice.items(), reverse=True):
        print("  %d %s messages' send times are held twice: their S values alone %d bytes (zstd -3)"
              % (len(v), "synchronous" if sync else "other", column(v)))
    nm = len(c["S: S-exit"])
    print("times the full trace holds in other records: %d messages (%d synchronous); zstd -3 of each column alone,"
          " and what a coder of bit lengths would take (entropy):"
          % (nm, len(c["P: P-enter (current)"])))
    for k, v in c.items():
        if v:
            n = column(v)
            print("  %-34s %8d bytes, %.2f a value (entropy %.2f)" % (k, n, n / len(v), entropy(v)))


main()
