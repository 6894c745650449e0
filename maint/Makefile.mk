EXTRA_DIST += maint/mpi_functions.txt maint/gen_wrappers.py maint/seed_table.py

# Regenerate the wrappers when the table or the generator changes.
$(top_srcdir)/src/mpi/wrappers.c: $(top_srcdir)/maint/mpi_functions.txt $(top_srcdir)/maint/gen_wrappers.py
	$(AM_V_GEN)$(PYTHON3) $(top_srcdir)/maint/gen_wrappers.py $(top_srcdir)/maint/mpi_functions.txt $(top_srcdir)/src/mpi
