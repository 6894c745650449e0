#!/usr/bin/env python3
"""Where a trace's bytes go (doc/format.md): per block type over its rank files, and for
the column blocks (EVENTS_COLS, REDUCED_COLS) per column, raw and compressed alone with
zstd -3 (the zstd command; a block compresses its columns together, so the figures
show proportions, not the block's bytes).
usage: maint/bench/colsizes.py TRACEDIR...
e.g.   maint/bench/colsizes.py run/full run/reduced   (a run with VTRACE_MODE=both)"""
import glob, os, struct, subprocess, sys

NAMES = {1: "FUNCS", 2: "EVENTS", 3: "RANKDEFS", 4: "GLOBAL", 5: "REDUCED", 6: "EVENTS_COLS", 7: "REDUCED_COLS", 8: "DICT", 15: "END"}
COLS = {6: ["codes", "sites", "enters", "durs", "fields"], 7: ["kinds", "seqs", "sites", "enters", "durs", "times", "fields"]}

def uvar(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i

def z(b):
    return len(subprocess.run(["zstd", "-3", "-q", "-c"], input=bytes(b), capture_output=True).stdout) if b else 0

def main():
    for d in sys.argv[1:]:
        tot = {}
        cols = {}
        for f in sorted(glob.glob(os.path.join(d, "rank-*.vte"))):
            data = open(f, "rb").read()
            minor = struct.unpack_from("<H", data, 10)[0]
            i = 16
            tot["header"] = tot.get("header", 0) + 16
            while i < len(data):
                _, t, codec, _, stored, raw, _, nrec = struct.unpack_from("<IBBHIIII", data, i)
                pay = data[i + 24:i + 24 + stored]
                i += 24 + stored
                n = NAMES.get(t, str(t))
                tot[n] = tot.get(n, 0) + 24 + stored
                if t in COLS:
                    p = subprocess.run(["zstd", "-d", "-q", "-c"], input=pay, capture_output=True).stdout if codec == 1 else pay
                    j = 0
                    _, j = uvar(p, j); _, j = uvar(p, j)
                    if t == 7: _, j = uvar(p, j)
                    lens = []
                    names = COLS[t] + (["form"] if t == 7 and minor >= 5 else [])  # 1.5: the form byte
                    for _ in names:
                        l, j = uvar(p, j); lens.append(l)
                    for name, l in zip(names, lens):
                        c = cols.setdefault(name, [0, 0])
                        c[0] += l; c[1] += z(p[j:j + l]); j += l
                    c = cols.setdefault("(records)", [0, 0]); c[0] += nrec
        print(d, sum(tot.values()), "bytes")
        print("  blocks:", ", ".join("%s %d" % kv for kv in tot.items()))
        print("  columns (raw / zstd alone):", ", ".join("%s %d/%d" % (k, v[0], v[1]) for k, v in cols.items()))

main()
