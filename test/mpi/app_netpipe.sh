#!/bin/sh
# NetPIPE (Debian's netpipe-mpich2, NPmpich2, unmodified) under MPICH, traced through
# LD_PRELOAD: its integrity mode (-i: every byte of every message checked) from 1 byte
# to 128 KiB (past MPICH's eager limit of 8256 bytes: rendezvous), 3 round trips a size,
# with the layer's header on every message (VTRACE_MODE=both). Its checks pass, the
# traces read, and the run-time reduced trace is `vtrace reduce` of the full one.
. "$VTEST_SRCDIR/test/mpi/app_common.sh"
app_setup app_netpipe mpich NPmpich2 netpipe-mpich2
app_run -i -n 3 -u 131072 -o np.out
grep -q 'Integrity check failed' run.out run.err && fail "NetPIPE's integrity check failed"
n=`cat run.out run.err | grep -c 'Integrity check passed'`
echo "  $n message sizes passed NetPIPE's integrity check"
[ "$n" -ge 25 ] || fail "$n sizes passed the integrity check, expected 25 or more"
# unbounded: the reduced trace keeps 20% to 60% of the records as the machine's load
# decides (which ping-pongs of a size take past the threshold), and a kept record costs
# 7-8 bytes against a full one's 4 (its message's send time and size, which the full
# trace's columns pack away): at 60% it is 300 bytes over its share-of-records bound
# (doc/format.md, "What a reduced trace costs"), at 20% 400 within
app_check_trace unbounded
finish
