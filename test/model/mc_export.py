#!/usr/bin/env python3
"""Oracle bridge: exports random programs of the reference simulation
(shared/design/reference/mc.py) as vtrace traces, with what-if scenarios and the
predictions mc.py's full replay makes for them, so that `vtrace whatif` can be
compared with mc.py on thousands of programs (test/model/check_whatif.sh).

usage: mc_export.py --out DIR [--seeds A-B | SEED...] [--variants default,quant,skew]
                    [--nscen N] [--runtime] [--broken] [--per-block N]

For every seed and variant it writes DIR/s<SEED>-<VARIANT>/:
  trace/           vtrace trace directory, format 1.0 (doc/format.md), via vtwrite.py
  scenarios.txt    one scenario per line (syntax below); the first line, empty, is the baseline
  expected.jsonl   one JSON object per scenario, same order:
                   {"scenario": TEXT, "predicted_ns": T', "rank_end_ns": [end of each rank],
                    "start_ns": earliest record enter, "measured_end_ns": largest measured exit}
                   from mc.full_replay(tr, delta, sync_post=True): T' and the ends are
                   absolute times (mc.py's ends are `exit - d` of the 'fin' event)
  broken.jsonl     (--broken) the same from a deliberately wrong rule (λ_m without its cap
                   E - S), which the comparison must be able to tell apart
  runtime.json     (--runtime) mc.runtime(tr, opt)'s reduced records and the run-time
                   polynomials, in vtrace sequence numbers, for the reduced-trace tests
                   (the reduced-trace format does not exist yet). Messages are spelled
                   out (sender, send seq, S, size, tag, communicator, P_q and its seq);
                   variables are "v:R:SEQ" (candidate), "S:R:SEQ", "O:R:SEQ", "P:R:SEQ"
                   and "C:COMMID:N" (atoms of model.md §4). The MPI_Init record and the
                   gap before it (seq 0, 1) have d = 0 and are not listed.
and prints the case directories, one a line. Variants: default = mc.DEFAULT_OPT,
quant = DEFAULT_OPT with quant=1000 (1 us clock), skew = DEFAULT_OPT with skew=20000
(+-20 us constant error per rank, simply part of the local times: the trace says
same clock, offsets 0). `--variants default:quant=5000:skew=100` sets options freely.

Scenario syntax (the C side implements the same): space-separated items
RANK:SEQ=SHORTENING, SHORTENING one of `elim` (delta = the event's duration), `-Nns`
(delta = N ns, N <= duration) or `-P%` (delta = floor(duration * P / 100)); an empty
line is the baseline. Lines hold the baseline, every candidate eliminated alone,
mc.scenarios()'s random scenarios (delta -> -Nns) and two percentage scenarios.

Mapping mc.py -> trace (model.md sequence numbers):
  mc.py numbers each rank's events burst, call, burst, call, ...: call i has seq 2i+1,
  the burst before it 2i, burst 0 starting at 0 (at the first call's enter with skew).
  In the trace, record i has seq 2i+1 and the gap before it seq 2i, the gap before
  record 0 starting at record 0's enter. So every rank first gets an MPI_Init record with
  enter = exit = the start of mc.py's burst 0: then mc.py's (rank, s) is vtrace's
  (rank, s + 2) (SEQ_SHIFT), in scenarios and in runtime.json alike.
  Calls: send -> MPI_Send, or MPI_Ssend for a synchronous message below T_rdv (the replay
  takes sync from T_rdv for standard sends, from the name for Ssend/Issend); isend ->
  MPI_Isend/MPI_Issend; irecv -> MPI_Irecv; wait -> MPI_Waitall (one completion per
  request); recv, precv -> MPI_Recv; probe -> MPI_Probe; sendrecv -> MPI_Sendrecv;
  coll -> MPI_Allreduce on a communicator with exactly mc.py's members (MPI_COMM_WORLD,
  id 1, when all ranks; else id = FNV-1a of the member list), q = mc.py's op[2]; io ->
  MPI_File_write; fin -> MPI_Finalize. Tag = message id (unique), so the reader's FIFO
  matching pairs exactly mc.py's messages. Model parameters go to the configuration
  text: VTRACE_THRESHOLD (theta), VTRACE_CANDIDATES (all, or bursts when mc.py's
  cand_calls is off), VTRACE_MODEL_L/G (lambda(s) = L + G*s, mc.py's tr.L,
  tr.G), VTRACE_MODEL_TRDV, VTRACE_MODEL_M, VTRACE_MODEL_K.

mc.py is imported from $VTRACE_SHARED/design/reference (default: <repo top>/../shared).
Exit 77 when it is missing. Standard library only.
"""
import argparse
import json
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vtwrite  # noqa: E402

SEQ_SHIFT = 2  # vtrace seq = mc.py seq + 2 (the leading MPI_Init record and the gap before it)

VARIANTS = {
    "default": {},
    "quant": {"quant": 1000},
    "skew": {"skew": 20000},
}

FUNCS = [
    ("MPI_Init", ""),
    ("MPI_Send", "cptb"),
    ("MPI_Ssend", "cptb"),
    ("MPI_Isend", "cptbr"),
    ("MPI_Issend", "cptbr"),
    ("MPI_Irecv", "cr"),
    ("MPI_Recv", "cPTB"),
    ("MPI_Probe", "cPTB"),
    ("MPI_Waitall", "k"),
    ("MPI_Sendrecv", "cptbPTB"),
    ("MPI_Allreduce", "coqbB"),
    ("MPI_File_write", "fOb"),
    ("MPI_Finalize", ""),
]

COLL_BYTES = 8
IO_BYTES = 4096


def load_mc():
    shared = os.environ.get("VTRACE_SHARED") or os.path.join(HERE, "..", "..", "..", "shared")
    ref = os.path.join(shared, "design", "reference")
    if not os.path.isfile(os.path.join(ref, "mc.py")):
        print("mc_export.py: %s/mc.py not found; skipping" % ref, file=sys.stderr)
        sys.exit(77)
    sys.path.insert(0, ref)
    import mc
    return mc


mc = None


def comm_id(members, nranks):
    """MPI_COMM_WORLD (1) for all ranks; else FNV-1a of the member list, top bit clear
    (2^63 + r are the MPI_COMM_SELF ids)."""
    members = tuple(members)
    if members == tuple(range(nranks)):
        return 1
    h = vtwrite.fnv1a64(b"mc.py comm" + b"".join(struct.pack("<I", m) for m in members)) & ((1 << 63) - 1)
    return h if h > 1 else h + 2


def call_ops(g, r):
    return [op for op in g.progs[r] if op[0] != "comp"]


def build_writer(g, tr, opt):
    P = tr.P
    T_rdv = opt["T_rdv"]
    msgs = tr.msgs
    w = vtwrite.TraceWriter(P, FUNCS, version="mc_export.py", mpi_version="mc.py reference simulation")
    world = tuple(range(P))
    subs = sorted({op[1] for r in range(P) for op in g.progs[r] if op[0] == "coll" and tuple(op[1]) != world})
    for r in range(P):
        rk = w.rank(r)
        rk.comms.append(vtwrite.Comm(1, world, how="world"))
        rk.comms.append(vtwrite.Comm((1 << 63) + r, [r], how="self"))
        cidx = {world: 0}
        for s in subs:
            if r in s:
                cidx[s] = len(rk.comms)
                rk.comms.append(vtwrite.Comm(comm_id(s, P), s, how="MPI_Comm_split", parent=0))
        rk.files.append(("mc_io.dat", 1))
        evs = tr.ev[r]
        calls = evs[1::2]
        ops = call_ops(g, r)
        assert len(calls) == len(ops) and all(e["kind"] == op[0] for e, op in zip(calls, ops))
        assert all(e["type"] == "burst" for e in evs[0::2]) and len(evs) == 2 * len(calls)
        t0 = evs[0]["start"]
        rk.record("MPI_Init", t0, t0)
        req = {}  # mc.py request id -> rank-local request id (from 1)

        def send_name(m, blocking):
            mm = msgs[m]
            big = mm["size"] >= T_rdv
            if mm["sync"] and not big:
                return "MPI_Ssend" if blocking else "MPI_Issend"
            assert mm["sync"] == big, "standard send whose sync status the replay cannot derive"
            return "MPI_Send" if blocking else "MPI_Isend"

        for e, op in zip(calls, ops):
            k = op[0]
            R, E = e["enter"], e["exit"]
            if k == "send":
                m = op[1]
                mm = msgs[m]
                rk.record(send_name(m, True), R, E, c=0, p=mm["dst"], t=m, b=mm["size"])
            elif k == "isend":
                m, rid = op[1], op[2]
                mm = msgs[m]
                req[rid] = len(req) + 1
                rk.record(send_name(m, False), R, E, c=0, p=mm["dst"], t=m, b=mm["size"], r=req[rid])
            elif k == "irecv":
                rid = op[2]
                req[rid] = len(req) + 1
                rk.record("MPI_Irecv", R, E, c=0, r=req[rid])
            elif k in ("recv", "precv", "probe"):
                m = op[1]
                mm = msgs[m]
                rk.record("MPI_Probe" if k == "probe" else "MPI_Recv", R, E, c=0, P=mm["src"], T=m, B=mm["size"])
            elif k == "wait":
                done = []
                for rid in op[1]:
                    kind, m = g.reqs[rid]
                    mm = msgs[m]
                    if kind == "r":
                        done.append((req[rid], 1, mm["src"], m, mm["size"]))
                    else:
                        done.append((req[rid], 0, mm["dst"], m, mm["size"]))
                rk.record("MPI_Waitall", R, E, k=done)
            elif k == "sendrecv":
                ms, mr = op[1], op[2]
                rk.record("MPI_Sendrecv", R, E, c=0, p=msgs[ms]["dst"], t=ms, b=msgs[ms]["size"],
                          P=msgs[mr]["src"], T=mr, B=msgs[mr]["size"])
            elif k == "coll":
                rk.record("MPI_Allreduce", R, E, c=cidx[tuple(op[1])], o=-1, q=op[2], b=COLL_BYTES, B=COLL_BYTES)
            elif k == "io":
                rk.record("MPI_File_write", R, E, f=0, O=-1, b=IO_BYTES)
            elif k == "fin":
                rk.record("MPI_Finalize", R, E)
            else:
                raise ValueError("unknown mc.py call kind %r" % k)
    return w


def config_text(tr, opt):
    return ("VTRACE_MODE=full\n"
            "VTRACE_THRESHOLD=%dns\n"
            "VTRACE_CANDIDATES=%s\n"
            "VTRACE_MODEL_L=%dns\n"
            "VTRACE_MODEL_G=%dns\n"
            "VTRACE_MODEL_TRDV=%d\n"
            "VTRACE_MODEL_M=%d\n"
            "VTRACE_MODEL_K=%d\n" % (tr.theta, "all" if opt["cand_calls"] else "bursts", tr.L, tr.G, opt["T_rdv"], opt["m"], opt["K"]))


# ---------------------------------------------------------------- scenarios

def scenario_list(tr, seed, nscen):
    """[(text, {(rank, mc seq): delta})]; text in vtrace sequence numbers."""
    dur = {(r, s): du for (r, s, du) in tr.cands}

    def text(items):
        return " ".join("%d:%d=%s" % (r, s + SEQ_SHIFT, sh) for (r, s), sh in sorted(items.items()))

    out = []
    rng = random.Random(seed * 7 + 1)  # as mc.check_case
    scs = mc.scenarios(tr, rng, nscen)
    ncand = len(tr.cands)
    for i, sc in enumerate(scs):
        if i == 0:
            assert not sc
            out.append(("", {}))
        elif i <= ncand:
            (key, d), = sc.items()
            assert d == dur[key]
            out.append((text({key: "elim"}), dict(sc)))
        else:
            out.append((text({key: "-%dns" % d for key, d in sc.items()}), dict(sc)))
    if ncand:
        half = {key: du * 50 // 100 for key, du in dur.items()}
        out.append((text({key: "-50%" for key in dur}), half))
        prng = random.Random(seed * 13 + 5)
        pct = {key: prng.choice([0, 1, 10, 33, 67, 99, 100]) for key in dur if prng.random() < 0.6}
        out.append((text({key: "-%d%%" % p for key, p in pct.items()}), {key: dur[key] * p // 100 for key, p in pct.items()}))
    return out


def expected(tr, scs, broken=False):
    """JSON lines. predicted_ns is T' = the largest predicted end (model.md §6), an absolute
    time like rank_end_ns; start_ns (the earliest record enter, the leading MPI_Init
    records) and measured_end_ns (the largest measured exit) let the comparison check
    outputs that report durations from the start as well."""
    lines = []
    start = min(tr.ev[r][0]["start"] for r in range(tr.P))
    measured = max(tr.ev[r][-1]["exit"] for r in range(tr.P))
    saved = mc.lam
    if broken:
        mc.lam = lambda tr_, m, E: tr_.L + tr_.G * tr_.msgs[m]["size"]
    try:
        for txt, delta in scs:
            ends, _ = mc.full_replay(tr, delta, sync_post=True)
            lines.append(json.dumps({"scenario": txt, "predicted_ns": max(ends), "rank_end_ns": ends,
                                     "start_ns": start, "measured_end_ns": measured}, separators=(",", ":")))
    finally:
        mc.lam = saved
    return lines


# ---------------------------------------------------------------- run-time records

def var_name(v, nranks):
    if v[0] == "C":
        return "C:%d:%d" % (comm_id(v[1], nranks), v[2])
    return "%s:%d:%d" % (v[0], v[1], v[2] + SEQ_SHIFT)  # v (candidate), S, O, P atoms


def poly_json(p, nranks):
    return [[c, sorted(var_name(v, nranks) for v in S)] for (c, S) in p]


def msg_json(tr, m):
    mm = tr.msgs[m]
    out = {"id": m, "src": mm["src"], "dst": mm["dst"], "tag": m, "comm_id": 1, "size": mm["size"],
           "sync": mm["sync"], "S": mm["S"], "send_seq": mm["sseq"] + SEQ_SHIFT}
    if "pseq" in mm:
        out["post"] = mm["post"]
        out["post_seq"] = mm["pseq"] + SEQ_SHIFT
    if "rseq" in mm:
        out["recv_seq"] = mm["rseq"] + SEQ_SHIFT
    return out


def runtime_json(seed, variant, tr, opt):
    recs, polys, stats, stale = mc.runtime(tr, opt)
    ranks = []
    for r in range(tr.P):
        out = []
        for rc in recs[r]:
            j = {"t": rc["t"], "seq": rc["seq"] + SEQ_SHIFT}
            if rc["t"] == "cand":
                j.update(event="burst" if rc["seq"] % 2 == 0 else "call", start=rc["start"], end=rc["end"])
            elif rc["t"] == "fin":
                j.update(E=rc["E"], cand=rc["cand"])
            else:
                j.update(R=rc["R"], Rstar=rc["Rstar"], E=rc["E"], cand=rc["cand"], bsync=rc["bsync"],
                         rcvd=[msg_json(tr, m) for m in rc["rcvd"]],
                         ssync=[msg_json(tr, m) for m in rc["ssync"]],
                         coll=None if not rc["coll"] else
                         {"comm_id": comm_id(rc["coll"][0], tr.P), "members": list(rc["coll"][0]), "n": rc["coll"][1]})
            out.append(j)
        ranks.append(out)
    pj = {"%d:%d" % (r, s + SEQ_SHIFT): {"before": poly_json(b, tr.P), "after": poly_json(a, tr.P)}
          for (r, s), (b, a) in sorted(polys.items())}
    return {"seed": seed, "variant": variant, "seq_shift": SEQ_SHIFT,
            "opt": {k: v for k, v in opt.items()}, "L": tr.L, "G": tr.G,
            "records": ranks, "polys": pj, "stats": stats,
            "stale_messages": sorted(stale)}


# ---------------------------------------------------------------- driver

def parse_variant(spec):
    parts = spec.split(":")
    name = parts[0]
    if name not in VARIANTS:
        raise SystemExit("mc_export.py: unknown variant %r (known: %s)" % (name, ", ".join(VARIANTS)))
    opt = dict(mc.DEFAULT_OPT)
    opt.update(VARIANTS[name])
    for kv in parts[1:]:
        k, v = kv.split("=")
        if k not in opt:
            raise SystemExit("mc_export.py: unknown mc.py option %r" % k)
        opt[k] = (v in ("1", "true", "True")) if isinstance(opt[k], bool) else type(opt[k])(v)
    label = spec.replace(":", "_").replace("=", "")
    return label, opt


def export_case(out, seed, label, opt, nscen, want_runtime, broken, per_block):
    g, tr = mc.make_case(seed, opt)
    d = os.path.join(out, "s%d-%s" % (seed, label))
    w = build_writer(g, tr, opt)
    w.write(os.path.join(d, "trace"), config_text(tr, opt), per_block=per_block)
    scs = scenario_list(tr, seed, nscen)
    exp = expected(tr, scs)
    base = json.loads(exp[0])["rank_end_ns"]
    meas = [tr.ev[r][-1]["exit"] for r in range(tr.P)]
    if base != meas:
        raise SystemExit("mc_export.py: seed %d %s: mc.py's baseline %s differs from the measured ends %s"
                         % (seed, label, base, meas))
    with open(os.path.join(d, "scenarios.txt"), "w") as f:
        f.write("".join(txt + "\n" for txt, _ in scs))
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        f.write("".join(l + "\n" for l in exp))
    if broken:
        with open(os.path.join(d, "broken.jsonl"), "w") as f:
            f.write("".join(l + "\n" for l in expected(tr, scs, broken=True)))
    if want_runtime:
        with open(os.path.join(d, "runtime.json"), "w") as f:
            json.dump(runtime_json(seed, label, tr, opt), f, separators=(",", ":"))
    return d


def parse_seeds(args):
    seeds = []
    for a in args:
        if "-" in a:
            lo, hi = a.split("-")
            seeds.extend(range(int(lo), int(hi) + 1))
        else:
            seeds.append(int(a))
    return seeds


def main():
    global mc
    ap = argparse.ArgumentParser(description="export mc.py random programs as vtrace traces with expected what-if answers")
    ap.add_argument("--out", required=True, help="output directory (cases go to OUT/s<SEED>-<VARIANT>/)")
    ap.add_argument("--seeds", action="append", default=[], help="A-B range (repeatable)")
    ap.add_argument("--variants", default="default", help="comma-separated: default, quant, skew, or NAME:opt=value:...")
    ap.add_argument("--nscen", type=int, default=12, help="random scenarios per case (mc.scenarios' n)")
    ap.add_argument("--runtime", action="store_true", help="also write runtime.json (mc.runtime's reduced records)")
    ap.add_argument("--broken", action="store_true", help="also write broken.jsonl (uncapped lambda_m)")
    ap.add_argument("--per-block", type=int, default=48, help="records per EVENTS block")
    ap.add_argument("seed", nargs="*")
    a = ap.parse_args()
    mc = load_mc()
    seeds = parse_seeds(a.seeds + a.seed)
    if not seeds:
        ap.error("no seeds")
    variants = [parse_variant(v) for v in a.variants.split(",") if v]
    os.makedirs(a.out, exist_ok=True)
    for seed in seeds:
        for label, opt in variants:
            print(export_case(a.out, seed, label, opt, a.nscen, a.runtime, a.broken, a.per_block))
    return 0


if __name__ == "__main__":
    sys.exit(main())
