#!/bin/sh
# vtrace config-vars (issue 17): every VTRACE_* variable the layer reads (found here by
# grepping the sources for get("VTRACE_...") and getenv("VTRACE_...")) is listed, with
# a description; --full gives each its Description, Type, Default and Accepted lines;
# --json one object per line with those keys; the settings table has no name the layer
# does not read (--all adds the scripts' names, marked).
set -u
me=config_vars.sh
builddir=${VTEST_BUILDDIR:-$(pwd)}
srcdir=${VTEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
vtrace=${VTEST_VTRACE:-$builddir/vtrace}
work=$builddir/test/tools/config_vars.work
rm -rf "$work" && mkdir -p "$work" || exit 99
fail() { echo "FAIL: $me: $*"; exit 1; }
"$vtrace" config-vars > "$work/list" || fail "vtrace config-vars failed"
"$vtrace" config-vars --full > "$work/full" || fail "vtrace config-vars --full failed"
"$vtrace" config-vars --json > "$work/json" || fail "vtrace config-vars --json failed"
"$vtrace" config-vars --all > "$work/all" || fail "vtrace config-vars --all failed"
# the layer's sources (the vtrace command's own variables, VTRACE_DEBUG_PATH and test
# hooks of the analyses, are not the layer's settings)
grep -rhoE '(get|getenv)\("VTRACE_[A-Z0-9_]+"\)' "$srcdir/src/tracing" "$srcdir/src/mpid" "$srcdir/src/util" | sed 's/.*("\(.*\)")/\1/' | sort -u > "$work/read"
[ "$(wc -l < "$work/read")" -ge 15 ] || fail "found only $(wc -l < "$work/read") names in the sources: the grep is wrong"
while read -r name; do
    grep -q "^$name  *[A-Za-z0-9]" "$work/list" || fail "$name is read by the layer but not listed (with a description)"
done < "$work/read"
# and nothing else: every listed setting is read
awk '{ print $1 }' "$work/list" | sort > "$work/listed"
extra=$(comm -13 "$work/read" "$work/listed")
[ -z "$extra" ] || fail "listed but read nowhere: $extra"
python3 - "$work/full" "$work/json" "$work/read" <<'PY' || exit 1
import json, re, sys
full, js, read = (open(p).read() for p in sys.argv[1:4])
names = read.split()
blocks = [b for b in full.strip().split("\n\n")]
if len(blocks) != len(names):
    sys.exit("FAIL: config_vars.sh: --full has %d entries, %d settings are read" % (len(blocks), len(names)))
pat = re.compile(r"^(VTRACE_[A-Z0-9_]+)\n    Description: \S.*\n           Type: \S.*\n        Default: \S.*\n"
                 r"       Accepted: \S.*$")
for b in blocks:
    if not pat.match(b):
        sys.exit("FAIL: config_vars.sh: --full entry not in the format:\n" + b)
objs = [json.loads(l) for l in js.splitlines()]
if sorted(o["name"] for o in objs) != sorted(names):
    sys.exit("FAIL: config_vars.sh: --json names differ from the settings read")
for o in objs:
    for k in ("type", "default", "accepted", "description"):
        if not o.get(k):
            sys.exit("FAIL: config_vars.sh: --json %s lacks %s" % (o["name"], k))
print("  %d settings, each with type, default, accepted values and a description" % len(objs))
PY
grep -q '^VTRACE_ROOT ' "$work/all" || fail "--all does not list VTRACE_ROOT (the module file's)"
grep -q '^VTRACE_ROOT ' "$work/list" && fail "VTRACE_ROOT is listed as a setting"
"$vtrace" config-vars extra > /dev/null 2>&1
[ $? -eq 2 ] || fail "an argument is not a usage error"
echo "PASS: $me"
rm -rf "$work"
