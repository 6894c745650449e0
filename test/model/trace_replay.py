#!/usr/bin/env python3
"""Self-test of the oracle bridge: a what-if full replay (model.md §2-§3, the rules of
mc.py's full_replay with sync_post=True) computed from the exported trace files alone,
with no access to mc.py. If its answers equal mc.py's (expected.jsonl), the trace
(records, matching, configuration lines) and the scenario text hold everything the C
replay needs, under the mapping written down in mc_export.py.

usage: trace_replay.py --scenario-file FILE DIR      JSON Lines like `vtrace whatif --json`
       trace_replay.py --batch CASEDIR...           for each mc_export.py case directory,
                                                    CASEDIR/trace + scenarios.txt -> got.jsonl

It reads what vtwrite.py writes (format 1.0, raw codec; not a general reader) and
interprets the calls the way the C replay has to:
  * sequence numbers: record i is 2i+1, the gap before it 2i (from the previous exit, or
    from record 0's enter); the rank ends at its last record's exit;
  * candidates: duration >= VTRACE_THRESHOLD, gaps and calls alike (gaps only with
    VTRACE_CANDIDATES=bursts);
  * sync message: MPI_Ssend/MPI_Issend, or a standard send (Send, Isend, Sendrecv's send
    half) of at least VTRACE_MODEL_TRDV bytes; lambda(s) = L + G*s from the
    configuration text; lambda_m = min(lambda(s), E - S), E = exit of the call that
    completes the receive (for a probed message: the probe's), which may be negative;
  * MPI_Probe is the completion of the message it matched: the first later MPI_Recv on
    the rank with the probe's (communicator, source, tag); that Recv is a local event;
  * matching: FIFO per (communicator id, source, destination, tag) in call order for
    sends and posting order for receives (a probed message: the probe's position);
  * P_q (posting call) of a received message: the Recv, Irecv or Sendrecv that posted
    it, for a probed message the probe (as mc.py);
  * MPI_Allreduce: gate of every member of the communicator (RANKDEFS member list),
    matched by (communicator id, q);
  * MPI_Wait* and MPI_Test* complete the receives (flag bit 0) and, for synchronous Isend/Issend,
    the send side; eager sends are local. Everything else is local.
Standard library only.
"""
import argparse
import json
import os
import struct
import sys
import zlib


# ---------------------------------------------------------------- decoding

class Buf:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def uvar(self):
        n = 0
        shift = 0
        while True:
            b = self.d[self.p]
            self.p += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    def svar(self):
        u = self.uvar()
        return (u >> 1) ^ -(u & 1)

    def str(self):
        n = self.uvar()
        s = self.d[self.p:self.p + n].decode("utf-8")
        self.p += n
        return s

    def done(self):
        return self.p >= len(self.d)


def blocks(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, major, minor, value = data[:8], *struct.unpack("<HHI", data[8:16])
    if major not in (1, 2):  # 2.0 changed RANKDEFS only (read_trace reads 1.x's)
        raise ValueError("%s: major version %d" % (path, major))
    off = 16
    out = []
    while off < len(data):
        bmagic, btype, codec, _, stored, raw, crc, nrec = struct.unpack("<IBBHIIII", data[off:off + 24])
        if bmagic != 0x4B4C4256 or codec != 0:
            raise ValueError("%s: offset %d: unsupported block (magic %x codec %d)" % (path, off, bmagic, codec))
        payload = data[off + 24:off + 24 + stored]
        if zlib.crc32(payload) & 0xFFFFFFFF != crc:
            raise ValueError("%s: offset %d: CRC mismatch" % (path, off))
        out.append((btype, payload, nrec))
        off += 24 + stored
    return magic, value, out


def read_trace(d):
    _, nranks, bl = blocks(os.path.join(d, "vtrace.defs"))
    g = Buf(bl[0][1])
    g.str()
    g.str()
    config = g.str()
    ranks = []
    for r in range(nranks):
        path = os.path.join(d, "rank-%06d.vte" % r)
        _, rank, bl = blocks(path)
        with open(path, "rb") as f:
            major = struct.unpack("<H", f.read(10)[8:10])[0]
        funcs = []
        recs = []
        comms = []
        for btype, payload, nrec in bl:
            b = Buf(payload)
            if btype == 1:
                funcs = [(b.str(), b.str()) for _ in range(b.uvar())]
            elif btype == 2:
                first = b.uvar()
                assert first == len(recs)
                prev = b.svar()
                for _ in range(nrec):
                    code = b.uvar()
                    enter = prev + b.svar()
                    exit_ = enter + b.uvar()
                    prev = exit_
                    if code < 16:
                        raise ValueError("special records are not expected here")
                    name, layout = funcs[code - 16]
                    b.uvar()  # call site
                    f = {}
                    for l in layout:
                        if l in "cbBqrmf":
                            f[l] = b.uvar()
                        elif l in "nptPToO":
                            f[l] = b.svar()
                        elif l == "R":
                            f[l] = [b.uvar() for _ in range(b.uvar())]
                        elif l == "k":
                            f[l] = [(b.uvar(), b.uvar(), b.svar(), b.svar(), b.uvar()) for _ in range(b.uvar())]
                    recs.append(dict(name=name, enter=enter, exit=exit_, f=f))
            elif btype == 3:
                if major != 1:
                    raise ValueError("rank %d: RANKDEFS of format %d.x: only 1.x's are read here" % (r, major))
                for _ in range(b.uvar()):
                    b.uvar(); b.str(); b.uvar(); b.str()
                for _ in range(b.uvar()):
                    cid = b.uvar()
                    b.uvar()
                    members = [b.uvar() for _ in range(b.uvar())]
                    [b.uvar() for _ in range(b.uvar())]
                    b.svar()
                    b.str()
                    comms.append((cid, members))
        ranks.append(dict(recs=recs, comms=comms))
    return config, ranks


def parse_config(text):
    kv = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            kv[k] = v
    ns = lambda s: int(s[:-2]) if s.endswith("ns") else int(s)
    return dict(theta=ns(kv["VTRACE_THRESHOLD"]), L=ns(kv["VTRACE_MODEL_L"]), G=ns(kv["VTRACE_MODEL_G"]),
                T_rdv=int(kv["VTRACE_MODEL_TRDV"]), cand_calls=kv.get("VTRACE_CANDIDATES", "all") == "all")


# ---------------------------------------------------------------- model events

SENDS = {"MPI_Send": True, "MPI_Ssend": True, "MPI_Isend": False, "MPI_Issend": False}


def build(config, ranks):
    prm = parse_config(config)
    P = len(ranks)
    msgs = []
    sendq = {}  # key -> [msg index] in call order
    recvs = []  # (key, post index, rank, completing event, posting event)
    evs = []
    for r, rk in enumerate(ranks):
        comm = lambda i: rk["comms"][i][0]
        ev = []
        reqs = {}
        probes = []
        prev = rk["recs"][0]["enter"]
        for i, rec in enumerate(rk["recs"]):
            ev.append(dict(type="burst", seq=2 * i, start=prev, end=rec["enter"]))
            e = dict(type="call", seq=2 * i + 1, name=rec["name"], enter=rec["enter"], exit=rec["exit"],
                     sent=[], rcvd=[], ssync=[], coll=None, bsync=False)
            ev.append(e)
            prev = rec["exit"]
            n, f = rec["name"], rec["f"]

            def send(blocking, ssend):
                m = len(msgs)
                sync = ssend or f["b"] >= prm["T_rdv"]
                msgs.append(dict(src=r, dst=f["p"], size=f["b"], sync=sync, S=e["enter"], sseq=e["seq"]))
                sendq.setdefault((comm(f["c"]), r, f["p"], f["t"]), []).append(m)
                e["sent"].append(m)
                if blocking and sync:
                    e["ssync"].append(m)
                    e["bsync"] = True
                return m

            if n in SENDS:
                m = send(SENDS[n], n in ("MPI_Ssend", "MPI_Issend"))
                if not SENDS[n]:
                    reqs[f["r"]] = ("s", m)
            elif n == "MPI_Irecv":
                reqs[f["r"]] = ("r", e, i)
            elif n == "MPI_Probe":
                probes.append(((comm(f["c"]), f["P"], f["T"]), e, i))
            elif n == "MPI_Recv":
                key = (comm(f["c"]), f["P"], r, f["T"])
                pr = [p for p in probes if p[0] == (key[0], key[1], key[3])]
                if pr:
                    probes.remove(pr[0])
                    recvs.append((key, pr[0][2], r, pr[0][1], pr[0][1]))  # the probe completes it
                else:
                    recvs.append((key, i, r, e, e))
            elif n == "MPI_Sendrecv":
                m = send(False, False)
                if msgs[m]["sync"]:
                    e["ssync"].append(m)
                recvs.append(((comm(f["c"]), f["P"], r, f["T"]), i, r, e, e))
            elif n in ("MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"):
                for (req, flg, peer, tag, nbytes) in f["k"]:
                    q = reqs.pop(req)
                    if flg & 1:
                        _, pe, pi = q
                        recvs.append(((comm(pe["_c"]), peer, r, tag), pi, r, e, pe))
                    elif msgs[q[1]]["sync"]:
                        e["ssync"].append(q[1])
            elif n == "MPI_Allreduce":
                cid, members = rk["comms"][f["c"]]
                e["coll"] = (cid, f["q"], tuple(members))
            e["_c"] = f.get("c", 0)
        evs.append(ev)
    # matching: k-th receive of a key (posting order) <- k-th send of that key
    recvs.sort(key=lambda x: (x[0], x[1]))
    used = {}
    for key, post, r, ce, pe in recvs:
        k = used.get(key, 0)
        used[key] = k + 1
        m = sendq[key][k]
        mm = msgs[m]
        ce["rcvd"].append(m)
        mm["post"], mm["pseq"] = pe["enter"], pe["seq"]
        mm["E"] = ce["exit"]
    for key, q in sendq.items():
        assert used.get(key, 0) == len(q), "unmatched send %s" % (key,)
    for ev in evs:
        for e in ev:
            if e["type"] == "burst":
                e["cand"] = e["end"] - e["start"] >= prm["theta"]
            else:
                e["cand"] = e["exit"] - e["enter"] >= prm["theta"] and prm["cand_calls"]
                e["completion"] = bool(e["rcvd"] or e["ssync"] or e["coll"])
    return prm, msgs, evs


def replay(prm, msgs, evs, delta):
    P = len(evs)
    lam = lambda m, E: min(prm["L"] + prm["G"] * msgs[m]["size"], E - msgs[m]["S"])
    idx = [0] * P
    d = [0] * P
    msgD = {}
    arr = {}
    ends = [None] * P
    done = 0
    while done < P:
        progress = False
        for r in range(P):
            ev = evs[r]
            while idx[r] < len(ev):
                e = ev[idx[r]]
                db = d[r]
                if e["type"] == "burst":
                    if e["cand"]:
                        d[r] = db + delta.get((r, e["seq"]), 0)
                    idx[r] += 1
                    progress = True
                    continue
                arr[(r, e["seq"])] = (e["enter"], db)
                for m in e["sent"]:
                    msgD[m] = db
                base = db
                if e["completion"]:
                    cons = []
                    ok = True
                    if e["coll"]:
                        cid, q, members = e["coll"]
                        arr[("C", cid, q, r)] = (e["enter"], db)
                        if all(("C", cid, q, k) in arr for k in members):
                            cons = [arr[("C", cid, q, k)] for k in members]
                        else:
                            ok = False
                    else:
                        if not e["bsync"]:
                            cons.append((e["enter"], db))
                        for m in e["rcvd"]:
                            if m not in msgD:
                                ok = False
                                break
                            cons.append((msgs[m]["S"] + lam(m, e["exit"]), msgD[m]))
                        if ok:
                            for m in e["ssync"]:
                                mm = msgs[m]
                                a = arr.get((mm["dst"], mm["pseq"]))
                                if a is None or m not in msgD:
                                    ok = False
                                    break
                                cons.append((mm["S"] + lam(m, mm["E"]), msgD[m]))
                                cons.append(a)
                    if not ok:
                        break
                    M = max(T for T, _ in cons)
                    base = min(D + M - T for T, D in cons)
                da = base
                if e["cand"]:
                    da = min(base + delta.get((r, e["seq"]), 0), db + (e["exit"] - e["enter"]))
                d[r] = da
                idx[r] += 1
                progress = True
                if idx[r] == len(ev):
                    ends[r] = e["exit"] - da
                    done += 1
        if not progress and done < P:
            raise RuntimeError("replay stuck")
    return ends


def parse_scenario(line, evs):
    delta = {}
    for item in line.split():
        rs, sh = item.split("=")
        r, s = map(int, rs.split(":"))
        e = evs[r][s]
        assert e["seq"] == s and e["cand"], "not a candidate: %s" % item
        dur = (e["end"] - e["start"]) if e["type"] == "burst" else (e["exit"] - e["enter"])
        if sh == "elim":
            v = dur
        elif sh.endswith("ns"):
            v = int(sh[1:-2])
        elif sh.endswith("%"):
            v = dur * int(sh[1:-1]) // 100
        else:
            raise ValueError("bad shortening %r" % sh)
        assert 0 <= v <= dur
        delta[(r, s)] = v
    return delta


def whatif(trace_dir, scenario_file, out):
    config, ranks = read_trace(trace_dir)
    prm, msgs, evs = build(config, ranks)
    with open(scenario_file) as f:
        lines = f.read().splitlines()
    for line in lines:
        ends = replay(prm, msgs, evs, parse_scenario(line, evs))
        out.write(json.dumps({"scenario": line, "predicted_ns": max(ends), "rank_end_ns": ends},
                             separators=(",", ":")) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario-file")
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    if not a.batch:
        if not a.scenario_file or len(a.dirs) != 1:
            ap.error("--scenario-file FILE DIR, or --batch CASEDIR...")
        whatif(a.dirs[0], a.scenario_file, sys.stdout)
        return 0
    for d in a.dirs:
        with open(os.path.join(d, "got.jsonl"), "w") as out:
            whatif(os.path.join(d, "trace"), os.path.join(d, "scenarios.txt"), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
