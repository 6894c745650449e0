# MPI integration tests: each test program runs under mpiexec with the tracing
# layer, and its trace is checked against what it did. How each test runs (ranks,
# environment) is in test/mpi/testlist; run-mpi-test.sh runs it and calls
# check_trace.py with test/mpi/NAME.expect.
#
# run-mpi-test.sh is the LOG_COMPILER of the whole tree: it runs any test that is
# not in test/mpi/testlist unchanged (exec "$@").
LOG_COMPILER = env VTEST_SRCDIR='$(abs_top_srcdir)' VTEST_BUILDDIR='$(abs_top_builddir)' \
	VTEST_MPIEXEC='$(MPIEXEC)' VTEST_MPI_CC='$(MPI_CC)' VTEST_MPI='$(VT_MPI)' $(VT_TEST_MPI_ENV) VTEST_PYTHON='$(PYTHON3)' \
	VTEST_VTRACE='$(abs_top_builddir)/vtrace$(EXEEXT)' \
	$(SHELL) $(top_srcdir)/test/mpi/run-mpi-test.sh

# Programs traced through libvtrace.la (route 1); -no-install: real executables that
# find the uninstalled library through their run path, no libtool wrapper script.
vt_mpi_traced = \
	test/mpi/p2p_blocking test/mpi/p2p_nonblocking test/mpi/persistent \
	test/mpi/sendrecv test/mpi/probe test/mpi/master_worker test/mpi/collectives \
	test/mpi/comms test/mpi/mpiio test/mpi/route_lib test/mpi/mode_off \
	test/mpi/bad_buffer test/mpi/bad_buffer_2 test/mpi/fail_after test/mpi/fail_midway \
	test/mpi/small_buffer test/mpi/dropped_window test/mpi/dropped_skip test/mpi/dropped_skip_nb \
	test/mpi/rebind test/mpi/threads test/mpi/threads_reuse \
	test/mpi/model_groups test/mpi/model_halo test/mpi/model_pipeline \
	test/mpi/periodic_mark test/mpi/periodic_keep3 test/mpi/odd_requests test/mpi/anysome \
	test/mpi/pb_transparency test/mpi/pb_transparency_4
# Programs linked by the plain MPI compiler: traced through LD_PRELOAD (route 3) or
# rebuilt at test time with 'mpicc -profile=vtrace' (route 2).
vt_mpi_plain = test/mpi/route_preload test/mpi/route_profile

check_PROGRAMS += $(vt_mpi_traced) $(vt_mpi_plain)
TESTS += $(vt_mpi_traced) $(vt_mpi_plain)

vt_mpi_ldflags = -no-install
test_mpi_odd_requests_SOURCES = test/mpi/odd_requests.c test/mpi/mpitest.h
test_mpi_odd_requests_LDADD = libvtrace.la
test_mpi_odd_requests_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_anysome_SOURCES = test/mpi/anysome.c test/mpi/mpitest.h
test_mpi_anysome_LDADD = libvtrace.la
test_mpi_anysome_LDFLAGS = $(vt_mpi_ldflags)
# what the program sees of point-to-point communication, the same with the layer's header
# on every message (VTRACE_MODE=reduced) as without the layer (RUN_COMPARE in testlist);
# 2 and 4 ranks
test_mpi_pb_transparency_SOURCES = test/mpi/pb_transparency.c test/mpi/itemlog.h
test_mpi_pb_transparency_LDADD = libvtrace.la
test_mpi_pb_transparency_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_pb_transparency_4_SOURCES = test/mpi/pb_transparency.c
test_mpi_pb_transparency_4_LDADD = libvtrace.la
test_mpi_pb_transparency_4_LDFLAGS = $(vt_mpi_ldflags)
# the two-phase program of the run-time periodicity detector, under two settings
test_mpi_periodic_mark_SOURCES = test/mpi/phases.c test/mpi/mpitest.h
test_mpi_periodic_mark_LDADD = libvtrace.la
test_mpi_periodic_mark_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_periodic_keep3_SOURCES = test/mpi/phases.c test/mpi/mpitest.h
test_mpi_periodic_keep3_LDADD = libvtrace.la
test_mpi_periodic_keep3_LDFLAGS = $(vt_mpi_ldflags)
# the examples, as test programs of the model (RUN_TRACE=model in testlist)
test_mpi_model_groups_SOURCES = examples/groups.c
test_mpi_model_groups_LDADD = libvtrace.la
test_mpi_model_groups_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_model_halo_SOURCES = examples/halo.c
test_mpi_model_halo_LDADD = libvtrace.la
test_mpi_model_halo_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_model_pipeline_SOURCES = examples/pipeline.c
test_mpi_model_pipeline_LDADD = libvtrace.la
test_mpi_model_pipeline_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_threads_SOURCES = test/mpi/threads.c test/mpi/mpitest.h
test_mpi_threads_LDADD = libvtrace.la -lpthread
test_mpi_threads_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_threads_reuse_SOURCES = test/mpi/threads_reuse.c test/mpi/mpitest.h
test_mpi_threads_reuse_LDADD = libvtrace.la -lpthread
test_mpi_threads_reuse_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_p2p_blocking_SOURCES = test/mpi/p2p_blocking.c test/mpi/mpitest.h
test_mpi_p2p_blocking_LDADD = libvtrace.la
test_mpi_p2p_blocking_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_p2p_nonblocking_SOURCES = test/mpi/p2p_nonblocking.c test/mpi/mpitest.h
test_mpi_p2p_nonblocking_LDADD = libvtrace.la
test_mpi_p2p_nonblocking_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_persistent_SOURCES = test/mpi/persistent.c test/mpi/mpitest.h
test_mpi_persistent_LDADD = libvtrace.la
test_mpi_persistent_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_sendrecv_SOURCES = test/mpi/sendrecv.c test/mpi/mpitest.h
test_mpi_sendrecv_LDADD = libvtrace.la
test_mpi_sendrecv_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_probe_SOURCES = test/mpi/probe.c test/mpi/mpitest.h
test_mpi_probe_LDADD = libvtrace.la
test_mpi_probe_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_master_worker_SOURCES = test/mpi/master_worker.c test/mpi/mpitest.h
test_mpi_master_worker_LDADD = libvtrace.la
test_mpi_master_worker_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_collectives_SOURCES = test/mpi/collectives.c test/mpi/mpitest.h
test_mpi_collectives_LDADD = libvtrace.la
test_mpi_collectives_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_comms_SOURCES = test/mpi/comms.c test/mpi/mpitest.h
test_mpi_comms_LDADD = libvtrace.la
test_mpi_comms_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_mpiio_SOURCES = test/mpi/mpiio.c test/mpi/mpitest.h
test_mpi_mpiio_LDADD = libvtrace.la
test_mpi_mpiio_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_route_lib_SOURCES = test/mpi/route.c test/mpi/mpitest.h
test_mpi_route_lib_LDADD = libvtrace.la
test_mpi_route_lib_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_mode_off_SOURCES = test/mpi/route.c test/mpi/mpitest.h
test_mpi_mode_off_LDADD = libvtrace.la
test_mpi_mode_off_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_bad_buffer_SOURCES = test/mpi/route.c test/mpi/mpitest.h
test_mpi_bad_buffer_LDADD = libvtrace.la
test_mpi_bad_buffer_LDFLAGS = $(vt_mpi_ldflags)
# bad_buffer_2: the same with 2 ranks (the message must not be lost to an early abort).
test_mpi_bad_buffer_2_SOURCES = test/mpi/route.c test/mpi/mpitest.h
test_mpi_bad_buffer_2_LDADD = libvtrace.la
test_mpi_bad_buffer_2_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_fail_after_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_fail_after_LDADD = libvtrace.la
test_mpi_fail_after_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_fail_midway_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_fail_midway_LDADD = libvtrace.la
test_mpi_fail_midway_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_small_buffer_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_small_buffer_LDADD = libvtrace.la
test_mpi_small_buffer_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_dropped_window_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_dropped_window_LDADD = libvtrace.la
test_mpi_dropped_window_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_dropped_skip_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_dropped_skip_LDADD = libvtrace.la
test_mpi_dropped_skip_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_dropped_skip_nb_SOURCES = test/mpi/many_events.c test/mpi/mpitest.h
test_mpi_dropped_skip_nb_LDADD = libvtrace.la
test_mpi_dropped_skip_nb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_rebind_SOURCES = test/mpi/rebind.c test/mpi/mpitest.h
test_mpi_rebind_LDADD = libvtrace.la
test_mpi_rebind_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_route_preload_SOURCES = test/mpi/route.c test/mpi/mpitest.h
test_mpi_route_profile_SOURCES = test/mpi/route.c test/mpi/mpitest.h

if HAVE_FC
# Fortran: one fixed-form program with mpif.h, one with 'use mpi_f08' (which calls
# PMPI_Init directly under MPICH: the layer starts late, on the first call it sees).
# configure has no Fortran 77 compiler (F77), so the fixed-form .f source is
# compiled and linked in one step by the MPI Fortran compiler (FC) through libtool.
# Under Open MPI (test/build/openmpi.sh) through libvtrace's Open MPI Fortran entry points.
vt_mpi_fortran = test/mpi/f77_pingpong test/mpi/f08_pingpong test/mpi/f08_pmpi \
	test/mpi/f77_pingpong_rt test/mpi/f08_pmpi_rt test/mpi/f77_pingpong_red test/mpi/f08_pingpong_red
check_PROGRAMS += $(vt_mpi_fortran)
TESTS += $(vt_mpi_fortran)
if VT_MPI_MPICH
check_PROGRAMS += test/mpi/f08_family
TESTS += test/mpi/f08_family
endif
test_mpi_f77_pingpong_SOURCES =
test_mpi_f77_pingpong_DEPENDENCIES = $(top_srcdir)/test/mpi/f77_pingpong.f libvtrace.la
test_mpi_f77_pingpong_LDADD = libvtrace.la
test_mpi_f77_pingpong_LINK = $(LIBTOOL) $(AM_V_lt) --tag=FC $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) --mode=link \
	$(FC) $(FCFLAGS) -no-install -Wl,--no-as-needed $(VT_FC_LDFLAGS) $(LDFLAGS) -o $@ $(top_srcdir)/test/mpi/f77_pingpong.f
test_mpi_f77_pingpong_rt_SOURCES =
test_mpi_f77_pingpong_rt_DEPENDENCIES = $(test_mpi_f77_pingpong_DEPENDENCIES)
test_mpi_f77_pingpong_rt_LDADD = libvtrace.la
test_mpi_f77_pingpong_rt_LINK = $(test_mpi_f77_pingpong_LINK)
test_mpi_f77_pingpong_red_SOURCES =
test_mpi_f77_pingpong_red_DEPENDENCIES = $(test_mpi_f77_pingpong_DEPENDENCIES)
test_mpi_f77_pingpong_red_LDADD = libvtrace.la
test_mpi_f77_pingpong_red_LINK = $(test_mpi_f77_pingpong_LINK)
test_mpi_f08_pmpi_rt_SOURCES = test/mpi/f08_pmpi.f90
test_mpi_f08_pmpi_rt_LDADD = libvtrace.la
test_mpi_f08_pmpi_rt_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
test_mpi_f08_pingpong_red_SOURCES = test/mpi/f08_pingpong.f90
test_mpi_f08_pingpong_red_LDADD = libvtrace.la
test_mpi_f08_pingpong_red_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
test_mpi_f08_pingpong_SOURCES = test/mpi/f08_pingpong.f90
test_mpi_f08_pingpong_LDADD = libvtrace.la
test_mpi_f08_pingpong_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
test_mpi_f08_pmpi_SOURCES = test/mpi/f08_pmpi.f90
test_mpi_f08_pmpi_LDADD = libvtrace.la
test_mpi_f08_pmpi_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
# f90_usempi: 'use mpi' with LOGICAL and CHARACTER arguments and arrays of datatypes,
# compared with an untraced run in full, reduced and both modes
vt_mpi_f90 = test/mpi/f90_usempi test/mpi/f90_usempi_red test/mpi/f90_usempi_rt
check_PROGRAMS += $(vt_mpi_f90)
TESTS += $(vt_mpi_f90)
test_mpi_f90_usempi_SOURCES = test/mpi/f90_usempi.f90
test_mpi_f90_usempi_LDADD = libvtrace.la
test_mpi_f90_usempi_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
test_mpi_f90_usempi_red_SOURCES = test/mpi/f90_usempi.f90
test_mpi_f90_usempi_red_LDADD = libvtrace.la
test_mpi_f90_usempi_red_LDFLAGS = $(test_mpi_f90_usempi_LDFLAGS)
test_mpi_f90_usempi_rt_SOURCES = test/mpi/f90_usempi.f90
test_mpi_f90_usempi_rt_LDADD = libvtrace.la
test_mpi_f90_usempi_rt_LDFLAGS = $(test_mpi_f90_usempi_LDFLAGS)
# f90_spawn.sh (Open MPI): process creation with strings, traced and plain, over the C
# stand-ins of spawn_stub.c (exported, so that Open MPI's own binding calls them too)
check_PROGRAMS += test/mpi/f90_spawn test/mpi/f90_spawn_plain test/mpi/f08_spawn test/mpi/spawn_world
# spawn_dir.sh: spawned worlds trace into DIR/spawn-HOST-PID
TESTS += test/mpi/spawn_dir.sh
EXTRA_DIST += test/mpi/spawn_dir.sh
test_mpi_spawn_world_SOURCES = test/mpi/spawn_world.c
test_mpi_spawn_world_LDADD = libvtrace.la
test_mpi_spawn_world_LDFLAGS = $(vt_mpi_ldflags)
TESTS += test/mpi/f90_spawn.sh
test_mpi_f90_spawn_SOURCES = test/mpi/f90_spawn.f90 test/mpi/spawn_stub.c
test_mpi_f90_spawn_LDADD = libvtrace.la
test_mpi_f90_spawn_LDFLAGS = $(test_mpi_f90_usempi_LDFLAGS) -export-dynamic
test_mpi_f08_spawn_SOURCES = test/mpi/f08_spawn.f90 test/mpi/spawn_stub.c
test_mpi_f08_spawn_LDADD = libvtrace.la
test_mpi_f08_spawn_LDFLAGS = $(test_mpi_f90_spawn_LDFLAGS)
test_mpi_f90_spawn_plain_SOURCES = test/mpi/f90_spawn.f90 test/mpi/spawn_stub.c
test_mpi_f90_spawn_plain_LDFLAGS = $(vt_mpi_ldflags) $(VT_FC_LDFLAGS) -export-dynamic
# f08_family: the mpi_f08 routines that libvtrace intercepts by name (src/mpi/wrappers_f08.c)
test_mpi_f08_family_SOURCES = test/mpi/f08_family.f90
test_mpi_f08_family_LDADD = libvtrace.la
test_mpi_f08_family_LDFLAGS = $(vt_mpi_ldflags) -Wl,--no-as-needed $(VT_FC_LDFLAGS)
endif

EXTRA_DIST += test/mpi/common.sh test/mpi/testlist test/mpi/run-mpi-test.sh test/mpi/check_trace.py test/mpi/periodic.check test/mpi/odd_requests.check \
	test/mpi/fortran_reduced.check test/mpi/f90_usempi.expect test/mpi/f90_usempi_reduced.check \
	test/mpi/f90_spawn.sh test/mpi/f90_spawn.expect \
	test/mpi/f08_pingpong.openmpi.expect test/mpi/f08_pmpi.openmpi.expect \
	test/mpi/f77_pingpong.f \
	test/mpi/p2p_blocking.expect test/mpi/p2p_nonblocking.expect test/mpi/persistent.expect \
	test/mpi/sendrecv.expect test/mpi/probe.expect test/mpi/master_worker.expect \
	test/mpi/collectives.expect test/mpi/comms.expect test/mpi/mpiio.expect \
	test/mpi/route_lib.expect test/mpi/route_preload.expect test/mpi/route_profile.expect \
	test/mpi/fail_after.expect test/mpi/fail_midway.expect test/mpi/small_buffer.expect \
	test/mpi/f77_pingpong.expect test/mpi/f08_pingpong.expect test/mpi/f08_pmpi.expect \
	test/mpi/f08_family.expect test/mpi/threads.expect test/mpi/threads_reuse.expect
# A test's work directory is removed when it passes and kept when it fails (also an
# expected failure): these remove the files (rm -f cannot remove directories; the
# empty directories do not bother distcheck).
CLEANFILES += test/mpi/.mpiexec.lock test/mpi/*.dir/trace/* test/mpi/*.dir/run.* test/mpi/*.dir/dynamic.expect.* \
	test/mpi/*.dir/vtrace.conf test/mpi/*.dir/*.dat test/mpi/*.dir/*.log test/mpi/*.dir/ref/*

# the piggyback transport refuses ranks running different modes (issue 4)
TESTS += test/mpi/mixed_modes.sh
EXTRA_DIST += test/mpi/mixed_modes.sh

# The programs above again with the piggyback transport on (VTRACE_MODE=reduced): the same
# trace (counts are the payload's, matching is whole), the programs' own checks pass.
vt_mpi_pb = test/mpi/p2p_blocking_pb test/mpi/p2p_nonblocking_pb test/mpi/persistent_pb test/mpi/sendrecv_pb test/mpi/probe_pb test/mpi/master_worker_pb test/mpi/threads_pb test/mpi/odd_requests_pb \
	test/mpi/anysome_pb
check_PROGRAMS += $(vt_mpi_pb)
TESTS += $(vt_mpi_pb)
test_mpi_p2p_blocking_pb_SOURCES = test/mpi/p2p_blocking.c test/mpi/mpitest.h
test_mpi_p2p_blocking_pb_LDADD = libvtrace.la
test_mpi_p2p_blocking_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_p2p_nonblocking_pb_SOURCES = test/mpi/p2p_nonblocking.c test/mpi/mpitest.h
test_mpi_p2p_nonblocking_pb_LDADD = libvtrace.la
test_mpi_p2p_nonblocking_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_persistent_pb_SOURCES = test/mpi/persistent.c test/mpi/mpitest.h
test_mpi_persistent_pb_LDADD = libvtrace.la
test_mpi_persistent_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_sendrecv_pb_SOURCES = test/mpi/sendrecv.c test/mpi/mpitest.h
test_mpi_sendrecv_pb_LDADD = libvtrace.la
test_mpi_sendrecv_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_probe_pb_SOURCES = test/mpi/probe.c test/mpi/mpitest.h
test_mpi_probe_pb_LDADD = libvtrace.la
test_mpi_probe_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_master_worker_pb_SOURCES = test/mpi/master_worker.c test/mpi/mpitest.h
test_mpi_master_worker_pb_LDADD = libvtrace.la
test_mpi_master_worker_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_threads_pb_SOURCES = test/mpi/threads.c test/mpi/mpitest.h
test_mpi_threads_pb_LDADD = libvtrace.la -lpthread
test_mpi_threads_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_odd_requests_pb_SOURCES = test/mpi/odd_requests.c test/mpi/mpitest.h
test_mpi_odd_requests_pb_LDADD = libvtrace.la
test_mpi_odd_requests_pb_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_anysome_pb_SOURCES = test/mpi/anysome.c test/mpi/mpitest.h
test_mpi_anysome_pb_LDADD = libvtrace.la
test_mpi_anysome_pb_LDFLAGS = $(vt_mpi_ldflags)
EXTRA_DIST += test/mpi/anysome.check

# the header's fields, read past the layer, against the sender's trace (issue 4)
vt_mpi_traced += test/mpi/pb_header
test_mpi_pb_header_SOURCES = test/mpi/pb_header.c
test_mpi_pb_header_LDADD = libvtrace.la
test_mpi_pb_header_LDFLAGS = $(vt_mpi_ldflags)
EXTRA_DIST += test/mpi/pb_header.check

# the run-time reduction against vtrace reduce (issue 4), on programs of the model
vt_mpi_rt = test/mpi/collectives_rt test/mpi/comms_rt test/mpi/model_groups_rt test/mpi/model_halo_rt \
	test/mpi/model_pipeline_rt
check_PROGRAMS += $(vt_mpi_rt)
TESTS += $(vt_mpi_rt)
EXTRA_DIST += test/mpi/rt_equiv.sh
test_mpi_collectives_rt_SOURCES = test/mpi/collectives.c test/mpi/mpitest.h
test_mpi_collectives_rt_LDADD = libvtrace.la
test_mpi_collectives_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_comms_rt_SOURCES = test/mpi/comms.c test/mpi/mpitest.h
test_mpi_comms_rt_LDADD = libvtrace.la
test_mpi_comms_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_model_groups_rt_SOURCES = examples/groups.c
test_mpi_model_groups_rt_LDADD = libvtrace.la
test_mpi_model_groups_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_model_halo_rt_SOURCES = examples/halo.c
test_mpi_model_halo_rt_LDADD = libvtrace.la
test_mpi_model_halo_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_model_pipeline_rt_SOURCES = examples/pipeline.c
test_mpi_model_pipeline_rt_LDADD = libvtrace.la
test_mpi_model_pipeline_rt_LDFLAGS = $(vt_mpi_ldflags)
TESTS += test/mpi/rt_broken.sh
EXTRA_DIST += test/mpi/rt_broken.sh
TESTS += test/mpi/reduced_fallback.sh
EXTRA_DIST += test/mpi/reduced_fallback.sh
# stored reduced traces (issue 13): the fallback to the full trace, both writers, failures
TESTS += test/mpi/stored.sh
EXTRA_DIST += test/mpi/stored.sh
# pattern C1 at run time: no point-to-point record between collectives (issue 4)
vt_mpi_rt += test/mpi/halo_c1
test_mpi_halo_c1_SOURCES = test/mpi/halo_c1.c
test_mpi_halo_c1_LDADD = libvtrace.la
test_mpi_halo_c1_LDFLAGS = $(vt_mpi_ldflags)
EXTRA_DIST += test/mpi/rt_c1.check
# every item of pb_transparency but truncation (its header is lost: the run-time
# reduction stops there) under the run-time reduction, against vtrace reduce
vt_mpi_rt += test/mpi/pb_transparency_rt
test_mpi_pb_transparency_rt_SOURCES = test/mpi/pb_transparency.c
test_mpi_pb_transparency_rt_LDADD = libvtrace.la
test_mpi_pb_transparency_rt_LDFLAGS = $(vt_mpi_ldflags)
vt_mpi_rt += test/mpi/probe_rt
vt_mpi_rt += test/mpi/bursts_rt test/mpi/shortmsgs_rt
test_mpi_bursts_rt_SOURCES = test/mpi/bursts.c
test_mpi_bursts_rt_LDADD = libvtrace.la
test_mpi_bursts_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_shortmsgs_rt_SOURCES = test/mpi/bursts.c
test_mpi_shortmsgs_rt_LDADD = libvtrace.la
test_mpi_shortmsgs_rt_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_probe_rt_SOURCES = test/mpi/probe.c test/mpi/mpitest.h
test_mpi_probe_rt_LDADD = libvtrace.la
test_mpi_probe_rt_LDFLAGS = $(vt_mpi_ldflags)
vt_mpi_rt += test/mpi/halo_c1_reduced
test_mpi_halo_c1_reduced_SOURCES = test/mpi/halo_c1.c
test_mpi_halo_c1_reduced_LDADD = libvtrace.la
test_mpi_halo_c1_reduced_LDFLAGS = $(vt_mpi_ldflags)
EXTRA_DIST += test/mpi/reduced_only.check test/mpi/dropped_window.check test/mpi/dropped_skip.check test/mpi/rebind.check
# neighbourhood collectives where a rank has fewer neighbours than the communicator has
# ranks (MPICH's collective suite found the layer reading past the count arrays there):
# full tracing, then the run-time reduction against vtrace reduce
vt_mpi_traced += test/mpi/neighbors
test_mpi_neighbors_SOURCES = test/mpi/neighbors.c test/mpi/mpitest.h
test_mpi_neighbors_LDADD = libvtrace.la
test_mpi_neighbors_LDFLAGS = $(vt_mpi_ldflags)
vt_mpi_rt += test/mpi/neighbors_rt
test_mpi_neighbors_rt_SOURCES = test/mpi/neighbors.c test/mpi/mpitest.h
test_mpi_neighbors_rt_LDADD = libvtrace.la
test_mpi_neighbors_rt_LDFLAGS = $(vt_mpi_ldflags)
EXTRA_DIST += test/mpi/neighbors.expect
# communicator identities: a receive completing after its communicator was freed and its
# handle reused, MPI_Comm_create_group over groups sharing a lowest rank, more than 256
# create_group tags (MPICH's comm suite found each); run-time reduction against vtrace reduce
vt_mpi_rt += test/mpi/comm_ids
test_mpi_comm_ids_SOURCES = test/mpi/comm_ids.c test/mpi/mpitest.h
test_mpi_comm_ids_LDADD = libvtrace.la
test_mpi_comm_ids_LDFLAGS = $(vt_mpi_ldflags)
# one-sided calls: the trace reads, reduces and replays; run-time reduction against vtrace reduce
vt_mpi_traced += test/mpi/rma
test_mpi_rma_SOURCES = test/mpi/rma.c test/mpi/mpitest.h
test_mpi_rma_LDADD = libvtrace.la
test_mpi_rma_LDFLAGS = $(vt_mpi_ldflags)
vt_mpi_rt += test/mpi/rma_rt
test_mpi_rma_rt_SOURCES = test/mpi/rma.c test/mpi/mpitest.h
test_mpi_rma_rt_LDADD = libvtrace.la
test_mpi_rma_rt_LDFLAGS = $(vt_mpi_ldflags)
# MPI_BOTTOM with absolute-address datatypes (MPICH's datatype/sendrecvt4 does it; the
# header packing failed on it): what the program sees is the same plain (VTRACE_MODE=off)
# as under full, reduced and both (RUN_COMPARE in testlist), every piggyback form
vt_mpi_bottom = test/mpi/bottom_full test/mpi/bottom_reduced test/mpi/bottom_both
check_PROGRAMS += $(vt_mpi_bottom)
TESTS += $(vt_mpi_bottom)
test_mpi_bottom_full_SOURCES = test/mpi/bottom.c
test_mpi_bottom_full_LDADD = libvtrace.la
test_mpi_bottom_full_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_bottom_reduced_SOURCES = test/mpi/bottom.c
test_mpi_bottom_reduced_LDADD = libvtrace.la
test_mpi_bottom_reduced_LDFLAGS = $(vt_mpi_ldflags)
test_mpi_bottom_both_SOURCES = test/mpi/bottom.c
test_mpi_bottom_both_LDADD = libvtrace.la
test_mpi_bottom_both_LDFLAGS = $(vt_mpi_ldflags)
# an unknown VTRACE_* variable: one warning naming the nearest setting, the run goes on;
# an empty value ends it (README.vtrace, section 3)
TESTS += test/mpi/unknown_setting.sh
EXTRA_DIST += test/mpi/unknown_setting.sh
# definitions that grow with the ranks, not their square: comm_scale on 4 and 16 ranks
check_PROGRAMS += test/mpi/comm_scale
test_mpi_comm_scale_SOURCES = test/mpi/comm_scale.c
test_mpi_comm_scale_LDADD = libvtrace.la
test_mpi_comm_scale_LDFLAGS = $(vt_mpi_ldflags)
TESTS += test/mpi/defs_scale.sh
EXTRA_DIST += test/mpi/defs_scale.sh
# what a rank adds to a real trace's definitions (examples/halo, 2 and 8 ranks; 1.5)
TESTS += test/mpi/defs_ranks.sh
EXTRA_DIST += test/mpi/defs_ranks.sh
# the clock pairs of vtrace.defs on one node (issue 18)
TESTS += test/mpi/clock_pairs.sh
EXTRA_DIST += test/mpi/clock_pairs.sh
# VTRACE_CLOCK: tsc (kept time, rt_equiv.sh; a drift seen), monotonic, auto, a bad value (issue 18)
TESTS += test/mpi/clock_choice.sh
EXTRA_DIST += test/mpi/clock_choice.sh
# maint/bench/interleave.c built and run plain and under the layer (issue 18)
TESTS += test/mpi/interleave_bench.sh
EXTRA_DIST += test/mpi/interleave_bench.sh
EXTRA_DIST += test/mpi/itemlog.h
# call sites as function (file:line): a -g build of examples/halo.c, moved, stripped and
# rebuilt binaries (analysis/symbols.h)
TESTS += test/mpi/symbols.sh
EXTRA_DIST += test/mpi/symbols.sh

# VTRACE_FILTER (issue 17): filter.sh runs test/mpi/filtered, whose call sites dladdr names
check_PROGRAMS += test/mpi/filtered
test_mpi_filtered_SOURCES = test/mpi/filtered.c test/mpi/mpitest.h
test_mpi_filtered_LDADD = libvtrace.la
test_mpi_filtered_LDFLAGS = $(vt_mpi_ldflags) -export-dynamic
TESTS += test/mpi/filter.sh
EXTRA_DIST += test/mpi/filter.sh
# VTRACE_OVERWRITE: a trace directory that exists already (issue 16)
TESTS += test/mpi/overwrite.sh
EXTRA_DIST += test/mpi/overwrite.sh
# Unmodified Debian-packaged MPI programs traced through LD_PRELOAD (app_common.sh):
# NetPIPE under MPICH, hpcc and LAMMPS under Open MPI (through test/build/openmpi.sh); each
# skips in a build for the other MPI and when its package is not installed
# (maint/install-deps.sh).
TESTS += test/mpi/app_netpipe.sh test/mpi/app_hpcc.sh test/mpi/app_lammps.sh
EXTRA_DIST += test/mpi/app_common.sh test/mpi/app_netpipe.sh test/mpi/app_hpcc.sh test/mpi/app_lammps.sh

# MPI_Send/MPI_Recv fields across the one-byte varint limits (the inlined handlers' one-word
# store and their varints, issue 18)
check_PROGRAMS += test/mpi/p2p_fields
TESTS += test/mpi/p2p_fields
EXTRA_DIST += test/mpi/p2p_fields.expect
test_mpi_p2p_fields_SOURCES = test/mpi/p2p_fields.c test/mpi/mpitest.h
test_mpi_p2p_fields_LDADD = libvtrace.la
test_mpi_p2p_fields_LDFLAGS = $(vt_mpi_ldflags)

# UCX's inline limit widened by the header before MPI_Init with VTRACE_UCX_INLINE=1 (issue
# 18, src/mpid/pb_env.c): set in the modes with headers, untouched in full and off and
# without the setting, a user's value kept (ucx_inline.sh runs ucx_inline in each case)
check_PROGRAMS += test/mpi/ucx_inline
TESTS += test/mpi/ucx_inline.sh
EXTRA_DIST += test/mpi/ucx_inline.sh
test_mpi_ucx_inline_SOURCES = test/mpi/ucx_inline.c test/mpi/mpitest.h
test_mpi_ucx_inline_LDADD = libvtrace.la
test_mpi_ucx_inline_LDFLAGS = $(vt_mpi_ldflags)
# the record buffer in transparent huge pages (issue 18, src/util/hugemem.c): few page
# faults while records fill it (buffer_pages.sh runs buffer_pages)
check_PROGRAMS += test/mpi/buffer_pages
TESTS += test/mpi/buffer_pages.sh
EXTRA_DIST += test/mpi/buffer_pages.sh
test_mpi_buffer_pages_SOURCES = test/mpi/buffer_pages.c test/mpi/mpitest.h
test_mpi_buffer_pages_LDADD = libvtrace.la
test_mpi_buffer_pages_LDFLAGS = $(vt_mpi_ldflags)
# a blocking MPI_Recv into the reduction's own stage and folded at its exit (issue 18):
# status, count and data exact at every size around the stage's limit, any source and tag
vt_mpi_rt += test/mpi/rt_recv_stage
test_mpi_rt_recv_stage_SOURCES = test/mpi/rt_recv_stage.c test/mpi/mpitest.h
test_mpi_rt_recv_stage_LDADD = libvtrace.la
test_mpi_rt_recv_stage_LDFLAGS = $(vt_mpi_ldflags)
