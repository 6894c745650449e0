#!/bin/sh
# LAMMPS (Debian's lammps, lmp, unmodified) under Open MPI, traced through LD_PRELOAD: its
# bundled 3d Lennard-Jones melt (lammps-examples: 4000 atoms, 250 steps) on 2 ranks, with
# the layer's header on every message (VTRACE_MODE=both). The run's thermodynamic output
# (temperature, energies, pressure every 50 steps) and neighbour count are those of the
# same run without vtrace, digit for digit; the traces read, and the run-time reduced
# trace is `vtrace reduce` of the full one.
. "$VTEST_SRCDIR/test/mpi/app_common.sh"
app_setup app_lammps openmpi lmp "lammps lammps-examples"
input=/usr/share/lammps/examples/melt/in.melt
[ -f "$input" ] || { echo "SKIP: $app: no $input (apt-get install lammps-examples)"; exit 77; }
app_run_plain -log none -in "$input"
app_run -log none -in "$input"
thermo() { sed -n '/^ *Step /,/^Loop time/p' "$1" | grep -v '^Loop time'; grep '^Total # of neighbors' "$1"; }
thermo plain.out > thermo.plain
thermo run.out > thermo.traced
[ "$(grep -c '' thermo.plain)" -ge 8 ] || { cat plain.out; fail "no thermodynamic output in the plain run"; }
cmp -s thermo.plain thermo.traced || { diff thermo.plain thermo.traced; fail "the traced run computed something else"; }
sed 's/^/  /' thermo.traced
# unbounded: the share-of-records bound (rt_equiv.sh) was never measured on this program
# (it runs in an Open MPI build only); NetPIPE shows a real program's reduced trace may
# exceed it (app_netpipe.sh)
app_check_trace unbounded
finish
