# test/report: vtrace report (the HTML page).
#   report_cli.sh     pages of the synthetic trace and of its reduced trace: self-contained,
#                     the embedded JSON's counts, rendered in headless Chromium
#                     (check_report.py reads the DOM after the script ran; screenshots in
#                     test/report/screenshots/); --max-events; bad arguments. Skips
#                     without Chromium (maint/install-deps.sh installs it).
TESTS += test/report/report_cli.sh
EXTRA_DIST += test/report/report_cli.sh test/report/check_report.py
CLEANFILES += test/report/screenshots/*.png
