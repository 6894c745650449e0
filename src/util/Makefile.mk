# src/util: helpers with no vtrace types (byte codecs, setting parsers, the periodicity
# detector); shared by the run-time library and the analyses. Includes nothing of vtrace.
vt_util_sources = \
	src/util/codec.h \
	src/util/settings.c src/util/settings.h \
	src/util/dpd.c src/util/dpd.h src/util/sort.h src/util/grow.h src/util/ixhash.h \
	src/util/aside.c src/util/aside.h \
	src/util/blockpool.c src/util/blockpool.h \
	src/util/hugemem.c src/util/hugemem.h
