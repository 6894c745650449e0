# test/model: oracle bridge between `vtrace whatif` and the reference simulation
# ($VTRACE_SHARED/design/reference/mc.py, default $(top_srcdir)/../shared; the tests
# skip when it is not there).
#   mc_export.py        mc.py's random programs as vtrace traces (written by
#                       vtwrite.py), with scenarios and mc.py's full-replay answers
#   bridge_selftest.sh  check_whatif.sh --self-test: `vtrace info` accepts every
#                       exported trace, and trace_replay.py, reading only the trace
#                       files, gives mc.py's answers (the bridge itself is right)
#   check_whatif.sh     `vtrace whatif` equals mc.py on every scenario (skips while the
#                       command does not exist); MC_SEEDS=N for more seeds,
#                       --validate-only for the `vtrace info` part alone
TESTS += test/model/bridge_selftest.sh test/model/check_whatif.sh test/model/whatif_cli.sh
EXTRA_DIST += test/model/bridge_selftest.sh test/model/check_whatif.sh test/model/whatif_cli.sh test/model/cli_common.sh \
	test/model/golden/whatif-synth.jsonl test/model/golden/domino-synth.jsonl \
	test/model/mc_export.py test/model/vtwrite.py test/model/whatif_compare.py \
	test/model/trace_replay.py
# golden_rules.sh: one hand-made trace per model rule (Fig. 3 (a)-(d), lambda_m cap, fan-in
# Waitall, Sendrecv, synchronous sends, probes, collectives, the candidate rule, C1/C2),
# hand-computed predicted ends (golden_rules.py) against `vtrace whatif --json`.
TESTS += test/model/golden_rules.sh
EXTRA_DIST += test/model/golden_rules.sh test/model/golden_rules.py
# critical-path: critpath_golden.sh, hand-computed paths, time per rank and slack
# (critpath_golden.py); critpath_cli.sh, outputs and errors on the synthetic trace;
# critpath_mc.sh, properties on mc.py's random traces (critpath_mc.py; skips without mc.py).
# critpath_window.sh: the predecessors found on disk give the same output as in memory.
TESTS += test/model/critpath_golden.sh test/model/critpath_cli.sh test/model/critpath_mc.sh \
	test/model/critpath_window.sh
EXTRA_DIST += test/model/critpath_golden.sh test/model/critpath_golden.py test/model/critpath_cli.sh \
	test/model/critpath_mc.sh test/model/critpath_mc.py test/model/critpath_window.sh
# vtrace reduce: against mc.py's run-time reduction (records and polynomials), the §7.4
# check at every event, full and reduced predictions equal, broken rules noticed; and the
# equivalence on real traces (reduce_equiv.sh, called by test/mpi/run-mpi-test.sh).
TESTS += test/model/check_reduce.sh test/model/clock_repair_cli.sh test/model/reduce_golden.sh test/model/reduce_cli.sh test/model/reduce_kept.sh
EXTRA_DIST += test/model/reduce_cli.sh test/model/reduce_kept.sh test/model/check_reduce.sh test/model/clock_repair_cli.sh test/model/reduce_golden.sh test/model/reduce_golden.py test/model/reduce_vs_mc.py test/model/reduce_equiv.sh
# vtrace period (seed 000's periodicity detector offline): known periods, a change of
# period, an aperiodic rank, errors.
TESTS += test/model/period_cli.sh
EXTRA_DIST += test/model/period_cli.sh test/model/period_cli.py
# the model clock of run-time reduced traces (VTRACE_MODEL_CLOCK=init)
TESTS += test/model/model_clock.sh
EXTRA_DIST += test/model/model_clock.sh test/model/model_clock.py
# vtrace domino --by: a program whose load imbalance is known by construction
# (imbalance.c, exported symbols for its call sites), 2 ranks; rankings, the equality with
# vtrace whatif, the reduced trace's rows equal to the full trace's.
TESTS += test/model/domino_by.sh
EXTRA_DIST += test/model/domino_by.sh
# whatif --balance: the load-imbalance scenario
TESTS += test/model/balance.sh
EXTRA_DIST += test/model/balance.sh
check_PROGRAMS += test/model/imbalance
test_model_imbalance_SOURCES = test/model/imbalance.c
test_model_imbalance_LDADD = libvtrace.la
test_model_imbalance_LDFLAGS = -no-install -export-dynamic
# Outputs sized for a person: summaries by default, detail on request, usage errors of
# one line, dump's event ids (outputs_cli.sh, a hand-made trace of 12 ranks).
TESTS += test/model/outputs_cli.sh
EXTRA_DIST += test/model/outputs_cli.sh
