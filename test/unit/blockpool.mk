# The pool of per-rank blocks (src/util/blockpool.c, doc/replay-scale.md).
#   test_blockpool   cmocka: blocks line-aligned, at least as large as asked and at most
#                    a fifth and a line larger, never overlapping; a freed block handed
#                    out again for its size class only; grow keeps the bytes; blocks
#                    above 64 KiB and a NULL pool go to the C allocator
if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_blockpool
TESTS += test/unit/test_blockpool
test_unit_test_blockpool_SOURCES = test/unit/test_blockpool.c src/util/blockpool.c src/util/blockpool.h
test_unit_test_blockpool_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_blockpool_LDADD = $(CMOCKA_LIBS)
endif
