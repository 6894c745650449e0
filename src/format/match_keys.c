/* What vt_trace_match and the replay's streaming matching share (match_keys.h): the key
 * table, interning each (communicator, source, destination, tag) once into a 32-bit id
 * (open addressing on a hash of the four fields, a few recent ids tried first); the
 * order of keys for messages; the kinds of calls; the errors about entries left
 * unmatched, at the block of their record. Calls the reader's API and vt__seterr(). */
#include "vt_config.h"
#include "format/match_keys.h"
#include "format/reader_priv.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ key table */

static uint64_t key_hash(uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    uint64_t h = comm * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)src << 32 | dst);
    h ^= (uint64_t)tag * 0xc2b2ae3d27d4eb4fULL;
    h ^= h >> 31;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static int key_same(const vt_match_key *k, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    return k->comm_id == comm && k->src == src && k->dst == dst && k->tag == tag;
}

void vt__keytab_init(vt_keytab *t)
{
    memset(t, 0, sizeof *t);
    for (int c = 0; c < 4; c++)
        t->recent[c] = KEY_PENDING;
}

void vt__keytab_free(vt_keytab *t)
{
    free(t->k);
    free(t->slot);
    vt__keytab_init(t);
}

uint32_t vt__key_intern(vt_keytab *t, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag)
{
    for (int c = 0; c < 4; c++)
        if (t->recent[c] != KEY_PENDING && key_same(&t->k[t->recent[c]], comm, src, dst, tag))
            return t->recent[c];
    if ((t->n + 1) * 2 > t->scap) {
        size_t cap = t->scap ? t->scap * 2 : 256;
        uint32_t *s = calloc(cap, sizeof *s);
        if (!s)
            return KEY_PENDING;
        for (size_t i = 0; i < t->n; i++) {
            const vt_match_key *k = &t->k[i];
            size_t j = key_hash(k->comm_id, k->src, k->dst, k->tag) & (cap - 1);
            while (s[j])
                j = (j + 1) & (cap - 1);
            s[j] = (uint32_t)i + 1;
        }
        free(t->slot);
        t->slot = s;
        t->scap = cap;
    }
    size_t j = key_hash(comm, src, dst, tag) & (t->scap - 1);
    while (t->slot[j]) {
        uint32_t id = t->slot[j] - 1;
        if (key_same(&t->k[id], comm, src, dst, tag))
            return t->recent[t->next++ & 3] = id;
        j = (j + 1) & (t->scap - 1);
    }
    if (t->n >= KEY_MAX)
        return KEY_PENDING;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        vt_match_key *k = realloc(t->k, cap * sizeof *k);
        if (!k)
            return KEY_PENDING;
        t->k = k;
        t->cap = cap;
    }
    t->k[t->n] = (vt_match_key){comm, tag, src, dst};
    t->slot[j] = (uint32_t)t->n + 1;
    return t->recent[t->next++ & 3] = (uint32_t)t->n++;
}

int vt__key_less(const vt_match_key *a, const vt_match_key *b)
{
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id;
    if (a->src != b->src)
        return a->src < b->src;
    if (a->dst != b->dst)
        return a->dst < b->dst;
    return a->tag < b->tag;
}

/* ------------------------------------------------------------------ function kinds */

static int name_is(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0)
        return 0;
    return name[n] == 0 || strcmp(name + n, "_c") == 0;
}

uint8_t vt__match_classify(const vt_function *f, uint8_t *is_init)
{
    *is_init = strstr(f->name, "_init") != NULL;
    if (name_is(f->name, "MPI_Recv") || name_is(f->name, "MPI_Sendrecv") || name_is(f->name, "MPI_Sendrecv_replace"))
        return (f->fields & VT_F_RPEER) ? K_RECV : K_OTHER;
    if (name_is(f->name, "MPI_Irecv") || name_is(f->name, "MPI_Isendrecv") || name_is(f->name, "MPI_Isendrecv_replace"))
        return (f->fields & VT_F_REQUEST) ? K_IRECV : K_OTHER;
    if (name_is(f->name, "MPI_Recv_init") || name_is(f->name, "MPI_Precv_init"))
        return (f->fields & VT_F_REQUEST) ? K_RECV_INIT : K_OTHER;
    if (*is_init && (f->fields & VT_F_PEER) && (f->fields & VT_F_REQUEST))
        return K_SEND_INIT;
    if (name_is(f->name, "MPI_Start") || name_is(f->name, "MPI_Startall"))
        return (f->fields & VT_F_STARTED) ? K_START : K_OTHER;
    if (name_is(f->name, "MPI_Mprobe") || name_is(f->name, "MPI_Improbe"))
        return (f->fields & VT_F_MSG) ? K_MPROBE : K_OTHER;
    if (name_is(f->name, "MPI_Mrecv"))
        return (f->fields & VT_F_MSG) ? K_MRECV : K_OTHER;
    if (name_is(f->name, "MPI_Imrecv"))
        return (f->fields & VT_F_MSG) ? K_IMRECV : K_OTHER;
    if (!strcmp(f->name, "MPI_Request_free"))
        return (f->fields & VT_F_REQUEST) ? K_FREE : K_OTHER;
    return K_OTHER;
}

/* ------------------------------------------------------------------ errors */

/* File offset of the block holding record INDEX of RANK (for messages), 0 unknown. */
static uint64_t block_of(const vt_trace *t, uint32_t rank, uint64_t index)
{
    vt_cursor *c;
    vt_error e;
    vt_event ev;
    uint64_t off = 0;
    if (vt_cursor_open(t, rank, &c, &e))
        return 0;
    while (vt_cursor_next(c, &ev, &e) == 1) {
        if (ev.index == index) {
            off = ev.block_offset;
            break;
        }
    }
    vt_cursor_close(c);
    return off;
}

int vt__match_err_unmatched(vt_error *err, const vt_trace *t, const vt_match_key *k, int is_send, uint64_t index)
{
    if (is_send)
        return vt__seterr(err, vt_trace_rank(t, k->src)->path, block_of(t, k->src, index),
                          "expected a receive matching send record %llu of rank %u (to %u, tag %lld, communicator "
                          "0x%llx), found none",
                          (unsigned long long)index, k->src, k->dst, (long long)k->tag,
                          (unsigned long long)k->comm_id);
    return vt__seterr(
        err, vt_trace_rank(t, k->dst)->path, block_of(t, k->dst, index),
        "expected a send matching receive record %llu of rank %u (from %u, tag %lld, communicator 0x%llx), "
        "found none",
        (unsigned long long)index, k->dst, k->src, (long long)k->tag, (unsigned long long)k->comm_id);
}

int vt__match_err_unresolved(vt_error *err, const vt_trace *t, uint32_t rank, uint64_t index, uint64_t req,
                             uint64_t comm)
{
    return vt__seterr(err, vt_trace_rank(t, rank)->path, block_of(t, rank, index),
                      "expected a completion of request %llu of receive record %llu (rank %u, communicator 0x%llx), "
                      "found none in the rank's records",
                      (unsigned long long)req, (unsigned long long)index, rank, (unsigned long long)comm);
}
