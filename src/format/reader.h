/* Reading vtrace trace directories (doc/format.md).
 *
 * vt_trace_open() reads and validates the definitions of every file of a trace
 * (vtrace.defs and, for each rank, the FUNCS and RANKDEFS blocks and the framing of
 * every block); event records are streamed, one block in memory at a time, through a
 * vt_cursor. vt_trace_match() pairs every receive with its send.
 *
 * Every function that can fail returns 0 (or 1 for "got one") on success and -1 on
 * error, with the message in a vt_error of the form
 *     PATH: offset N: expected X, found Y
 * The library keeps no global state, never exits and never trusts a length before
 * checking it. A vt_trace is read-only after opening: several cursors (also in
 * several threads) may read it at once. */
#ifndef VT_READER_H
#define VT_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VT_ERROR_MAX 2048

typedef struct vt_error {
    char msg[VT_ERROR_MAX]; /* "PATH: offset N: expected X, found Y", NUL-terminated */
} vt_error;

/* Sets E's message (E may be NULL); returns -1. For errors that are not at a file offset. */
int vt_error_set(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct vt_trace vt_trace;

/* An error in T's configuration string: "vtrace.defs: offset N: MESSAGE (in the
 * configuration string)", the offset that of the string (or of its zstd block). */
int vt_trace_config_error(const vt_trace *t, vt_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef struct vt_cursor vt_cursor;
typedef struct vt_matches vt_matches;

/* ------------------------------------------------------------------ definitions */

/* Field bits of a layout (vt_function.fields) and of an event (vt_event.fields). */
enum vt_field {
    VT_F_COMM = 1u << 0,      /* c */
    VT_F_NEWCOMM = 1u << 1,   /* n */
    VT_F_PEER = 1u << 2,      /* p */
    VT_F_TAG = 1u << 3,       /* t */
    VT_F_BYTES = 1u << 4,     /* b */
    VT_F_RPEER = 1u << 5,     /* P */
    VT_F_RTAG = 1u << 6,      /* T */
    VT_F_RBYTES = 1u << 7,    /* B */
    VT_F_ROOT = 1u << 8,      /* o */
    VT_F_COLLSEQ = 1u << 9,   /* q */
    VT_F_REQUEST = 1u << 10,  /* r */
    VT_F_STARTED = 1u << 11,  /* R */
    VT_F_DONE = 1u << 12,     /* k */
    VT_F_MSG = 1u << 13,      /* m */
    VT_F_FILE = 1u << 14,     /* f */
    VT_F_OFFSET = 1u << 15,   /* O */
    VT_F_CALLSITE = 1u << 16, /* every call record (not a layout letter) */
    VT_F_TARGET = 1u << 17,   /* p of a one-sided call (MPI_Put, ...): its target rank, in
                               * vt_event.peer; not a message (VT_F_PEER is cleared) */
};

/* The VT_F_* bit of a layout letter, 0 for an unknown letter. */
unsigned vt_layout_field(char letter);

typedef struct vt_function {
    const char *name;   /* e.g. "MPI_Send" */
    const char *layout; /* layout letters, e.g. "cptb" */
    unsigned fields;    /* VT_F_* bits of the layout */
} vt_function;

typedef struct vt_callsite {
    uint64_t address;   /* before 1.6, or 1.6 with the module unknown; else 0 */
    const char *module; /* module path, "" unknown */
    uint64_t offset;    /* offset in the module */
    const char *symbol; /* "" unknown */
    int64_t module_index; /* into the rank's module table (1.4), -1 none */
} vt_callsite;

/* A loaded object that holds call sites (format 1.4): its path when the program ran and
 * its GNU build-id, which tells whether a binary found later is the same one. */
typedef struct vt_module {
    const char *path;
    const uint8_t *build_id; /* build_id_len bytes */
    size_t build_id_len;     /* 0: none recorded */
} vt_module;

typedef struct vt_comm {
    uint64_t id;    /* global communicator id (MPI_COMM_WORLD: 1) */
    uint64_t flags; /* bit 0: intercommunicator */
    uint32_t size;
    const uint32_t *members; /* size world ranks */
    uint32_t remote_size;
    const uint32_t *remote_members;
    int64_t parent;  /* index in the same table, -1 none */
    const char *how; /* "world", "self", "MPI_Comm_split", ... */
} vt_comm;

typedef struct vt_file {
    const char *name;
    uint32_t comm; /* communicator index */
} vt_file;

typedef struct vt_profile {
    uint32_t fn; /* function id of the rank */
    uint64_t calls, time_ns, bytes, records;
} vt_profile;

typedef struct vt_clock {
    int64_t t1, off1; /* local time and offset to rank 0 at the first synchronisation */
    int64_t t2, off2; /* ... at the second (finalize) synchronisation */
    int same_clock;   /* 1: offsets are treated as 0 */
} vt_clock;

/* Everything known about one rank once the trace is open. Pointers stay valid until
 * vt_trace_close(). */
typedef struct vt_rank {
    uint32_t rank;
    const char *path;    /* rank file (for messages) */
    uint64_t file_bytes; /* size of the rank file */
    uint32_t version;    /* version of the rank file, VT_VERSION(major, minor) */
    uint64_t nrecords;   /* records in the EVENTS blocks (from their block headers) */
    uint64_t nblocks;    /* EVENTS (or REDUCED) blocks */
    int reduced;         /* the file holds REDUCED blocks: a reduced trace */
    size_t nfuncs;
    const vt_function *funcs; /* function id -> function */
    size_t ncallsites;
    const vt_callsite *callsites;
    size_t ncomms;
    const vt_comm *comms;
    size_t nfiles;
    const vt_file *files;
    size_t nprofile;
    const vt_profile *profile;
    const char *hostname;
    int64_t core;        /* -1 unknown */
    int64_t numa;        /* -1 unknown */
    const char *binding; /* "" unknown */
    uint64_t flags;      /* VT_RANK_* of codec.h: incomplete, late init, exit finalize */
    uint64_t records_written;
    uint64_t calls_not_recorded;
    int64_t init_time, fini_time; /* local ns */
    /* Format 1.2: the layer's cost measured at MPI_Init (vtrace compensate). Both 0, and
     * has_overhead 0, when the file does not hold them. */
    int has_overhead;
    uint64_t overhead_ps;      /* added by one recorded call, picoseconds */
    uint64_t copy_ps_per_byte; /* per byte the layer copies (0: it copies nothing) */
    size_t overhead_at;        /* RANKDEFS payload offset of the overhead fields */
    size_t comms_at;           /* RANKDEFS payload offset of the communicator table */
    size_t overhead_len;       /* and their length (0: none) */
    size_t nmodules;           /* 1.4 (0 in older files) */
    const vt_module *modules;
    vt_clock clock;               /* from vtrace.defs */
    const char *global_hostname;  /* hostname as given in vtrace.defs */
    /* How the rank's run ended (format 1.4; older files say finalize). A file cut short
     * (no END: killed, still running, disk full) is read up to its last RANKDEFS: the
     * blocks after it are not read (lost_bytes), and the reason is the one that RANKDEFS
     * gives (VT_END_RUNNING for a snapshot written during the run). */
    unsigned end_reason;          /* enum vt_end of codec.h */
    int64_t end_detail;           /* signal number, MPI_Abort code, exit status */
    uint64_t write_errno;         /* a write of the trace failed with this errno (0: none) ... */
    uint64_t write_at;            /* ... with this many bytes in the file */
    uint64_t cut_at;              /* 0: the file ends with END; else where it is cut (bytes) */
    uint64_t lost_bytes;          /* bytes of the file after its readable part */
    int has_defs;                 /* 0: cut before any RANKDEFS: nothing of it is readable */
} vt_rank;

/* Opens the trace directory DIR and validates its definitions and block framing.
 * Returns 0 and *out, or -1 and err. */
int vt_trace_open(const char *dir, vt_trace **out, vt_error *err);

/* The same from memory: files named "vtrace.defs" and "rank-NNNNNN.vte" (the names
 * used in messages). The buffers must outlive the trace. Same parsing code path. */
typedef struct vt_mem_file {
    const char *name;
    const void *data;
    size_t size;
} vt_mem_file;
int vt_trace_open_mem(const vt_mem_file *files, size_t nfiles, vt_trace **out, vt_error *err);

void vt_trace_close(vt_trace *t); /* NULL is fine */

uint32_t vt_trace_nranks(const vt_trace *t);
const char *vt_trace_dir(const vt_trace *t);         /* "" for a trace in memory */
const char *vt_trace_version(const vt_trace *t);     /* vtrace version that wrote it */
const char *vt_trace_mpi_version(const vt_trace *t); /* MPI library version */
const char *vt_trace_config(const vt_trace *t);      /* effective configuration text */
uint64_t vt_trace_flags(const vt_trace *t);          /* VT_GLOBAL_*: bit 0 some rank is incomplete,
                                                      * bit 2 the run wrote no end (vtrace.defs) */
/* Whether the rank's part of the trace is incomplete, and in words why (into buf):
 * "killed by signal 15 (Terminated)", "cut short at byte 4096 of 9000 ...". */
int vt_rank_status(const vt_trace *t, uint32_t rank, char *out, size_t len);
uint64_t vt_trace_bytes(const vt_trace *t);          /* vtrace.defs + all rank files */
uint64_t vt_trace_nrecords(const vt_trace *t);       /* records of all ranks */

/* NULL when rank >= nranks. */
const vt_rank *vt_trace_rank(const vt_trace *t, uint32_t rank);
/* Table lookups; NULL when out of range. */
const vt_function *vt_trace_function(const vt_trace *t, uint32_t rank, int64_t fn);
/* The trace's function table (vtrace.defs' FUNCS block, 1.5) and its size; NULL when it
 * has none. A rank file without FUNCS blocks uses it (its vt_rank.funcs is this table). */
const vt_function *vt_trace_functions(const vt_trace *t, size_t *n);
/* vtrace.defs' dictionary (its DICT block, 1.5: codec 2) and its length; NULL: none. */
const uint8_t *vt_trace_dict(const vt_trace *t, size_t *len);
const vt_callsite *vt_trace_callsite(const vt_trace *t, uint32_t rank, int64_t index);
const vt_comm *vt_trace_comm(const vt_trace *t, uint32_t rank, int64_t index);
const vt_file *vt_trace_file(const vt_trace *t, uint32_t rank, int64_t index);

/* Global time of local time LOCAL_NS on RANK: local plus the offset to rank 0, linearly
 * interpolated between the two synchronisations, constant outside them; 0 offset for
 * same-clock ranks. Returns LOCAL_NS for an unknown rank. */
int64_t vt_global_time(const vt_trace *t, uint32_t rank, int64_t local_ns);
/* 1 with *OFF when vt_global_time(t, rank, x) is x + *OFF for every x (no correction
 * installed, and one offset for the whole run), else 0. */
int vt_global_offset(const vt_trace *t, uint32_t rank, int64_t *off);

/* Installs a correction that vt_global_time() adds from then on: FN(ARG, rank, local_ns)
 * ns (NULL removes it), so every tool sees corrected times; the clock-condition repair
 * installs itself this way (vt_trace_set_clockfix, clockfix.h). ARG is not copied: it
 * must outlive its use. Install it before several threads read T. */
typedef int64_t (*vt_time_shift_fn)(const void *arg, uint32_t rank, int64_t local_ns);
void vt_trace_set_time_shift(vt_trace *t, vt_time_shift_fn fn, const void *arg);

/* ------------------------------------------------------------------ events */

typedef struct vt_completion {
    uint64_t request;
    uint64_t flags; /* VT_COMPL_* of codec.h: receive side, cancelled, error, persistent */
    int64_t peer;
    int64_t tag;
    uint64_t bytes;
} vt_completion;

/* Special record codes (vt_event.code < 16) are VT_CODE_* of codec.h. */
#define VT_SEQ_NONE UINT64_MAX

/* One record. A field not present (see .fields) holds its "none" value, given after
 * it. Times are local ns; convert with vt_global_time(). */
typedef struct vt_event {
    uint64_t index;  /* stream index of the record on its rank (specials included) */
    uint64_t callno; /* call records before this one on its rank (specials excluded): the
                      * model's sequence numbers are 2 callno for the burst before a call
                      * and 2 callno + 1 for the call, the same in full and reduced traces
                      * whatever their buffer flushes (a special record has the number of
                      * the next call and belongs to the burst before it) */
    uint64_t code;   /* 1 FLUSH, 2 MARKER, 3 STOPPED, 16+fn for calls */
    int64_t fn;      /* function id; -1 for special records */
    unsigned fields; /* VT_F_* bits present */
    int64_t enter, exit;
    int64_t callsite; /* index; -1 (specials, or a rank without call sites) */
    int64_t comm;     /* c: communicator index; -1 */
    int64_t newcomm;  /* n: created communicator index, -1 MPI_COMM_NULL; -1 */
    int64_t peer;     /* p: send peer (world rank, -2 MPI_PROC_NULL); -1 */
    int64_t tag;      /* t: send tag; -1 */
    uint64_t bytes;   /* b: send bytes; 0 */
    int64_t rpeer;    /* P: receive peer (world rank, -2 PROC_NULL, -3 unknown); -1 */
    int64_t rtag;     /* T: receive tag; -1 */
    uint64_t rbytes;  /* B: receive bytes; 0 */
    int64_t root;     /* o: root world rank (-4 MPI_ROOT, -2 PROC_NULL); -1 */
    uint64_t collseq; /* q: collective sequence number; VT_SEQ_NONE */
    uint64_t request; /* r: request id created; 0 */
    uint64_t msg;     /* m: matched-message id; 0 */
    int64_t file;     /* f: file index; -1 */
    int64_t offset;   /* O: file offset; -1 */
    size_t nstarted;  /* R: request ids started; 0 / NULL */
    const uint64_t *started;
    size_t ndone; /* k: completions; 0 / NULL */
    const vt_completion *done;
    uint64_t marker_kind;  /* MARKER; 0 */
    int64_t marker_value;  /* MARKER; 0 */
    uint64_t stop_reason;  /* STOPPED: 1 write failed, 2 buffer policy; 0 */
    uint64_t block_offset; /* file offset of the block holding the record */
} vt_event;

/* Streams the records of RANK in order. Memory: one block. */
int vt_cursor_open(const vt_trace *t, uint32_t rank, vt_cursor **out, vt_error *err);
/* 1: *ev holds the next record (its lists stay valid until the next call);
 * 0: end of the rank's records; -1: error (and every later call returns -1). */
int vt_cursor_next(vt_cursor *c, vt_event *ev, vt_error *err);
/* The lists of the record just read (its started and done arrays) become the caller's:
 * the cursor takes the caller's arrays *ST (room for *CAPST) and *DN (*CAPDN) in
 * exchange, for the records after (malloc'ed or NULL; the caller frees what it is left
 * with). The record's lists stay where they are, and stay valid when the cursor reads
 * on: the caller keeps a record without copying its lists. */
void vt_cursor_take_lists(vt_cursor *c, uint64_t **st, size_t *capst, vt_completion **dn, size_t *capdn);
void vt_cursor_close(vt_cursor *c); /* NULL is fine */
/* From now on, EVENTS_COLS blocks are decoded straight from their columns rather than
 * unpacked into EVENTS rows first (the replay's cursors): the same records. A block
 * that does not decode is unpacked when its first bad record is reached, so its error
 * comes after the records before it, where without this call it comes before them
 * (vt_cursor_bytes then counts column bytes as decoded). */
void vt_cursor_fast(vt_cursor *c);

/* ------------------------------------------------------------------ reduced traces
 *
 * A reduced trace (vtrace reduce, or VTRACE_MODE=reduced) holds, per rank, only the
 * events model.md §5 records, in REDUCED blocks instead of EVENTS blocks (doc/format.md).
 * Everything else is an implicit gap. */

enum vt_rrec_kind {
    VT_RREC_START = 1,      /* the rank's first enter (seq 0) */
    VT_RREC_CAND = 2,       /* a candidate local event: a burst (fn -1) or a call */
    VT_RREC_COMP = 3,       /* a completion that can change a prediction */
    VT_RREC_NBCINIT = 4,    /* a non-blocking collective's initiation (gate[0]) */
    VT_RREC_END = 5,        /* the rank's last call: seq and exit */
};

/* Bits of a stored record's kind (format 1.3): the reader gives the records they stand
 * for as records of their own. */
#define VT_RREC_K_BURST 8u    /* a candidate burst ends at this call: svar its start follows */
#define VT_RREC_K_END 16u     /* the rank's END follows: 2 uvars after the record's fields */
#define VT_RREC_K_MASK 7u

#define VT_RREC_F_CAND 1u     /* COMP: the completion is a candidate */
#define VT_RREC_F_NOLOCAL 2u  /* COMP: a blocking synchronous send (no local contributor) */
#define VT_RREC_F_PROBE 4u    /* COMP: a probe (it completes msgs[0]) */

/* A message a completion received and did not merge. Times are local ns: S on the
 * sender's clock, P on this rank's. */
typedef struct vt_rmsg {
    uint32_t src;
    uint64_t send_seq;      /* the sending call's sequence number on src */
    int64_t S;              /* the sending call's enter */
    uint64_t bytes;
    int sync;
    uint64_t post_seq;      /* sync: the call that posted the receive */
    int64_t P;              /* sync: its enter */
} vt_rmsg;

/* A synchronous send this completion completes (the sender side). */
typedef struct vt_rssend {
    uint32_t dst;
    uint64_t send_seq;
    int64_t S;              /* local ns */
    uint64_t bytes;
} vt_rssend;

typedef struct vt_rgate {
    uint64_t comm;          /* communicator id */
    uint64_t collseq;
    uint32_t nmembers;
    int nonblocking;
} vt_rgate;

typedef struct vt_rrec {
    uint64_t index;         /* record index on the rank */
    unsigned kind;          /* VT_RREC_* */
    uint64_t seq;           /* model sequence number (non-decreasing) */
    int64_t enter, exit;    /* local ns (CAND of a burst: its start and end) */
    int64_t fn;             /* function id, -1 for a burst or none */
    int64_t callsite;       /* index, -1 unknown (a burst: the call that ends it) */
    unsigned flags;         /* VT_RREC_F_* */
    int64_t rstar;          /* COMP: local ready time R* (== enter when nothing merged) */
    size_t nmsgs, nssends, ngates;
    const vt_rmsg *msgs;
    const vt_rssend *ssends;
    const vt_rgate *gates;
    uint64_t block_offset;
} vt_rrec;

/* The event blocks CURSOR has read so far: their bytes in the file (headers included) and
 * their payloads decoded (after zstd, and unpacked from columns: the EVENTS or REDUCED
 * encoding); their ratio is what compression and packing saved. */
void vt_cursor_bytes(const vt_cursor *c, uint64_t *stored, uint64_t *decoded);

/* Whether the trace is a reduced one (all its rank files hold REDUCED blocks). */
int vt_trace_is_reduced(const vt_trace *t);
/* Streams the reduced records of RANK (the cursor of vt_cursor_open on a reduced
 * trace; vt_cursor_next refuses it, and vt_cursor_next_reduced refuses a full one).
 * 1: *rec holds the next record (its lists valid until the next call); 0: end; -1. */
int vt_cursor_next_reduced(vt_cursor *c, vt_rrec *rec, vt_error *err);

/* The decoded payload of a definitions block, for tools that write traces: TYPE 1
 * (FUNCS) or 3 (RANKDEFS) of RANK, or 4 (GLOBAL) of vtrace.defs (rank ignored).
 * *payload is malloc'ed. */
int vt_trace_raw_block(const vt_trace *t, uint32_t rank, unsigned type, uint8_t **payload, size_t *len, vt_error *err);
/* *PAYLOAD (*LEN bytes, malloc'ed): the RANKDEFS payload of RANK (vt_trace_raw_block),
 * changed at most after its communicator table. A rank file before 2.0 gets in its
 * place one in 2.0's form, which a tool writes into a 2.0 file: each communicator id
 * as what it is derived from where the table gives it, else the id itself. */
int vt_trace_rankdefs_upgrade(const vt_trace *t, uint32_t rank, uint8_t **payload, size_t *len, vt_error *err);

/* ------------------------------------------------------------------ matching */

/* A receive: the record that names it, where it was posted, where it completed, and
 * its send. Arrays are sorted by (index, sub). */
typedef struct vt_match_recv {
    uint64_t index;      /* MPI_Recv, MPI_Sendrecv, MPI_Irecv, MPI_Start(all), MPI_Mrecv ... */
    uint32_t sub;        /* position among the receives of that record (MPI_Startall) */
    uint64_t post_index; /* posting order: the index, or the MPI_(I)mprobe that matched it */
    uint64_t done_index; /* record whose completion resolved it (== index when blocking) */
    int64_t done_exit;   /* that record's exit (local ns): the end of the receiving call */
    uint64_t comm_id;    /* global communicator id */
    uint32_t src;        /* sender (world rank) */
    int64_t tag;
    uint64_t bytes;      /* received bytes */
    uint32_t send_rank;  /* == src */
    uint64_t send_index; /* record index of the send on send_rank (UINT64_MAX unmatched) */
    uint32_t send_sub;
    size_t send_pos;     /* position in vt_matches_sends(send_rank); SIZE_MAX unmatched */
} vt_match_recv;

/* A send: Send-like calls, the send half of Sendrecv, MPI_Start(all) of a persistent
 * send. */
typedef struct vt_match_send {
    uint64_t index;
    int64_t fn;        /* function id of the sending call (of the *_init for persistent sends) */
    uint32_t sub;      /* position among the sends of that record (MPI_Startall) */
    uint64_t comm_id;
    uint32_t dst;      /* receiver (world rank) */
    int64_t tag;
    uint64_t bytes;    /* sent bytes */
    uint64_t recv_index; /* record index of the receive on dst (UINT64_MAX unmatched) */
    uint32_t recv_sub;
    size_t recv_pos;   /* position in vt_matches_recvs(dst); SIZE_MAX unmatched */
} vt_match_send;

/* Flags of vt_trace_match(). */
#define VT_MATCH_PARTIAL 1u /* keep unmatched entries (pos SIZE_MAX) instead of failing */

/* Streams every rank and pairs each receive with its send (doc/format.md, "Sequence
 * numbers and matching"). Without VT_MATCH_PARTIAL an unmatched receive or send, or a
 * receive that cannot be resolved, is an error. The result holds the compact arrays
 * below (about 72 bytes per message); the full vt_match_recv / vt_match_send arrays are
 * built on the first call of vt_matches_recvs/_sends/_find_* (which streams the trace
 * again, so the trace must still be open then; thread-safe; NULL when out of memory). */
int vt_trace_match(const vt_trace *t, unsigned flags, vt_matches **out, vt_error *err);
void vt_matches_free(vt_matches *m);

uint64_t vt_matches_count(const vt_matches *m);     /* matched messages */
uint64_t vt_matches_unmatched(const vt_matches *m); /* unmatched sends + receives (partial) */
const vt_match_recv *vt_matches_recvs(const vt_matches *m, uint32_t rank, size_t *n);
const vt_match_send *vt_matches_sends(const vt_matches *m, uint32_t rank, size_t *n);
/* Binary search by (index, sub); NULL when the record holds no such entry. A tool that
 * streams a rank can instead walk the sorted arrays alongside its cursor. */
const vt_match_recv *vt_matches_find_recv(const vt_matches *m, uint32_t rank, uint64_t index, uint32_t sub);
const vt_match_send *vt_matches_find_send(const vt_matches *m, uint32_t rank, uint64_t index, uint32_t sub);

/* Compact form of the same result (what the replay uses). Entries are at the same
 * positions as in the full arrays (sorted by (index, sub)); positions are 32-bit
 * (VT_MPOS_NONE: unmatched), and the (communicator, source, destination, tag) of an
 * entry is a key, shared by both ends of a message. */
#define VT_MPOS_NONE UINT32_MAX

typedef struct vt_match_key {
    uint64_t comm_id; /* global communicator id */
    int64_t tag;
    uint32_t src, dst; /* world ranks of the sender and the receiver */
} vt_match_key;

typedef struct vt_match_crecv { /* 40 bytes */
    uint64_t index;      /* record that names the receive */
    uint64_t post_index; /* posting order (the index, or the MPI_(I)mprobe that matched it) */
    uint64_t done_index; /* record whose completion resolved it */
    int64_t done_exit;   /* that record's exit (local ns) */
    uint32_t key;        /* vt_matches_keys(): sender = key's src */
    uint32_t send_pos;   /* position in vt_matches_csends(key's src); VT_MPOS_NONE unmatched */
} vt_match_crecv;

typedef struct vt_match_csend { /* 32 bytes */
    uint64_t index;
    uint64_t bytes;    /* sent bytes */
    uint32_t key;      /* receiver = key's dst */
    uint32_t recv_pos; /* position in vt_matches_crecvs(key's dst); VT_MPOS_NONE unmatched */
    int32_t fn;        /* function id of the sending call (of the *_init for persistent sends) */
    uint32_t sub;      /* position among the sends of that record (MPI_Startall) */
} vt_match_csend;

const vt_match_crecv *vt_matches_crecvs(const vt_matches *m, uint32_t rank, size_t *n);
const vt_match_csend *vt_matches_csends(const vt_matches *m, uint32_t rank, size_t *n);
const vt_match_key *vt_matches_keys(const vt_matches *m, size_t *n);

#ifdef __cplusplus
}
#endif

#endif
