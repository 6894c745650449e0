# test/reader: the reader library and the vtrace command.
#   synth            writes the synthetic trace (test/reader/synth.c)
#   test_corrupt     truncations, byte flips and named corruptions, in-process
#   test_reader      cmocka unit tests (varints, layout letters, definitions, matching)
#   golden.sh        vtrace info/dump against test/reader/golden/
#   corrupt_cli.sh   the vtrace command on damaged traces and bad command lines
#   few_descriptors.sh  every command under ulimit -n 8: the same output
#   old_versions.sh  kept traces (test/reader/v1.2/ to v2.0/: REDUCED_COLS, snapshots, modules, shared tables, call sites by module, communicator ids as 64-bit values, event blocks of codec 1) read as they were
# The libFuzzer target is built and run by test/reader/run-fuzz.sh (clang).
check_PROGRAMS += test/reader/synth test/reader/test_corrupt
test_reader_synth_SOURCES = test/reader/synth_main.c test/reader/synth.c test/reader/synth.h
test_reader_synth_LDADD = libvtread.la $(ZLIB_LIBS)
test_reader_test_corrupt_SOURCES = test/reader/test_corrupt.c test/reader/synth.c test/reader/synth.h
test_reader_test_corrupt_LDADD = libvtread.la $(ZLIB_LIBS)
TESTS += test/reader/test_corrupt test/reader/golden.sh test/reader/corrupt_cli.sh test/reader/old_versions.sh \
	test/reader/few_descriptors.sh

if HAVE_CMOCKA
check_PROGRAMS += test/reader/test_reader
test_reader_test_reader_SOURCES = test/reader/test_reader.c \
	test/reader/memtrace.c test/reader/memtrace.h \
	test/reader/synth.c test/reader/synth.h
test_reader_test_reader_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_reader_test_reader_LDADD = libvtread.la $(CMOCKA_LIBS) $(ZLIB_LIBS)
TESTS += test/reader/test_reader
endif

EXTRA_DIST += test/reader/golden.sh test/reader/corrupt_cli.sh test/reader/few_descriptors.sh \
	test/reader/fuzz_reader.c test/reader/fuzz_input.h test/reader/run-fuzz.sh \
	test/reader/golden/info.txt test/reader/golden/info.json \
	test/reader/golden/dump.txt test/reader/golden/dump-rank1.jsonl \
	test/reader/old_versions.sh \
	test/reader/damaged/time-jump/vtrace.defs test/reader/damaged/time-jump/rank-000000.vte \
	test/reader/damaged/time-jump/rank-000001.vte \
	test/reader/damaged/send-time-overflow/vtrace.defs \
	test/reader/damaged/send-time-overflow/rank-000000.vte \
	test/reader/damaged/send-time-overflow/rank-000001.vte \
	test/reader/v1.2/probe-full.dump test/reader/v1.2/probe-full.whatif \
	test/reader/v1.2/probe-reduced.dump test/reader/v1.2/probe-reduced.whatif \
	test/reader/v1.2/probe-full/config.txt \
	test/reader/v1.2/probe-full/rank-000000.vte \
	test/reader/v1.2/probe-full/rank-000001.vte \
	test/reader/v1.2/probe-full/vtrace.defs \
	test/reader/v1.2/probe-reduced/rank-000000.vte \
	test/reader/v1.2/probe-reduced/rank-000001.vte \
	test/reader/v1.2/probe-reduced/vtrace.defs \
	test/reader/v1.3/comms-reduced.dump test/reader/v1.3/comms-reduced.whatif \
	test/reader/v1.3/comms-reduced/rank-000000.vte test/reader/v1.3/comms-reduced/rank-000001.vte \
	test/reader/v1.3/comms-reduced/rank-000002.vte test/reader/v1.3/comms-reduced/rank-000003.vte \
	test/reader/v1.3/comms-reduced/vtrace.defs \
	test/reader/v1.3/p2p-reduced.dump test/reader/v1.3/p2p-reduced.whatif \
	test/reader/v1.3/p2p-reduced/rank-000000.vte test/reader/v1.3/p2p-reduced/rank-000001.vte \
	test/reader/v1.3/p2p-reduced/vtrace.defs \
	test/reader/v1.4/comms-reduced.dump test/reader/v1.4/comms-reduced.whatif \
	test/reader/v1.4/comms-reduced/config.txt \
	test/reader/v1.4/comms-reduced/rank-000000.vte test/reader/v1.4/comms-reduced/rank-000001.vte \
	test/reader/v1.4/comms-reduced/rank-000002.vte test/reader/v1.4/comms-reduced/rank-000003.vte \
	test/reader/v1.4/comms-reduced/vtrace.defs \
	test/reader/v1.4/pipeline-reduced.dump test/reader/v1.4/pipeline-reduced.whatif \
	test/reader/v1.4/pipeline-reduced/config.txt \
	test/reader/v1.4/pipeline-reduced/rank-000000.vte test/reader/v1.4/pipeline-reduced/rank-000001.vte \
	test/reader/v1.4/pipeline-reduced/vtrace.defs \
	test/reader/v1.4/halo-full.dump test/reader/v1.4/halo-full.whatif \
	test/reader/v1.4/halo-full/rank-000000.vte test/reader/v1.4/halo-full/rank-000001.vte \
	test/reader/v1.4/halo-full/vtrace.defs \
	test/reader/v1.4/halo-reduced.dump test/reader/v1.4/halo-reduced.whatif \
	test/reader/v1.4/halo-reduced/rank-000000.vte test/reader/v1.4/halo-reduced/rank-000001.vte \
	test/reader/v1.4/halo-reduced/vtrace.defs \
	test/reader/v1.5/halo-full.dump test/reader/v1.5/halo-full.whatif \
	test/reader/v1.5/halo-full/rank-000000.vte test/reader/v1.5/halo-full/rank-000001.vte \
	test/reader/v1.5/halo-full/vtrace.defs \
	test/reader/v1.5/halo-reduced.dump test/reader/v1.5/halo-reduced.whatif \
	test/reader/v1.5/halo-reduced/rank-000000.vte test/reader/v1.5/halo-reduced/rank-000001.vte \
	test/reader/v1.5/halo-reduced/vtrace.defs \
	test/reader/v1.6/halo-full.dump test/reader/v1.6/halo-full.whatif \
	test/reader/v1.6/halo-full/rank-000000.vte test/reader/v1.6/halo-full/rank-000001.vte \
	test/reader/v1.6/halo-full/vtrace.defs \
	test/reader/v1.6/halo-reduced.dump test/reader/v1.6/halo-reduced.whatif \
	test/reader/v1.6/halo-reduced/rank-000000.vte test/reader/v1.6/halo-reduced/rank-000001.vte \
	test/reader/v1.6/halo-reduced/vtrace.defs \
	test/reader/v1.6/comm_ids-full.dump test/reader/v1.6/comm_ids-full.whatif \
	test/reader/v1.6/comm_ids-full/rank-000000.vte test/reader/v1.6/comm_ids-full/rank-000001.vte \
	test/reader/v1.6/comm_ids-full/vtrace.defs \
	test/reader/v2.0/halo-full.dump test/reader/v2.0/halo-full.whatif \
	test/reader/v2.0/halo-full/rank-000000.vte test/reader/v2.0/halo-full/rank-000001.vte \
	test/reader/v2.0/halo-full/vtrace.defs \
	test/reader/v2.0/halo-reduced.dump test/reader/v2.0/halo-reduced.whatif \
	test/reader/v2.0/halo-reduced/rank-000000.vte test/reader/v2.0/halo-reduced/rank-000001.vte \
	test/reader/v2.0/halo-reduced/vtrace.defs
