/* What the two message matchers share: vt_trace_match (match_scan.c, match.c) and the
 * replay's streaming matching (src/analysis/replay_stream.c). The key of a message,
 * (communicator, source, destination, tag), interned once into a 32-bit id; the kinds
 * of calls that post, start or probe messages; the errors about entries left
 * unmatched. Internal to libvtread (not installed); defined in match_keys.c. */
#ifndef VT_MATCH_KEYS_H
#define VT_MATCH_KEYS_H

#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>

/* Receive keys that are not (yet) a key. */
#define KEY_PENDING UINT32_MAX       /* source and tag not resolved yet */
#define KEY_SKIP (UINT32_MAX - 1)    /* cancelled, MPI_PROC_NULL, unknown source */
#define KEY_MAX (UINT32_MAX - 2)     /* number of keys must stay below */
#define POS_MAX (VT_MPOS_NONE - 1u)  /* entries per rank must stay below */

/* The keys, numbered in the order they first appear. */
typedef struct vt_keytab {
    vt_match_key *k;
    size_t n, cap;
    uint32_t *slot;     /* hash of k: key id + 1, 0 empty */
    size_t scap;        /* power of two */
    uint32_t recent[4]; /* recent key ids, KEY_PENDING none (a halo alternates between a handful) */
    uint32_t next;      /* the recent entry to replace */
} vt_keytab;

void vt__keytab_init(vt_keytab *t);
void vt__keytab_free(vt_keytab *t);
/* The key id of (comm, src, dst, tag), added when new; KEY_PENDING without memory or
 * past KEY_MAX keys. */
uint32_t vt__key_intern(vt_keytab *t, uint64_t comm, uint32_t src, uint32_t dst, int64_t tag);
/* Order of the messages about unmatched entries: communicator, source, destination, tag. */
int vt__key_less(const vt_match_key *a, const vt_match_key *b);

/* Kinds of calls, for matching. */
enum vt_match_kind {
    K_OTHER,
    K_RECV,      /* MPI_Recv, MPI_Sendrecv(_replace): posting at the record, P/T/B */
    K_IRECV,     /* MPI_Irecv, MPI_Isendrecv(_replace): resolved by the completion */
    K_RECV_INIT, /* persistent receive template */
    K_SEND_INIT, /* persistent send template (any other *_init with a send peer) */
    K_START,     /* MPI_Start, MPI_Startall */
    K_MPROBE,    /* MPI_Mprobe, MPI_Improbe */
    K_MRECV,     /* MPI_Mrecv */
    K_IMRECV,    /* MPI_Imrecv */
    K_FREE,      /* MPI_Request_free (a send it frees is never cancelled; vt_trace_match ignores it) */
};

/* The kind of F; *is_init: a *_init call. */
uint8_t vt__match_classify(const vt_function *f, uint8_t *is_init);

/* What a request in flight is, in the low two bits of its entry (position << 2 | kind). */
enum { A_RECV = 1, A_SEND = 2, A_IMRECV = 3 };

/* The id of communicator index COMM of the rank, 0 none. */
static inline uint64_t vt__comm_id_of(const vt_rank *rk, int64_t comm)
{
    return comm >= 0 && (uint64_t)comm < rk->ncomms ? rk->comms[comm].id : 0;
}

/* The errors, at the block holding the record. Both return -1. */
/* A send (IS_SEND) or receive of key K, record INDEX of its rank, nobody matched. */
int vt__match_err_unmatched(vt_error *err, const vt_trace *t, const vt_match_key *k, int is_send, uint64_t index);
/* Receive record INDEX of RANK, whose request REQ (on communicator COMM) never completed. */
int vt__match_err_unresolved(vt_error *err, const vt_trace *t, uint32_t rank, uint64_t index, uint64_t req,
                             uint64_t comm);

#endif
