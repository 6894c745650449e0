"""Minimal pure-Python writer of vtrace trace directories, format 1.0 (doc/format.md).

Standard library only. Writes what the model tests need and nothing more: raw codec
(0) only, no call sites (every call record carries call-site index 0), offsets 0.

    w = TraceWriter(nranks, funcs=[("MPI_Init", ""), ("MPI_Send", "cptb"), ...])
    w.rank(r).comms.append(Comm(1, range(nranks), how="world"))
    w.rank(r).record("MPI_Send", enter, exit, c=0, p=1, t=7, b=64)
    w.write(directory, config_text)

A record's fields are given by layout letter; the function's layout (FUNCS table)
decides their order. Completions ('k') are lists of (request, flags, peer, tag, bytes),
started requests ('R') lists of ids. Times are integer nanoseconds (local clock).
"""
import os
import struct
import zlib

FORMAT_MAJOR = 1
FORMAT_MINOR = 0
MAGIC_RANK = b"VTRACE\0E"
MAGIC_DEFS = b"VTRACE\0D"
BLOCK_MAGIC = 0x4B4C4256  # bytes "VBLK"
FUNCS, EVENTS, RANKDEFS, GLOBAL, END = 1, 2, 3, 4, 15
CODE_FIRST_FN = 16


# ---------------------------------------------------------------- primitives

def uvar(n):
    """Unsigned LEB128."""
    n = int(n)
    if n < 0 or n >= 1 << 64:
        raise ValueError("uvar out of range: %d" % n)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def svar(n):
    """Zigzag, then LEB128."""
    n = int(n)
    if n < -(1 << 63) or n >= 1 << 63:
        raise ValueError("svar out of range: %d" % n)
    return uvar(((n << 1) ^ (n >> 63)) & ((1 << 64) - 1))


def string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    if len(b) > 65535:
        raise ValueError("string longer than 65535 bytes")
    return uvar(len(b)) + b


def file_header(magic, value):
    return magic + struct.pack("<HHI", FORMAT_MAJOR, FORMAT_MINOR, value)


def block(btype, payload=b"", nrecords=0):
    """A block: 24-byte header (codec 0, raw) and its payload."""
    payload = bytes(payload)
    crc = zlib.crc32(payload) & 0xFFFFFFFF
    hdr = struct.pack("<IBBHIIII", BLOCK_MAGIC, btype, 0, 0, len(payload), len(payload), crc, nrecords)
    return hdr + payload


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


# ---------------------------------------------------------------- definitions

class Comm:
    """One entry of a rank's communicator table."""

    def __init__(self, cid, members, how, parent=-1, flags=0, remote=()):
        self.id = cid
        self.members = list(members)
        self.remote = list(remote)
        self.how = how
        self.parent = parent
        self.flags = flags

    def encode(self):
        out = uvar(self.id) + uvar(self.flags)
        out += uvar(len(self.members)) + b"".join(uvar(m) for m in self.members)
        out += uvar(len(self.remote)) + b"".join(uvar(m) for m in self.remote)
        return out + svar(self.parent) + string(self.how)


class Rank:
    def __init__(self, writer, rank):
        self.w = writer
        self.rank = rank
        self.records = []  # (fid, enter, exit, fields)
        self.comms = []
        self.files = []  # (name, communicator index)
        self.hostname = "mc"
        self.flags = 0
        self.clock = None  # (offset at the first synchronisation, at the second): another clock

    def record(self, fname, enter, exit_, **fields):
        fid = self.w.fid[fname]
        if exit_ < enter:
            raise ValueError("record %s exits before it enters" % fname)
        if self.records and enter < self.records[-1][2]:
            raise ValueError("record %s enters before the previous record exits" % fname)
        layout = self.w.funcs[fid][1]
        missing = [l for l in layout if l not in fields]
        extra = [l for l in fields if l not in layout]
        if missing or extra:
            raise ValueError("record %s: fields %s missing, %s not in layout %r" % (fname, missing, extra, layout))
        self.records.append((fid, int(enter), int(exit_), fields))

    def _encode_record(self, rec, prev):
        fid, enter, exit_, fields = rec
        out = bytearray(uvar(CODE_FIRST_FN + fid) + svar(enter - prev) + uvar(exit_ - enter) + uvar(0))
        for l in self.w.funcs[fid][1]:
            v = fields[l]
            if l in "cbBqrmf":
                out += uvar(v)
            elif l in "nptPToO":
                out += svar(v)
            elif l == "R":
                out += uvar(len(v)) + b"".join(uvar(x) for x in v)
            elif l == "k":
                out += uvar(len(v))
                for (req, flg, peer, tag, nbytes) in v:
                    out += uvar(req) + uvar(flg) + svar(peer) + svar(tag) + uvar(nbytes)
            else:
                raise ValueError("unknown layout letter %r" % l)
        return bytes(out)

    def encode(self, per_block):
        out = bytearray(file_header(MAGIC_RANK, self.rank))
        out += block(FUNCS, self.w.funcs_payload())
        recs = self.records
        for first in range(0, len(recs), per_block):
            chunk = recs[first:first + per_block]
            base = chunk[0][1]
            payload = bytearray(uvar(first) + svar(base))
            prev = base
            for rec in chunk:
                payload += self._encode_record(rec, prev)
                prev = rec[2]
            out += block(EVENTS, payload, len(chunk))
        out += block(RANKDEFS, self.rankdefs_payload())
        out += block(END)
        return bytes(out)

    def profile(self):
        prof = {}
        for fid, enter, exit_, fields in self.records:
            p = prof.setdefault(fid, [0, 0, 0, 0])
            p[0] += 1
            p[1] += exit_ - enter
            p[2] += fields.get("b", 0) + fields.get("B", 0)
            p[3] += 1
        return sorted(prof.items())

    def rankdefs_payload(self):
        out = bytearray(uvar(0))  # no call sites
        out += uvar(len(self.comms)) + b"".join(c.encode() for c in self.comms)
        out += uvar(len(self.files)) + b"".join(string(n) + uvar(ci) for n, ci in self.files)
        prof = self.profile()
        out += uvar(len(prof))
        for fid, (calls, t, nbytes, nrec) in prof:
            out += uvar(fid) + uvar(calls) + uvar(t) + uvar(nbytes) + uvar(nrec)
        t0 = self.records[0][1] if self.records else 0
        t1 = self.records[-1][2] if self.records else 0
        out += string(self.hostname) + svar(-1) + svar(-1) + string("") + uvar(self.flags)
        out += uvar(len(self.records)) + uvar(0) + svar(t0) + svar(t1)
        return bytes(out)

    def times(self):
        if not self.records:
            return 0, 0
        return self.records[0][1], self.records[-1][2]


class TraceWriter:
    def __init__(self, nranks, funcs, version="vtwrite.py", mpi_version="none (synthetic trace)"):
        self.nranks = nranks
        self.funcs = list(funcs)
        self.fid = {name: i for i, (name, _) in enumerate(self.funcs)}
        self.version = version
        self.mpi_version = mpi_version
        self.ranks = [Rank(self, r) for r in range(nranks)]

    def rank(self, r):
        return self.ranks[r]

    def funcs_payload(self):
        return uvar(len(self.funcs)) + b"".join(string(n) + string(l) for n, l in self.funcs)

    def global_payload(self, config):
        out = bytearray(string(self.version) + string(self.mpi_version) + string(config))
        out += uvar(self.nranks)
        for rk in self.ranks:
            t0, t1 = rk.times()
            if rk.clock is None:
                # same clock as rank 0: offsets 0 at both synchronisations
                out += svar(t0) + svar(0) + svar(t1) + svar(0) + uvar(1) + string(rk.hostname)
            else:
                out += svar(t0) + svar(rk.clock[0]) + svar(t1) + svar(rk.clock[1]) + uvar(0) + string(rk.hostname)
        out += uvar(0)
        return bytes(out)

    def write(self, directory, config="", per_block=64):
        os.makedirs(directory, exist_ok=True)
        for rk in self.ranks:
            with open(os.path.join(directory, "rank-%06d.vte" % rk.rank), "wb") as f:
                f.write(rk.encode(per_block))
        with open(os.path.join(directory, "vtrace.defs"), "wb") as f:
            f.write(file_header(MAGIC_DEFS, self.nranks) + block(GLOBAL, self.global_payload(config)) + block(END))
        with open(os.path.join(directory, "config.txt"), "w") as f:
            f.write(config)
