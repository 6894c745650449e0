#!/usr/bin/env python3
"""Every vtrace command on damaged traces (issue 14: hostile input into every command).

    fuzz_commands.py VTRACE WORKDIR SEED_TRACE... [--mutants N] [--seed S] [--timeout T]

Each seed trace (a directory) is first rewritten with every block stored raw (codec 0,
the zstd frames decoded with the zstd tool), so that a mutation reaches the decoders
behind the CRC: its CRC is recomputed after the change. Then N mutants, each with one
to three changes (a payload byte set or flipped, a run of payload bytes zeroed or
copied from elsewhere, a varint made huge, a header field (raw length, record count,
type) changed, a file truncated, a block dropped or repeated), go through every
command: info, dump, whatif (also --random), domino, critical-path, patterns, clusters,
period, reduce, compensate, report and export in each format. A command passes when it
exits 0, or 1 with a first stderr line "vtrace: ..." (a message, not a crash), within
the timeout. A signal, an exit status other than 0 and 1, a hang or a sanitizer report
fails; the mutant is kept in WORKDIR/failed/ with the command that failed.
"""
import json
import os
import re
import random
import shutil
import struct
import subprocess
import sys
import zlib

MAGIC = 0x4B4C4256
HDR = struct.Struct("<IBBHIIII")
ACCEPTED = [0]  # command runs on mutants that exited 0 (the damage reached past the checks)


def blocks(data):
    """(offset, type, codec, stored, raw, nrec) of each whole block after the file header."""
    off, out = 16, []
    while off + HDR.size <= len(data):
        magic, typ, codec, _res, stored, raw, _crc, nrec = HDR.unpack_from(data, off)
        if magic != MAGIC or off + HDR.size + stored > len(data):
            break
        out.append((off, typ, codec, stored, raw, nrec))
        off += HDR.size + stored
    return out


def block_bytes(typ, payload, nrec):
    return HDR.pack(MAGIC, typ, 0, 0, len(payload), len(payload), zlib.crc32(payload), nrec) + payload


def builtin_dict(work):
    """The built-in dictionary of codec 3 (format 2.1), from src/format/evdict.c, written
    to a file in WORK."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "format", "evdict.c")
    text = open(src).read()
    body = text[text.index("{", text.index("evdict[")) + 1:text.index("};")]
    path = os.path.join(work, "builtin-dict")
    open(path, "wb").write(bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)))
    return path


def decode_all(path, dict_path=None, builtin_path=None):
    """The file with every zstd block stored raw (codec 2, format 1.5: against the
    dictionary in DICT_PATH, vtrace.defs' DICT block; codec 3, 2.1: against the built-in
    one in BUILTIN_PATH)."""
    data = open(path, "rb").read()
    out = bytearray(data[:16])
    for off, typ, codec, stored, _raw, nrec in blocks(data):
        payload = data[off + HDR.size:off + HDR.size + stored]
        if codec in (1, 2, 3):
            dpath = {2: dict_path, 3: builtin_path}.get(codec)
            cmd = ["zstd", "-d", "-q", "-c"] + (["-D", dpath] if dpath else [])
            payload = subprocess.run(cmd, input=payload, capture_output=True, check=True).stdout
        out += block_bytes(typ, payload, nrec)
    return bytes(out)


def dict_file(seed, work):
    """vtrace.defs' DICT block of SEED (format 1.5) written to a file in WORK, or None."""
    data = decode_all(os.path.join(seed, "vtrace.defs"))
    for off, typ, _codec, stored, _raw, _nrec in blocks(data):
        if typ == 8:
            path = os.path.join(work, "dict")
            open(path, "wb").write(data[off + HDR.size:off + HDR.size + stored])
            return path
    return None


def mutate(data, rnd):
    bl = blocks(data)
    if not bl:
        return data[:rnd.randrange(len(data) + 1)]
    kind = rnd.choice(["byte", "flip", "zero", "copy", "varint", "raw", "nrec", "type", "truncate", "drop",
                       "repeat", "byte", "varint"])
    i = rnd.randrange(len(bl))
    off, typ, _codec, stored, raw, nrec = bl[i]
    payload = bytearray(data[off + HDR.size:off + HDR.size + stored])
    head, tail = data[:off], data[off + HDR.size + stored:]
    if kind == "truncate":
        return data[:rnd.randrange(16, len(data) + 1)]
    if kind == "drop":
        return head + tail
    if kind == "repeat":
        return head + data[off:off + HDR.size + stored] * 2 + tail
    if kind in ("raw", "nrec", "type"):
        hdr = bytearray(data[off:off + HDR.size])
        if kind == "raw":
            struct.pack_into("<I", hdr, 12, min(rnd.choice([0, raw + 1, raw * 1000 + 7, 0x3fffffff, 0xffffffff]), 0xffffffff))
        elif kind == "nrec":
            struct.pack_into("<I", hdr, 20, rnd.choice([0, nrec + 1, max(nrec - 1, 0), 0x7fffffff, 0xffffffff]))
        else:
            hdr[4] = rnd.choice([1, 2, 3, 4, 5, 6, 7, 15, 99])
        return head + bytes(hdr) + bytes(payload) + tail
    if payload:
        at = rnd.randrange(len(payload))
        if kind == "byte":
            payload[at] = rnd.randrange(256)
        elif kind == "flip":
            payload[at] ^= 1 << rnd.randrange(8)
        elif kind == "zero":
            n = rnd.randrange(1, 17)
            payload[at:at + n] = bytes(len(payload[at:at + n]))
        elif kind == "copy":
            src = rnd.randrange(len(payload))
            n = rnd.randrange(1, 33)
            chunk = payload[src:src + n]
            payload[at:at + len(chunk)] = chunk
        else:  # a varint made huge (or a terminator removed)
            payload[at:at + 1] = rnd.choice([b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x80", b"\xff\x7f"])
    return head + block_bytes(typ, bytes(payload), nrec) + tail


def commands(d, out):
    e = os.path.join(out, "e")
    return [
        ["info", d], ["info", "--json", d], ["dump", d], ["dump", "--json", d],
        ["whatif", d], ["whatif", "--random", "5", "--seed", "3", d],
        ["domino", d], ["domino", "--by", "rank", d], ["critical-path", d], ["critical-path", "--json", d],
        ["patterns", d], ["clusters", d], ["period", d],
        ["reduce", d, os.path.join(out, "reduced")], ["compensate", d, os.path.join(out, "compensated")],
        ["report", "-o", os.path.join(out, "report.html"), d],
        ["export", "--format=otf2", d, e + "-otf2"], ["export", "--format=paraver", d, e + "-prv"],
        ["export", "--format=perfetto", d, e + "-perfetto.json"],
    ]


def run_one(vtrace, args, timeout, seed_of=None):
    """None when the command passes, else why not. SEED_OF: the undamaged seed, whose
    kind ("full", "reduced") it is: every command must accept it (exit 0) but reduce
    and compensate a reduced one, which they refuse with a message."""
    try:
        p = subprocess.run([vtrace] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "no answer within %d s" % timeout
    if seed_of and p.returncode != 0 and not (seed_of == "reduced" and args[0] in ("reduce", "compensate")):
        return "the undamaged seed fails: exit %d: %s" % (p.returncode, p.stderr.decode()[-500:])
    err = p.stderr.decode("utf-8", "replace")
    if "Sanitizer" in err or "runtime error:" in err:
        return "a sanitizer report:\n" + err[-3000:]
    if p.returncode == 0:
        ACCEPTED[0] += 1
        return None
    if p.returncode < 0:
        return "killed by signal %d:\n%s" % (-p.returncode, err[-2000:])
    if p.returncode != 1:
        return "exit status %d:\n%s" % (p.returncode, err[-2000:])
    lines = [l for l in err.splitlines() if l.startswith("vtrace: ") and not l.startswith("vtrace: note:")
             and not l.startswith("vtrace: warning:")]
    if not lines:
        return "exit status 1 without a message:\n" + err[-2000:]
    return None


def main():
    argv = sys.argv[1:]
    opts = {"--mutants": "30", "--seed": "1", "--timeout": "30"}
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    vtrace, work, seeds = rest[0], rest[1], rest[2:]
    nmut, timeout = int(opts["--mutants"]), int(opts["--timeout"])
    rnd = random.Random(int(opts["--seed"]))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = runs = 0
    for si, seed in enumerate(seeds):
        dpath = dict_file(seed, work)
        bpath = builtin_dict(work)
        files = {f: decode_all(os.path.join(seed, f), dpath, bpath) if f.endswith((".vte", ".defs")) else
                 open(os.path.join(seed, f), "rb").read() for f in sorted(os.listdir(seed))
                 if os.path.isfile(os.path.join(seed, f))}
        targets = [f for f in files if f.endswith((".vte", ".defs"))]
        info = subprocess.run([vtrace, "info", "--json", seed], capture_output=True, text=True)
        if info.returncode != 0:
            sys.exit("FAIL: the seed %s does not read: %s" % (seed, info.stderr.strip()))
        kind = json.loads(info.stdout)["kind"]
        for m in range(nmut + 1):
            d = os.path.join(work, "t")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            changed = dict(files)
            what = []
            if m:  # mutant 0: the seed itself, decoded (every command must accept it)
                for _ in range(rnd.randrange(1, 4)):
                    f = rnd.choice(targets)
                    changed[f] = mutate(changed[f], rnd)
                    what.append(f)
            for f, data in changed.items():
                open(os.path.join(d, f), "wb").write(data)
            out = os.path.join(work, "out")
            for args in commands(d, out):
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                if not m:
                    ACCEPTED[0] -= 1  # (the seed's own runs are not counted)
                why = run_one(vtrace, args, timeout, None if m else kind)
                runs += 1
                if why:
                    failures += 1
                    keep = os.path.join(work, "failed", "seed%d-mutant%d" % (si, m))
                    if not os.path.exists(keep):
                        shutil.copytree(d, keep)
                    with open(keep + ".txt", "a") as f:
                        f.write("vtrace %s\n%s\n\n" % (" ".join(args), why))
                    print("FAIL: seed %s mutant %d (%s): vtrace %s: %s" % (seed, m, ", ".join(what) or "none",
                                                                          " ".join(args), why.splitlines()[0]))
    print("%d command runs on %d seeds x %d mutants (%d of the mutants' runs exited 0): %d failed"
          % (runs, len(seeds), nmut, ACCEPTED[0] + 0, failures))
    sys.exit(1 if failures else 0)


main()
