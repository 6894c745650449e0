# test/analysis: analysis commands on hand-made traces with known answers.
# clusters_cli.sh: `vtrace clusters` (seed 003's burst clustering) on a trace with two
# call sites of known burst lengths and a phase change (clusters_cli.py: clusters, noise,
# timeline, stable region, stated absence of counters, reduced traces), and its errors.
TESTS += test/analysis/clusters_cli.sh
EXTRA_DIST += test/analysis/clusters_cli.sh test/analysis/clusters_cli.py
# compensate*.sh: `vtrace compensate` (seed 001's overhead compensation) on hand-made
# traces with a known injected per-event cost (compensate_cli.py: local events, m.1, m.2,
# collectives, flushes), its errors, and a real MPI run (compensate_mpi.sh); hbcheck
# checks happened-before in the result with the reader's own matching.
check_PROGRAMS += test/analysis/hbcheck
test_analysis_hbcheck_SOURCES = test/analysis/hbcheck.c
test_analysis_hbcheck_LDADD = libvtread.la $(ZLIB_LIBS)
TESTS += test/analysis/compensate_cli.sh test/analysis/compensate_mpi.sh
EXTRA_DIST += test/analysis/compensate_cli.sh test/analysis/compensate_cli.py test/analysis/compensate_mpi.sh
# stream_memory.sh: commands that stream on a 1.2M-event trace within a fixed address
# space (ulimit -v), which O(events) memory would exceed.
TESTS += test/analysis/stream_memory.sh
EXTRA_DIST += test/analysis/stream_memory.sh
