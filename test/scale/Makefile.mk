# test/scale: synthetic traces (vtrace synth) and the commands at many ranks:
# synth.sh (reduced = vtrace reduce of full, byte for byte), defs_scale.sh (definitions
# at 16K ranks, issue 13), many_ranks.sh (every command on 64K ranks under ulimit -n 1024).
TESTS += test/scale/synth.sh test/scale/defs_scale.sh test/scale/many_ranks.sh
EXTRA_DIST += test/scale/synth.sh test/scale/defs_scale.sh test/scale/defs_scale.py test/scale/many_ranks.sh \
	test/scale/many_ranks.py
