#!/usr/bin/env python3
"""Checks the output of `vtrace export` against the trace it came from.

    check_export.py perfetto FILE.json DUMP.jsonl MESSAGES
    check_export.py paraver  BASE      DUMP.jsonl MESSAGES

DUMP.jsonl is `vtrace dump --json DIR` of the exported trace (full or reduced: its
records say which); MESSAGES the number of messages the export must show (`vtrace info
--json` "messages" for a full trace; the messages the COMP records name for a reduced
one, which this script also counts from the dump and compares).

Perfetto (Chrome trace-event JSON): valid JSON; every pid and every (pid, tid) named by
metadata; complete events with ts/dur >= 0, properly nested and not overlapping per
thread; one slice per record (name, start and duration to the ns, relative to the
trace's first enter), an instant per MARKER; every flow id with exactly one start and
one finish ("bp":"e"), each inside a slice of its thread; as many flows as MESSAGES;
"vtrace:aggregated" slices in a reduced trace only, filling the gaps between records.

Paraver: the header (date, duration = last exit - first enter, nodes and CPUs, one
application, one task per rank on the node of its host); every record well formed with
valid CPU/application/task/thread; records sorted by time; states of a task not
overlapping; communication records: valid tasks and times, lsend <= psend, lrecv <=
precv, as many as MESSAGES; every state and every event type used named in the .pcf,
and every value of an event type that lists values; the .row's levels of the right
sizes; the Aggregated state in a reduced trace only.

Exit status 0 when everything holds, 1 with the list of failures otherwise.
"""
import collections
import json
import re
import sys

FAILS = []


def fail(msg):
    if len(FAILS) < 30:
        FAILS.append(msg)


def load_dump(path):
    recs = [json.loads(line) for line in open(path) if line.strip()]
    # a reduced trace's records have a KIND (START, CAND, ...); a full one's MARKER has a numeric kind
    reduced = any(isinstance(r.get("kind"), str) for r in recs)
    return recs, reduced


def ns(us):
    """Microseconds with ns decimals -> integer ns (exact for 3 decimals)."""
    return int(round(float(us) * 1000))


def check_perfetto(path, recs, reduced, messages):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        fail("%s: not valid JSON: %s" % (path, e))
        return
    evs = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(evs, list):
        fail("no traceEvents array")
        return
    pnames, tnames = {}, {}
    slices = collections.defaultdict(list)  # (pid, tid) -> [(b, e, name)]
    instants = []
    flows = collections.defaultdict(list)
    used_pids, used_threads = set(), set()
    for e in evs:
        ph = e.get("ph")
        if ph == "M":
            if e.get("name") == "process_name":
                pnames[e["pid"]] = e["args"]["name"]
            elif e.get("name") == "thread_name":
                tnames[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        for k in ("pid", "tid", "ts", "name"):
            if k not in e:
                fail("event without %s: %s" % (k, e))
                break
        else:
            key = (e["pid"], e["tid"])
            used_pids.add(e["pid"])
            used_threads.add(key)
            b = ns(e["ts"])
            if b < 0:
                fail("negative ts: %s" % e)
            if ph == "X":
                d = ns(e.get("dur", -1))
                if d < 0:
                    fail("complete event without a valid dur: %s" % e)
                slices[key].append((b, b + d, e["name"], e))
            elif ph == "i" or ph == "I":
                instants.append((key, b, e["name"]))
            elif ph in ("s", "f"):
                flows[e.get("id")].append((ph, key, b, e))
            else:
                fail("unexpected phase %r" % ph)
    for pid in sorted(used_pids):
        if pid not in pnames:
            fail("pid %s has no process_name" % pid)
    for key in sorted(used_threads):
        if key not in tnames:
            fail("thread %s has no thread_name" % (key,))
    nranks = len({r["rank"] for r in recs})
    if len(pnames) < nranks:
        fail("%d processes named, the trace has %d ranks" % (len(pnames), nranks))
    for pid, name in pnames.items():
        if not re.match(r"^rank %d \(.+\)$" % (pid - 1), name):
            fail("pid %s is named %r, expected 'rank %d (HOST)'" % (pid, name, pid - 1))

    # nesting, per thread
    for key, v in slices.items():
        v.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for b, e, name, _ in v:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                fail("thread %s: slice %s [%d, %d] overlaps %s [%d, %d]"
                     % (key, name, b, e, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((b, e, name))

    # one slice per record, to the ns
    t0 = min(r["enter"] for r in recs) if recs else 0
    want = collections.Counter()
    want_inst = 0
    for r in recs:
        b, e = r["enter"] - t0, r["exit"] - t0
        if reduced:
            if r["kind"] in ("CAND", "COMP", "NBCINIT"):
                want[(r["rank"] + 1, b, e - b, r.get("fn", "computation"))] += 1
        elif r["name"] == "MARKER":
            want_inst += 1
        elif r["name"] != "STOPPED":
            want[(r["rank"] + 1, b, e - b, "vtrace:flush" if r["name"] == "FLUSH" else r["name"])] += 1
    got = collections.Counter()
    for (pid, _tid), v in slices.items():
        for b, e, name, _ in v:
            if name != "vtrace:aggregated":
                got[(pid, b, e - b, name)] += 1
    if got != want:
        missing = list((want - got).elements())[:5]
        extra = list((got - want).elements())[:5]
        fail("slices differ from the records: missing %s, extra %s" % (missing, extra))
    if sum(1 for i in instants if i[2] == "MARKER") != want_inst:
        fail("%d MARKER instants, the trace has %d" % (sum(1 for i in instants if i[2] == "MARKER"), want_inst))

    # aggregated slices: a reduced trace's gaps between records, only there
    agg = [(pid, b, e) for (pid, _), v in slices.items() for b, e, n, _ in v if n == "vtrace:aggregated"]
    if reduced:
        gaps = []
        byrank = collections.defaultdict(list)
        for r in recs:
            byrank[r["rank"]].append(r)
        for rank, v in byrank.items():
            prev = None
            for r in v:
                if prev is not None and r["enter"] > prev:
                    gaps.append((rank + 1, prev - t0, r["enter"] - t0))
                prev = r["exit"] if prev is None else max(prev, r["exit"])
        if not agg:
            fail("no vtrace:aggregated slice in the export of a reduced trace")
        if sorted(agg) != sorted(gaps):
            fail("%d aggregated slices, %d gaps between records" % (len(agg), len(gaps)))
    elif agg:
        fail("vtrace:aggregated slices in the export of a full trace")

    # flows: one start, one finish, each inside a slice of its thread
    def inside(key, ts):
        return any(b <= ts <= e for b, e, _, _ in slices.get(key, ()))
    for fid, v in flows.items():
        phs = sorted(p for p, _, _, _ in v)
        if phs != ["f", "s"]:
            fail("flow %s has phases %s, expected one s and one f" % (fid, phs))
            continue
        for ph, key, ts, e in v:
            if ph == "f" and e.get("bp") != "e":
                fail("flow %s: finish without \"bp\":\"e\"" % fid)
            if not inside(key, ts):
                fail("flow %s: %s at %d ns is in no slice of thread %s" % (fid, ph, ts, key))
        if len({(e.get("cat"), e.get("name")) for _, _, _, e in v}) != 1:
            fail("flow %s: start and finish differ in cat or name" % fid)
    if len(flows) != messages:
        fail("%d flows, expected %d messages" % (len(flows), messages))
    print("perfetto: %d events, %d slices, %d flows, %d aggregated, %d threads"
          % (len(evs), sum(len(v) for v in slices.values()), len(flows), len(agg), len(tnames)))


HEADER = re.compile(r"^#Paraver \((\d\d)/(\d\d)/(\d{4}) at (\d\d):(\d\d)\):"
                    r"(\d+)_ns:(\d+)\(([\d,]+)\):1:(\d+)\(([\d:,]+)\)$")


def parse_pcf(path):
    states, types = {}, {}
    section, cur = None, None
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            if section == "VALUES":
                section = None
            continue
        w = line.split()
        if line in ("STATES", "STATES_COLOR", "EVENT_TYPE", "VALUES", "DEFAULT_OPTIONS", "DEFAULT_SEMANTIC",
                    "GRADIENT_COLOR", "GRADIENT_NAMES"):
            section = line
            continue
        if section == "STATES":
            states[int(w[0])] = " ".join(w[1:])
        elif section == "EVENT_TYPE":
            cur = int(w[1])
            types[cur] = {"name": " ".join(w[2:]), "values": None}
        elif section == "VALUES":
            if types[cur]["values"] is None:
                types[cur]["values"] = {}
            types[cur]["values"][int(w[0])] = " ".join(w[1:])
    return states, types


def check_paraver(base, recs, reduced, messages):
    try:
        lines = open(base + ".prv").read().split("\n")
        states, types = parse_pcf(base + ".pcf")
        row = open(base + ".row").read().split("\n")
    except (OSError, ValueError, IndexError, KeyError) as e:
        fail("cannot read the Paraver files %s.{prv,pcf,row}: %s" % (base, e))
        return
    m = HEADER.match(lines[0])
    if not m:
        fail("bad header: %r" % lines[0])
        return
    day, mon, year, hh, mm = (int(x) for x in m.groups()[:5])
    if not (1 <= day <= 31 and 1 <= mon <= 12 and hh < 24 and mm < 60 and year >= 2000):
        fail("bad date in the header: %r" % lines[0])
    duration = int(m.group(6))
    nnodes = int(m.group(7))
    cpus = [int(x) for x in m.group(8).split(",")]
    ntasks = int(m.group(9))
    tasks = [tuple(int(y) for y in x.split(":")) for x in m.group(10).split(",")]
    ranks = sorted({r["rank"] for r in recs})
    nranks = len(ranks)
    t0 = min(r["enter"] for r in recs)
    tend = max(r["exit"] for r in recs)
    if duration != tend - t0:
        fail("header duration %d, the trace lasts %d ns" % (duration, tend - t0))
    if len(cpus) != nnodes:
        fail("header: %d nodes but %d CPU counts" % (nnodes, len(cpus)))
    if ntasks != nranks or len(tasks) != ntasks:
        fail("header: %d tasks (%d listed), the trace has %d ranks" % (ntasks, len(tasks), nranks))
    if sum(cpus) != ntasks:
        fail("header: %d CPUs for %d tasks" % (sum(cpus), ntasks))
    node_of_cpu = {}
    c = 1
    for n, k in enumerate(cpus, 1):
        for _ in range(k):
            node_of_cpu[c] = n
            c += 1
    for thr, node in tasks:
        if thr != 1 or not 1 <= node <= nnodes:
            fail("header: task entry %d:%d" % (thr, node))

    last = -1
    used_states, used_ev = collections.Counter(), collections.defaultdict(set)
    task_states = collections.defaultdict(list)
    ncomm = 0
    nrec = 0

    def obj(f, what):
        cpu, appl, task, thread = (int(x) for x in f)
        if not 1 <= task <= ntasks:
            fail("%s: task %d out of range" % (what, task))
            return
        if appl != 1 or thread != 1:
            fail("%s: application %d thread %d (expected 1 and 1)" % (what, appl, thread))
        if cpu not in node_of_cpu:
            fail("%s: CPU %d out of range" % (what, cpu))
        elif node_of_cpu[cpu] != tasks[task - 1][1]:
            fail("%s: CPU %d is not on task %d's node" % (what, cpu, task))

    for i, line in enumerate(lines[1:], 2):
        if not line:
            continue
        f = line.split(":")
        what = "line %d %r" % (i, line)
        try:
            v = [int(x) for x in f]
        except ValueError:
            fail("%s: not integers" % what)
            continue
        nrec += 1
        if v[0] == 1 and len(v) == 8:
            obj(f[1:5], what)
            t, b, e, s = v[5], v[5], v[6], v[7]
            if e < b:
                fail("%s: ends before it begins" % what)
            used_states[s] += 1
            task_states[v[3]].append((b, e))
        elif v[0] == 2 and len(v) >= 8 and len(v) % 2 == 0:
            obj(f[1:5], what)
            t = v[5]
            for k in range(6, len(v), 2):
                used_ev[v[k]].add(v[k + 1])
        elif v[0] == 3 and len(v) == 15:
            obj(f[1:5], what)
            obj(f[7:11], what)
            t = v[5]
            ls, ps, lr, pr = v[5], v[6], v[11], v[12]
            if ps < ls or pr < lr:
                fail("%s: physical before logical time" % what)
            for x in (ls, ps, lr, pr):
                if not 0 <= x <= duration:
                    fail("%s: time out of the trace" % what)
            if v[13] < 0 or v[14] < 0:
                fail("%s: negative size or tag" % what)
            ncomm += 1
        else:
            fail("%s: not a state, event or communication record" % what)
            continue
        if not 0 <= t <= duration:
            fail("%s: time %d out of [0, %d]" % (what, t, duration))
        if t < last:
            fail("%s: not sorted (previous record at %d)" % (what, last))
        last = t
    for task, v in task_states.items():
        v.sort()
        for (b1, e1), (b2, e2) in zip(v, v[1:]):
            if b2 < e1:
                fail("task %d: states [%d, %d] and [%d, %d] overlap" % (task, b1, e1, b2, e2))
    if ncomm != messages:
        fail("%d communication records, expected %d messages" % (ncomm, messages))
    for s in used_states:
        if s not in states:
            fail("state %d is not named in the .pcf" % s)
    for ty, vals in used_ev.items():
        if ty not in types:
            fail("event type %d is not named in the .pcf" % ty)
        elif types[ty]["values"] is not None:
            for val in vals:
                if val not in types[ty]["values"]:
                    fail("event type %d: value %d is not named in the .pcf" % (ty, val))
    agg = [s for s, n in states.items() if n.startswith("Aggregated")]
    if reduced:
        if not agg or not any(used_states[s] for s in agg):
            fail("no Aggregated state in the export of a reduced trace")
    elif agg and any(used_states[s] for s in agg):
        fail("Aggregated states in the export of a full trace")
    # function values: every record's function is named, under Extrae's MPI event types
    # (50000001 point-to-point, 50000002 collectives, 50000003 others, 50000004 one-sided,
    # 50000005 I/O) with Extrae's values (its src/merger/paraver/MPI_EventEncoding.h), so
    # that Paraver's MPI configuration files apply
    extrae = {"MPI_Send": (50000001, 1), "MPI_Recv": (50000001, 2), "MPI_Isend": (50000001, 3),
              "MPI_Irecv": (50000001, 4), "MPI_Wait": (50000001, 5), "MPI_Waitall": (50000001, 6),
              "MPI_Bcast": (50000002, 7), "MPI_Barrier": (50000002, 8), "MPI_Reduce": (50000002, 9),
              "MPI_Allreduce": (50000002, 10), "MPI_Comm_split": (50000003, 23), "MPI_Init": (50000003, 31),
              "MPI_Finalize": (50000003, 32), "MPI_Sendrecv": (50000001, 41), "MPI_Test": (50000003, 39),
              "MPI_Waitany": (50000001, 59), "MPI_Probe": (50000001, 61), "MPI_Iprobe": (50000001, 62),
              "MPI_Start": (50000003, 123), "MPI_Request_free": (50000003, 115),
              "MPI_Iallreduce": (50000002, 155), "MPI_Ibarrier": (50000002, 156)}
    fnames, where = set(), {}
    for ty, d in types.items():
        if 50000001 <= ty <= 50000005 and d["values"]:
            if d["values"].get(0) != "Outside MPI":
                fail("event type %d: value 0 is not 'Outside MPI'" % ty)
            for val, name in d["values"].items():
                if val:
                    fnames.add(name)
                    where[name] = (ty, val)
    if any(90000001 in (ty,) for ty in types):
        fail("event type 90000001 (before Extrae's types) is still in the .pcf")
    want = {r.get("fn") if reduced else r["name"] for r in recs} - {None, "MARKER", "FLUSH", "STOPPED"}
    if not want <= fnames:
        fail("functions %s are not in the .pcf under types 50000001-50000005" % sorted(want - fnames))
    for name in sorted(want & set(extrae)):
        if where.get(name) != extrae[name]:
            fail("%s: type and value %s, Extrae writes %s" % (name, where.get(name), extrae[name]))
    checked = len(want & set(extrae))
    # .row
    sizes = {}
    i = 0
    while i < len(row):
        mm_ = re.match(r"^LEVEL (\w+) SIZE (\d+)$", row[i])
        if mm_:
            n = int(mm_.group(2))
            names = row[i + 1:i + 1 + n]
            if len(names) != n or any(not x.strip() for x in names):
                fail(".row: level %s lists %d names of %d" % (mm_.group(1), len(names), n))
            sizes[mm_.group(1)] = n
            i += n
        i += 1
    if sizes.get("CPU") != sum(cpus) or sizes.get("NODE") != nnodes or sizes.get("THREAD") != ntasks:
        fail(".row levels %s, header says %d CPUs, %d nodes, %d tasks" % (sizes, sum(cpus), nnodes, ntasks))
    print("paraver: %d records, %d communications, %d states used, %d event types; %d nodes, %d tasks; "
          "%d functions with Extrae's type and value" % (nrec, ncomm, len(used_states), len(used_ev), nnodes,
                                                         ntasks, checked))


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("perfetto", "paraver"):
        sys.exit(__doc__)
    fmt, out, dump, messages = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    recs, reduced = load_dump(dump)
    if reduced:
        named = sum(len(r.get("msgs", [])) for r in recs if r["kind"] == "COMP")
        if named != messages:
            fail("the reduced trace's COMP records name %d messages, expected %d" % (named, messages))
    if fmt == "perfetto":
        check_perfetto(out, recs, reduced, messages)
    else:
        check_paraver(out, recs, reduced, messages)
    if FAILS:
        for f in FAILS:
            print("FAIL: %s" % f)
        sys.exit(1)


if __name__ == "__main__":
    main()
