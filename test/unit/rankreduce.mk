# One rank's reduction (src/model/rankreduce.c), linked without the trace reader as
# the run time will link it.
#   test_rankreduce  cmocka: hand-made model events; the records in order, statistics,
#                    hooks, records held behind two open probe windows
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_rankreduce
TESTS += test/unit/test_rankreduce
test_unit_test_rankreduce_SOURCES = test/unit/test_rankreduce.c \
	src/model/rankreduce.c src/model/rankreduce.h \
	src/model/symbolic.c src/model/symbolic.h \
	src/model/poly.c src/model/poly.h src/util/codec.h
test_unit_test_rankreduce_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_rankreduce_LDADD = $(CMOCKA_LIBS)
endif
