#include "tracing/requests.h"
#include "tracing/mpihandle.h"

#include <stdlib.h>

static vt_req **buckets;
static uint32_t nbuckets, nlive;
static vt_req *freelist;
static uint64_t next_id = 1;
uint32_t vt__req_persistent;

static uint32_t bucket_of(MPI_Request h)
{
    uint64_t x = VT_HANDLE_KEY(h) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (nbuckets - 1);
}

static void rehash(void)
{
    uint32_t oldn = nbuckets;
    vt_req **old = buckets;
    nbuckets = nbuckets ? nbuckets * 2 : 256;
    buckets = calloc(nbuckets, sizeof *buckets);
    for (uint32_t i = 0; i < oldn; i++) {
        /* Keep each chain's order (oldest first) for handles that repeat. */
        vt_req *r = old[i];
        while (r) {
            vt_req *next = r->next;
            vt_req **tail = &buckets[bucket_of(r->handle)];
            while (*tail)
                tail = &(*tail)->next;
            r->next = NULL;
            *tail = r;
            r = next;
        }
    }
    free(old);
}

vt_req *vt_req_add(MPI_Request h, uint8_t kind, int persistent)
{
    if (nlive + 1 > nbuckets)
        rehash();
    vt_req *r = freelist;
    if (r)
        freelist = r->next;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    *r = (vt_req){.handle = h, .id = next_id++, .kind = kind, .persistent = (uint8_t)persistent, .active = !persistent,
                  .comm = -1, .peer = kind == VT_REQ_RECV ? VT_REQ_NO_SOURCE : -1, .tag = -1};
    vt_req **tail = &buckets[bucket_of(h)];
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    nlive++;
    vt__req_persistent += r->persistent;
    return r;
}

/* The link to the oldest entry for h not claimed (else, with HELD, to the oldest claimed);
 * NULL when none. HELD a constant. */
static VT_ALWAYS_INLINE vt_req **link_of(MPI_Request h, int held)
{
    if (!nbuckets || h == MPI_REQUEST_NULL)
        return NULL;
    vt_req **first_held = NULL;
    for (vt_req **l = &buckets[bucket_of(h)]; *l; l = &(*l)->next) {
        if ((*l)->handle == h) {
            if (!(*l)->claimed)
                return l;
            if (held && !first_held)
                first_held = l;
        }
    }
    return first_held;
}

static void unlink_at(vt_req **l)
{
    vt_req *r = *l;
    *l = r->next;
    r->next = freelist;
    freelist = r;
    nlive--;
    vt__req_persistent -= r->persistent;
}

vt_req *vt_req_get(MPI_Request h)
{
    vt_req **l = link_of(h, 1);
    return l ? *l : NULL;
}

vt_req *vt_req_take(MPI_Request h)
{
    vt_req **l = link_of(h, 0);
    if (!l)
        return NULL;
    vt_req *r = *l;
    if (!r->persistent)
        unlink_at(l);
    return r;
}

vt_req *vt_req_claim(MPI_Request h)
{
    if (!nbuckets || h == MPI_REQUEST_NULL)
        return NULL;
    for (vt_req *r = buckets[bucket_of(h)]; r; r = r->next) {
        if (r->handle == h && !r->claimed) {
            r->claimed = 1;
            return r;
        }
    }
    return NULL;
}

void vt_req_remove(vt_req *r)
{
    vt_req **p = &buckets[bucket_of(r->handle)];
    while (*p && *p != r)
        p = &(*p)->next;
    if (*p)
        unlink_at(p);
}
