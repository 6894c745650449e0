#!/usr/bin/env python3
"""Every vtrace command on a synthetic trace of many ranks (vtrace synth), each under a
bounded number of descriptors (RLIMIT_NOFILE) and a memory limit (RLIMIT_AS): a reader
that keeps a descriptor per rank, or memory per rank pair, fails here. Prints each
command's peak RSS and CPU time (getrusage of the child), checks what the output proves:
the rank count, the dump's records, a reduced trace whose predictions equal the full
trace's, every exporter's files."""
import argparse, os, resource, shutil, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--vtrace", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--ranks", type=int, default=65536)
ap.add_argument("--pattern", default="halo1d")
ap.add_argument("--iterations", type=int, default=1)
ap.add_argument("--nofile", type=int, default=1024)
ap.add_argument("--mem-gb", type=float, default=6.0)
ap.add_argument("--otf2", type=int, default=1, help="0: vtrace was built without OTF2")
a = ap.parse_args()
me = "many_ranks"


def fail(msg):
    print("FAIL: %s: %s" % (me, msg))
    sys.exit(1)


def limits():
    resource.setrlimit(resource.RLIMIT_NOFILE, (a.nofile, a.nofile))
    lim = int(a.mem_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


usage = {}


def run_measured(name, args, stdout=None):
    """Runs vtrace ARGS under the limits, records its peak RSS and CPU time (its own
    rusage) and returns its standard output."""
    errpath = os.path.join(a.work, "stderr")
    with open(errpath, "wb") as err:
        p = subprocess.Popen([a.vtrace] + args, preexec_fn=limits, stderr=err,
                             stdout=subprocess.PIPE if stdout is None else stdout)
        so = p.stdout.read() if stdout is None else b""
        _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        fail("vtrace %s exits %d under 'ulimit -n %d' and %.1f GB: %s" %
             (" ".join(args), rc, a.nofile, a.mem_gb, open(errpath, "rb").read().decode(errors="replace")[:400]))
    usage[name] = (ru.ru_maxrss, ru.ru_utime + ru.ru_stime)
    return so


import json

w = a.work
shutil.rmtree(w, ignore_errors=True)
os.makedirs(w)
t = os.path.join(w, "t")
out = run_measured("synth", ["synth", "-q", "--json", "-p", a.pattern, "-n", str(a.ranks), "-i",
                             str(a.iterations), "--slow-rank", "1", t]).decode()
records = json.loads(out)["records"]

info = run_measured("info", ["info", t]).decode()
if "ranks:     %d" % a.ranks not in info:
    fail("info does not say 'ranks: %d'" % a.ranks)
with open(os.path.join(w, "dump.txt"), "wb") as f:
    run_measured("dump", ["dump", t], stdout=f)
with open(os.path.join(w, "dump.txt"), "rb") as f:
    n = sum(1 for _ in f)
if n != records:
    fail("dump printed %d records, synth wrote %d" % (n, records))
red = os.path.join(w, "red")
run_measured("reduce", ["reduce", "-q", t, red])
wf = run_measured("whatif", ["whatif", "-q", "--json", "-r", "2", "--seed", "5", t])
wr = run_measured("whatif-reduced", ["whatif", "-q", "--json", "-r", "2", "--seed", "5", red])
if wf != wr or wf.count(b"\n") != 2:
    fail("whatif predicts differently from the reduced trace of %d ranks" % a.ranks)
run_measured("critical-path", ["critical-path", "-q", t])
run_measured("domino", ["domino", "-q", t])
run_measured("patterns", ["patterns", t])
run_measured("clusters", ["clusters", t])
run_measured("compensate", ["compensate", t, os.path.join(w, "comp")])
run_measured("period", ["period", t])
if a.otf2:
    run_measured("export-otf2", ["export", "--format=otf2", t, os.path.join(w, "otf2")])
run_measured("export-paraver", ["export", "--format=paraver", t, os.path.join(w, "prv")])
run_measured("export-perfetto", ["export", "--format=perfetto", t, os.path.join(w, "p.json")])
run_measured("report", ["report", "-q", "-o", os.path.join(w, "r.html"), t])
for f in ("comp/vtrace.defs", "prv.prv", "p.json", "r.html"):
    if not os.path.exists(os.path.join(w, f)):
        fail("%s was not written" % f)
if a.otf2 and not os.path.exists(os.path.join(w, "otf2", "traces.otf2")):
    fail("otf2/traces.otf2 was not written")
print("%d ranks, %d records (%s), ulimit -n %d, %.1f GB address space" %
      (a.ranks, records, a.pattern, a.nofile, a.mem_gb))
print("%-16s %10s %8s %12s %12s" % ("command", "max RSS KB", "CPU s", "B/event", "events/s"))
for k, (rss, cpu) in usage.items():
    print("%-16s %10d %8.2f %12.0f %12.0f" % (k, rss, cpu, rss * 1024.0 / records, records / cpu if cpu else 0))
shutil.rmtree(w, ignore_errors=True)
