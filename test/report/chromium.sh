# Sourced by the report's browser tests: headless Chromium (CHROMIUM, or the first found;
# exit 77 without one) and chromium_page DOM PNG URL [FLAGS...]: the DOM after the page's
# script ran into DOM, a screenshot into PNG; failures set fail=1. Needs $work.
CHROMIUM=${CHROMIUM:-}
if [ -z "$CHROMIUM" ]; then
    for c in chromium chromium-browser google-chrome; do
        if command -v "$c" > /dev/null 2>&1; then CHROMIUM=$c; break; fi
    done
fi
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: chromium is not installed (maint/install-deps.sh installs it)"
    exit 77
fi

chromium_page() {
    dom=$1 png=$2 url=$3
    shift 3
    prof="$work/chromium-profile"
    rm -rf "$prof"
    flags="--headless --disable-gpu --no-sandbox --no-first-run --user-data-dir=$prof --window-size=1400,900 $*"
    # shellcheck disable=SC2086
    timeout 120 "$CHROMIUM" $flags --dump-dom "$url" > "$dom" 2> "$work/chromium.err" ||
        { echo "FAIL: $CHROMIUM --dump-dom $url"; tail -5 "$work/chromium.err"; fail=1; }
    # shellcheck disable=SC2086
    timeout 120 "$CHROMIUM" $flags --screenshot="$png" "$url" > /dev/null 2>> "$work/chromium.err" ||
        { echo "FAIL: $CHROMIUM --screenshot $url"; tail -5 "$work/chromium.err"; fail=1; }
    if [ -s "$png" ]; then echo "screenshot: $png ($url)"; else echo "FAIL: no screenshot $png"; fail=1; fi
}
