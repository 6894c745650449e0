# test/parallel: the parallel replay (vtrace-mpi, run by vtrace under mpiexec) gives the
# serial replay's output byte for byte: model programs' traces, vtrace synth traces,
# mc.py's random programs (when shared/ is there), an incomplete trace, and the cases
# process 0 replays alone (errors, a reduced trace); and vtrace itself needs no MPI.
TESTS += test/parallel/whatif_par.sh
EXTRA_DIST += test/parallel/whatif_par.sh test/parallel/par_setup.sh
# reduce and patterns in parallel (the replay with an observer) against the serial ones;
# the commands process 0 runs alone (critical-path, reduced traces, --check) say so
TESTS += test/parallel/analyses_par.sh
EXTRA_DIST += test/parallel/analyses_par.sh
