# Unit tests of the recording library's pure parts (cmocka).
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_settings
TESTS += test/unit/test_settings
test_unit_test_settings_SOURCES = test/unit/test_settings.c src/util/settings.c src/util/settings.h src/util/aside.c
test_unit_test_settings_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_settings_LDADD = $(CMOCKA_LIBS)
endif
include test/unit/poly.mk
include test/unit/rankreduce.mk
include test/report/Makefile.mk
include test/unit/clockfix.mk
include test/patterns/Makefile.mk
include test/unit/dpd.mk
include test/unit/evcols.mk
include test/unit/blockpool.mk
include test/analysis/Makefile.mk

# configure --disable-vtrace, in a build of its own.
TESTS += test/build/disabled.sh
EXTRA_DIST += test/build/disabled.sh
# configure --with-mpi=openmpi, in a build of its own: a part of the MPI tests under
# Open MPI (skips without it).
TESTS += test/build/openmpi.sh
EXTRA_DIST += test/build/openmpi.sh
# The layout of src/: includes by folder, file lengths, no call cycles (maint/check-layering.py).
TESTS += test/build/layering.sh
EXTRA_DIST += test/build/layering.sh maint/check-layering.py
# The Fortran-only MPI symbols (MPICH 4.1 and later) referred to weakly only.
TESTS += test/build/fortran_symbols.sh
EXTRA_DIST += test/build/fortran_symbols.sh
# ASan and UBSan over the format, the model and the analyses, and a short run of each fuzzer.
TESTS += test/build/sanitizers.sh
EXTRA_DIST += test/build/sanitizers.sh test/analysis/fuzz_analyses.c
include test/export/Makefile.mk
# vtrace config-vars lists every VTRACE_* setting the layer reads (issue 17)
TESTS += test/tools/config_vars.sh
EXTRA_DIST += test/tools/config_vars.sh
# maint/bench/replay-vs.sh: two builds' replay speed in alternating runs (issue 15)
TESTS += test/tools/replay_vs.sh test/tools/pack_bench.sh test/tools/goal_halo.sh
EXTRA_DIST += test/tools/replay_vs.sh test/tools/pack_bench.sh test/tools/goal_halo.sh
# every command on damaged traces
TESTS += test/tools/fuzz_commands.sh
EXTRA_DIST += test/tools/fuzz_commands.sh test/tools/fuzz_commands.py
# A site install (issue 17): wrappers' lines, CMake both ways and find_package(vtrace),
# mpicc -profile, the module file; configure and make install in a build of its own.
TESTS += test/build/site_install.sh
EXTRA_DIST += test/build/site_install.sh
