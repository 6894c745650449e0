#include "vt_config.h"
#include "tracing/buffer.h"
#include "format/blockio.h"
#include "format/evcols.h"
#include "tracing/log.h"
#include "util/hugemem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

VT_HIDDEN vt_buffer vt__buf = {.fd = -1};
VT_HIDDEN vt_profile_entry vt__profile[VT_NFN];
VT_HIDDEN int vt__mt;
VT_HIDDEN __thread int vt__rec_skipped __attribute__((tls_model("initial-exec")));
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Room kept for the block's leading index and base time. */
#define BLOCK_PREFIX (2 * VT_UVAR_MAX)

void vt_lock(void)
{
    if (vt__mt)
        pthread_mutex_lock(&lock);
}

void vt_unlock(void)
{
    if (vt__mt)
        pthread_mutex_unlock(&lock);
}

static void block_start(int64_t base_time)
{
    vt_buffer *b = &vt__buf;
    b->pos = b->base;
    b->pos = vt_put_uvar(b->pos, b->first_index);
    b->pos = vt_put_svar(b->pos, base_time);
    b->base_time = b->prev_exit = base_time;
    b->nrec = 0;
}

static const uint8_t *defs_dict;  /* vt_buffer_set_dict */
static size_t defs_dict_len;

void vt_buffer_set_dict(const uint8_t *dict, size_t len)
{
    defs_dict = len ? dict : NULL;
    defs_dict_len = len;
}

#define DROP_WINDOW ((size_t)16 << 10)

/* The buffer's pages past the window of a dropped file (vt__rec_begin_slow) go back to
 * the system: 32 MiB per rank by default. */
static void release_beyond_window(vt_buffer *b)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)b->base + DROP_WINDOW + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)b->base + b->cap) & ~(page - 1);
    if (page > 1 && to > from)
        madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Test hook (VTRACE_TEST_FAIL_AFTER): behave as if the disk filled up. */
static int checked_block_write_level(uint8_t type, const void *payload, size_t len, uint32_t nrec, int level)
{
    vt_buffer *b = &vt__buf;
    if (b->lazy) {
        /* nobody asked for the file before its first block: from here on it is dropped */
        b->lazy = 0;
        b->dropped = 1;
        release_beyond_window(b);
        /* the records the handlers no longer encode count as this block's did, on
         * average, rounded down (at least the 4 bytes of a record's code, times and call
         * site): a ping-pong's 8.7 bytes count as 8, and its 200000 records make 27
         * blocks, as in the full trace (28 rounded up: 30) */
        size_t est = b->nrec ? (size_t)(b->pos - b->base) / b->nrec : 0;
        b->skip_est = est > 4 ? est : 4;
        if (!b->stopped)
            __atomic_fetch_or(&vt__rec_special, VT_REC_SKIP, __ATOMIC_RELAXED);
    }
    if (b->dropped)
        return 0;
    if (b->fail_after && b->written + len + VT_BLOCK_HEADER_SIZE > b->fail_after)
        return -ENOSPC;
    b->writing = 1;
    int rc = vt_block_write_dict(b->fd, type, payload, len, nrec, level, type == VT_BLOCK_RANKDEFS ? defs_dict : NULL,
                                 defs_dict_len);
    if (rc == 0) {
        b->written += len + VT_BLOCK_HEADER_SIZE;
        off_t at = lseek(b->fd, 0, SEEK_CUR);
        if (at > 0)
            b->file_at = (uint64_t)at;
    } else if (b->file_at) {
        /* a block cut short (a full disk) goes, so that what follows, if it fits, is
         * read after the last whole block */
        if (ftruncate(b->fd, (off_t)b->file_at) == 0)
            lseek(b->fd, (off_t)b->file_at, SEEK_SET);
    }
    b->writing = 0;
    return rc;
}

static int checked_block_write(uint8_t type, const void *payload, size_t len, uint32_t nrec)
{
    return checked_block_write_level(type, payload, len, nrec, vt__buf.zstd_level);
}

/* Functions named in this file's FUNCS blocks so far: a block names the functions its
 * rank's records and profile use before they use them (doc/format.md 1.3), not all
 * the wrapped ones (7.5 KB, 2 KB compressed, in every rank file). */
static uint8_t named[VT_NFN];

/* A FUNCS block naming the functions recorded (PROFILED: called) that none named yet;
 * ALWAYS: even when there are none (the file's first block). The caller holds the lock. */
static int name_functions(int profiled, int always)
{
    uint8_t now[VT_NFN];
    int any = 0;
    for (unsigned i = 0; i < VT_NFN; i++) {
        now[i] = !named[i] && (profiled ? vt__profile[i].calls > 0 : vt_profile_records(&vt__profile[i]) > 0);
        any |= now[i];
    }
    if (!any && !always)
        return 0;
    size_t len;
    uint8_t *p = vt_funcs_payload_encode(vt_fn_name, vt_fn_layout, VT_NFN, now, &len);
    if (!p)
        return -ENOMEM;
    /* mostly names and empty entries: always worth compressing */
    int rc = checked_block_write_level(VT_BLOCK_FUNCS, p, len, 0, 3);
    free(p);
    if (rc == 0)
        for (unsigned i = 0; i < VT_NFN; i++)
            named[i] |= now[i];
    return rc;
}

static int shared_functions;

uint64_t vt_buffer_functions_hash(void)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (unsigned i = 0; i < VT_NFN; i++)
        for (int k = 0; k < 2; k++)
            for (const char *c = k ? vt_fn_layout[i] : vt_fn_name[i];; c++) {
                h = (h ^ (uint8_t)*c) * 1099511628211ull;
                if (!*c)
                    break;
            }
    return h;
}

void vt_buffer_share_functions(void)
{
    shared_functions = 1;
    memset(named, 1, sizeof named);
}

int vt_buffer_functions_shared(void) { return shared_functions; }

/* the functions vtrace.defs' table names (all until MPI_Finalize: a rank killed before
 * may have recorded any) */
static uint8_t used_fns[VT_NFN];
static int used_set;

void vt_buffer_functions_mine(uint8_t used[])
{
    for (unsigned i = 0; i < VT_NFN; i++)
        used[i] = vt__profile[i].calls > 0;   /* every recorded call is counted */
}

void vt_buffer_functions_used(const uint8_t used[])
{
    memcpy(used_fns, used, sizeof used_fns);
    used_set = 1;
}

int vt_buffer_write_functions(int fd)
{
    return vt_funcs_block_write(fd, vt_fn_name, vt_fn_layout, VT_NFN, used_set ? used_fns : NULL, 1, 3);
}

/* The block of records in the buffer: packed in columns (EVENTS_COLS) when blocks are
 * compressed, as zstd then finds what repeats in MPI traces (format/evcols.h); as it is
 * (EVENTS) otherwise, or if packing fails. */
static int write_events(void)
{
    vt_buffer *b = &vt__buf;
    size_t len = (size_t)(b->pos - b->base);
#ifdef HAVE_ZSTD
    if (b->zstd_level > 0 && !b->lazy && !b->dropped) {
        static const vt_evcols_funcs fn = {vt_fn_layout, VT_NFN};
        uint8_t *packed;
        size_t plen;
        char err[256];
        if (!vt_evcols_pack(b->base, len, b->nrec, &fn, &packed, &plen, err, sizeof err)) {
            int rc = checked_block_write(VT_BLOCK_EVENTS_COLS, packed, plen, b->nrec);
            free(packed);
            return rc;
        }
        if (!b->pack_warned)
            vt_warn("packing an event block in columns failed (%s); it is written as it is", err);
        b->pack_warned = 1;
    }
#endif
    return checked_block_write(VT_BLOCK_EVENTS, b->base, len, b->nrec);
}

/* The file with its header and function table. */
static int open_file(void)
{
    vt_buffer *b = &vt__buf;
    b->fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (b->fd < 0)
        return -errno;
    int rc = vt_file_header_write(b->fd, VT_MAGIC_RANK, (uint32_t)b->rank);
    if (rc)
        return rc;
    b->written = b->file_at = VT_FILE_HEADER_SIZE;
    /* the first FUNCS block: the table, so the file decodes without our binary, naming
     * what was recorded so far; none when vtrace.defs holds the table (1.5) */
    return shared_functions ? 0 : name_functions(0, 1);
}

int vt_buffer_open(const char *path, int rank, size_t cap, int zstd_level, uint64_t fail_after, int keep_file)
{
    vt_buffer *b = &vt__buf;
    b->path = path;
    b->rank = rank;
    b->cap = cap;
    b->zstd_level = zstd_level;
    b->fail_after = fail_after;
    b->base = vt_huge_alloc(cap);
    if (!b->base)
        return -ENOMEM;
    b->limit = b->base + cap;
    b->lazy = !keep_file;
    int rc = keep_file ? open_file() : 0;
    if (rc)
        return rc;
    block_start(vt_now());
    return 0;
}

int vt_buffer_need_file(void)
{
    vt_buffer *b = &vt__buf;
    if (b->dropped)
        return -EPIPE;
    if (!b->lazy)
        return 0;
    b->lazy = 0;
    int rc = open_file();
    if (rc)
        vt_buffer_fail(rc);
    return rc;
}

void vt_buffer_fail(int err)
{
    vt_buffer *b = &vt__buf;
    if (!b->warned)
        vt_warn("writing %s failed (%s) after %llu bytes: recording stops here, the application goes on; "
                "the trace is marked incomplete and what was written before stays readable",
                b->path ? b->path : "the trace", strerror(-err), (unsigned long long)b->file_at);
    if (!b->fail_errno) {
        b->fail_errno = -err;
        b->fail_at = b->file_at;
    }
    b->warned = 1;
    b->stopped = 1;
    b->limit = b->base;   /* every vt_rec_begin now takes the slow path */
    __atomic_fetch_and(&vt__rec_special, ~(unsigned)VT_REC_SKIP, __ATOMIC_RELAXED);
}

/* Writes the current block; the caller holds the lock. */
static int flush_locked(void)
{
    vt_buffer *b = &vt__buf;
    if (b->stopped || (b->fd < 0 && !b->lazy && !b->dropped))
        return -EIO;
    if (b->nrec == 0)
        return 0;
    int64_t t0 = vt_now();
    int rc = name_functions(0, 0);
    if (!rc)
        rc = write_events();
    b->first_index += b->nrec;
    if (rc) {
        vt_buffer_fail(rc);
        return rc;
    }
    if (vt__buffer_flushed)
        vt__buffer_flushed();
    int64_t t1 = vt_now();
    /* The flush is itself an event, so analyses can subtract it. */
    block_start(t0);
    uint8_t *p = b->pos;
    p = vt_put_uvar(p, VT_CODE_FLUSH);
    p = vt_put_svar(p, 0);
    p = vt_put_uvar(p, (uint64_t)(t1 - t0));
    b->pos = p;
    b->prev_exit = t1;
    b->nrec = 1;
    return 0;
}

/* Records of a dropped file (VTRACE_MODE=reduced past its first block) that a handler
 * still encodes (where it has no VT_REC_SKIP path, and a block's first) go only into the
 * buffer's first DROP_WINDOW bytes, again and again: streaming them through the whole
 * buffer cost cache misses and memory traffic for bytes nobody reads (issue 18). Blocks
 * still end after about the bytes they would have held (dropped_bytes counts what went
 * through the window, and skip_est for each record not encoded), as their flush paces
 * the reduced trace's definition snapshots. */

static uint8_t *drop_window(vt_buffer *b, uint8_t *limit_seen, size_t need)
{
    size_t used = b->dropped_bytes + (size_t)(b->pos - b->base);
    size_t room = need > DROP_WINDOW ? need : DROP_WINDOW;
    /* a flush requested (limit lowered to base), the block's end, or too big a record */
    if (limit_seen == b->base || used + need > b->cap || room > b->cap)
        return NULL;
    uint8_t *start = b->base + BLOCK_PREFIX;
    if (!__atomic_compare_exchange_n(&b->limit, &limit_seen, b->base + room, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return NULL;   /* vt_buffer_request_flush came in between */
    b->dropped_bytes = used - (size_t)(start - b->base);
    b->pos = start;
    return start;
}

/* The block is full or recording stopped; the caller holds the lock. */
uint8_t *vt__rec_begin_slow(size_t need)
{
    vt_buffer *b = &vt__buf;
    if (b->dropped && !b->stopped && b->base) {
        uint8_t *p = drop_window(b, __atomic_load_n(&b->limit, __ATOMIC_RELAXED), need);
        if (p)
            return p;
    }
    if (b->stopped || !b->base) {
        b->lost++;
        vt_unlock();
        return NULL;
    }
    if (flush_locked()) {
        b->lost++;
        vt_unlock();
        return NULL;
    }
    b->dropped_bytes = 0;
    if (!b->stopped) /* vt_buffer_request_flush lowered it */
        __atomic_store_n(&b->limit, b->base + (b->dropped && b->cap > DROP_WINDOW ? DROP_WINDOW : b->cap),
                         __ATOMIC_RELAXED);
    if ((size_t)(b->pos - b->base) + need > b->cap) {
        /* One record larger than the whole buffer (a huge Waitall): grow. */
        size_t off = (size_t)(b->pos - b->base);
        uint8_t *nb = realloc(b->base, off + need);
        if (!nb) {
            b->lost++;
            vt_unlock();
            return NULL;
        }
        b->base = nb;
        b->pos = nb + off;
        b->cap = off + need;
        b->limit = nb + b->cap;
    }
    return b->pos;
}

void (*vt__buffer_flushed)(void);

void vt_buffer_request_flush(void)
{
    vt_buffer *b = &vt__buf;
    if (!b->stopped && b->base)
        __atomic_store_n(&b->limit, b->base, __ATOMIC_RELAXED);
}

int vt_buffer_put_block(uint8_t type, const void *payload, size_t len, int zstd_level, int in_signal)
{
    vt_buffer *b = &vt__buf;
    if (b->lazy || b->dropped)
        return 0;
    if (b->stopped || b->fd < 0 || b->writing)
        return -EIO;
    /* the profile's functions are named before it (in a signal handler, which cannot
     * allocate, its encoding leaves out those not named yet: vt_buffer_fn_named) */
    int rc = type == VT_BLOCK_RANKDEFS && !in_signal ? name_functions(1, 0) : 0;
    return rc ? rc : checked_block_write_level(type, payload, len, 0, zstd_level);
}

int vt_buffer_fn_named(unsigned fn) { return fn < VT_NFN && named[fn]; }

int vt_buffer_name_profiled_in_signal(uint8_t *scratch, size_t cap)
{
    vt_buffer *b = &vt__buf;
    if (b->lazy || b->dropped)
        return 0;
    if (b->writing || b->stopped || b->fd < 0)
        return -1;
    uint8_t now[VT_NFN];
    int any = 0;
    for (unsigned i = 0; i < VT_NFN; i++) {
        now[i] = !named[i] && vt__profile[i].calls > 0;
        any |= now[i];
    }
    if (!any)
        return 0;
    if (vt_funcs_payload_size(vt_fn_name, vt_fn_layout, VT_NFN, now) > cap)
        return -1;
    size_t len = vt_funcs_payload_write(scratch, vt_fn_name, vt_fn_layout, VT_NFN, now);
    if (checked_block_write_level(VT_BLOCK_FUNCS, scratch, len, 0, 0))
        return -1;
    for (unsigned i = 0; i < VT_NFN; i++)
        named[i] |= now[i];
    return 0;
}

int vt_buffer_write_raw_events(void)
{
    vt_buffer *b = &vt__buf;
    if (b->lazy || b->dropped)
        return 0;   /* VTRACE_MODE=reduced, without its full trace */
    if (b->writing || b->stopped || b->fd < 0 || !b->base)
        return -1;
    if (b->nrec == 0)
        return 0;
    /* a block being encoded when the signal came is never half in the file: the
     * records up to b->nrec are complete (vt_rec_end moves pos after the bytes) */
    int rc = vt_block_write(b->fd, VT_BLOCK_EVENTS, b->base, (size_t)(b->pos - b->base), b->nrec, 0);
    if (rc == 0) {
        b->first_index += b->nrec;
        b->nrec = 0;
        b->pos = b->base;
    }
    return rc ? -1 : 0;
}

int vt_buffer_flush(void)
{
    vt_lock();
    int rc = flush_locked();
    vt_unlock();
    return rc;
}

/* The records in the buffer as a block, with no FLUSH record after it (the end). */
static int write_pending_locked(void)
{
    vt_buffer *b = &vt__buf;
    int rc = b->stopped ? -EIO : 0;
    if (!rc && b->nrec) {
        rc = name_functions(0, 0);
        if (!rc)
            rc = write_events();
        b->first_index += b->nrec;
        b->nrec = 0;
        block_start(b->prev_exit);
        if (rc)
            vt_buffer_fail(rc);
    }
    return rc;
}

int vt_buffer_write_pending(void)
{
    vt_lock();
    int rc = write_pending_locked();
    vt_unlock();
    return rc;
}

int vt_buffer_write_block(uint8_t type, const void *payload, size_t len)
{
    /* whether the last RANKDEFS was written: END follows only a written one (else the
     * file stays cut after the last snapshot, as a reader expects of a run that could
     * not end its trace) */
    static int defs_written;
    vt_lock();
    int rc = write_pending_locked();
    if (!rc || type == VT_BLOCK_RANKDEFS || (type == VT_BLOCK_END && defs_written)) {
        /* Definitions are attempted even after a failure: they may still fit. The
         * profile's functions are named before it. */
        int rc2 = type == VT_BLOCK_RANKDEFS ? name_functions(1, 0) : 0;
        if (!rc2)
            rc2 = checked_block_write(type, payload, len, 0);
        if (type == VT_BLOCK_RANKDEFS)
            defs_written = rc2 == 0;
        if (rc2 && !rc) {
            vt_buffer_fail(rc2);
            rc = rc2;
        }
    }
    vt_unlock();
    return rc;
}

void vt_buffer_close(void)
{
    vt_buffer *b = &vt__buf;
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
    __atomic_fetch_and(&vt__rec_special, ~(unsigned)VT_REC_SKIP, __ATOMIC_RELAXED);
    free(b->base);
    b->base = b->pos = b->limit = NULL;
    b->stopped = 1;
}
