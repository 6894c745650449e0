# src/tools: the vtrace command (one file per subcommand), linked with the reader.
bin_PROGRAMS += vtrace
vt_tool_sources = \
	src/tools/vtrace.c src/tools/tools.h src/tools/args.c src/tools/args.h \
	src/tools/cmd_info.c src/tools/cmd_dump.c src/tools/cmd_whatif.c src/tools/cmd_domino.c \
	src/tools/cmd_critpath.c \
	src/tools/cmd_reduce.c src/tools/scenarios.c src/tools/clockrepair.c \
	src/tools/outdir.c src/tools/cmd_export.c src/tools/export.h src/tools/export_paraver.c src/tools/paraver_mpi.c src/tools/paraver_mpi.h src/tools/export_perfetto.c src/tools/export_walk.c src/tools/export_prvmsgs.c src/tools/export_prvmsgs.h src/tools/progress.c src/tools/progress.h \
	src/tools/cmd_period.c \
	src/tools/json.c src/tools/debugdir.c src/tools/eventsite.c src/tools/eventsite.h src/tools/cmd_report.c src/tools/report.h src/tools/report_collect.c src/tools/report_timeline.c src/tools/report_write.c
vtrace_LDADD = libvtread.la
# vtrace-mpi: the same command linked with MPI, which vtrace runs under mpiexec with more
# than one process (par_exec.c, par_mpi.c); vtrace itself never needs MPI.
bin_PROGRAMS += vtrace-mpi
# OTF2 export (export_otf2.c, export_otf2_events.c; built without OTF2, --format=otf2 says
# how to get it), in a library of its own so that only it gets OTF2_CFLAGS and vtrace's
# objects keep their names.
noinst_LTLIBRARIES += libvtexport_otf2.la
libvtexport_otf2_la_SOURCES = src/tools/export_otf2.c src/tools/export_otf2_events.c src/tools/export_otf2.h
libvtexport_otf2_la_CPPFLAGS = $(AM_CPPFLAGS) $(OTF2_CFLAGS)
vtrace_LDADD += libvtexport_otf2.la $(OTF2_LIBS)
# vtrace patterns (wait states; plug-ins loaded with dlopen: -ldl comes with LIBS, configure.ac)
vt_tool_sources += src/tools/cmd_patterns.c
# vtrace clusters (burst clustering, seed 003)
vt_tool_sources += src/tools/cmd_clusters.c
# vtrace compensate (overhead compensation, seed 001)
vt_tool_sources += src/tools/cmd_compensate.c
# vtrace config-vars (the settings table of src/util/settings.c)
vt_tool_sources += src/tools/cmd_config_vars.c
# vtrace synth (synthetic traces of regular patterns)
vt_tool_sources += src/tools/cmd_synth.c src/tools/synth.h src/tools/synth_gen.c src/tools/synth_out.c
# vtrace report: the page's CSS and JavaScript (src/tools/report/) as C strings.
src/tools/report_assets.h: $(top_srcdir)/src/tools/report/report.css $(top_srcdir)/src/tools/report/report.js \
		$(top_srcdir)/src/tools/report/embed.sh
	$(AM_V_GEN)$(MKDIR_P) src/tools && $(SHELL) $(top_srcdir)/src/tools/report/embed.sh \
		vt__report_css $(top_srcdir)/src/tools/report/report.css \
		vt__report_js $(top_srcdir)/src/tools/report/report.js > $@.tmp && mv $@.tmp $@
src/tools/report_write.$(OBJEXT): src/tools/report_assets.h
CLEANFILES += src/tools/report_assets.h
EXTRA_DIST += src/tools/report/report.css src/tools/report/report.js src/tools/report/embed.sh
vtrace_mpi_SOURCES = $(vt_tool_sources) src/tools/par_mpi.c
vtrace_mpi_LDADD = $(vtrace_LDADD)
vtrace_SOURCES = $(vt_tool_sources) src/tools/par_exec.c
# (CC is mpicc, which names libmpi: vtrace calls none of it, and must not need it)
vtrace_LDFLAGS = -Wl,--as-needed
# --enable-lto (configure.ac): the reader and replay of libvtread optimised at this link
vtrace_LDFLAGS += $(VT_LTO_CFLAGS)
