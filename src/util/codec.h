/* Primitive encodings and block framing of the trace format (doc/format.md).
 * Shared by the writer (run time) and the reader (tools). */
#ifndef VT_CODEC_H
#define VT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VT_FORMAT_MAJOR 2
#define VT_FORMAT_MINOR 1 /* 1.2: RANKDEFS ends with the measured overhead; 1.3: *_COLS blocks;
                           * 1.4: RANKDEFS snapshots between event blocks, how the run ended, modules;
                           * 1.5: REDUCED_COLS message times and time columns packed smaller;
                           *      the trace's function table and a dictionary in vtrace.defs;
                           * 1.6: RANKDEFS call sites as module index and offset, after the modules;
                           * 2.0: RANKDEFS communicator ids as what they are derived from
                           *      (format/commid.h); a 1.x reader would misread them;
                           * 2.1: EVENTS_COLS blocks zstd against the built-in dictionary
                           *      (codec 3, format/evdict.h) */
#define VT_FORMAT_MAJOR_OLDEST 1 /* readers read every version from 1.0 */
/* A file's major and minor version as one number that orders them (1.6 < 2.0). */
#define VT_VERSION(major, minor) ((uint32_t)(major) << 16 | (uint32_t)(minor))
#define VT_FORMAT_VERSION VT_VERSION(VT_FORMAT_MAJOR, VT_FORMAT_MINOR)

#define VT_MAGIC_LEN 8
#define VT_MAGIC_RANK "VTRACE\0E"
#define VT_MAGIC_DEFS "VTRACE\0D"
#define VT_FILE_HEADER_SIZE 16
#define VT_BLOCK_MAGIC 0x4B4C4256u /* "VBLK" little-endian */
#define VT_BLOCK_HEADER_SIZE 24
#define VT_BLOCK_MAX_RAW (1u << 30)
#define VT_UVAR_MAX 10

enum vt_block_type {
    VT_BLOCK_FUNCS = 1,
    VT_BLOCK_EVENTS = 2,
    VT_BLOCK_RANKDEFS = 3,
    VT_BLOCK_GLOBAL = 4,
    VT_BLOCK_REDUCED = 5,
    VT_BLOCK_EVENTS_COLS = 6, /* an EVENTS payload in columns (format/evcols.h) */
    VT_BLOCK_REDUCED_COLS = 7, /* a REDUCED payload in columns */
    VT_BLOCK_DICT = 8,         /* vtrace.defs (1.5): the dictionary of codec 2 */
    VT_BLOCK_END = 15,
};

/* Codec 2 (1.5): zstd against vtrace.defs' DICT block; the block header's reserved
 * field then holds vt_dict_check() of that dictionary. Codec 3 (2.1): zstd against a
 * dictionary built into every reader and writer (format/evdict.h), the reserved field
 * its vt_dict_check(). */
enum vt_codec { VT_CODEC_RAW = 0, VT_CODEC_ZSTD = 1, VT_CODEC_ZSTD_DICT = 2, VT_CODEC_ZSTD_BUILTIN = 3 };

/* Record codes below VT_CODE_FIRST_FN are special records. */
enum vt_special_code {
    VT_CODE_FLUSH = 1,
    VT_CODE_MARKER = 2,
    VT_CODE_STOPPED = 3,
    VT_CODE_FIRST_FN = 16,
};

/* Communicator flags (RANKDEFS) besides bit 0, intercommunicator: the member lists are
 * compact (1.3). Readers take it off. */
#define VT_COMM_COMPACT 2u

/* Peer values besides world ranks. */
#define VT_PEER_NONE (-1)
#define VT_PEER_PROC_NULL (-2)
#define VT_PEER_UNKNOWN (-3)
#define VT_PEER_ROOT (-4)

/* Completion entry flags. */
#define VT_COMPL_RECV 1u
#define VT_COMPL_CANCELLED 2u
#define VT_COMPL_ERROR 4u
#define VT_COMPL_PERSISTENT 8u
#define VT_COMPL_FREED 16u     /* a receive freed while active (MPI_Request_free): it takes its
                                * message, as posted, but nobody waits for it */

/* GLOBAL flags. */
#define VT_GLOBAL_INCOMPLETE 1u
#define VT_GLOBAL_REDUCED 2u
#define VT_GLOBAL_RUNNING 4u   /* written at MPI_Init: the run has not written its end (1.4) */
#define VT_GLOBAL_STORED 8u    /* a reduction's output that is its input, the full trace: reducing
                                * did not make it smaller (format/stored.h; readers before it
                                * ignore the bit and read a full trace) */

/* RANKDEFS flags. */
#define VT_RANK_INCOMPLETE 1u
#define VT_RANK_LATE_INIT 2u
#define VT_RANK_EXIT_FINALIZE 4u
#define VT_RANK_SCALED 8u      /* VTRACE_PERIODIC suspended records of repeated iterations */

/* How a rank's run ended, in its RANKDEFS (1.4). */
enum vt_end {
    VT_END_FINALIZE = 0,       /* MPI_Finalize */
    VT_END_RUNNING = 1,        /* a snapshot: the run went on after it */
    VT_END_SIGNAL = 2,         /* detail: the signal number */
    VT_END_ABORT = 3,          /* MPI_Abort; detail: its error code */
    VT_END_EXIT = 4,           /* exit without MPI_Finalize; detail: the status */
    VT_END_LAST = VT_END_EXIT
};

typedef struct vt_block_header {
    uint32_t magic;
    uint8_t type;
    uint8_t codec;
    uint16_t reserved;
    uint32_t stored_len;
    uint32_t raw_len;
    uint32_t crc;
    uint32_t nrecords;
} vt_block_header;

static inline uint64_t vt_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t vt_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Writes v at p (room for VT_UVAR_MAX bytes), returns the new end. */
static inline uint8_t *vt_put_uvar(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *vt_put_svar(uint8_t *p, int64_t v) { return vt_put_uvar(p, vt_zigzag(v)); }

/* vt_put_uvar for values that mostly take two bytes (the tracing layer's record times:
 * 128 ns to 16 us): the same bytes, written with one store where the loop takes a round
 * per byte. With v = a + 128 b (a, b < 128) the two bytes a | 0x80, b are the
 * little-endian word v + 128 b + 128. */
static inline uint8_t *vt_put_uvar_2(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (__builtin_expect(v - 0x80 < 0x4000 - 0x80, 1)) {
        uint16_t w = (uint16_t)(v + (v & ~(uint64_t)0x7f) + 0x80);
        memcpy(p, &w, 2);
        return p + 2;
    }
#endif
    return vt_put_uvar(p, v);
}

/* Four vt_put_uvar in a row (the tracing layer's completion entries: flags, peer, tag,
 * bytes): the same bytes, with one 4-byte store where all four are below 128. */
static inline uint8_t *vt_put_uvar_4(uint8_t *p, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (__builtin_expect((a | b | c | d) < 0x80, 1)) {
        uint32_t w = (uint32_t)(a | b << 8 | c << 16 | d << 24);
        memcpy(p, &w, 4);
        return p + 4;
    }
#endif
    p = vt_put_uvar(p, a);
    p = vt_put_uvar(p, b);
    p = vt_put_uvar(p, c);
    return vt_put_uvar(p, d);
}

/* Reads a uvar from [*p, end). Returns 0 and advances *p, or -1 when it runs past end
 * or is longer than 10 bytes or overflows 64 bits. */
static inline int vt_get_uvar(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (q >= end)
            return -1;
        uint8_t b = *q++;
        if (shift == 63 && (b & 0x7e))
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* The one- to three-byte uvars inline, for decoders' hot loops, where 3 bytes from Q are
 * readable (the caller checks where the value ends): returns the byte after the value,
 * or NULL when the value is longer (the caller then takes its full decoder). */
static inline const uint8_t *vt_get_uvar3(const uint8_t *q, uint64_t *v)
{
    if (q[0] < 0x80) {
        *v = q[0];
        return q + 1;
    }
    if (q[1] < 0x80) {
        *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
        return q + 2;
    }
    if (q[2] < 0x80) {
        *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)(q[1] & 0x7f) << 7 | (uint64_t)q[2] << 14;
        return q + 3;
    }
    return NULL;
}

/* vt_get_uvar3 where fewer than 3 bytes before END are NULL too. */
static inline const uint8_t *vt_get_uvar_short(const uint8_t *q, const uint8_t *end, uint64_t *v)
{
    return end - q < 3 ? NULL : vt_get_uvar3(q, v);
}

static inline int vt_get_svar(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    uint64_t u;
    if (vt_get_uvar(p, end, &u))
        return -1;
    *out = vt_unzigzag(u);
    return 0;
}

static inline void vt_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void vt_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t vt_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t vt_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void vt_block_header_encode(uint8_t out[VT_BLOCK_HEADER_SIZE], const vt_block_header *h)
{
    vt_put_u32(out, h->magic);
    out[4] = h->type;
    out[5] = h->codec;
    vt_put_u16(out + 6, h->reserved);
    vt_put_u32(out + 8, h->stored_len);
    vt_put_u32(out + 12, h->raw_len);
    vt_put_u32(out + 16, h->crc);
    vt_put_u32(out + 20, h->nrecords);
}

static inline void vt_block_header_decode(const uint8_t in[VT_BLOCK_HEADER_SIZE], vt_block_header *h)
{
    h->magic = vt_get_u32(in);
    h->type = in[4];
    h->codec = in[5];
    h->reserved = vt_get_u16(in + 6);
    h->stored_len = vt_get_u32(in + 8);
    h->raw_len = vt_get_u32(in + 12);
    h->crc = vt_get_u32(in + 16);
    h->nrecords = vt_get_u32(in + 20);
}

static inline void vt_file_header_encode(uint8_t out[VT_FILE_HEADER_SIZE], const char magic[VT_MAGIC_LEN],
                                         uint32_t value)
{
    memcpy(out, magic, VT_MAGIC_LEN);
    vt_put_u16(out + 8, VT_FORMAT_MAJOR);
    vt_put_u16(out + 10, VT_FORMAT_MINOR);
    vt_put_u32(out + 12, value);
}

/* Appends a str (uvar length + bytes); the caller ensures room for len + VT_UVAR_MAX. */
static inline uint8_t *vt_put_str(uint8_t *p, const char *s, size_t len)
{
    p = vt_put_uvar(p, len);
    memcpy(p, s, len);
    return p + len;
}

#endif
