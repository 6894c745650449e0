# Min-plus polynomials (src/model/poly.c, model.md §4 and §7 item 5).
#   test_poly        cmocka unit tests: domination, order independence, operations,
#                    evaluation, atoms, overflow, encoding, a deliberately broken
#                    canonicalisation that the equality check must catch
#   poly_oracle.sh   random operation sequences (poly_oracle) replayed with the
#                    reference simulation's algebra (poly_oracle.py imports
#                    $VTRACE_SHARED/design/reference/mc.py, default $(top_srcdir)/../shared;
#                    skipped when it is not there)
check_PROGRAMS += test/unit/poly_oracle
test_unit_poly_oracle_SOURCES = test/unit/poly_oracle.c \
	src/model/poly.c src/model/poly.h src/util/codec.h
test_unit_poly_oracle_CFLAGS = $(AM_CFLAGS)
TESTS += test/unit/poly_oracle.sh
EXTRA_DIST += test/unit/poly_oracle.sh test/unit/poly_oracle.py

if HAVE_CMOCKA
check_PROGRAMS += test/unit/test_poly
TESTS += test/unit/test_poly
test_unit_test_poly_SOURCES = test/unit/test_poly.c \
	src/model/poly.c src/model/poly.h src/util/codec.h
test_unit_test_poly_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_unit_test_poly_LDADD = $(CMOCKA_LIBS)
endif
