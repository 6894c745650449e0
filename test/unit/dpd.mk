# The periodicity detector (src/util/dpd.c, seed 000).
#   test_dpd         cmocka: known periods found when the definition says, the smallest
#                    period, a change of period, aperiodic streams and periods past M,
#                    every push against a brute-force d(m) on random patterned streams
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_dpd
TESTS += test/unit/test_dpd
test_unit_test_dpd_SOURCES = test/unit/test_dpd.c src/util/dpd.c src/util/dpd.h
test_unit_test_dpd_CPPFLAGS = $(AM_CPPFLAGS)
test_unit_test_dpd_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_dpd_LDADD = $(CMOCKA_LIBS)
endif
