# The recording library (run time) and the reader library (tools).

lib_LTLIBRARIES += libvtrace.la
if VT_ENABLED
libvtrace_la_SOURCES = \
	src/mpi/wrappers.c src/mpi/wrappers_f08.c src/mpi/vt_fn.h src/mpi/vt_fn_table.c \
	src/tracing/codec.h src/tracing/state.h src/tracing/mpistatus.h src/tracing/handlers.h src/tracing/handlers.c \
	src/tracing/buffer.c src/tracing/buffer.h \
	src/tracing/blockio.c src/tracing/blockio.h \
	src/tracing/callsites.c src/tracing/callsites.h \
	src/tracing/comms.c src/tracing/comms.h \
	src/tracing/requests.c src/tracing/requests.h \
	src/tracing/settings.c src/tracing/settings.h \
	src/tracing/lifecycle.c src/tracing/log.c src/tracing/log.h \
	src/tracing/topo.c src/tracing/topo.h \
	src/tracing/clock.c src/tracing/clock.h \
	src/tracing/period.c src/tracing/period.h src/tracing/dpd.c src/tracing/dpd.h \
	src/tracing/model.c src/tracing/model.h \
	src/tracing/rtreduce.c src/tracing/rtreduce.h src/tracing/rankreduce.c src/tracing/rankreduce.h \
	src/tracing/symbolic.c src/tracing/symbolic.h src/tracing/poly.c src/tracing/poly.h \
	src/tracing/rrec.c src/tracing/rrec.h \
	src/mpid/piggyback.h src/mpid/pb_priv.h src/mpid/pb_hot.h src/mpid/pb_core.c src/mpid/pb_p2p.c src/mpid/pb_requests.c
else
# --disable-vtrace: a library that defines no MPI function, so every call goes to MPI.
libvtrace_la_SOURCES = src/tracing/disabled.c
endif
libvtrace_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/mpi -I$(top_srcdir)/src/mpid
libvtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec $(HWLOC_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS)
libvtrace_la_LIBADD = $(HWLOC_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS)
libvtrace_la_LDFLAGS = -version-info 0:0:0
EXTRA_DIST += src/tracing/disabled.c

# Reader: shared by every vtrace subcommand and the reader tests (owner: reader work).
noinst_LTLIBRARIES += libvtread.la
libvtread_la_SOURCES = \
	src/tracing/codec.h \
	src/tracing/blockio.c src/tracing/blockio.h \
	src/tracing/reader.c src/tracing/reader.h src/tracing/reader_priv.h \
	src/tracing/match.c \
	src/tracing/clockfix.c src/tracing/clockfix.h \
	src/tracing/model.c src/tracing/model.h src/tracing/poly.c src/tracing/poly.h \
	src/tracing/settings.c src/tracing/settings.h \
	src/tracing/replay.c src/tracing/replay.h src/tracing/replay_priv.h \
	src/tracing/replay_stream.c src/tracing/replay_reduced.c src/tracing/scenario.c \
	src/tracing/critpath.c src/tracing/critpath.h \
	src/tracing/symbolic.c src/tracing/symbolic.h \
	src/tracing/rrec.c src/tracing/rrec.h \
	src/tracing/rankreduce.c src/tracing/rankreduce.h \
	src/tracing/reduce.c src/tracing/reduce.h \
	src/tracing/dpd.c src/tracing/dpd.h \
	src/tracing/domino.c src/tracing/domino.h
# Overhead compensation (vtrace compensate, seed 001)
libvtread_la_SOURCES += src/tracing/compensate.c src/tracing/compensate.h
# Wait-state patterns (vtrace patterns) and their installed plug-in API.
libvtread_la_SOURCES += src/tracing/patterns.c src/tracing/patterns.h src/tracing/vtrace_pattern.h
include_HEADERS = src/tracing/vtrace_pattern.h
libvtread_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS)
libvtread_la_LIBADD = $(ZSTD_LIBS) $(ZLIB_LIBS)
# Burst clustering and stability (vtrace clusters, seed 003); log10 and sqrt need libm.
libvtread_la_SOURCES += src/tracing/clusters.c src/tracing/clusters.h
libvtread_la_LIBADD += -lm
