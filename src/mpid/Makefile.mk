# src/mpid: the piggyback transport of VTRACE_MODE=reduced and both: every point-to-point
# message carries a header (doc/piggyback.md). Includes src/mpi, src/tracing, src/model,
# src/format and src/util. Linked into libvtrace (src/tracing/Makefile.mk).
vt_mpid_sources = \
	src/mpid/piggyback.h src/mpid/pb_priv.h src/mpid/pb_compat.h src/mpid/pb_hot.h src/mpid/pb_fast.h \
	src/mpid/pb_core.c src/mpid/pb_p2p.c src/mpid/pb_requests.c src/mpid/pb_env.c
