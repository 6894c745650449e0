#!/usr/bin/env python3
"""Reads an OTF2 archive written by `vtrace export --format=otf2` with the OTF2 Python
bindings (python3-otf2) and checks it against the trace's `vtrace dump --json` output:

  * timestamps never decrease on a location, every Enter has its Leave (same region);
  * the numbers of Enter, Leave, sends (MpiSend + MpiIsend), receives (MpiRecv +
    MpiIrecv) and MpiCollectiveBegin/End equal what the dump says;
  * every send has its receive and every receive its send: per (communicator, sender,
    receiver, tag), the k-th send (stream order) and the k-th receive (posting order:
    the MpiRecv, or the MpiIrecvRequest of an MpiIrecv) have the same length.

usage: otf2_check.py ARCHIVE.otf2 DUMP.jsonl [--reduced] [--drop-recv N]
--drop-recv N ignores the N-th receive, as if the exporter had lost it (the test shows
that the check then fails). Exit 0 when everything holds, 1 otherwise."""
import json
import sys

import otf2


def expected_full(dump):
    exp = dict(enter=0, send=0, recv=0, coll=0, aggr=0)
    reqs = {}  # (rank, req) -> 'send' | 'recv' | None
    for d in dump:
        r, name = d["rank"], d["name"]
        if name in ("MARKER", "STOPPED"):
            continue
        exp["enter"] += 1
        if name == "FLUSH":
            continue
        base = name[4:] if name.startswith("MPI_") else name
        if base.endswith("_c"):
            base = base[:-2]
        init = base.endswith("_init")
        probe = "probe" in base.lower()
        if "peer" in d and "comm" in d:
            if "req" in d:
                reqs[(r, d["req"])] = ("send", init, d["peer"])
                if not init and d["peer"] >= 0:
                    exp["send"] += 1
            elif d["peer"] >= 0:
                exp["send"] += 1
        elif "req" in d and ("comm" in d or "msg" in d) and not ("seq" in d or "newcomm" in d or "file" in d):
            reqs[(r, d["req"])] = ("recv", init, None)
        if "src" in d and not probe and d["src"] >= 0:
            exp["recv"] += 1
        for q in d.get("started", []):
            k = reqs.get((r, q))
            if k and k[1] and k[0] == "send" and k[2] >= 0:
                exp["send"] += 1
        for c in d.get("done", []):
            k = reqs.get((r, c["req"]))
            if k and k[0] == "recv" and not c["flags"] & 2 and c["peer"] >= 0:
                exp["recv"] += 1
        if "seq" in d and "req" not in d and "newcomm" not in d:
            exp["coll"] += 1
    return exp


def expected_reduced(dump):
    exp = dict(enter=0, send=0, recv=0, coll=0, aggr=0)
    prev = {}
    for d in dump:
        r = d["rank"]
        if r in prev and d["enter"] > prev[r]:
            exp["aggr"] += 1
        if r not in prev or d["exit"] > prev[r] or d["kind"] == "START":
            prev[r] = d["exit"]
        if d["kind"] in ("CAND", "COMP", "NBCINIT"):
            exp["enter"] += 1
        if d["kind"] == "COMP":
            exp["send"] += len(d["msgs"])
            exp["recv"] += len(d["msgs"])
    return exp


def main(argv):
    reduced = "--reduced" in argv
    drop = None
    if "--drop-recv" in argv:
        drop = int(argv[argv.index("--drop-recv") + 1])
    path, dumpfile = argv[1], argv[2]
    with open(dumpfile) as f:
        dump = [json.loads(line) for line in f if line.strip()]
    exp = expected_reduced(dump) if reduced else expected_full(dump)
    got = dict(enter=0, leave=0, send=0, recv=0, coll=0, collend=0, aggr=0)
    errors = []
    last, stack = {}, {}
    sends, recvs = {}, {}
    pending = {}  # (location, request) -> posting position
    pos = 0
    nrecv = 0

    def who(comm, rank):
        m = comm.group.members[rank]
        return m.name if hasattr(m, "name") else str(m)

    with otf2.reader.open(path) as tr:
        for loc, ev in tr.events:
            pos += 1
            t = ev.time
            if loc.name in last and t < last[loc.name]:
                errors.append("%s: time %d after %d" % (loc.name, t, last[loc.name]))
            last[loc.name] = t
            k = type(ev).__name__
            if k == "Enter":
                stack.setdefault(loc.name, []).append(ev.region.name)
                if ev.region.name == "vtrace:aggregated":
                    got["aggr"] += 1
                else:
                    got["enter"] += 1
            elif k == "Leave":
                got["leave"] += 1
                s = stack.get(loc.name)
                if not s or s.pop() != ev.region.name:
                    errors.append("%s: Leave %s without its Enter" % (loc.name, ev.region.name))
            elif k in ("MpiSend", "MpiIsend"):
                got["send"] += 1
                key = (ev.communicator.name, loc.name, who(ev.communicator, ev.receiver), ev.msg_tag)
                sends.setdefault(key, []).append(ev.msg_length)
            elif k == "MpiIrecvRequest":
                pending[(loc.name, ev.request_id)] = pos
            elif k in ("MpiRecv", "MpiIrecv"):
                nrecv += 1
                if nrecv == drop:
                    continue
                got["recv"] += 1
                p = pos if k == "MpiRecv" else pending.pop((loc.name, ev.request_id), None)
                if p is None:
                    errors.append("%s: MpiIrecv of request %d without its MpiIrecvRequest" % (loc.name, ev.request_id))
                    p = pos
                key = (ev.communicator.name, who(ev.communicator, ev.sender), loc.name, ev.msg_tag)
                recvs.setdefault(key, []).append((p, ev.msg_length))
            elif k == "MpiCollectiveBegin":
                got["coll"] += 1
            elif k == "MpiCollectiveEnd":
                got["collend"] += 1
    for l, s in stack.items():
        if s:
            errors.append("%s: %d regions never left" % (l, len(s)))
    for key in set(sends) | set(recvs):
        a = sends.get(key, [])
        b = [n for _, n in sorted(recvs.get(key, []))]
        if len(a) != len(b):
            errors.append("comm %s, %s -> %s, tag %d: %d sends, %d receives" % (key + (len(a), len(b))))
        elif a != b:
            errors.append("comm %s, %s -> %s, tag %d: lengths differ: sends %s, receives %s" % (key + (a, b)))
    for what in ("enter", "send", "recv", "coll", "aggr"):
        if got[what] != exp[what]:
            errors.append("%s events: %d in the archive, %d expected from the dump" % (what, got[what], exp[what]))
    if got["leave"] != got["enter"] + got["aggr"]:
        errors.append("%d Leave for %d Enter" % (got["leave"], got["enter"] + got["aggr"]))
    if got["collend"] != got["coll"]:
        errors.append("%d MpiCollectiveEnd for %d MpiCollectiveBegin" % (got["collend"], got["coll"]))
    for e in errors[:20]:
        print("otf2_check: " + e)
    print("otf2_check: %s: %d Enter (+%d aggregated), %d sends, %d receives, %d collectives: %s"
          % (path, got["enter"], got["aggr"], got["send"], got["recv"], got["coll"], "FAILED" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
