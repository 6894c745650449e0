#!/bin/sh
# Traces written by earlier versions of the format stay readable: each kept trace in
# test/reader/vMAJOR.MINOR/ (written by the vtrace of that version, a full trace and
# its run-time reduced one) gives the dump and the what-if predictions that version's
# vtrace gave (the .dump and .whatif files beside it; the dumps of reduced traces name
# call sites (site=) since 2026-11-26, the only change to them). Call sites are left out
# of the comparison: their names come from the traced binary where it still is at its
# recorded path (with the same build-id), so they depend on the machine, not the reader.
set -u
srcdir=${srcdir:-.}
vtrace=$(pwd)/vtrace
status=0
n=0
for dir in "$srcdir"/test/reader/v*/*/; do
    dir=${dir%/}
    name=${dir##*/}
    version=$(basename "$(dirname "$dir")")
    minor=$(od -An -tu2 -j10 -N2 "$dir/rank-000000.vte" | tr -d ' ')
    [ "v1.$minor" = "$version" ] || { echo "FAIL: $dir is format 1.$minor, not $version"; status=1; }
    "$vtrace" dump "$dir" > "old_versions.out" 2>&1 || { cat old_versions.out; echo "FAIL: vtrace dump $dir"; status=1; }
    sed -E 's/ site=[^ ]*//' "$dir.dump" > old_versions.exp
    sed -E -i 's/ site=[^ ]*//' old_versions.out
    cmp -s old_versions.exp old_versions.out || { diff old_versions.exp old_versions.out | head -5; echo "FAIL: dump of $version/$name changed"; status=1; }
    "$vtrace" whatif -q --random 50 --json "$dir" > old_versions.out 2>&1 || { echo "FAIL: vtrace whatif $dir"; status=1; }
    cmp -s "$dir.whatif" old_versions.out || { diff "$dir.whatif" old_versions.out | head -5; echo "FAIL: predictions of $version/$name changed"; status=1; }
    n=$((n + 1))
done
rm -f old_versions.out old_versions.exp
[ "$n" -ge 2 ] || { echo "FAIL: found $n kept traces"; status=1; }
[ $status -eq 0 ] && echo "ok: $n traces of earlier format versions read as they were"
exit $status
