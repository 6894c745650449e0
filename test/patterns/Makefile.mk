# test/patterns: `vtrace patterns` (doc/man/vtrace-patterns.1).
#   golden.sh        hand-made traces (test/model/vtwrite.py) with hand-computed
#                    severities (golden_patterns.py), the example plug-in, a reduced trace
#   cli.sh           bad input: unknown option, missing plug-in, plug-in without entry
#                    point, not a trace
#   mpi_patterns.sh  MPI programs with waits of known sizes (p2p_waits.c, coll_waits.c),
#                    run with 2 ranks under the machine's mpiexec lock, severities
#                    within 3 ms per instance
TESTS += test/patterns/golden.sh test/patterns/cli.sh test/patterns/mpi_patterns.sh
check_PROGRAMS += test/patterns/p2p_waits test/patterns/coll_waits
test_patterns_p2p_waits_SOURCES = test/patterns/p2p_waits.c
test_patterns_p2p_waits_LDADD = libvtrace.la
test_patterns_p2p_waits_LDFLAGS = -no-install
test_patterns_coll_waits_SOURCES = test/patterns/coll_waits.c
test_patterns_coll_waits_LDADD = libvtrace.la
test_patterns_coll_waits_LDFLAGS = -no-install
# a shared object without the plug-in entry point (cli.sh)
noinst_LTLIBRARIES += test/patterns/noentry.la
test_patterns_noentry_la_SOURCES = test/patterns/noentry.c
test_patterns_noentry_la_LDFLAGS = -module -avoid-version -shared -rpath $(abs_builddir)/test/patterns
EXTRA_DIST += test/patterns/golden.sh test/patterns/golden_patterns.py test/patterns/cli.sh \
	test/patterns/mpi_patterns.sh test/patterns/check_mpi.py
CLEANFILES += test/patterns/*.work/*/* test/patterns/*.work/*/*/*
