# test/report: vtrace report (the HTML page).
#   report_cli.sh     pages of the synthetic trace and of its reduced trace: self-contained,
#                     the embedded JSON's counts, rendered in headless Chromium
#                     (check_report.py reads the DOM after the script ran; screenshots in
#                     test/report/screenshots/); --max-events; bad arguments. Skips
#                     without Chromium (maint/install-deps.sh installs it).
#   report_memory.sh  a 1.2M-call trace within `ulimit -v` of 120 MB: the page's bins and
#                     window of calls are bounded whatever the trace's length (issue 15).
#   report_lod.sh     level of detail (issue 16), pixel checks of Chromium's screenshots:
#                     bins zoomed out, calls zoomed into the detail window, bins outside
#                     it, the overlays, a reduced trace's aggregated spans hatched.
TESTS += test/report/report_cli.sh test/report/report_memory.sh test/report/report_lod.sh
EXTRA_DIST += test/report/chromium.sh test/report/report_cli.sh test/report/report_memory.sh test/report/report_lod.sh \
	test/report/check_report.py
CLEANFILES += test/report/screenshots/*.png
