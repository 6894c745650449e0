# Generated MPI entry points (maint/gen_wrappers.py from maint/mpi_functions.txt).
EXTRA_DIST += src/mpi/wrappers.c src/mpi/wrappers_f08.c src/mpi/vt_fn.h src/mpi/vt_fn_table.c
