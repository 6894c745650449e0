#!/usr/bin/env python3
"""Checks the trace of a run that ended abnormally (test/crash/crash.sh).

    check_crash.py VTRACE DIR RANK REASON [--all-sendrecv N] [--last NAME] [--full] [--flushed]
                   [--covers FULLDIR]

`vtrace info` must read DIR, call it incomplete and give REASON (a part of the text) for
RANK. --full: every rank's readable records are exactly those of the event blocks
before the last RANKDEFS of its file, counted here from the block headers (what the run
flushed). --all-sendrecv N: RANK holds all N of its MPI_Sendrecv calls (the handler
wrote the buffer). --last NAME: RANK's last record is a call of NAME (faults.c's last
receive, whose record waits for the next one: the end wrote it). --flushed: RANK has readable records. --covers FULLDIR (DIR a
reduced trace, FULLDIR the full trace of the same run): RANK's readable records in DIR
reach past its last MPI_Sendrecv in FULLDIR (the reduced file was made readable when the
full one was flushed).
"""
import json
import os
import struct
import subprocess
import sys

HEADER, BLOCK = 16, 24
EVENTS, RANKDEFS, END, EVENTS_COLS = 2, 3, 15, 6


def flushed_records(path):
    """Records of the event blocks before the last RANKDEFS (None: no RANKDEFS)."""
    data = open(path, "rb").read()
    off, seen, at_defs = HEADER, 0, None
    while off + BLOCK <= len(data):
        magic, btype, _codec, _res, stored, _raw, _crc, nrec = struct.unpack_from("<IBBHIIII", data, off)
        if magic != 0x4B4C4256 or off + BLOCK + stored > len(data):
            break
        if btype in (EVENTS, EVENTS_COLS):
            seen += nrec
        elif btype == RANKDEFS:
            at_defs = seen
        off += BLOCK + stored
    return at_defs


def main():
    args = sys.argv[1:]
    vt, d, rank, reason = args[0], args[1], int(args[2]), args[3]
    opts = args[4:]
    fails = []
    p = subprocess.run([vt, "info", "--json", d], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: vtrace info %s: exit %d: %s" % (d, p.returncode, p.stderr.strip()))
    info = json.loads(p.stdout)
    if not info["incomplete"]:
        fails.append("the trace is not called incomplete")
    ranks = info["per_rank"]
    if reason not in ranks[rank]["ended"]:
        fails.append("rank %d: ended %r, expected %r in it" % (rank, ranks[rank]["ended"], reason))
    if "--full" in opts:
        for r, pr in enumerate(ranks):
            want = flushed_records(os.path.join(d, "rank-%06d.vte" % r)) or 0
            if pr["events"] != want:
                fails.append("rank %d: %d readable records, its flushed blocks hold %d" % (r, pr["events"], want))
    if "--all-sendrecv" in opts:
        n = int(opts[opts.index("--all-sendrecv") + 1])
        dump = subprocess.run([vt, "dump", "--rank", str(rank), d], capture_output=True, text=True)
        got = sum(1 for line in dump.stdout.splitlines() if " MPI_Sendrecv " in line)
        if got != n:
            fails.append("rank %d: %d MPI_Sendrecv records, the program made %d" % (rank, got, n))
    if "--last" in opts:
        name = opts[opts.index("--last") + 1]
        dump = subprocess.run([vt, "dump", "--rank", str(rank), d], capture_output=True, text=True)
        calls = [line.split()[3] for line in dump.stdout.splitlines() if len(line.split()) > 3 and
                 line.split()[3].startswith("MPI_")]
        if not calls or calls[-1] != name:
            fails.append("rank %d: the last record is %s, expected %s" % (rank, calls[-1] if calls else "none", name))
    if "--flushed" in opts and ranks[rank]["events"] == 0:
        fails.append("rank %d: no readable records" % rank)
    if "--covers" in opts:
        full = opts[opts.index("--covers") + 1]

        def last_seq(tdir, only=None):
            p = subprocess.run([vt, "dump", "--json", "--rank", str(rank), tdir], capture_output=True, text=True)
            # events are RANK:SEQ in both kinds of traces; the function is "name" in a
            # full trace's records, "fn" in a reduced one's
            seqs = [int(j["event"].split(":")[1]) for j in map(json.loads, p.stdout.splitlines())
                    if "event" in j and (only is None or only in (j.get("fn"), j.get("name")))]
            return max(seqs) if seqs else -1
        want, got = last_seq(full, "MPI_Sendrecv"), last_seq(d)
        if want < 0 or got <= want:
            fails.append("rank %d: the last readable record is event %d, the full trace's last MPI_Sendrecv %d"
                         % (rank, got, want))
    for f in fails:
        print("FAIL: %s: %s" % (d, f))
    if fails:
        sys.exit(1)
    print("ok: %s: rank %d %s; %s" % (d, rank, ranks[rank]["ended"],
                                     ", ".join("rank %d %d records" % (r, x["events"]) for r, x in enumerate(ranks))))


main()
