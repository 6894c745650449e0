#!/bin/sh
# The clock pairs of vtrace.defs on one node (issue 18; doc/clock-repair.md): rank 0's
# host's ranks are not measured again at MPI_Finalize. examples/halo on 2 ranks, full and
# reduced: rank 1 has the same-clock flag, offset 0 (it reads rank 0's clock: what the
# readers and the run-time reduction take), and its second pair (local time, offset) is
# its first one, kept from MPI_Init; rank 0's offsets are 0 and its second local time,
# read at MPI_Finalize, is later than its first.
. "$(dirname "$0")/common.sh"
mpi_timeout=300 fail_stops=yes
prog=$builddir/examples/halo
need_mpiexec
need_built "$prog"
new_work
for mode in full reduced; do
    locked env VTRACE_MODE=$mode VTRACE_DIR="$work/$mode" "$VTEST_MPIEXEC" -n 2 "$prog" > "$work/out.$mode" 2>&1 ||
        { cat "$work/out.$mode"; fail "the $mode run failed"; }
    "$vtrace" info "$work/$mode" > "$work/info.$mode" 2>&1 || { cat "$work/info.$mode"; fail "vtrace info ($mode)"; }
    "${VTEST_PYTHON:-python3}" - "$work/$mode/vtrace.defs" <<'PY' || fail "the clock pairs of the $mode trace"
import struct, sys
path = sys.argv[1]
d = open(path, "rb").read()
off, glob = 16, None
while off + 24 <= len(d):
    typ, codec, n = d[off + 4], d[off + 5], struct.unpack_from("<I", d, off + 8)[0]
    if typ == 4:
        if codec != 0:
            sys.exit("%s: GLOBAL block with codec %d (raw expected)" % (path, codec))
        glob = d[off + 24:off + 24 + n]
    off += 24 + n
if glob is None:
    sys.exit("%s: no GLOBAL block" % path)
p = 0
def uvar():
    global p
    v = s = 0
    while True:
        b = glob[p]
        p += 1
        v |= (b & 0x7F) << s
        s += 7
        if b < 0x80:
            return v
def svar():
    u = uvar()
    return (u >> 1) ^ -(u & 1)
def string():
    global p
    n = uvar()
    p += n
    return glob[p - n:p].decode()
for _ in range(3):
    string()   # version, MPI library, configuration
ranks = [(svar(), svar(), svar(), svar(), uvar(), string()) for _ in range(uvar())]
print(path, ranks)
t1, o1, t2, o2, same, host = ranks[0]
if o1 or o2 or not t2 > t1 or same != 1:
    sys.exit("rank 0: expected offsets 0, a second synchronisation later than the first and the same-clock flag")
t1, o1, t2, o2, same, host = ranks[1]
if host != ranks[0][5] or same != 1 or o1 != 0:
    sys.exit("rank 1: expected rank 0's host, the same-clock flag and offset 0, found %s, %d, %d" % (host, same, o1))
if (t2, o2) != (t1, o1):
    sys.exit("rank 1: expected its MPI_Init pair kept at MPI_Finalize, found (%d, %d) then (%d, %d)" % (t1, o1, t2, o2))
PY
done
finish
