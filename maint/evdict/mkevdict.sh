#!/bin/sh
# The built-in dictionary of codec 3 (src/format/evdict.c, format 2.1), as it was made:
#   maint/evdict/mkevdict.sh VTRACE OUT.dict [TRACEDIR...]
# trains a 4 KB zstd dictionary on the EVENTS_COLS payloads of vtrace synth's five
# patterns (32 ranks, 6, 60 and 600 iterations: small blocks and large) and of the full
# traces TRACEDIR... (in 2026-11: the test programs' traces, test/mpi, and NPB LU A,
# CG B, MG A, HPCG 24^3 and miniFE 40^3 on 2 ranks, maint/bench/trace-sizes.sh). VTRACE
# must write codec-1 event blocks (a vtrace of format 2.0). The committed bytes are
# normative (blocks name them by their check): a new dictionary is a new check, which
# readers must learn; this script says how the first was made.
set -eu
vtrace=${1:?usage: mkevdict.sh VTRACE OUT.dict [TRACEDIR...]}
out=${2:?usage: mkevdict.sh VTRACE OUT.dict [TRACEDIR...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/train" "$here/evdict-train.c" -lzstd
for p in halo1d halo2d allreduce pipeline master-worker; do
    for i in 6 60 600; do
        "$vtrace" synth -q -p "$p" -n 32 -i "$i" "$tmp/$p-$i" > /dev/null
    done
done
"$tmp/train" 4096 "$out" "$tmp"/*-* "$@"
