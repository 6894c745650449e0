EXTRA_DIST += maint/mpi_functions.txt maint/gen_wrappers.py maint/seed_table.py \
	maint/f08_direct.txt maint/seed_f08.py maint/ompi_fortran.txt maint/seed_ompi_fortran.py \
	maint/gen_ompi_fortran.py \
	maint/quickstart.sh maint/run-tests.sh maint/install-deps.sh \
	maint/bench/run-bench.sh maint/bench/pingpong.c maint/bench/accuracy.sh maint/bench/replay-bench.sh maint/bench/replay-scale.sh maint/bench/replay-vs.sh \
	maint/bench/reduce-bench.sh maint/bench/piggyback-strategies.c maint/bench/rt-drop.sh \
	maint/bench/instructions.sh maint/bench/pack-bench.sh maint/bench/pack-bench.c maint/bench/colsizes.py \
	maint/bench/pair-instructions.sh maint/bench/cgpair.c maint/bench/cgsum.py maint/bench/reply-path.sh maint/bench/cgreply.c maint/bench/reduce-ab.sh \
	maint/bench/compare-builds.sh maint/bench/fixed-costs.sh maint/bench/fixedcost.c \
	maint/bench/trace-sizes.sh maint/bench/cgobj.py maint/bench/keptcost.py maint/bench/real-codes.sh \
	maint/bench/clock-floor.sh maint/bench/clock-floor.c maint/bench/first-touch.c maint/bench/record-cost.c maint/bench/line-bounce.c maint/bench/phase.sh maint/bench/interleave.c maint/bench/bench_clock.h \
	maint/bench/loggopsim-vs.sh maint/bench/goal-halo.py \
	maint/evdict/mkevdict.sh maint/evdict/evdict-train.c

# Regenerate the wrappers when the table, the lists of Fortran entry points
# (maint/seed_f08.py, maint/seed_ompi_fortran.py) or the generator changes. One run writes
# all five files; the other four never older than wrappers.c (a parallel make that needs one
# of them while wrappers.c is regenerated finds a rule).
$(top_srcdir)/src/mpi/wrappers.c: $(top_srcdir)/maint/mpi_functions.txt $(top_srcdir)/maint/f08_direct.txt \
		$(top_srcdir)/maint/ompi_fortran.txt $(top_srcdir)/maint/gen_wrappers.py \
		$(top_srcdir)/maint/gen_ompi_fortran.py
	$(AM_V_GEN)$(PYTHON3) $(top_srcdir)/maint/gen_wrappers.py $(top_srcdir)/maint/mpi_functions.txt \
		$(top_srcdir)/src/mpi $(top_srcdir)/maint/f08_direct.txt
$(top_srcdir)/src/mpi/wrappers_f08.c $(top_srcdir)/src/mpi/wrappers_ompi.c \
		$(top_srcdir)/src/mpi/vt_fn.h $(top_srcdir)/src/mpi/vt_fn_table.c: $(top_srcdir)/src/mpi/wrappers.c
