/* Communicator ids (doc/format.md, "Communicator ids"): 64-bit values every member of a
 * communicator derives without communication. The run time computes them here; since
 * format 2.0 a rank file stores what an id is derived from (its origin), and the
 * reader derives it again here, so both sides share one definition. */
#ifndef VT_COMMID_H
#define VT_COMMID_H

#include <stddef.h>
#include <stdint.h>

#define VT_HASH_INIT 0xcbf29ce484222325ull /* FNV-1a's offset basis */

/* FNV-1a over the 8 little-endian bytes of v. */
static inline uint64_t vt_hash64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* What an id is derived from: RANKDEFS 2.0 stores the kind, then its inputs. */
enum vt_comm_id_kind {
    VT_CID_EXPLICIT = 0, /* uvar id: no inputs in the trace (another MPI world's members) */
    VT_CID_WORLD = 1,    /* MPI_COMM_WORLD: 1 */
    VT_CID_SELF = 2,     /* MPI_COMM_SELF of the file's rank r: 2^63 + r */
    VT_CID_PARENT = 3,   /* a collective over the parent: uvar count */
    VT_CID_GROUP = 4,    /* a call over the new group only: svar tag, uvar count */
    VT_CID_MEMBERS = 5,  /* first seen in use (made before the layer started, or by a call
                          * it does not wrap): its local members */
    VT_CID_KINDS = 6
};

typedef struct vt_comm_origin {
    uint32_t kind;  /* enum vt_comm_id_kind */
    int64_t tag;    /* VT_CID_GROUP */
    uint64_t count; /* VT_CID_PARENT, VT_CID_GROUP: communicators made before (below) */
    uint64_t id;    /* VT_CID_EXPLICIT */
    /* What RANKDEFS stores instead of the count of VT_CID_PARENT and the tag of
     * VT_CID_GROUP: their differences to these, which the table gives (so that counts
     * that grow by one and tags that a loop counts cost no bytes once compressed):
     * one more than the count of the table's previous VT_CID_PARENT entry over the same
     * parent (0: none), the tag of its previous VT_CID_GROUP entry (0: none). */
    uint64_t count_base;
    int64_t tag_base;
} vt_comm_origin;

#define VT_CID_SELF_BASE (1ull << 63)

/* Made by the count-th creation call over the parent (counted on every member of it);
 * LOWEST: the lowest world rank among the new communicator's members, both groups. */
uint64_t vt_comm_id_parent(uint64_t parent_id, uint64_t count, uint64_t lowest);
/* Made by MPI_Comm_create_group (PARENT_ID its parent's) or MPI_Intercomm_create
 * (PARENT_ID 0): the key hashes the world ranks of all members (both groups), sorted
 * here in place, the tag and the parent's id; the id adds COUNT, the calls made before
 * with the same key. */
uint64_t vt_comm_id_group_key(int64_t *ranks, size_t n, int64_t tag, uint64_t parent_id);
uint64_t vt_comm_id_group(uint64_t key, uint64_t count);
/* From its local members' world ranks, in their order. */
uint64_t vt_comm_id_members(const int64_t *ranks, size_t n);

/* Why vt_comm_id_derive gives no id. */
enum {
    VT_CID_ENOPARENT = -1,  /* the kind needs an earlier communicator as the parent */
    VT_CID_ENOMEMBERS = -2, /* VT_CID_PARENT needs at least one member */
    VT_CID_ENOMEM = -3,
    VT_CID_EKIND = -4,
};

/* The id of a communicator table entry of the rank file of RANK: its origin, whether it
 * is an intercommunicator, its local and remote members as the table holds them, and
 * its parent's id (NULL: no parent earlier in the table). 0 and *ID, or a VT_CID_E*. */
int vt_comm_id_derive(const vt_comm_origin *o, uint32_t rank, int inter, const uint32_t *m, uint32_t n,
                      const uint32_t *rm, uint32_t rn, const uint64_t *parent_id, uint64_t *id);

/* Writes the origin as RANKDEFS 2.0 stores it (at most VT_CID_ORIGIN_MAX bytes); its
 * count of VT_CID_PARENT is at least its count_base. */
#define VT_CID_ORIGIN_MAX 21
uint8_t *vt_comm_origin_encode(uint8_t *p, const vt_comm_origin *o);

#endif
