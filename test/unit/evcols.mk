# EVENTS_COLS packing (src/format/evcols.c, doc/format.md).
#   test_evcols      cmocka: EVENTS payloads through pack and unpack unchanged; regular
#                    streams pack small; damaged packed payloads refused with the column
#                    and byte, never read past their end
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_evcols
TESTS += test/unit/test_evcols
test_unit_test_evcols_SOURCES = test/unit/test_evcols.c src/format/evcols.c src/format/rcols.c src/format/evcols.h src/format/evcols_priv.h src/util/codec.h \
	src/util/blockpool.c src/util/blockpool.h
test_unit_test_evcols_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ZSTD_CFLAGS)
test_unit_test_evcols_LDADD = $(CMOCKA_LIBS) $(ZSTD_LIBS)
endif
