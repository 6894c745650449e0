#!/bin/sh
# Traces written by earlier versions of the format stay readable: each kept trace in
# test/reader/vMAJOR.MINOR/ (written by the vtrace of that version, a full trace and
# its run-time reduced one) gives the dump and the what-if predictions that version's
# vtrace gave (the .dump and .whatif files beside it; the dumps of reduced traces name
# call sites (site=) since 2026-11-26, the only change to them). Call sites are left out
# of the comparison: their names come from the traced binary where it still is at its
# recorded path (with the same build-id), so they depend on the machine, not the reader.
# vtrace compensate and vtrace reduce of a kept full trace write the current version
# (2.0: communicator ids as what they are derived from; 2.1: event blocks of codec 3):
# the trace they write names the
# same communicators (the ids of compensate's dump in the same order, those of reduce's
# among them).
set -u
srcdir=${srcdir:-.}
vtrace=$(pwd)/vtrace
current=$("$vtrace" --version | sed -E 's/.*trace format ([0-9.]+)\).*/\1/')
status=0
n=0
for dir in "$srcdir"/test/reader/v*/*/; do
    dir=${dir%/}
    name=${dir##*/}
    version=$(basename "$(dirname "$dir")")
    fv=$(od -An -tu2 -j8 -N4 "$dir/rank-000000.vte" | awk '{print $1 "." $2}')
    [ "v$fv" = "$version" ] || { echo "FAIL: $dir is format $fv, not $version"; status=1; }
    "$vtrace" dump "$dir" > "old_versions.out" 2>&1 || { cat old_versions.out; echo "FAIL: vtrace dump $dir"; status=1; }
    sed -E 's/ site=[^ ]*//' "$dir.dump" > old_versions.exp
    sed -E -i 's/ site=[^ ]*//' old_versions.out
    cmp -s old_versions.exp old_versions.out || { diff old_versions.exp old_versions.out | head -5; echo "FAIL: dump of $version/$name changed"; status=1; }
    "$vtrace" whatif -q --random 50 --json "$dir" > old_versions.out 2>&1 || { echo "FAIL: vtrace whatif $dir"; status=1; }
    cmp -s "$dir.whatif" old_versions.out || { diff "$dir.whatif" old_versions.out | head -5; echo "FAIL: predictions of $version/$name changed"; status=1; }
    n=$((n + 1))
    case $name in *-full) ;; *) continue ;; esac
    sed -E 's/ site=[^ ]*//' "$dir.dump" | grep -o 'comm=0x[0-9a-f]*' > old_versions.ids
    for cmd in compensate reduce; do
        rm -rf old_versions.t
        "$vtrace" $cmd "$dir" old_versions.t > old_versions.out 2>&1 ||
            { cat old_versions.out; echo "FAIL: vtrace $cmd $dir"; status=1; continue; }
        v=$(od -An -tu2 -j8 -N4 old_versions.t/rank-000000.vte | awk '{print $1 "." $2}')
        expect=$current # a stored reduced trace is its input, copied
        [ "$cmd" = reduce ] && "$vtrace" info old_versions.t | grep -q '^kind: .*stored' && expect=${version#v}
        [ "$v" = "$expect" ] || { echo "FAIL: vtrace $cmd $version/$name wrote format $v, not $expect"; status=1; }
        "$vtrace" dump old_versions.t > old_versions.out 2>&1 || { cat old_versions.out; echo "FAIL: dump of vtrace $cmd $version/$name"; status=1; continue; }
        grep -o 'comm=0x[0-9a-f]*' old_versions.out > old_versions.got
        if [ "$cmd" = compensate ]; then
            cmp -s old_versions.ids old_versions.got || { echo "FAIL: vtrace $cmd $version/$name changed communicator ids"; status=1; }
        elif grep -vxF -f old_versions.ids old_versions.got | grep -q .; then
            echo "FAIL: vtrace $cmd $version/$name names communicators its input has not"; status=1
        fi
    done
done
rm -rf old_versions.out old_versions.exp old_versions.ids old_versions.got old_versions.t
[ "$n" -ge 2 ] || { echo "FAIL: found $n kept traces"; status=1; }
[ $status -eq 0 ] && echo "ok: $n traces of earlier format versions read as they were"
exit $status
