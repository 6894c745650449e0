# test/scale: synthetic traces (vtrace synth) and the commands at many ranks.
TESTS += test/scale/synth.sh
EXTRA_DIST += test/scale/synth.sh
