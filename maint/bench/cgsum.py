"""Sums of a callgrind profile for maint/bench/pair-instructions.sh.
   cgsum.py FILE...  prints, summed over the files, per event (Ir, and the simulated cache
   and branch events when collected): total, the layer (the vtrace entry points MPI_Send
   and MPI_Recv, inclusive, minus MPI's PMPI_Send/PMPI_Recv[_c] called from them; the
   environment's CGSUM_CALLS names other entry points, e.g. "Isend|Irecv|Waitall"), MPI's
   part (PMPI_* inclusive), the user-space copies (memcpy/memmove inclusive) and the
   layer's self cost (its own source files only: a cross-check of `layer`)."""
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\s*([0-9,. ]+?)\s+(\S.*?):(\S+)(?: \[(.*)\])?$")
CALLS = re.compile(r"P?MPI_(%s)(_c)?" % os.environ.get("CGSUM_CALLS", "Send|Recv"))


def sums(path, inclusive="yes"):
    out = subprocess.run(["callgrind_annotate", "--inclusive=" + inclusive, "--auto=no", "--threshold=100",
                          "--show-percs=no", os.path.abspath(path)], capture_output=True, text=True, check=True,
                         cwd="/").stdout   # from elsewhere it shortens some file names, splitting functions
    events = None
    acc = {"total": None, "layer": None, "mpi": None, "copy": None, "self": None}
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
        src, fn, obj = m.group(1), m.group(2), m.group(4) or ""
        key = None
        if inclusive == "no":
            # the layer's own code (its source tree), without the library functions it calls
            if src != "???" and "/src/" in src and "/usr/" not in src:
                acc["self"] = [a + v for a, v in zip(acc["self"], vals)]
            continue
        if CALLS.fullmatch(fn):
            # MPI's own functions have no source here (???) and live in the MPI library;
            # the layer's entry points have source. MPICH's MPI_X are aliases of PMPI_X:
            # either name may be shown. Code inlined into an entry point from another file
            # is shown as a row of its own, without a library, whose inclusive cost is in
            # the entry point's row already (with the calls it makes): not counted again.
            if src == "???" and "libvtrace" not in obj:
                key = "mpi"
            elif "libvtrace" in obj:
                key = "layer"
        elif re.match(r"__(memcpy|memmove)", fn):
            key = "copy"
        if key:
            acc[key] = [a + v for a, v in zip(acc[key], vals)]
    if events is None:
        sys.exit("cgsum.py: %s: no events in callgrind_annotate's output" % path)
    # the layer's own work: its entry points' inclusive cost minus MPI's calls in them
    if any(acc["layer"]):
        acc["layer"] = [a - b for a, b in zip(acc["layer"], acc["mpi"])]
    if inclusive == "yes":
        acc["self"] = sums(path, "no")[1]["self"]
    return events, acc


total = None
for p in sys.argv[1:]:
    events, acc = sums(p)
    if total is None:
        total = acc
    else:
        total = {k: [a + b for a, b in zip(total[k], acc[k])] for k in total}
print(" ".join(events))
for k in ("total", "layer", "mpi", "copy", "self"):
    print(k, " ".join(str(v) for v in total[k]))
