"""Sums of a callgrind profile for maint/bench/pair-instructions.sh.
   cgsum.py FILE...  prints, summed over the files, per event (Ir, and the simulated cache
   and branch events when collected): total, the layer (the vtrace entry points MPI_Send
   and MPI_Recv, inclusive, minus MPI's PMPI_Send/PMPI_Recv[_c] called from them), MPI's
   part (PMPI_* inclusive) and the user-space copies (memcpy/memmove inclusive)."""
import re
import subprocess
import sys

ROW = re.compile(r"^\s*([0-9,. ]+?)\s+(\S.*?):(\S+)(?: \[(.*)\])?$")


def sums(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100",
                          "--show-percs=no", path], capture_output=True, text=True, check=True).stdout
    events = None
    acc = {"total": None, "layer": None, "mpi": None, "copy": None}
    for line in out.splitlines():
        if line.startswith("Events shown:"):
            events = line.split()[2:]
            acc = {k: [0] * len(events) for k in acc}
            continue
        if events is None:
            continue
        nums = line.split()[:len(events)]
        if len(nums) < len(events) or not all(re.fullmatch(r"[0-9,]+|\.", x) for x in nums):
            continue
        vals = [0 if x == "." else int(x.replace(",", "")) for x in nums]
        rest = line.split(None, len(events))[-1] if len(line.split()) > len(events) else ""
        if rest.startswith("PROGRAM TOTALS"):
            acc["total"] = vals
            continue
        m = re.match(r"(\S+?):(\S+)( \[(.*)\])?$", rest)
        if not m:
            continue
        src, fn = m.group(1), m.group(2)
        key = None
        # the layer's entry points have source (MPI's own are ???:PMPI_*)
        if fn in ("MPI_Send", "MPI_Recv") and src != "???":
            key = "layer"
        elif re.fullmatch(r"PMPI_(Send|Recv)(_c)?", fn):
            key = "mpi"
        elif re.match(r"__(memcpy|memmove)", fn):
            key = "copy"
        if key:
            acc[key] = [a + v for a, v in zip(acc[key], vals)]
    if events is None:
        sys.exit("cgsum.py: %s: no events in callgrind_annotate's output" % path)
    # the layer's own work: its entry points' inclusive cost minus MPI's calls in them
    if any(acc["layer"]):
        acc["layer"] = [a - b for a, b in zip(acc["layer"], acc["mpi"])]
    return events, acc


total = None
for p in sys.argv[1:]:
    events, acc = sums(p)
    if total is None:
        total = acc
    else:
        total = {k: [a + b for a, b in zip(total[k], acc[k])] for k in total}
print(" ".join(events))
for k in ("total", "layer", "mpi", "copy"):
    print(k, " ".join(str(v) for v in total[k]))
