#!/usr/bin/env python3
"""List the Fortran entry points of Open MPI that libvtrace defines (maint/ompi_fortran.txt).

    python3 maint/seed_ompi_fortran.py [--libdir DIR] [--table maint/mpi_functions.txt]
                                       [-o maint/ompi_fortran.txt]

Open MPI 4.1's mpif.h and `use mpi` bindings are ompi_x_f in libmpi_mpifh (mpi_x_ and the
other spellings are weak aliases of it) and call PMPI_X directly; its mpi_f08 entry points
mpi_x_f08_ (libmpi_usempif08) call ompi_x_f or its alias pmpi_x_. This script writes one
line per function of the table that libmpi_mpifh has (nm -D) and gen_ompi_fortran.py can
convert:

    MPI_Send f08

with 'f08' when mpi_x_f08_ only forwards its arguments: objdump -d shows that it calls
ompi_x_f or pmpi_x_ and nothing else but malloc, free and memcpy (copies of request arrays
and ierror). The others are written commented out, with the reason. Run it again for
another Open MPI version and review the difference.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_ompi_fortran as go  # noqa: E402
import gen_wrappers as gw  # noqa: E402

HELPERS = {"malloc", "free", "memcpy", "__stack_chk_fail"}


def defined(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1]: int(line.split()[0], 16) for line in out.splitlines() if len(line.split()) == 3}


def plt_calls(lib, syms):
    """address -> the PLT functions called by the function at that address (to its first ret)."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    at = {}
    for i, line in enumerate(dis):
        m = re.match(r"^\s+([0-9a-f]+):", line)
        if m:
            at[int(m.group(1), 16)] = i
    calls = {}
    for addr in set(syms.values()):
        i, found = at.get(addr), []
        while i is not None and i < len(dis) and dis[i].strip():
            m = re.search(r"\b(call|jmp)\s+[0-9a-f]+ <([^>]+)@plt>", dis[i])
            if m:
                found.append(m.group(2))
            if re.search(r"\sret\s*$", dis[i]):
                break
            i += 1
        calls[addr] = found
    return calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libdir", default="/usr/lib/x86_64-linux-gnu/openmpi/lib")
    ap.add_argument("--table", default=os.path.join(HERE, "mpi_functions.txt"))
    ap.add_argument("-o", default=os.path.join(HERE, "ompi_fortran.txt"))
    args = ap.parse_args()
    mpifh = os.path.realpath(os.path.join(args.libdir, "libmpi_mpifh.so"))
    f08 = os.path.realpath(os.path.join(args.libdir, "libmpi_usempif08.so"))
    have = defined(mpifh)
    f08syms = {s: a for s, a in defined(f08).items() if s.endswith("_f08_")}
    calls = plt_calls(f08, f08syms)
    lines = ["# Open MPI's Fortran entry points that libvtrace defines: 'MPI_Name [f08]'.",
             "# Written by maint/seed_ompi_fortran.py from %s and %s" % (mpifh, f08),
             "# (nm -D, objdump -d). Do not edit: change the script or gen_ompi_fortran.py and run it again.",
             "# Each line: ompi_x_f and its aliases mpi_x_, mpi_x__, mpi_x, MPI_X (mpif.h, use mpi);",
             "# with f08 also mpi_x_f08_, which only forwards to ompi_x_f / pmpi_x_ in this library.",
             "# Commented out: functions of the table that have no conversion (the reason)."]
    n = 0
    for f in gw.parse_table(args.table):
        b = f["name"][4:].lower()
        if "ompi_%s_f" % b not in have:
            continue
        if f["name"] not in go.HAND_PARMS:
            try:
                go.shim(f)
            except go.Unsupported as e:
                lines.append("# %-32s %s" % (f["name"], e))
                continue
        sym = "mpi_%s_f08_" % b
        fwd = [c for c in calls.get(f08syms.get(sym, -1), []) if c not in HELPERS]
        tag = "f08" if fwd in (["ompi_%s_f" % b], ["pmpi_%s_" % b]) else ""
        if sym in f08syms and not tag:
            tag = "   # %s calls %s" % (sym, ", ".join(fwd) or "nothing")
        lines.append(("%-32s %s" % (f["name"], tag)).rstrip())
        n += 1
    with open(args.o, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("seed_ompi_fortran: %d functions -> %s" % (n, args.o))


if __name__ == "__main__":
    main()
