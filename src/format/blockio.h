/* Writing framed blocks (doc/format.md) to a file descriptor, or to memory. */
#ifndef VT_BLOCKIO_H
#define VT_BLOCKIO_H

#include <stdint.h>
#include <stddef.h>

/* Writes the file header (magic + version + value). Returns 0 or -errno. */
int vt_file_header_write(int fd, const char magic[8], uint32_t value);

/* A file's bytes gathered in memory, to be written later in one write(2) (vtrace reduce
 * holds a rank file's end so until it knows whether the file is kept: format/stored.h). */
typedef struct vt_wbuf {
    uint8_t *p;
    size_t len, cap;
} vt_wbuf;
/* Appends N bytes. 0 or -ENOMEM. */
int vt_wbuf_put(vt_wbuf *b, const void *data, size_t n);
void vt_wbuf_free(vt_wbuf *b);

/* Writes one block: header then payload (one writev), zstd-compressed when zstd_level > 0 and the
 * library was built with zstd (raw otherwise, or when compression does not shrink it);
 * EVENTS_COLS blocks against the built-in dictionary (codec 3, 2.1: format/evdict.h).
 * Returns 0 or -errno; on error the file may hold a partial block. */
int vt_block_write(int fd, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level);
/* The same, compressed against the dictionary DICT (vtrace.defs' DICT block, 1.5: codec 2)
 * when DICT is not NULL; such a block's reserved field is vt_dict_check(DICT). */
int vt_block_write_dict(int fd, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level,
                        const void *dict, size_t dict_len);
/* vt_block_write_dict's bytes appended to B instead. 0 or -errno. */
int vt_block_put(vt_wbuf *b, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level,
                 const void *dict, size_t dict_len);
/* The 16 bits that tie a codec-2 block to its dictionary: the low half of its CRC-32. */
uint16_t vt_dict_check(const void *dict, size_t len);

/* The FUNCS payload of the table NAME/LAYOUT[0..n) naming only the entries DEFINE marks
 * (the others "": a later block names them, doc/format.md 1.3), all when DEFINE is
 * NULL; malloc'ed, NULL without memory. */
uint8_t *vt_funcs_payload_encode(const char *const *name, const char *const *layout, size_t n, const uint8_t *define,
                                 size_t *len);
/* The same without allocating (signal handlers): at most vt_funcs_payload_size bytes
 * written into OUT; returns their number. */
size_t vt_funcs_payload_size(const char *const *name, const char *const *layout, size_t n, const uint8_t *define);
size_t vt_funcs_payload_write(uint8_t *out, const char *const *name, const char *const *layout, size_t n,
                              const uint8_t *define);
/* That payload as a FUNCS block. Writes nothing and returns 0 when DEFINE marks none and
 * ALWAYS is 0. Returns 0 or -errno. */
int vt_funcs_block_write(int fd, const char *const *name, const char *const *layout, size_t n, const uint8_t *define,
                         int always, int zstd_level);
/* The same appended to B. */
int vt_funcs_block_put(vt_wbuf *b, const char *const *name, const char *const *layout, size_t n,
                       const uint8_t *define, int always, int zstd_level);

/* write(2) until done, retrying EINTR. Returns 0 or -errno (-ENOSPC for a short write). */
int vt_write_all(int fd, const void *buf, size_t len);

#endif
