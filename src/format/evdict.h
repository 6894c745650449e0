/* The built-in dictionary (format 2.1, codec 3) that EVENTS_COLS blocks are compressed
 * against: every reader and writer has it, so blocks leave out their own Huffman and FSE
 * tables and reuse its (doc/format.md, doc/replay-scale.md). */
#ifndef VT_EVDICT_H
#define VT_EVDICT_H

#include <stddef.h>
#include <stdint.h>

/* vt_dict_check() of the dictionary: the reserved field of its codec-3 blocks */
#define VT_EVDICT_CHECK 0x90eeu

/* The dictionary's bytes; *LEN their count. */
const uint8_t *vt_evdict(size_t *len);

#endif
