# Example programs, built traced (linked with libvtrace) and installed as sources.
noinst_PROGRAMS += examples/groups examples/halo examples/pipeline
examples_groups_SOURCES = examples/groups.c
examples_groups_LDADD = libvtrace.la
examples_halo_SOURCES = examples/halo.c
examples_halo_LDADD = libvtrace.la
examples_pipeline_SOURCES = examples/pipeline.c
examples_pipeline_LDADD = libvtrace.la
examplesdir = $(pkgdatadir)/examples
dist_examples_DATA = examples/groups.c examples/halo.c examples/pipeline.c
include examples/plugins/Makefile.mk
