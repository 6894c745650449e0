# doc: manual pages (doc/format.md is distributed from the top Makefile.am).
dist_man_MANS += doc/man/vtrace.1 doc/man/vtrace-info.1 doc/man/vtrace-dump.1 doc/man/vtrace-whatif.1 doc/man/vtrace-domino.1 \
	doc/man/vtrace-critical-path.1 doc/man/vtrace-reduce.1 doc/man/vtrace-report.1 doc/man/vtrace-period.1
dist_man_MANS += doc/man/vtrace-patterns.1
dist_man_MANS += doc/man/vtrace-clusters.1
dist_man_MANS += doc/man/vtrace-compensate.1
EXTRA_DIST += doc/model-notes.md doc/replay-scale.md
# The documents the man pages and the commands' help cite, installed in $(docdir)
# (vtrace(1), FILES); format.md is also in the top Makefile.am's EXTRA_DIST.
dist_doc_DATA = doc/format.md doc/clock-repair.md doc/piggyback.md README.vtrace
dist_man_MANS += doc/man/vtrace-export.1
dist_man_MANS += doc/man/vtrace-config-vars.1
dist_man_MANS += doc/man/vtrace-synth.1
