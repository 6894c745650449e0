# test/analysis: analysis commands on hand-made traces with known answers.
# clusters_cli.sh: `vtrace clusters` (seed 003's burst clustering) on a trace with two
# call sites of known burst lengths and a phase change (clusters_cli.py: clusters, noise,
# timeline, stable region, stated absence of counters, reduced traces), and its errors.
TESTS += test/analysis/clusters_cli.sh
EXTRA_DIST += test/analysis/clusters_cli.sh test/analysis/clusters_cli.py
