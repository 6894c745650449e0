# Example plug-in of `vtrace patterns` (vtrace_pattern.h), built in the tree as a
# loadable module (examples/plugins/.libs/longwait.so; test/patterns uses it) and
# installed as a source.
noinst_LTLIBRARIES += examples/plugins/longwait.la
examples_plugins_longwait_la_SOURCES = examples/plugins/longwait.c
examples_plugins_longwait_la_CPPFLAGS = -I$(top_srcdir)/src/analysis
# -rpath: a shared module even though it is not installed
examples_plugins_longwait_la_LDFLAGS = -module -avoid-version -shared -rpath $(abs_builddir)/examples/plugins
pluginexamplesdir = $(pkgdatadir)/examples/plugins
dist_pluginexamples_DATA = examples/plugins/longwait.c
