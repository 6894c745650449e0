# Clock-condition repair (src/format/clockfix.c, doc/clock-repair.md).
#   test_clockfix    cmocka: hand-made traces with clock offsets and known violations
#                    (counts, shifts, propagation, Waitall, Sendrecv, drift), no receive
#                    before its send once installed, intervals kept after each jump, jumps
#                    no larger than needed, unorderable and foreign input rejected, and
#                    300 random traces against an independent oracle
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_clockfix
TESTS += test/unit/test_clockfix
test_unit_test_clockfix_SOURCES = test/unit/test_clockfix.c \
	test/reader/memtrace.c test/reader/memtrace.h
test_unit_test_clockfix_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/reader
test_unit_test_clockfix_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_clockfix_LDADD = libvtread.la $(CMOCKA_LIBS) $(ZLIB_LIBS)
endif
