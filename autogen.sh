#!/bin/sh
# Regenerate the build system and the generated MPI wrappers.
set -e
cd "$(dirname "$0")"
python3 maint/gen_wrappers.py maint/mpi_functions.txt src/mpi
autoreconf -fi
