/* A reduction that did not make the trace smaller stores its input instead (issue 13),
 * as a compressor stores a block it cannot shrink: `vtrace reduce` and the run time
 * (VTRACE_MODE=both and reduced) write the full trace, marked VT_GLOBAL_STORED in
 * vtrace.defs, so that a reduced trace never holds more records or bytes than the full
 * trace of the same run. One writer for both, so their bytes are the same. */
#ifndef VT_STORED_H
#define VT_STORED_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of the file PATH; 0 when it is missing. */
uint64_t vt_file_bytes(const char *path);

/* Writes the trace in IN (vtrace.defs and rank files; not config.txt) into OUT in place
 * of the trace OUT holds: rank files copied byte for byte (cloned where the file system
 * shares extents copy-on-write, else copy_file_range, else read and write; never hard
 * links, as a later run into IN truncates its rank files in place), vtrace.defs with the
 * VT_GLOBAL_STORED flag set in GLOBAL (a raw GLOBAL keeps its length). The copy is
 * made in a new directory beside OUT and exchanged with OUT in one rename (renameat2
 * RENAME_EXCHANGE; where the file system has none, OUT is moved aside first), so a run
 * killed in between leaves OUT's old trace or the new one whole, never a mix. Files of
 * OUT that are not part of a trace (config.txt) are kept. GLOBAL's configuration text
 * is OUT's: the model parameters of the reduction that wrote OUT (a threshold or L of
 * its own), which the stored trace's readers then take as they would the reduced
 * trace's. Returns 0, or -errno with WHY (a sentence naming the file); *BYTES (unless
 * NULL) is then the stored trace's bytes as the reader counts them (vtrace.defs and the
 * rank files, as written or cloned: no stat of them afterwards). */
int vt_trace_store(const char *in, const char *out, uint64_t *bytes, char *why, size_t cap);

#endif
