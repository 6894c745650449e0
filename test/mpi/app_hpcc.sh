#!/bin/sh
# HPC Challenge (Debian's hpcc, unmodified) under Open MPI, traced through LD_PRELOAD:
# every benchmark of it (HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT, latency and
# bandwidth) on a 1x2 grid with N=200 (Debian's example input, smaller), with the layer's
# header on every message (VTRACE_MODE=both). hpcc's own verification passes (its summary
# says Success=1, HPL's residual checks and RandomAccess find no error), the traces read,
# and the run-time reduced trace is `vtrace reduce` of the full one.
. "$VTEST_SRCDIR/test/mpi/app_common.sh"
app_setup app_hpcc openmpi hpcc hpcc
example=/usr/share/doc/hpcc/examples/_hpccinf.txt
[ -f "$example" ] || { echo "SKIP: $app: no $example"; exit 77; }
sed -e 's/^1000 .*Ns$/200          Ns/' -e 's/^80 .*NBs$/40           NBs/' \
    -e 's/^2 .*Ps$/1            Ps/' -e 's/^2 .*Qs$/2            Qs/' "$example" > hpccinf.txt
grep -q '^200 .*Ns$' hpccinf.txt && grep -q '^1 .*Ps$' hpccinf.txt || { echo "FAIL: $app: cannot make hpccinf.txt"; exit 1; }
app_run
[ -f hpccoutf.txt ] || fail "hpcc wrote no hpccoutf.txt"
grep -E '^(Success|MPIRandomAccess_Errors|MPIRandomAccess_LCG_Errors)=' hpccoutf.txt | sed 's/^/  /'
grep -q '^Success=1$' hpccoutf.txt || fail "hpcc's summary does not say Success=1"
grep -q '^MPIRandomAccess_Errors=0$' hpccoutf.txt || fail "RandomAccess found errors"
grep -q ' 0 tests completed and failed residual checks' hpccoutf.txt || fail "HPL failed its residual checks"
# unbounded: the share-of-records bound (rt_equiv.sh) was never measured on this program
# (it runs in an Open MPI build only); NetPIPE shows a real program's reduced trace may
# exceed it (app_netpipe.sh)
app_check_trace unbounded
finish
