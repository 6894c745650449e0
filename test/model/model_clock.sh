#!/bin/sh
# VTRACE_MODEL_CLOCK=init: the offsets of MPI_Init only (test/model/model_clock.py).
here=$(cd "$(dirname "$0")" && pwd)
work=$(pwd)/test/model/model_clock.work
rm -rf "$work" && mkdir -p "$work" || exit 99
command -v python3 > /dev/null 2>&1 || { echo "no python3; skipping"; exit 77; }
python3 "$here/model_clock.py" "${VTRACE:-$(pwd)/vtrace}" "$work" && rm -rf "$work"
