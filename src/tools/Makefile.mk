# src/tools: the vtrace command (one file per subcommand), linked with the reader.
bin_PROGRAMS += vtrace
vtrace_SOURCES = \
	src/tools/vtrace.c src/tools/tools.h \
	src/tools/cmd_info.c src/tools/cmd_dump.c src/tools/cmd_whatif.c src/tools/cmd_domino.c \
	src/tools/cmd_critpath.c \
	src/tools/cmd_reduce.c src/tools/scenarios.c src/tools/clockrepair.c \
	src/tools/cmd_export.c src/tools/export.h src/tools/progress.c src/tools/progress.h \
	src/tools/cmd_period.c \
	src/tools/json.c
vtrace_LDADD = libvtread.la
