#!/bin/sh
# Builds (if needed) and runs the whole test suite, then prints "N passed, N failed".
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || ./autogen.sh > /dev/null
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure --prefix="$top/_install" ${VTRACE_CONFIGURE_FLAGS:-} > configure.out
make -j2 > make.out 2>&1 || { tail -40 make.out; echo "0 passed, 1 failed"; exit 1; }
status=0
make -j"${VTRACE_TEST_JOBS:-2}" check > check.out 2>&1 || status=$?
grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR):' check.out || true
log=test-suite.log
pass=$(sed -n 's/^# PASS: *//p' $log | head -n 1)
xfail=$(sed -n 's/^# XFAIL: *//p' $log | head -n 1)
fail=$(sed -n 's/^# FAIL: *//p' $log | head -n 1)
xpass=$(sed -n 's/^# XPASS: *//p' $log | head -n 1)
error=$(sed -n 's/^# ERROR: *//p' $log | head -n 1)
skip=$(sed -n 's/^# SKIP: *//p' $log | head -n 1)
passed=$(( ${pass:-0} + ${xfail:-0} ))
failed=$(( ${fail:-0} + ${xpass:-0} + ${error:-0} ))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    tail -40 check.out
    failed=1
fi
[ "$failed" -eq 0 ] || sed -n '/^FAIL\|^ERROR\|^XPASS/,+0p' check.out
[ "$failed" -eq 0 ] || find . -name '*.log' -newer configure.out -path '*test*' -exec grep -l -E '^(FAIL|ERROR)' {} \; | head -5 | while read -r f; do echo "== $f"; tail -30 "$f"; done
echo "${passed} passed, ${failed} failed, ${skip:-0} skipped"
[ "$failed" -eq 0 ]
