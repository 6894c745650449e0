# src/mpi: the generated MPI entry points (maint/gen_wrappers.py from maint/mpi_functions.txt),
# each calling VT_ENTER, the PMPI_ function (or the transport's vt_pb_*) and one handler.
# Includes src/tracing and src/mpid. Linked into libvtrace (src/tracing/Makefile.mk).
vt_mpi_sources = src/mpi/wrappers.c src/mpi/wrappers_f08.c src/mpi/wrappers_ompi.c src/mpi/vt_fn.h src/mpi/vt_fn_table.c
EXTRA_DIST += $(vt_mpi_sources)
DISTCLEANFILES = src/vt_mpi_lacks.h
