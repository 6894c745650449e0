# test/export: vtrace export, one section per exporter.

# perfetto and paraver: the synthetic trace, its reduced trace and examples/halo's trace
# on 2 ranks (under the machine's MPI lock); check_export.py checks every export against
# `vtrace dump --json` and the message counts, and is itself shown to catch broken
# files; bad arguments and write failures.
TESTS += test/export/export_cli.sh
EXTRA_DIST += test/export/export_cli.sh test/export/check_export.py

# otf2 (otf2.sh: synthetic and reduced traces; otf2_halo.sh: examples/halo on 2 ranks;
# both skip without OTF2). NOTE: this fragment was overwritten by mistake while both
# sections were being written at once; the otf2 lines below are reconstructed from the
# scripts' headers: their author should check them.
TESTS += test/export/otf2.sh test/export/otf2_halo.sh
EXTRA_DIST += test/export/otf2.sh test/export/otf2_halo.sh test/export/otf2_lib.sh test/export/otf2_check.py
