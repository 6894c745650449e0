"""vtrace compensate on hand-made traces with a known injected per-event cost (seed 001).

Each case gives measured times (a "true" trace with k x c added to the k-th call, and a
buffer flush's duration after it) and the hand-computed compensated times; the
compensated trace must hold them within 1 ns, and hbcheck must find happened-before.
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model"))
import vtwrite  # noqa: E402
from trace_replay import blocks, Buf  # noqa: E402

vtwrite.FORMAT_MINOR = 2  # RANKDEFS ends with the overhead fields
FUNCS = [("MPI_Init", ""), ("MPI_Finalize", ""), ("MPI_Test", ""), ("MPI_Send", "cptb"), ("MPI_Recv", "cPTB"),
         ("MPI_Barrier", "cq"), ("MPI_Bcast", "cbBoq")]


class Rank(vtwrite.Rank):
    ovh_ps = 0

    def flush(self, enter, exit_):
        self.records.append((None, int(enter), int(exit_), {}))

    def record(self, fname, enter, exit_, **fields):
        # a FLUSH sits before the call whose record triggered it but after its exit
        pending = self.records.pop() if self.records and self.records[-1][0] is None else None
        super().record(fname, enter, exit_, **fields)
        if pending:
            self.records.insert(len(self.records) - 1, pending)

    def _encode_record(self, rec, prev):
        if rec[0] is None:
            return vtwrite.uvar(1) + vtwrite.svar(rec[1] - prev) + vtwrite.uvar(rec[2] - rec[1])
        return super()._encode_record(rec, prev)

    def profile(self):
        keep = self.records
        self.records = [r for r in keep if r[0] is not None]
        try:
            return super().profile()
        finally:
            self.records = keep

    def rankdefs_payload(self):
        return super().rankdefs_payload() + vtwrite.uvar(self.ovh_ps) + vtwrite.uvar(0)


def writer(n, ovh_ps=0):
    w = vtwrite.TraceWriter(n, FUNCS)
    w.ranks = [Rank(w, r) for r in range(n)]
    for rk in w.ranks:
        rk.ovh_ps = ovh_ps
        rk.comms.append(vtwrite.Comm(1, range(n), how="world"))
    return w


def read_times(d, rank):
    """(code, enter, exit) of every record of RANK."""
    _, _, bl = blocks(os.path.join(d, "rank-%06d.vte" % rank))
    funcs, out = [], []
    for btype, payload, nrec in bl:
        b = Buf(payload)
        if btype == 1:
            funcs = [(b.str(), b.str()) for _ in range(b.uvar())]
        elif btype == 2:
            b.uvar()
            prev = b.svar()
            for _ in range(nrec):
                code = b.uvar()
                enter = prev + b.svar()
                exit_ = enter + b.uvar()
                prev = exit_
                if code >= 16:
                    b.uvar()
                    for l in funcs[code - 16][1]:
                        (b.uvar if l in "cbBqrmf" else b.svar)()
                out.append((code, enter, exit_))
    return out


FAILS = []


def check(name, got, want):
    for i, ((code, e, x), (we, wx)) in enumerate(zip(got, want)):
        if abs(e - we) > 1 or abs(x - wx) > 1:
            FAILS.append("%s: record %d: [%d, %d], expected [%d, %d]" % (name, i, e, x, we, wx))
    if len(got) != len(want):
        FAILS.append("%s: %d records, expected %d" % (name, len(got), len(want)))


def run(vt, *args):
    p = subprocess.run([vt, "compensate"] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        FAILS.append("compensate %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
        return p
    # the streamed compensation (the default) and the one with the trace in memory: the
    # same files, the same summary
    out = args[-1]
    mem = out + ".mem"
    shutil.rmtree(mem, ignore_errors=True)
    q = subprocess.run([vt, "compensate"] + list(args[:-1]) + [mem], capture_output=True, text=True,
                       env=dict(os.environ, VTRACE_TEST_COMPENSATE_IN_MEMORY="1"))
    if q.returncode != 0 or q.stdout.replace(mem, out) != p.stdout:
        FAILS.append("compensate %s in memory: exit %d, %r against %r" % (" ".join(args), q.returncode, q.stdout,
                                                                        p.stdout))
    for f in sorted(os.listdir(out)):
        if not filecmp.cmp(os.path.join(out, f), os.path.join(mem, f), shallow=False):
            FAILS.append("compensate %s: %s differs streamed and in memory" % (" ".join(args), f))
    return p


def hb(hbcheck, d, name):
    p = subprocess.run([hbcheck, d], capture_output=True, text=True)
    if p.returncode != 0:
        FAILS.append("%s: hbcheck: %s" % (name, p.stderr.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrace", required=True)
    ap.add_argument("--hbcheck", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    W = lambda n: os.path.join(a.work, n)  # noqa: E731

    # 1. local events, the overhead from RANKDEFS (37.5 ns per call) and a 5000 ns flush
    c = 37.5
    true = [(0, 100)] + [(300 + 250 * k, 340 + 250 * k) for k in range(1, 40)] + [(10500, 10510)]
    w = writer(1, ovh_ps=37500)
    rk = w.rank(0)
    shift, want = 0.0, []
    for k, (e, x) in enumerate(true):
        name = "MPI_Init" if k == 0 else ("MPI_Finalize" if k == len(true) - 1 else "MPI_Test")
        me, mx = round(e + shift), round(x + shift)
        if k == 20:  # the flush this call's record triggered: after its exit, before the next call
            rk.flush(mx + 3, mx + 5003)
        rk.record(name, me, mx)
        want.append((e, x))
        shift += c + (5000 if k == 20 else 0)
    want.insert(20, None)
    w.write(W("local"))
    run(a.vtrace, W("local"), W("local.out"))
    got = read_times(W("local.out"), 0)
    fl = got.pop(20)
    if fl[0] != 1 or fl[1] != fl[2] or not (want[21][1] <= fl[1] <= want[22][0]):
        FAILS.append("local: the FLUSH record is %r, expected zero long between its neighbours" % (fl,))
    want.pop(20)
    check("local", got, want)
    hb(a.hbcheck, W("local.out"), "local")

    # 2. m.1: the receiver waited (hand-computed, --overhead 10 --latency 0)
    w = writer(2)
    w.rank(0).record("MPI_Init", 0, 100)
    w.rank(0).record("MPI_Send", 1010, 1110, c=0, p=1, t=5, b=8)
    w.rank(0).record("MPI_Finalize", 2020, 2030)
    w.rank(1).record("MPI_Init", 0, 100)
    w.rank(1).record("MPI_Recv", 510, 1600, c=0, P=0, T=5, B=8)
    w.rank(1).record("MPI_Finalize", 1700, 1710)
    w.write(W("m1"))
    run(a.vtrace, "--overhead", "10", "--latency", "0", W("m1"), W("m1.out"))
    check("m.1 rank 0", read_times(W("m1.out"), 0), [(0, 100), (1000, 1100), (2000, 2010)])
    # recv_a = send_a + (recv_m - send_m) = 1000 + 590
    check("m.1 rank 1", read_times(W("m1.out"), 1), [(0, 100), (500, 1590), (1680, 1690)])
    hb(a.hbcheck, W("m1.out"), "m.1")

    # 3. m.2: the receive began after the send ended; the receiver had more calls, so
    # its compensated enter (500) precedes the compensated send (900): the lower bound
    # send_a + L = 950 applies (--overhead 100 --latency 50).
    w = writer(2)
    w.rank(0).record("MPI_Init", 0, 100)
    w.rank(0).record("MPI_Send", 1000, 1050, c=0, p=1, t=5, b=8)
    w.rank(0).record("MPI_Finalize", 2000, 2010)
    w.rank(1).record("MPI_Init", 0, 100)
    for k in range(5):
        w.rank(1).record("MPI_Test", 200 + 120 * k, 210 + 120 * k)
    w.rank(1).record("MPI_Recv", 1100, 1120, c=0, P=0, T=5, B=8)
    w.rank(1).record("MPI_Finalize", 1200, 1210)
    w.write(W("m2"))
    p = run(a.vtrace, "--overhead", "100", "--latency", "50", W("m2"), W("m2.out"))
    check("m.2 rank 0", read_times(W("m2.out"), 0), [(0, 100), (900, 950), (1800, 1810)])
    check("m.2 rank 1", read_times(W("m2.out"), 1),
          [(0, 100), (100, 110), (120, 130), (140, 150), (160, 170), (180, 190), (500, 950), (950, 960)])
    if "1 there before the receive" not in p.stdout:
        FAILS.append("m.2: the summary does not count one message there before the receive (m.2): %s" % p.stdout)
    hb(a.hbcheck, W("m2.out"), "m.2")
    # the upper bound instead: send_a + max(recv_m - send_m, L) = 900 + 120 = 1020
    run(a.vtrace, "--overhead", "100", "--latency", "50", "--m2", "upper", W("m2"), W("m2.up"))
    check("m.2 upper rank 1", read_times(W("m2.up"), 1)[6:8], [(500, 1020), (1020, 1030)])
    hb(a.hbcheck, W("m2.up"), "m.2 upper")
    # without the message rule the receive would end at 520, before the send (900)
    run(a.vtrace, "--overhead", "100", "--latency", "0", W("m2"), W("m2.l0"))
    check("m.2 L=0 rank 1", read_times(W("m2.l0"), 1)[6:7], [(500, 900)])

    # 4. collectives: a Barrier (eq. 13, --overhead 20) and a Bcast whose non-root
    # entered after the root left (1-to-n as m.2, --overhead 100)
    w = writer(3)
    for r, (be, bx, fe) in enumerate([(300, 1000, 1100), (900, 1010, 1200), (500, 1005, 1300)]):
        w.rank(r).record("MPI_Init", 0, 100)
        if r == 1:
            w.rank(r).record("MPI_Test", 200, 210)
        w.rank(r).record("MPI_Barrier", be, bx, c=0, q=0)
        w.rank(r).record("MPI_Finalize", fe, fe + 10)
    w.write(W("barrier"))
    run(a.vtrace, "--overhead", "20", "--latency", "0", W("barrier"), W("barrier.out"))
    check("barrier rank 0", read_times(W("barrier.out"), 0), [(0, 100), (280, 960), (1040, 1050)])
    check("barrier rank 1", read_times(W("barrier.out"), 1), [(0, 100), (180, 190), (860, 970), (1140, 1150)])
    check("barrier rank 2", read_times(W("barrier.out"), 2), [(0, 100), (480, 965), (1240, 1250)])
    hb(a.hbcheck, W("barrier.out"), "barrier")

    w = writer(2)
    w.rank(0).record("MPI_Init", 0, 100)
    w.rank(0).record("MPI_Bcast", 1000, 1010, c=0, b=8, B=0, o=0, q=0)
    w.rank(0).record("MPI_Finalize", 2000, 2010)
    w.rank(1).record("MPI_Init", 0, 100)
    for k in range(5):
        w.rank(1).record("MPI_Test", 200 + 120 * k, 210 + 120 * k)
    w.rank(1).record("MPI_Bcast", 1100, 1120, c=0, b=0, B=8, o=0, q=0)
    w.rank(1).record("MPI_Finalize", 1200, 1210)
    w.write(W("bcast"))
    run(a.vtrace, "--overhead", "100", "--latency", "0", W("bcast"), W("bcast.out"))
    check("bcast rank 0", read_times(W("bcast.out"), 0), [(0, 100), (900, 910), (1800, 1810)])
    check("bcast rank 1", read_times(W("bcast.out"), 1)[6:], [(500, 900), (900, 910)])
    hb(a.hbcheck, W("bcast.out"), "bcast")

    for f in FAILS:
        print("FAIL:", f)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
