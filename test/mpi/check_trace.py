#!/usr/bin/env python3
"""Checks a vtrace trace directory against expectation files (test/mpi).

usage: check_trace.py --vtrace PATH/TO/vtrace TRACE_DIR EXPECT_FILE...

Reads `vtrace info --json DIR` and `vtrace dump --json DIR`, runs the built-in
consistency checks below, then every directive of the expectation files. Prints
each failure and exits 1 when there is any, 0 otherwise.

Expectation files: one directive per line, '#' starts a comment.

  ranks N                  number of ranks
  messages N               matched messages (vtrace info); N may also be >=N ...
  unmatched N              unmatched sends + receives (default: 0)
  incomplete true|false    trace marked incomplete (default: false)
  late_init true|false     some rank initialised late (default: false)
  threads                  calls of several threads overlap in a rank's stream: skip the
                           check that each call enters after the previous one exits
  rankflags R FLAG[,FLAG]  per-rank flags of vtrace info, '-' for none (default: none)
  ended R TEXT [| TEXT...] how rank R's run ended (vtrace info's "ended") holds one of
                           the TEXTs; where it says "no end after its last flushed block"
                           (the definitions of the end did not fit: a full disk), the
                           profile is the last snapshot's, and each calls=N of the
                           rank's fn lines is checked as calls<=N
  fn R NAME KEY=V ...      profile of function NAME on rank R ('*': every rank,
                           R|R|R: these ranks);
                           KEY is calls, events or bytes; V is N, >=N, <=N, >N or <N.
                           Every function in a rank's profile must be named by an
                           'fn' line of that rank (so nothing unexpected was traced).
  count N FILTER...        number of records matching every FILTER is N (or >=N ...).
                           A FILTER is KEY=V1|V2... or KEY!=V1|V2...; the value '-'
                           stands for "no such key" (comm=- : records without comm);
                           keys are those of `vtrace dump --json` (rank, name, comm,
                           peer, tag, bytes, src, rtag, rbytes, root, seq, req, msg,
                           file, offset, started, ...); a list value is written
                           with '+' between its items (started=1+2). With
                           filters on completion entries (d.req, d.peer, d.tag,
                           d.bytes, d.flags) the completion entries of the matching
                           records are counted instead.
  sum KEY N FILTER...      sum of KEY (or d.KEY) over the matching records (entries)
  distinct KEY N FILTER... number of distinct values of KEY among the matching
                           records; KEY @comm is newcomm when the record has one,
                           else comm (the communicator a call creates or uses)
  values KEY V,V,... FILTER...  the values of KEY over the matching records, in
                           record order (rank by rank), are exactly this list;
                           V*N stands for N times V
  defs_incomplete true|false  the flag "some rank's trace is incomplete" of
                           vtrace.defs (read by this script, not by vtrace)
  or_info_error WORD...    vtrace info may instead fail with a message holding
                           these words (a truncated rank file, for example): then
                           vtrace dump must fail alike, and the directives that
                           need their output are not checked

Built-in checks (always):
  * info and dump agree: total and per-rank record counts; for every rank and
    function, the profile's "events" equals the number of records of that name,
    and the profile's bytes equal the bytes of its records;
  * record indexes run 0, 1, ... on every rank; enter <= exit; calls are in time
    order; the first record is MPI_Init(_thread) (unless initialised late), the last
    MPI_Finalize (unless incomplete);
  * MPI_Wtime, MPI_Comm_rank and MPI_Comm_size are never written as records;
  * no record names the invalid communicator (id 0x0);
  * collective sequence numbers run 0, 1, ... per rank and communicator, and the
    k-th collective on a communicator has the same function and root on every rank;
  * every completed or started request id was created earlier on that rank, and a
    non-persistent request completes at most once.
"""

import json
import os
import re
import subprocess
import sys

COUNTED_ONLY = ("MPI_Wtime", "MPI_Comm_rank", "MPI_Comm_size")
# Probes report what they saw (rbytes) but move no data: the profile counts 0 bytes.
NO_PROFILE_BYTES = ("MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe")
SPECIALS = ("FLUSH", "MARKER", "STOPPED", "SPECIAL")
# Their 'r' field names an existing request instead of creating one.
NAMES_REQUEST = ("MPI_Request_free", "MPI_Cancel", "MPI_Request_get_status")

# Keys of `vtrace dump --json` records and of their completion entries: a filter
# naming another key is a mistake in the expectations (it would match nothing).
RECORD_KEYS = ("rank", "index", "enter", "exit", "name", "comm", "newcomm", "peer", "target", "tag", "bytes", "src",
               "rtag", "rbytes", "root", "seq", "req", "msg", "file", "offset", "started", "done", "kind",
               "value", "reason", "site")
ENTRY_KEYS = ("req", "peer", "tag", "bytes", "flags")

errors = []


def fail(msg):
    errors.append(msg)
    print("FAIL: " + msg)


def run_tool(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------------ comparisons

def parse_cmp(text):
    """'N', '>=N', ... -> (op, N)"""
    m = re.fullmatch(r"(>=|<=|>|<|=)?(-?\d+)", text)
    if not m:
        raise ValueError("bad number or comparison '%s'" % text)
    return (m.group(1) or "="), int(m.group(2))


def cmp_ok(value, op, n):
    return {"=": value == n, ">=": value >= n, "<=": value <= n, ">": value > n, "<": value < n}[op]


def norm(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "+".join(norm(x) for x in v)
    return str(v)


class Filter:
    def __init__(self, text):
        m = re.fullmatch(r"([A-Za-z_.]+)(!=|=)(.*)", text)
        if not m:
            raise ValueError("bad filter '%s'" % text)
        self.key, self.op, value = m.group(1), m.group(2), m.group(3)
        self.entry = self.key.startswith("d.")
        if self.entry:
            self.key = self.key[2:]
        if self.key not in (ENTRY_KEYS if self.entry else RECORD_KEYS):
            raise ValueError("unknown key '%s'" % text.split("=")[0].rstrip("!"))
        self.values = set(value.split("|"))

    def ok(self, obj):
        # '-' stands for "no such key" among the values
        hit = norm(obj[self.key]) in self.values if self.key in obj else "-" in self.values
        return hit if self.op == "=" else not hit


def select(records, filters):
    """Matching records, or matching completion entries when a filter names one."""
    rec_f = [f for f in filters if not f.entry]
    ent_f = [f for f in filters if f.entry]
    out = []
    for r in records:
        if not all(f.ok(r) for f in rec_f):
            continue
        if ent_f:
            for d in r.get("done", []):
                if all(f.ok(d) for f in ent_f):
                    out.append(d)
        else:
            out.append(r)
    return out, bool(ent_f)


# ------------------------------------------------------------------ built-in checks

def builtin_checks(info, records, incomplete, late, overlap=False):
    nranks = info["ranks"]
    by_rank = {r: [] for r in range(nranks)}
    for rec in records:
        if rec.get("rank") not in by_rank:
            fail("dump: record of unknown rank: %s" % rec)
            continue
        by_rank[rec["rank"]].append(rec)
    if info["events"] != len(records):
        fail("info says %d events, dump printed %d records" % (info["events"], len(records)))
    if len(info["per_rank"]) != nranks:
        fail("info: per_rank has %d entries for %d ranks" % (len(info["per_rank"]), nranks))
    coll = {}  # comm id -> rank -> [(seq, name, root)]
    for pr in info["per_rank"]:
        r = pr["rank"]
        recs = by_rank.get(r, [])
        if pr["events"] != len(recs):
            fail("rank %d: info says %d events, dump has %d" % (r, pr["events"], len(recs)))
        # profile vs records
        names = {}
        rbytes = {}
        for rec in recs:
            names[rec["name"]] = names.get(rec["name"], 0) + 1
            b = rec.get("bytes", 0) + rec.get("rbytes", 0) + sum(d["bytes"] for d in rec.get("done", []))
            rbytes[rec["name"]] = rbytes.get(rec["name"], 0) + b
        for name, prof in pr["functions"].items():
            n = names.get(name, 0)
            # an incomplete trace may lack records the profile counted (a failed write)
            if prof["events"] != n and not (incomplete and prof["events"] > n):
                fail("rank %d: profile of %s says %d events, the trace has %d records" % (r, name, prof["events"], n))
            if name in COUNTED_ONLY and prof["events"]:
                fail("rank %d: %s was written as a record (%d): it must only be counted" % (r, name, prof["events"]))
            if prof["events"] > prof["calls"]:
                fail("rank %d: %s: %d events but %d calls" % (r, name, prof["events"], prof["calls"]))
            want = 0 if name in NO_PROFILE_BYTES else rbytes.get(name, 0)
            if not incomplete and prof["bytes"] != want:
                fail("rank %d: profile of %s says %d bytes, its records %d" % (r, name, prof["bytes"], want))
        for name, n in names.items():
            if name not in SPECIALS and name not in pr["functions"]:
                fail("rank %d: %d records of %s, which is not in the profile" % (r, n, name))
        # record order
        prev_exit = None
        created = set()
        completed = set()
        for i, rec in enumerate(recs):
            where = "rank %d record %d (%s)" % (r, rec.get("index", -1), rec["name"])
            if rec.get("index") != i:
                fail("rank %d: record %d has index %s" % (r, i, rec.get("index")))
            if rec["exit"] < rec["enter"]:
                fail("%s: exit %d before enter %d" % (where, rec["exit"], rec["enter"]))
            if rec["name"] not in SPECIALS and not overlap:
                if prev_exit is not None and rec["enter"] < prev_exit:
                    fail("%s: enters at %d, before the previous call's exit %d" % (where, rec["enter"], prev_exit))
                prev_exit = rec["exit"]
            if rec.get("comm") == "0x0" or rec.get("newcomm") == "0x0":
                fail("%s: names the invalid communicator 0x0" % where)
            if rec.get("req") and rec["name"] in NAMES_REQUEST:
                if rec["req"] not in created:
                    fail("%s: names request %d, never created" % (where, rec["req"]))
            elif rec.get("req"):
                if rec["req"] in created:
                    fail("%s: request id %d created twice" % (where, rec["req"]))
                created.add(rec["req"])
            for q in rec.get("started", []):
                if q not in created:
                    fail("%s: starts request %d, never created" % (where, q))
            for d in rec.get("done", []):
                if d["req"] not in created:
                    fail("%s: completes request %d, never created" % (where, d["req"]))
                elif not d["flags"] & 8:
                    if d["req"] in completed:
                        fail("%s: completes request %d a second time" % (where, d["req"]))
                    completed.add(d["req"])
            if "seq" in rec:
                coll.setdefault(rec.get("comm"), {}).setdefault(r, []).append(
                    (rec["seq"], rec["name"], rec.get("root")))
        if recs:
            first, last = recs[0]["name"], recs[-1]["name"]
            if not late and first not in ("MPI_Init", "MPI_Init_thread"):
                fail("rank %d: first record is %s, not MPI_Init" % (r, first))
            if not incomplete and last != "MPI_Finalize":
                fail("rank %d: last record is %s, not MPI_Finalize" % (r, last))
        elif not incomplete:
            fail("rank %d: no records" % r)
    for comm, per in coll.items():
        ref = None
        for r, seqs in sorted(per.items()):
            got = [s for s, _, _ in seqs]
            if not incomplete and got != list(range(len(got))):
                fail("rank %d comm %s: collective sequence numbers %s, expected 0..%d" % (r, comm, got, len(got) - 1))
            calls = [(n, root) for _, n, root in seqs]
            if ref is None:
                ref = (r, calls)
            else:
                n = min(len(calls), len(ref[1])) if incomplete else max(len(calls), len(ref[1]))
                if calls[:n] != ref[1][:n]:
                    k = next((i for i in range(n) if i >= len(calls) or i >= len(ref[1]) or calls[i] != ref[1][i]), n)
                    fail("comm %s: collective %d is %s on rank %d but %s on rank %d" %
                         (comm, k, calls[k] if k < len(calls) else None, r,
                          ref[1][k] if k < len(ref[1]) else None, ref[0]))


# ------------------------------------------------------------------ directives

def check_directives(lines, info, records):
    nranks = info["ranks"]
    expect = {"unmatched": ("=", 0), "incomplete": False, "late_init": False}
    rankflags = {}
    fnlines = {}  # (rank, name) -> list of (key, op, n, where)
    snapshot_only = set()  # ranks whose profile is a snapshot's (ended)
    for where, words in lines:
        d, args = words[0], words[1:]
        try:
            if d in ("sum", "distinct", "values") and args[0] != "@comm" and not (
                    args[0][2:] in ENTRY_KEYS if args[0].startswith("d.") else args[0] in RECORD_KEYS):
                raise ValueError("unknown key '%s'" % args[0])
            if d == "ranks":
                if info["ranks"] != int(args[0]):
                    fail("%s: %d ranks, expected %s" % (where, info["ranks"], args[0]))
            elif d in ("messages", "unmatched"):
                expect[d] = parse_cmp(args[0])
            elif d in ("incomplete", "late_init"):
                expect[d] = args[0] == "true"
            elif d == "ended":
                ranks = range(nranks) if args[0] == "*" else [int(x) for x in args[0].split("|")]
                texts = [t.strip() for t in " ".join(args[1:]).split(" | ")]
                for r in ranks:
                    got = info["per_rank"][r].get("ended", "")
                    if not any(t in got for t in texts):
                        fail("%s: rank %d ended %r, expected one of %r in it" % (where, r, got, texts))
                    if "no end after its last flushed block" in got:
                        snapshot_only.add(r)
            elif d == "rankflags":
                ranks = range(nranks) if args[0] == "*" else [int(x) for x in args[0].split("|")]
                for r in ranks:
                    rankflags[r] = [] if args[1] == "-" else args[1].split(",")
            elif d == "fn":
                ranks = range(nranks) if args[0] == "*" else [int(x) for x in args[0].split("|")]
                name = args[1]
                for r in ranks:
                    lst = fnlines.setdefault((r, name), [])
                    for kv in args[2:]:
                        m = re.fullmatch(r"(calls|events|bytes)(>=|<=|>|<|=)(-?\d+)", kv)
                        if not m:
                            raise ValueError("bad profile check '%s'" % kv)
                        lst.append((m.group(1), m.group(2), int(m.group(3)), where))
            elif d in ("count", "sum", "distinct", "values"):
                if d != "count":
                    key, want, flt = args[0], args[1], args[2:]
                else:
                    key, want, flt = None, args[0], args[1:]
                filters = [Filter(f) for f in flt]
                sel, entries = select(records, filters)
                if d == "count":
                    op, n = parse_cmp(want)
                    if not cmp_ok(len(sel), op, n):
                        fail("%s: %d %s match, expected %s" % (where, len(sel), "entries" if entries else "records", want))
                elif d == "sum":
                    k = key[2:] if key.startswith("d.") else key
                    total = sum(int(x.get(k, 0)) for x in sel)
                    op, n = parse_cmp(want)
                    if not cmp_ok(total, op, n):
                        fail("%s: sum of %s is %d over %d records, expected %s" % (where, key, total, len(sel), want))
                elif d == "distinct":
                    if key == "@comm":
                        ids = sorted(set(norm(x["newcomm"] if "newcomm" in x else x.get("comm")) for x in sel))
                    else:
                        ids = sorted(set(norm(x.get(key[2:] if key.startswith("d.") else key)) for x in sel))
                    op, n = parse_cmp(want)
                    if not sel or not cmp_ok(len(ids), op, n):
                        fail("%s: %d records with %d distinct values of %s %s, expected %s" %
                             (where, len(sel), len(ids), key, ids, want))
                else:
                    k = key[2:] if key.startswith("d.") else key
                    got = [norm(x.get(k, "-")) for x in sel]
                    exp = []
                    for item in (want.split(",") if want != "-" else []):
                        m = re.fullmatch(r"(.*)\*(\d+)", item)
                        exp += [m.group(1)] * int(m.group(2)) if m else [item]
                    if got != exp:
                        k = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]), min(len(got), len(exp)))
                        fail("%s: values of %s are %s, expected %s (%d values, expected %d; first difference at %d: %s, expected %s)" %
                             (where, key, ",".join(got) or "-", ",".join(exp) or "-", len(got), len(exp), k,
                              got[k] if k < len(got) else "end", exp[k] if k < len(exp) else "end"))
            else:
                raise ValueError("unknown directive '%s'" % d)
        except (ValueError, IndexError, KeyError, AttributeError) as e:
            fail("%s: cannot check '%s': %s" % (where, " ".join(words), e))

    for key in ("incomplete", "late_init"):
        if info.get(key) != expect[key]:
            fail("info says %s: %s, expected %s" % (key, info.get(key), expect[key]))
    if "messages" not in expect:
        fail("the expectations give no 'messages' count")
    for key in ("messages", "unmatched"):
        if key in expect:
            op, n = expect[key]
            if not isinstance(info.get(key), int) or not cmp_ok(info[key], op, n):
                fail("info says %s %s, expected %s%d" % (info.get(key), key, "" if op == "=" else op, n))
    for pr in info["per_rank"]:
        r = pr["rank"]
        if sorted(pr.get("flags", [])) != sorted(rankflags.get(r, [])):
            fail("rank %d: flags %s, expected %s" % (r, pr.get("flags"), rankflags.get(r, [])))
        for name, prof in pr["functions"].items():
            if (r, name) not in fnlines:
                fail("rank %d: unexpected function in the profile: %s %s" % (r, name, prof))
        for (fr, name), checks in fnlines.items():
            if fr != r:
                continue
            prof = pr["functions"].get(name, {"calls": 0, "events": 0, "bytes": 0})
            for k, op, n, where in checks:
                if k == "calls" and op == "=" and r in snapshot_only:
                    op = "<="
                if not cmp_ok(prof[k], op, n):
                    fail("%s: rank %d %s: %s is %d, expected %s%d" % (where, r, name, k, prof[k],
                                                                      "" if op == "=" else op, n))


def read_defs_flags(trace):
    """Global flags of TRACE/vtrace.defs (doc/format.md), decoded here without vtrace."""
    path = os.path.join(trace, "vtrace.defs")
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"VTRACE\0D":
        raise ValueError("%s: bad magic" % path)
    pos = 16

    def uvar():
        nonlocal pos
        v = shift = 0
        while True:
            b = payload[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def string():
        nonlocal pos
        n = uvar()
        pos += n

    hdr = data[pos:pos + 24]
    if int.from_bytes(hdr[0:4], "little") != 0x4B4C4256 or hdr[4] != 4:
        raise ValueError("%s: offset 16: expected the GLOBAL block" % path)
    if hdr[5] != 0:
        raise ValueError("%s: the GLOBAL block is compressed (codec %d): not supported here" % (path, hdr[5]))
    length = int.from_bytes(hdr[8:12], "little")
    payload = data[pos + 24:pos + 24 + length]
    pos = 0
    string(), string(), string()
    for _ in range(uvar()):
        for _ in range(4):
            uvar()
        uvar()
        string()
    return uvar()


def read_expect(paths):
    lines = []
    for path in paths:
        with open(path) as f:
            for no, line in enumerate(f, 1):
                words = line.split("#", 1)[0].split()
                if words:
                    lines.append(("%s:%d" % (os.path.basename(path), no), words))
    return lines


def main(argv):
    vtrace = None
    args = []
    i = 1
    while i < len(argv):
        if argv[i] == "--vtrace":
            vtrace = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if not vtrace or len(args) < 2:
        print(__doc__)
        return 2
    trace, expect_files = args[0], args[1:]
    lines = read_expect(expect_files)
    info_error = None
    for where, words in lines:
        if words[0] == "defs_incomplete":
            try:
                flags = read_defs_flags(trace)
                if bool(flags & 1) != (words[1] == "true"):
                    fail("%s: vtrace.defs has flags %d, expected incomplete %s" % (where, flags, words[1]))
            except (OSError, ValueError, IndexError) as e:
                fail("%s: cannot read vtrace.defs: %s" % (where, e))
        elif words[0] == "or_info_error":
            info_error = (where, " ".join(words[1:]))
    # "threads": calls of several threads overlap in one rank's stream.
    overlap = any(x[1][0] == "threads" for x in lines)
    lines = [x for x in lines if x[1][0] not in ("defs_incomplete", "or_info_error", "threads")]

    rc, out, err = run_tool([vtrace, "info", "--json", trace])
    if rc != 0 and info_error and info_error[1] in err:
        where, text = info_error
        print("vtrace info fails as allowed by %s: %s" % (where, err.strip()))
        rc, out, err = run_tool([vtrace, "dump", "--json", trace])
        if rc == 0 or text not in err:
            fail("%s: vtrace dump exited with %d (%s), expected it to fail like vtrace info" % (where, rc, err.strip()))
        if errors:
            print("check_trace: %d failure(s)" % len(errors))
            return 1
        print("check_trace: OK (the trace is reported as expected)")
        return 0

    if rc != 0:
        fail("vtrace info --json %s exited with %d: %s" % (trace, rc, err.strip()))
        return 1
    try:
        info = json.loads(out)
    except ValueError as e:
        fail("vtrace info --json: not JSON (%s): %s" % (e, out[:200]))
        return 1
    rc, out, err = run_tool([vtrace, "dump", "--json", trace])
    if rc != 0:
        fail("vtrace dump --json %s exited with %d: %s" % (trace, rc, err.strip()))
        return 1
    records = []
    for no, line in enumerate(out.splitlines(), 1):
        try:
            records.append(json.loads(line))
        except ValueError as e:
            fail("vtrace dump --json line %d: not JSON (%s): %s" % (no, e, line[:200]))
            return 1

    incomplete = bool(info.get("incomplete"))
    late = bool(info.get("late_init"))
    builtin_checks(info, records, incomplete, late, overlap)
    check_directives(lines, info, records)
    summary = "%d ranks, %d records, %s messages" % (info["ranks"], len(records), info.get("messages"))
    if errors:
        print("check_trace: %d failure(s) (%s)" % (len(errors), summary))
        return 1
    print("check_trace: OK (%s, %d expectations)" % (summary, len(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
