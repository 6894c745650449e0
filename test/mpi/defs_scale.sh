#!/bin/sh
# A trace's definitions grow with the ranks, not with their square (doc/format.md,
# RANKDEFS: compact member lists): test/mpi/comm_scale on 4 and 16 ranks; rank 0's
# communicator table (RANKDEFS, uncompressed: VTRACE_COMPRESS=0) has the same bytes on
# both, where member lists rank by rank would add 12 ranks for MPI_COMM_WORLD and its
# dup, 6 for each split.
. "$(dirname "$0")/common.sh"
fail_stops=yes
prog=$builddir/test/mpi/comm_scale
need_mpiexec
need_built "$prog"
new_work
for n in 4 16; do
    locked env VTRACE_MODE=full VTRACE_COMPRESS=0 VTRACE_DIR="$work/t$n" "$VTEST_MPIEXEC" -n $n "$prog" \
        > "$work/out$n" 2>&1 || { cat "$work/out$n"; fail "the run on $n ranks failed"; }
    "$vtrace" info "$work/t$n" > "$work/info$n" 2>&1 || { cat "$work/info$n"; fail "vtrace info cannot read the trace of $n ranks"; }
done
"${VTEST_PYTHON:-python3}" - "$work/t4/rank-000000.vte" "$work/t16/rank-000000.vte" <<'PY'
import struct, sys
def uvar(d, i):
    v = s = 0
    while True:
        b = d[i]; i += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80:
            return v, i
def skip_str(d, i):
    n, i = uvar(d, i)
    return i + n
def members(d, i, compact):
    n, i = uvar(d, i)
    if n == 0:
        return i
    form = 0
    if compact:
        form, i = uvar(d, i)
    count = {0: n, 1: 2, 2: 1}[form]
    for _ in range(count):
        _, i = uvar(d, i)
    return i
def comm_table_bytes(path):
    d = open(path, "rb").read()
    off = 16
    while off + 24 <= len(d):
        magic, typ, codec, res, stored, raw, crc, nrec = struct.unpack("<IBBHIIII", d[off:off + 24])
        if typ == 3:
            p = d[off + 24:off + 24 + raw]
            n, i = uvar(p, 0)
            for _ in range(n):  # call sites
                _, i = uvar(p, i); i = skip_str(p, i); _, i = uvar(p, i); i = skip_str(p, i)
            start = i
            n, i = uvar(p, i)
            for _ in range(n):
                kind, i = uvar(p, i)  # 2.0: what the id is derived from
                if kind in (0, 4):  # the id itself; a tag
                    _, i = uvar(p, i)
                if kind in (3, 4):  # a count
                    _, i = uvar(p, i)
                flags, i = uvar(p, i)
                i = members(p, i, flags & 2)
                i = members(p, i, flags & 2)
                _, i = uvar(p, i)  # parent (svar)
                i = skip_str(p, i)
            return n, i - start
        off += 24 + stored
    sys.exit("FAIL: defs_scale.sh: no RANKDEFS block in " + path)
(na, a), (nb, b) = comm_table_bytes(sys.argv[1]), comm_table_bytes(sys.argv[2])
print("rank 0's communicator table: %d communicators, %d bytes on 4 ranks; %d, %d bytes on 16" % (na, a, nb, b))
if na != nb or b != a:
    sys.exit("FAIL: defs_scale.sh: the communicator table grows with the ranks (%d -> %d bytes)" % (a, b))
PY
status=$?
finish
