# src/analysis: the offline analyses (replay, what-if, critical and domino paths, reduce,
# wait-state patterns, clusters, compensation) in libvtread with the format and the model.
# Includes src/model, src/format and src/util; never linked into an MPI program.
noinst_LTLIBRARIES += libvtread.la
libvtread_la_SOURCES = $(vt_util_sources) $(vt_format_sources) $(vt_model_sources) \
	src/analysis/replay.c src/analysis/replay.h src/analysis/replay_priv.h \
	src/analysis/replay_core.c src/analysis/replay_full.c src/analysis/replay_stream.c \
	src/analysis/replay_reduced.c src/analysis/replay_sched.c src/analysis/scenario.c src/analysis/replay_wire.c src/analysis/replay_par.c \
	src/analysis/critpath.c src/analysis/critpath.h src/analysis/critpath_priv.h \
	src/analysis/critpath_walk.c src/analysis/critpath_cands.c src/analysis/critpath_par.c src/analysis/spill.c src/analysis/spill_sort.c src/analysis/spill.h \
	src/analysis/reduce.c src/analysis/reduce.h src/analysis/reduce_polys.c src/analysis/reduce_polys.h \
	src/analysis/domino.c src/analysis/domino.h src/analysis/aggregate.c src/analysis/aggregate.h \
	src/analysis/imbalance.c src/analysis/imbalance.h \
	src/analysis/compensate.c src/analysis/compensate_io.c src/analysis/compensate_stream.c \
	src/analysis/compensate_priv.h src/analysis/compensate.h \
	src/analysis/patterns.c src/analysis/patterns_agg.c src/analysis/patterns_stream.c src/analysis/patterns_rpar.c \
	src/analysis/patterns_priv.h src/analysis/patterns.h src/analysis/vtrace_pattern.h \
	src/analysis/clusters.c src/analysis/clusters.h src/analysis/clusters_scan.c src/analysis/clusters_priv.h \
	src/analysis/symbols.c src/analysis/symbols.h
# The plug-in API of vtrace patterns is installed.
include_HEADERS = src/analysis/vtrace_pattern.h
libvtread_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS) $(LIBDW_CFLAGS) $(VT_LTO_CFLAGS)
# log10 and sqrt (clusters) need libm.
libvtread_la_LIBADD = $(ZSTD_LIBS) $(ZLIB_LIBS) $(LIBDW_LIBS) -lm
