# src/format: the trace format. The block writer both sides use (blockio), the reduced
# records' encoding (rrec), and the reader with message matching and clock repair.
# Includes src/util only.
vt_format_write_sources = \
	src/format/blockio.c src/format/blockio.h src/format/evdict.c src/format/evdict.h \
	src/format/commid.c src/format/commid.h \
	src/format/reader.h \
	src/format/rrec.c src/format/rrec.h \
	src/format/stored.c src/format/stored.h \
	src/format/evcols.c src/format/evcols.h src/format/evcols_priv.h src/format/rcols.c
vt_format_sources = $(vt_format_write_sources) \
	src/format/reader_io.c src/format/reader_rank.c src/format/reader.c src/format/reader_cursor.c src/format/reader_fast.c \
	src/format/reader_rcursor.c src/format/reader_upgrade.c src/format/cursor_priv.h \
	src/format/reader_priv.h \
	src/format/match_keys.c src/format/match_keys.h src/format/match_scan.c src/format/match.c \
	src/format/match_priv.h \
	src/format/clockfix.c src/format/clockfix.h
