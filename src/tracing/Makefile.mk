# src/tracing: the run-time library linked into every MPI program (handlers, buffer,
# writer, life cycle, clock, communicators, requests, call sites, the run-time reduction),
# with the generated entry points (src/mpi) and the piggyback transport (src/mpid).
# Includes src/mpi, src/mpid, src/model, src/format and src/util; never src/analysis.
lib_LTLIBRARIES += libvtrace.la
if VT_ENABLED
libvtrace_la_SOURCES = $(vt_util_sources) $(vt_format_write_sources) $(vt_model_sources) \
	$(vt_mpi_sources) $(vt_mpid_sources) \
	src/tracing/state.h src/tracing/state.c src/tracing/mpistatus.h src/tracing/mpihandle.h src/tracing/handlers.h src/tracing/handlers_priv.h src/tracing/handlers_p2p.h \
	src/tracing/handlers.c src/tracing/handlers_coll.c src/tracing/handlers_io.c \
	src/tracing/buffer.c src/tracing/buffer.h \
	src/tracing/callsites.c src/tracing/callsites.h src/tracing/modules.c src/tracing/modules.h \
	src/tracing/comms.c src/tracing/comms.h \
	src/tracing/requests.c src/tracing/requests.h \
	src/tracing/lifecycle.c src/tracing/clocksync.c src/tracing/clocksync.h src/tracing/tracedir.c src/tracing/tracedir.h src/tracing/log.c src/tracing/log.h \
	src/tracing/rankdefs.c src/tracing/rankdefs.h src/tracing/crash.c src/tracing/crash.h \
	src/tracing/topo.c src/tracing/topo.h \
	src/tracing/clock.c src/tracing/clock.h \
	src/tracing/period.c src/tracing/period.h \
	src/tracing/filter.c src/tracing/filter.h \
	src/tracing/rtreduce.c src/tracing/rtreduce.h src/tracing/rtreduce_priv.h
else
# --disable-vtrace: a library that defines no MPI function, so every call goes to MPI.
libvtrace_la_SOURCES = src/tracing/disabled.c
endif
libvtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec $(HWLOC_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS)
libvtrace_la_LIBADD = $(HWLOC_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) -lpthread
libvtrace_la_LDFLAGS = -version-info 0:0:0
EXTRA_DIST += src/tracing/disabled.c
