#!/usr/bin/env python3
"""A trace's definitions grow with its ranks, not with their square (issue 13), at 16K
ranks: vtrace synth writes the same halo2d run on 1,024 and 16,384 ranks; a rank file's
definitions (file header, FUNCS, RANKDEFS, END) take the same bytes on both, vtrace.defs
a few bytes a rank, and the reader's memory for the trace (vtrace dump, peak RSS of the
child) grows by a bounded amount per rank. And at 16K ranks of a halo+allreduce code of
100 iterations (an MPI_Allreduce every 10th exchange), the definitions (the rank files'
and vtrace.defs; not a rank file's header and END block) are under 5% of the trace's bytes (format 1.5: the function table and
what the ranks' RANKDEFS share are in vtrace.defs once; 14% before). Member lists written rank by rank would put
16K ranks of MPI_COMM_WORLD (32 KB) into every rank file and every reader's memory."""
import argparse, json, os, shutil, struct, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--vtrace", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()


def fail(msg):
    print("FAIL: defs_scale: %s" % msg)
    sys.exit(1)


FRAMING = {}  # trace directory -> bytes of its rank files' headers and END blocks


def definitions(d):
    """(bytes of every rank file's definitions, of its events, of vtrace.defs). A rank
    file's header (16 bytes) and END block (24) count with its definitions here, and
    apart in FRAMING[d]."""
    defs = ev = frame = 0
    for f in os.listdir(d):
        if not f.startswith("rank-"):
            continue
        data = open(os.path.join(d, f), "rb").read()
        off = 16
        defs += 16
        frame += 16
        while off + 24 <= len(data):
            typ = data[off + 4]
            n = 24 + struct.unpack_from("<I", data, off + 8)[0]
            if typ in (2, 5, 6, 7):
                ev += n
            else:
                defs += n
                if typ == 15:
                    frame += n
            off += n
        if off != len(data):
            fail("%s/%s: blocks end at %d, the file at %d" % (d, f, off, len(data)))
    FRAMING[d] = frame
    return defs, ev, os.path.getsize(os.path.join(d, "vtrace.defs"))


def reader_rss(d):
    """Peak RSS (KB) of vtrace dump on D (the trace opened, one rank's records at a time),
    from the child's own rusage; the number of lines it printed."""
    with open(os.path.join(a.work, "dump.err"), "wb") as err:
        p = subprocess.Popen([a.vtrace, "dump", d], stdout=subprocess.PIPE, stderr=err)
        lines = sum(1 for _ in p.stdout)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        fail("vtrace dump %s: %s" % (d, open(os.path.join(a.work, "dump.err"), "rb").read().decode(errors="replace")[:300]))
    return ru.ru_maxrss, lines


shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
res, records = {}, {}
for n in (1024, 16384):
    d = os.path.join(a.work, "t%d" % n)
    p = subprocess.run([a.vtrace, "synth", "-q", "--json", "-p", "halo2d", "-n", str(n), "-i", "4", d],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail("synth -n %d: %s" % (n, p.stderr.decode(errors="replace")[:300]))
    records[n] = json.loads(p.stdout)["records"]
    res[n] = definitions(d)
rss = {}
for n in (1024, 16384):
    rss[n], lines = reader_rss(os.path.join(a.work, "t%d" % n))
    if lines != records[n]:
        fail("vtrace dump printed %d records of the %d-rank trace, synth wrote %d" % (lines, n, records[n]))
for n in (1024, 16384):
    defs, ev, g = res[n]
    print("%5d ranks: rank files' definitions %d bytes (%.1f a rank), events %d, vtrace.defs %d (%.2f a rank); "
          "definitions %.1f%% of the trace; the reader %d KB" %
          (n, defs, defs / n, ev, g, g / n, 100.0 * (defs + g) / (defs + ev + g), rss[n]))
per1, per16 = res[1024][0] / 1024, res[16384][0] / 16384
if per16 > per1 * 1.03:
    fail("a rank file's definitions grow with the ranks: %.1f bytes at 1K ranks, %.1f at 16K" % (per1, per16))
g1, g16 = res[1024][2] / 1024, res[16384][2] / 16384
if g16 > 16 or g16 > g1 * 1.25 + 1:
    fail("vtrace.defs takes %.2f bytes a rank at 16K ranks (%.2f at 1K)" % (g16, g1))
# share of the definitions: at most what it was with 16x fewer ranks (events a rank equal)
s1 = (res[1024][0] + res[1024][2]) / sum(res[1024])
s16 = (res[16384][0] + res[16384][2]) / sum(res[16384])
if s16 > s1 * 1.03:
    fail("the definitions' share grows with the ranks: %.2f%% -> %.2f%%" % (100 * s1, 100 * s16))
# the share at 16K ranks of a longer run (events a rank as a real code has them)
d = os.path.join(a.work, "share")
p = subprocess.run([a.vtrace, "synth", "-q", "-p", "halo2d", "-n", "16384", "-i", "100", "--allreduce-every", "10", d],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
if p.returncode != 0:
    fail("synth -n 16384 -i 100: %s" % p.stderr.decode(errors="replace")[:300])
defs, ev, g = definitions(d)
# the definitions proper: a rank file's header and END block are not definitions (since
# format 2.1 the event blocks are 21% smaller and these 40 bytes a rank file alone are
# 1.5% of this trace); they are printed apart
frame = FRAMING[d]
share = 100.0 * (defs - frame + g) / (defs + ev + g)
print("16384 ranks, 100 iterations: definitions %.1f bytes a rank file, vtrace.defs %.2f a rank, events %.1f a rank, "
      "file header and END %.1f a rank file: definitions %.2f%% of the trace, with the framing %.2f%%" %
      ((defs - frame) / 16384, g / 16384, ev / 16384, frame / 16384, share,
       100.0 * (defs + g) / (defs + ev + g)))
if share >= 5:
    fail("the definitions are %.2f%% of a 16K-rank trace (bound 5%%)" % share)
shutil.rmtree(d, ignore_errors=True)
per_rank_kb = (rss[16384] - rss[1024]) / (16384 - 1024)
if per_rank_kb > 3:
    fail("the reader holds %.1f KB more a rank at 16K ranks than at 1K" % per_rank_kb)
print("reader: %.2f KB a rank more from 1K to 16K ranks (bound 3)" % per_rank_kb)
shutil.rmtree(a.work, ignore_errors=True)
