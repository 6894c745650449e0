#!/usr/bin/env python3
"""Checks the layout of src/ (CONTRIBUTING.md, "Layout"):

- each folder includes project headers only from the folders it may use
  (tools -> analysis -> model -> format -> util; the run-time library, src/tracing,
  with src/mpi and src/mpid, never from src/analysis or src/tools);
- no source file is longer than --max-lines (src/mpi is generated and not counted);
- with object files (--objects), no two source files call each other, directly or
  through others (a call cycle between files).

usage: check-layering.py SRCDIR [--max-lines N] [--cycles-only] [--objects FILE.o ...]
Prints each violation and exits 1, or prints a summary and exits 0.
"""
import collections
import os
import re
import subprocess
import sys

# folder -> the folders its files may include headers from (itself always)
ALLOWED = {
    "util": set(),
    "format": {"util"},
    "model": {"format", "util"},
    "analysis": {"model", "format", "util"},
    "tracing": {"mpi", "mpid", "model", "format", "util"},
    "mpid": {"mpi", "tracing", "model", "format", "util"},
    "mpi": {"tracing", "mpid", "model", "format", "util"},
    "tools": {"analysis", "model", "format", "util"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def source_files(src):
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h")):
                yield folder, name, os.path.join(path, name)


def check_includes(src, problems):
    for folder, name, path in source_files(src):
        if folder not in ALLOWED:
            problems.append(f"src/{folder}/{name}: folder src/{folder} is not in the layout")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if "/" not in inc:
                    # the configuration headers (vt_mpi_lacks.h: the MPI functions mpi.h lacks),
                    # and the generated files of src/mpi beside each other
                    if inc in ("vt_config.h", "vt_mpi_lacks.h") or folder == "mpi":
                        continue
                    problems.append(f"src/{folder}/{name}:{no}: includes \"{inc}\" without its folder")
                    continue
                top = inc.split("/", 1)[0]
                if top != folder and top not in ALLOWED[folder]:
                    problems.append(f"src/{folder}/{name}:{no}: src/{folder} may not include \"{inc}\" "
                                    f"(allowed: {', '.join(sorted(ALLOWED[folder])) or 'nothing'})")


def check_lengths(src, limit, problems):
    for folder, name, path in source_files(src):
        if folder == "mpi":
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > limit:
            problems.append(f"src/{folder}/{name}: {n} lines (at most {limit}: split it along its seams)")


def unit_name(obj):
    """src/analysis/libvtread_la-replay_core.o -> replay_core"""
    base = os.path.basename(obj)[:-2]
    return base.split("-", 1)[1] if "-" in base else base


def check_cycles(objects, problems):
    defined, used = {}, collections.defaultdict(set)
    for obj in objects:
        unit = unit_name(obj)
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRCV":
                defined[f[2]] = unit
            elif len(f) == 2 and f[0] == "U":
                used[unit].add(f[1])
    calls = collections.defaultdict(set)
    for unit, syms in used.items():
        for s in syms:
            if s in defined and defined[s] != unit:
                calls[unit].add(defined[s])
    # Tarjan's strongly connected components
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(calls[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(calls) | set(defined.values())):
        if v not in index:
            visit(v)
    for comp in cycles:
        edges = "; ".join(f"{a} -> {', '.join(sorted(calls[a] & set(comp)))}" for a in comp)
        problems.append(f"call cycle between {', '.join(comp)} ({edges})")
    return len(set(defined.values()))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    src, limit, objects, cycles_only = argv[1], 1000, [], False
    i = 2
    while i < len(argv):
        if argv[i] == "--cycles-only":
            cycles_only = True
            i += 1
        elif argv[i] == "--max-lines" and i + 1 < len(argv):
            limit = int(argv[i + 1])
            i += 2
        elif argv[i] == "--objects":
            objects = argv[i + 1:]
            break
        else:
            print(f"check-layering: unknown argument {argv[i]}", file=sys.stderr)
            return 2
    problems = []
    if not cycles_only:
        check_includes(src, problems)
        check_lengths(src, limit, problems)
    units = check_cycles(objects, problems) if objects else 0
    for p in problems:
        print(p)
    if problems:
        return 1
    if cycles_only:
        print(f"no call cycle between {units} object files")
        return 0
    files = sum(1 for _ in source_files(src))
    print(f"layout ok: {files} source files in {len(ALLOWED)} folders, none over {limit} lines"
          + (f", no call cycle between {units} object files" if objects else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
