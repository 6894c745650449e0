#!/bin/sh
# `make check` entry for check_whatif.sh --self-test: every trace that
# test/model/mc_export.py writes from mc.py's random programs is accepted by `vtrace
# info` (reader and message matching), and test/model/trace_replay.py, reading only
# those trace files, predicts what mc.py predicts for every scenario. Same environment
# as check_whatif.sh (MC_SEEDS, VTRACE, VTRACE_SHARED, ...).
exec "$(dirname "$0")/check_whatif.sh" --self-test
