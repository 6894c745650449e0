/* Internals of the reader shared by its files (src/format only; not installed). Each
 * file calls only those listed before it:
 *   reader_io.c      errors, the arena, buffers, reading a file, the payload parser's
 *                    out-of-line parts, block and file headers, loading a payload
 *   reader_rank.c    one rank file at open time (function table, index of its event
 *                    blocks, RANKDEFS) and vt_trace_raw_block (calls reader_io.c)
 *   reader.c         opening and closing a trace, vtrace.defs, the accessors and the
 *                    global clock (calls reader_io.c and reader_rank.c)
 *   reader_fast.c    full records straight from EVENTS_COLS columns (calls nothing)
 *   reader_cursor.c  the cursor, its blocks and full records (calls reader_io.c and
 *                    reader_fast.c); its state in cursor_priv.h
 *   reader_rcursor.c reduced records (calls reader_cursor.c and reader_io.c)
 * The matching (match_keys.c, match_scan.c, match.c) and the clock repair (clockfix.c)
 * stand above them and use vt__seterr() and the API of reader.h only. */
#ifndef VT_READER_PRIV_H
#define VT_READER_PRIV_H

#include "format/reader.h"
#include "format/evcols.h"
#include "util/codec.h"

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ reader_io.c */

/* Sets err to "PATH: offset OFF: " followed by the formatted text (which should read
 * "expected X, found Y"). Always returns -1. err may be NULL. */
int vt__seterr(vt_error *err, const char *path, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

const char *vt__escape_bytes(char *out, size_t cap, const uint8_t *p, size_t n);
const char *vt__block_type_name(unsigned type);

/* Memory of the definitions, freed at once with the trace. */
typedef struct arena {
    struct chunk *head;
} arena;

void *vt__arena_alloc(arena *a, size_t n);
void *vt__arena_calloc(arena *a, size_t n, size_t size);
char *vt__arena_strndup(arena *a, const void *s, size_t len);
void vt__arena_free(arena *a);

typedef struct buf {
    uint8_t *p;
    size_t cap;
} buf;

/* The descriptors of a trace's cursors, a bounded number of them open at a time (a
 * 64K-rank trace has a cursor per rank): a cursor's file is closed when another needs
 * a descriptor, and opened again when it reads (reader_io.c). Also the one zstd
 * context the cursors share: a block is decoded in one call. */
typedef struct fd_pool fd_pool;

/* vtrace.defs' dictionary (codec 2, 1.5) as its blocks are decoded: the bytes, their
 * check (vt_dict_check) and the zstd dictionary digested once for the whole trace
 * (ZSTD_DDict: decoding with the raw bytes builds its entropy tables again for every
 * block, about 28K instructions; NULL without zstd or memory: the raw bytes then). */
typedef struct trace_dict {
    const uint8_t *p;
    size_t len;
    void *ddict;
    uint16_t check;
} trace_dict;
/* D from the LEN bytes P (kept by the caller while D is used); -1 without memory for
 * the digested dictionary (D then decodes with the raw bytes). */
int vt__dict_init(trace_dict *d, const uint8_t *p, size_t len);
void vt__dict_free(trace_dict *d);
/* The built-in dictionary of codec 3 (format/evdict.h), one for the process; NULL when
 * there is no memory for it. */
const trace_dict *vt__builtin_dict(void);

/* A file to read: a descriptor or a memory buffer. */
typedef struct src {
    const char *path;
    int fd;             /* -1: closed (a pooled source opens it again when it reads) */
    const uint8_t *mem;
    uint64_t size;
    fd_pool *pool;      /* NULL: fd is the source's own */
    int slot;           /* its place in the pool while fd is open */
    void *dctx;         /* the trace's zstd context (the pool's), or NULL */
    const trace_dict *dict; /* vtrace.defs' DICT (codec 2, 1.5), the trace's, or NULL */
    const char *name;   /* the end of path naming the file in the trace directory, or NULL */
    const uint8_t *win; /* the file's first win_len bytes, read at once (vt__src_prefetch) */
    uint64_t win_len;
} src_t;

/* A set of strings (open addressing), each held once in an arena. */
typedef struct strtab {
    struct strtab_ent {
        const char *s; /* NULL: free */
        size_t len;
    } *e;
    size_t cap, n;
} strtab;

typedef struct rank_priv {
    uint64_t ev_begin, ev_end; /* offsets of the first EVENTS block and of RANKDEFS */
    const uint8_t *kept;       /* the file's first kept_len bytes as read when the trace
                                * was opened (in the trace's arena), or NULL: its cursors
                                * read them from there (trace_keep in reader.c) */
    uint32_t kept_len;         /* ev_end, or past it the end of RANKDEFS, kept too */
} rank_priv;

struct vt_trace {
    arena ar;
    char *dir;              /* "" in memory */
    const vt_mem_file *mem; /* memory files, or NULL */
    size_t nmem;
    const char *defs_path;
    char *version, *mpi_version, *config;
    uint64_t flags;
    uint32_t nranks;
    uint32_t defs_version;
    uint64_t bytes;
    uint64_t nrecords;
    vt_rank *ranks;
    rank_priv *priv;
    vt_time_shift_fn shift;      /* vt_trace_set_time_shift(), NULL none */
    const void *shift_arg;
    int init_clock;             /* VTRACE_MODEL_CLOCK=init: offsets of the first synchronisation only */
    /* compact member lists that are ranges of world ranks, one array each for the whole
     * trace (every rank file names MPI_COMM_WORLD): (size, first, stride) -> members */
    struct member_range *ranges;
    size_t nranges, capranges;
    /* where the configuration string is, for vt_trace_config_error (its payload is gone) */
    const char *config_path;
    uint64_t config_off;        /* of the string, or of its zstd block */
    size_t config_pos;          /* in the decoded payload of that block, when compressed */
    int config_compressed;
    fd_pool *pool;              /* the cursors' descriptors (reader_io.c) */
    /* vtrace.defs (1.5): the trace's function table, for rank files without FUNCS
     * blocks (nfuncs 0: none), and the dictionary of codec 2 (NULL: none) */
    const vt_function *funcs;
    size_t nfuncs;
    uint8_t *dict;
    size_t dict_len;
    trace_dict zdict;           /* dict as the sources decode with it (p NULL: none) */
    strtab callsite_strs;       /* the call sites' modules and symbols, each once (16K
                                 * ranks name the same ones) */
};

void vt__src_close(src_t *s);
/* A pool of at most a quarter of the descriptors the process may open (RLIMIT_NOFILE),
 * between 4 and 512; NULL without memory. */
fd_pool *vt__fd_pool_new(void);
void vt__fd_pool_free(fd_pool *p);
/* Hands the open source S (at a stable address until vt__src_close) to pool P: from now
 * on its descriptor may be closed to make room, and is opened again when S reads. */
void vt__src_pool(src_t *s, fd_pool *p);
/* The trace directory DIR held open by pool P: its files are then opened by their name
 * in it, not by their path (no walk of the path's directories each time). */
void vt__fd_pool_dir(fd_pool *p, const char *dir);
/* The shared zstd decompression context (NULL: none; decode without one). */
void *vt__fd_pool_dctx(fd_pool *p);
/* Scratch the cursors share, for what they use only while loading a block: the stored
 * and decoded payloads of a block that is unpacked next (EVENTS_COLS, REDUCED_COLS), and
 * the error being made. */
typedef struct fd_scratch {
    buf stored, raw;
    vt_error err;
    /* the decoded blocks the cursors hold (reader_cursor.c): their bytes, at most
     * BUDGET before the least recently read cursor's is let go (read again when it
     * reads on; a clock over HOLDERS, as the descriptors') */
    uint64_t held, budget;
    struct vt_cursor **holders;
    size_t nholders, capholders, hand;
    /* the cursors in the order they were opened (NULL: closed since): a cursor's first
     * block is loaded with those of the cursors opened after it (reader_cursor.c) */
    struct vt_cursor **opened;
    size_t nopened, capopened;
    vt_evcols_vals decvals; /* the cursors' decoders' values scratch */
    struct vt_blockpool *blocks; /* the cursors and their decoders (util/blockpool.h) */
} fd_scratch;
fd_scratch *vt__fd_pool_scratch(fd_pool *p);
int vt__trace_src_open(const vt_trace *t, const char *path, const char *name, src_t *s, const char *what,
                       vt_error *err);
/* vt__trace_src_open() and vt__src_pool() for the file of RANK, read later, perhaps much
 * later: in a trace with a pool, its size is taken (stat) and its descriptor is opened
 * at its first read, not before (a 64K-rank trace's cursors are opened together, and a
 * descriptor opened for each would be closed again by the pool long before the first
 * read, to be opened a second time then). A rank whose event blocks the trace kept
 * (rank_priv.kept) is read from them: no stat, no descriptor. */
int vt__trace_src_pooled(const vt_trace *t, uint32_t rank, src_t *s, const char *what, vt_error *err);
/* Reads the first bytes of S's file, up to MAX, into B at once: S's reads of them are
 * then served from there (opening a trace reads a dozen pieces of each rank file's
 * beginning, and at 16K ranks a rank file is a few hundred bytes). For a source whose
 * B lives as long as it is read; -1 (err) when the read fails. */
int vt__src_prefetch(src_t *s, buf *b, size_t max, vt_error *err);
void vt__rank_file_name(char out[32], uint32_t rank);

int vt__read_block_header(const src_t *s, uint64_t off, vt_block_header *h, vt_error *err);
int vt__load_payload(const src_t *s, uint64_t off, const vt_block_header *h, buf *stored, buf *raw, void *dctx,
                     const uint8_t **data, vt_error *err);
int vt__load_block(const src_t *s, uint64_t off, unsigned type, vt_block_header *h, buf *stored, buf *raw,
                   const uint8_t **data, vt_error *err);
int vt__read_end(const src_t *s, uint64_t off, buf *stored, buf *raw, vt_error *err);
/* Whether the block at off is cut short by the end of the file (a run that ended
 * before writing it whole): 1; 0 when it is whole; -1 (err) when its header is bad. */
int vt__block_cut(const src_t *s, uint64_t off, vt_error *err);
int vt__read_file_header(const src_t *s, const char magic[VT_MAGIC_LEN], const char *magic_text, uint32_t *version,
                         uint32_t *value, vt_error *err);

/* ------------------------------------------------------------------ payload parser */

/* Largest payload a block may decode (or an EVENTS_COLS block unpack) to; the format's
 * limit. The fuzz build lowers it so that a tiny input cannot make every run allocate a
 * gigabyte. */
#ifndef VT_READER_MAX_RAW
#define VT_READER_MAX_RAW VT_BLOCK_MAX_RAW
#endif

/* A payload being parsed; its errors name the file offset of the byte at fault (or the
 * byte of the decoded payload of a zstd block, of the unpacked one of an EVENTS_COLS
 * block). */
typedef struct pp {
    const uint8_t *begin, *p, *end;
    const char *path;
    uint64_t file_off;  /* file offset of begin (raw blocks) */
    uint64_t block_off; /* offset of the block header */
    int compressed;     /* PP_*: where error positions point */
    vt_error *err;
} pp;
enum { PP_RAW = 0, PP_DECODED = 1, PP_UNPACKED = 2 };

int vt__pp_err(pp *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vt__pp_uvar_slow(pp *r, uint64_t *v, const char *what);
int vt__pp_strl(pp *r, arena *a, char **out, size_t *outlen, const char *what);
int vt__pp_str(pp *r, arena *a, char **out, const char *what);
/* vt__pp_str() for a string that many ranks repeat (a call site's module and symbol):
 * the one copy of it in T (made in A the first time). */
int vt__pp_istr(pp *r, arena *a, strtab *t, const char **out, const char *what);
void vt__strtab_free(strtab *t);
int vt__pp_finish(pp *r, uint32_t version, const char *what);
int vt__pp_nomem(pp *r, const char *what);

/* The parser's inline parts: every record's fields go through them. */

static inline void pp_init(pp *r, const uint8_t *data, size_t len, const char *path, uint64_t block_off,
                           int compressed, vt_error *err)
{
    r->begin = r->p = data;
    r->end = data + len;
    r->path = path;
    r->block_off = block_off;
    r->file_off = block_off + VT_BLOCK_HEADER_SIZE;
    r->compressed = compressed;
    r->err = err;
}

static inline size_t pp_left(const pp *r) { return (size_t)(r->end - r->p); }

/* Varints: most are one byte (deltas, small ids), decoded inline; the rest, and the
 * errors, out of line. */
static inline int pp_uvar(pp *r, uint64_t *v, const char *what)
{
    const uint8_t *q = vt_get_uvar_short(r->p, r->end, v);
    if (q) {
        r->p = q;
        return 0;
    }
    return vt__pp_uvar_slow(r, v, what);
}

static inline int pp_svar(pp *r, int64_t *v, const char *what)
{
    uint64_t u;
    if (pp_uvar(r, &u, what))
        return -1;
    *v = vt_unzigzag(u);
    return 0;
}

/* uvar that must be below limit. */
static inline int pp_index(pp *r, uint64_t *v, uint64_t limit, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_uvar(r, v, what))
        return -1;
    if (*v >= limit) {
        r->p = at;
        return vt__pp_err(r, "expected %s below %llu, found %llu", what, (unsigned long long)limit,
                          (unsigned long long)*v);
    }
    return 0;
}

/* Element count: each element takes at least min_bytes of the payload. */
static inline int pp_count(pp *r, uint64_t *n, size_t min_bytes, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_uvar(r, n, what))
        return -1;
    size_t most = pp_left(r) / (min_bytes ? min_bytes : 1);
    if (*n > most) {
        r->p = at;
        return vt__pp_err(r, "expected %s at most %zu (bytes left in the payload), found %llu", what, most,
                          (unsigned long long)*n);
    }
    return 0;
}

/* ------------------------------------------------------------------ reader_rank.c */

/* Function tables are usually identical on every rank: share the last one. */
typedef struct funcs_cache {
    uint8_t *payload;
    size_t len;
    size_t nfuncs;
    const vt_function *funcs;
} funcs_cache;

/* Opens the rank file s of RANK: its function table, the index of its event blocks,
 * its RANKDEFS. */
int vt__open_rank(vt_trace *t, uint32_t rank, const src_t *s, funcs_cache *fc, vt_error *err);
/* vtrace.defs' FUNCS block (1.5): the function table of rank files without one. */
int vt__parse_trace_funcs(vt_trace *t, pp *r);

#endif
