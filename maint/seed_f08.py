#!/usr/bin/env python3
"""List the mpi_f08 entry points of MPICH's Fortran library that bypass the C entry points.

    python3 maint/seed_f08.py [--lib LIBMPICHFORT[@VERSION]]... [--table maint/mpi_functions.txt]
                              [-o maint/f08_direct.txt]

MPICH 4.0's `use mpi_f08` bindings call PMPI_ functions directly for every routine without
a choice buffer (mpi_wait_f08_ calls PMPI_Wait), so a PMPI layer never sees those calls.
This script reads the library (nm -D for its entry points, objdump -d for the calls each
makes, following calls into the library's own helper functions) and writes one line per
entry point that calls the PMPI_ function of its own name when that function is in the
table:

    mpi_wait_f08_ MPI_Wait

MPI_Init, MPI_Init_thread and MPI_Finalize are left out: the layer starts lazily on the
first call it sees and ends in its MPI_COMM_SELF attribute callback. Entry points that
bypass the layer but get no shim are written commented out, with the reason (NO_SHIM).
maint/gen_wrappers.py generates one shim per line (src/mpi/wrappers_f08.c). Run it again
for another MPICH version and review the difference; the argument conversions of
gen_wrappers.py were checked against MPICH 4.0.2's disassembly.

With --lib given more than once (VERSION: the MPICH version of that library, by default
mpichversion's), the list is the union: one libvtrace then serves every version listed
(a shim for an entry point a version lacks is never called there, and one for an entry point
that calls the C function instead records the call once, as the C entry point would). A line
found in some of the libraries only ends with a comment naming them: MPICH 4.1 renamed
mpi_*_f08_large_ to mpi_*_c_f08_.
"""
import argparse
import bisect
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIB = "/usr/lib/x86_64-linux-gnu/libmpichfort.so.12"
STARTUP = ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")

# Entry points that bypass the layer but get no shim, and why.
STRING = "string argument (hidden length arguments): not converted"
NO_SHIM = {
    "MPI_Comm_accept": STRING,
    "MPI_Comm_connect": STRING,
    "MPI_Comm_spawn": STRING,
    "MPI_Comm_spawn_multiple": STRING,
    "MPI_File_open": STRING,
    "MPI_File_set_view": STRING,
    "MPI_Comm_join": "not verified (needs a socket)",
    "MPI_Dist_graph_create": "MPI_UNWEIGHTED/MPI_WEIGHTS_EMPTY are Fortran objects to map to C's: not verified",
    "MPI_Dist_graph_create_adjacent": "MPI_UNWEIGHTED/MPI_WEIGHTS_EMPTY are Fortran objects to map to C's: "
                                      "not verified",
}
NO_SHIM_PREFIX = {
    "MPI_Win_": "one-sided synchronisation and windows: not verified and tested yet",
}


def no_shim(cname):
    if cname in NO_SHIM:
        return NO_SHIM[cname]
    for prefix, why in NO_SHIM_PREFIX.items():
        if cname.startswith(prefix):
            return why
    return None


def run(cmd):
    try:
        return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("seed_f08: %s: %s" % (" ".join(cmd), e))


def read_table(path):
    names = set()
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line.split("|")[0].strip())
    return names


def read_library(lib):
    """-> (exported text symbols {name: addr}, instructions [(addr, mnemonic, target addr,
    target name)] sorted by address, function starts sorted)."""
    exported = {}
    for line in run(["nm", "-D", "--defined-only", lib]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWi":
            exported[parts[2].split("@")[0]] = int(parts[0], 16)
    insns = []
    for line in run(["objdump", "-d", "--no-show-raw-insn", lib]).splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(call|jmp)\w*\s+([0-9a-f]+) <([^>]+)>", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), int(m.group(3), 16), m.group(4)))
    insns.sort()
    # Functions start at exported symbols and at the targets of calls (the library's
    # static helpers have no symbol).
    starts = set(exported.values())
    starts.update(t for _, op, t, name in insns if op == "call" and not name.endswith("@plt"))
    return exported, insns, sorted(starts)


def pmpi_calls(addr, insns, starts, exported_addrs, depth=0, seen=None):
    """PMPI_ functions called from the function at addr, or from the helpers it calls."""
    seen = seen if seen is not None else set()
    if addr in seen:
        return set()
    seen.add(addr)
    i = bisect.bisect_right(starts, addr)
    end = starts[i] if i < len(starts) else float("inf")
    found = set()
    lo = bisect.bisect_left(insns, (addr,))
    for a, op, target, name in insns[lo:]:
        if a >= end:
            break
        if name.endswith("@plt"):
            if name.startswith("PMPI_"):
                found.add(name[:-4])
        elif not addr <= target < end and target in exported_addrs:
            continue                                   # another entry point
        elif not addr <= target < end and depth < 2:
            j = bisect.bisect_left(starts, target)
            if j < len(starts) and starts[j] == target:  # a helper (call or tail call)
                found |= pmpi_calls(target, insns, starts, exported_addrs, depth + 1, seen)
    return found


def mpich_version():
    try:
        out = subprocess.run(["mpichversion"], stdout=subprocess.PIPE, universal_newlines=True).stdout
        m = re.search(r"MPICH Version:\s*(\S+)", out)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


def scan_library(lib, table):
    """-> ({symbol: line}, [commented-out lines], [helper notes]) for one libmpichfort."""
    exported, insns, starts = read_library(lib)
    exported_addrs = set(exported.values())
    lines, skipped, helpers = {}, {}, []
    for sym in sorted(exported):
        m = re.fullmatch(r"mpi_(\w+?)_f08(_large)?_", sym)
        if not m:
            continue
        want = "pmpi_" + m.group(1) + ("_c" if m.group(2) else "")
        calls = pmpi_calls(exported[sym], insns, starts, exported_addrs)
        own = [p for p in calls if p.lower() == want]
        for p in sorted(calls):
            if p.lower() != want and p[1:] in table:
                helpers.append("%s calls %s (not the function it stands for)" % (sym, p))
        if not own:
            continue
        cname = own[0][1:]
        if cname not in table or cname in STARTUP:
            continue
        why = no_shim(cname)
        if why:
            skipped[sym] = "# %-36s %-30s no shim: %s" % (sym, cname, why)
        else:
            lines[sym] = "%-38s %s" % (sym, cname)
    return lines, skipped, helpers


def union(per_lib, versions):
    """[{symbol: line}] per library -> sorted lines, each found in some only annotated."""
    out = []
    for sym in sorted(set().union(*per_lib)):
        have = [v for found, v in zip(per_lib, versions) if sym in found]
        line = next(found[sym] for found in per_lib if sym in found)
        if len(have) < len(versions):
            line = "%-70s # MPICH %s only" % (line, ", ".join(have))
        out.append(line)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", action="append", metavar="LIB[@VERSION]")
    ap.add_argument("--table", default=os.path.join(HERE, "mpi_functions.txt"))
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "f08_direct.txt"))
    opt = ap.parse_args()
    table = read_table(opt.table)
    libs, versions, shims, skips, helpers = [], [], [], [], []
    for arg in opt.lib or [DEFAULT_LIB]:
        lib, _, version = arg.partition("@")
        libs.append(lib)
        versions.append(version or mpich_version())
        lines, skipped, notes = scan_library(lib, table)
        shims.append(lines)
        skips.append(skipped)
        helpers += notes
    lines, skipped = union(shims, versions), union(skips, versions)
    out = [
        "# mpi_f08 entry points that call a PMPI_ function of maint/mpi_functions.txt directly,",
        "# so that the C entry points of libvtrace never see them: 'symbol MPI_function'.",
        "# Written by maint/seed_f08.py from %s" % ", ".join(os.path.basename(x) for x in libs),
        "# (MPICH %s): nm -D for the entry points, objdump -d for the PMPI_ calls of each (and"
        % ", ".join(versions),
        "# of the helpers it calls).",
        "# Do not edit: change seed_f08.py (NO_SHIM) and run it again.",
        "# maint/gen_wrappers.py makes one shim per line (src/mpi/wrappers_f08.c). Not listed:",
        "# MPI_Init, MPI_Init_thread, MPI_Finalize (the layer starts on the first call it sees",
        "# and ends in its MPI_COMM_SELF callback). Commented out: entry points that bypass the",
        "# layer but have no shim.",
    ] + lines + ["", "# Bypass the layer, no shim:"] + skipped
    tmp = opt.output + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("\n".join(out) + "\n")
    os.replace(tmp, opt.output)
    for h in sorted(set(helpers)):
        print("seed_f08: note: " + h, file=sys.stderr)
    print("seed_f08: %d shims, %d without -> %s" % (len(lines), len(skipped), opt.output))


if __name__ == "__main__":
    main()
