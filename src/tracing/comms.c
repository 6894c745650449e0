#include "tracing/comms.h"
#include "tracing/rtreduce.h"
#include "tracing/log.h"
#include "tracing/mpihandle.h"
#include "util/sort.h"

#include <stdlib.h>
#include <string.h>

static vt_comm **table;      /* by index, never shrinks: indexes stay valid in the trace */
static uint32_t ncomms, capcomms;
/* Open-addressing map from live handle to record. */
static vt_comm **map;
static uint32_t mapcap, mapused;
static int world_rank_;
VT_HIDDEN vt_comm *vt__world;
VT_HIDDEN int vt__world_size;
VT_HIDDEN uint32_t vt__world_index;
static vt_comm *self_;
static MPI_Group world_group;

uint64_t vt_hash64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint32_t slot_of(MPI_Comm h)
{
    uint64_t x = VT_HANDLE_KEY(h) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (mapcap - 1);
}

static void map_put(vt_comm *c);
static vt_comm *append(vt_comm *c);

static void map_grow(void)
{
    vt_comm **old = map;
    uint32_t oldcap = mapcap;
    mapcap = mapcap ? mapcap * 2 : 64;
    map = calloc(mapcap, sizeof *map);
    mapused = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i] && old[i]->alive)
            map_put(old[i]);
    free(old);
}

static void map_put(vt_comm *c)
{
    if ((mapused + 1) * 2 > mapcap)
        map_grow();
    uint32_t i = slot_of(c->handle);
    while (map[i] && map[i]->alive && map[i]->handle != c->handle)
        i = (i + 1) & (mapcap - 1);
    if (!map[i] || !map[i]->alive)
        mapused++;
    map[i] = c;
}

static vt_comm *map_get(MPI_Comm h)
{
    if (!mapcap)
        return NULL;
    uint32_t i = slot_of(h);
    while (map[i]) {
        if (map[i]->handle == h && map[i]->alive)
            return map[i];
        i = (i + 1) & (mapcap - 1);
    }
    return NULL;
}

/* World ranks of a group, NULL when it is the identity of the whole world. */
static int *world_ranks(MPI_Group g, int n)
{
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, world_group, out);
    free(in);
    return out;
}

static int lowest(const int *w, int n)
{
    int lo = w ? w[0] : 0;
    for (int i = 1; w && i < n; i++)
        if (w[i] < lo)
            lo = w[i];
    return lo;
}

vt_comm *vt_comm_register(MPI_Comm h, uint64_t gid, int parent, const char *how)
{
    vt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->handle = h;
    c->gid = gid;
    c->parent = parent;
    c->how = how;
    c->alive = 1;
    PMPI_Comm_rank(h, &c->myrank);
    if (h == MPI_COMM_WORLD) {
        PMPI_Comm_size(h, &c->size);
    } else {
        int inter = 0;
        PMPI_Comm_test_inter(h, &inter);
        c->inter = inter;
        MPI_Group g;
        PMPI_Comm_group(h, &g);
        PMPI_Group_size(g, &c->size);
        c->world = world_ranks(g, c->size);
        PMPI_Group_free(&g);
        if (inter) {
            PMPI_Comm_remote_group(h, &g);
            PMPI_Group_size(g, &c->rsize);
            c->rworld = world_ranks(g, c->rsize);
            PMPI_Group_free(&g);
        }
    }
    append(c);
    map_put(c);
    return c;
}

static vt_comm *append(vt_comm *c)
{
    if (ncomms == capcomms) {
        capcomms = capcomms ? capcomms * 2 : 16;
        table = realloc(table, capcomms * sizeof *table);
    }
    c->index = ncomms;
    table[ncomms++] = c;
    return c;
}

vt_comm *vt_comm_register_like(MPI_Comm h, uint64_t gid, const vt_comm *like, const char *how)
{
    vt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = (vt_comm){.handle = h, .gid = gid, .parent = (int)like->index, .how = how, .alive = 1,
                   .size = like->size, .myrank = like->myrank, .inter = like->inter, .rsize = like->rsize};
    if (like->world) {
        c->world = malloc(sizeof(int) * (size_t)c->size);
        memcpy(c->world, like->world, sizeof(int) * (size_t)c->size);
    }
    if (like->rworld) {
        c->rworld = malloc(sizeof(int) * (size_t)c->rsize);
        memcpy(c->rworld, like->rworld, sizeof(int) * (size_t)c->rsize);
    }
    append(c);
    map_put(c);
    return c;
}

vt_comm *vt_comm_invalid(void)
{
    static vt_comm *invalid;
    if (!invalid) {
        invalid = calloc(1, sizeof *invalid);
        *invalid = (vt_comm){.handle = MPI_COMM_NULL, .gid = 0, .parent = -1, .myrank = -1, .how = "invalid"};
        append(invalid);
    }
    return invalid;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* How many communicators were made before over a new group only with this key (its
 * members, tag and parent): every member of such a group takes part in each of its
 * calls, so all count alike. Open addressing; grows. */
static struct group_count {
    uint64_t key, n;
} *gcounts;
static size_t gcap, gused;

static uint64_t group_count_next(uint64_t key)
{
    if ((gused + 1) * 2 > gcap) {
        size_t nc = gcap ? 2 * gcap : 64;
        struct group_count *t = calloc(nc, sizeof *t);
        if (!t)
            return 0;
        for (size_t i = 0; i < gcap; i++) {
            if (!gcounts[i].n)
                continue;
            size_t j = gcounts[i].key & (nc - 1);
            while (t[j].n)
                j = (j + 1) & (nc - 1);
            t[j] = gcounts[i];
        }
        free(gcounts);
        gcounts = t;
        gcap = nc;
    }
    size_t j = key & (gcap - 1);
    while (gcounts[j].n && gcounts[j].key != key)
        j = (j + 1) & (gcap - 1);
    if (!gcounts[j].n) {
        gcounts[j].key = key;
        gused++;
    }
    return gcounts[j].n++;
}

/* The id of a communicator made by a collective over its parent, or over the new
 * group only: see doc/format.md. */
uint64_t vt_comm_child_gid(const vt_comm *parent, uint64_t count, MPI_Comm child, int group_only, int tag)
{
    MPI_Group g;
    int n, rn = 0, inter = 0;
    PMPI_Comm_test_inter(child, &inter);
    PMPI_Comm_group(child, &g);
    PMPI_Group_size(g, &n);
    int *w = world_ranks(g, n);
    PMPI_Group_free(&g);
    int *rw = NULL;
    if (inter) {
        PMPI_Comm_remote_group(child, &g);
        PMPI_Group_size(g, &rn);
        rw = world_ranks(g, rn);
        PMPI_Group_free(&g);
    }
    uint64_t h = VT_HASH_INIT;
    if (!group_only) {
        int lo = lowest(w, n), rlo = rw ? lowest(rw, rn) : lo;
        free(w);
        free(rw);
        h = vt_hash64(h, parent->gid);
        h = vt_hash64(h, count);
        h = vt_hash64(h, (uint64_t)(rlo < lo ? rlo : lo));
        return h;
    }
    /* Only the new group's members take part (MPI_Comm_create_group over parent, or
     * MPI_Intercomm_create over two local communicators, different on the two sides):
     * the key is every member's world rank, sorted, the tag and, for create_group, the
     * parent; the id adds how many earlier calls had that key. */
    int *all = malloc(sizeof(int) * (size_t)(n + rn + 1));
    if (all && w && (rw || !rn)) {
        memcpy(all, w, sizeof(int) * (size_t)n);
        if (rn)
            memcpy(all + n, rw, sizeof(int) * (size_t)rn);
        vt_sort(all, (size_t)(n + rn), sizeof(int), by_int);
        for (int i = 0; i < n + rn; i++)
            h = vt_hash64(h, (uint64_t)all[i]);
    }
    free(all);
    free(w);
    free(rw);
    h = vt_hash64(h, (uint64_t)(int64_t)tag);
    h = vt_hash64(h, inter ? 0 : parent->gid);
    return vt_hash64(vt_hash64(h, group_count_next(h)), 0x67);
}

vt_comm *vt__comm_get_slow(MPI_Comm h)
{
    vt_comm *c = map_get(h);
    if (c || h == MPI_COMM_NULL)
        return c;
    /* Unknown: made before we started or through a call we do not wrap. Its id is
     * derived from its members alone, so every member still agrees. */
    MPI_Group g;
    int n;
    if (PMPI_Comm_group(h, &g) != MPI_SUCCESS)
        return NULL;
    PMPI_Group_size(g, &n);
    int *w = world_ranks(g, n);
    PMPI_Group_free(&g);
    uint64_t id = vt_hash64(VT_HASH_INIT, 0x75);
    for (int i = 0; i < n; i++)
        id = vt_hash64(id, (uint64_t)w[i]);
    free(w);
    return vt_comm_register(h, id, -1, "unknown");
}

void vt_comm_forget(MPI_Comm h)
{
    vt_comm *c = map_get(h);
    if (c && c != vt__world && c != self_)
        c->alive = 0;
}

void vt_comms_init(int world_rank, int world_size)
{
    (void)world_size;
    world_rank_ = world_rank;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    vt__world = vt_comm_register(MPI_COMM_WORLD, 1, -1, "world");
    vt__world_index = vt__world->index;
    vt__world_size = vt__world->size;
    self_ = vt_comm_register(MPI_COMM_SELF, (1ull << 63) + (uint64_t)world_rank_, -1, "self");
}

int vt_comm_lowest(const vt_comm *c)
{
    int lo = lowest(c->world, c->size);
    if (c->inter && c->rsize > 0) {
        int rlo = lowest(c->rworld, c->rsize);
        if (rlo < lo)
            lo = rlo;
    }
    return lo;
}

uint32_t vt_comms_count(void) { return ncomms; }

const uint64_t *vt_comms_gids(size_t *n)
{
    static uint64_t *gids;
    static size_t cap;
    if (ncomms > cap) {
        uint64_t *g = realloc(gids, ncomms * sizeof *g);
        if (!g) {
            *n = 0;
            return NULL;
        }
        gids = g;
        cap = ncomms;
    }
    for (uint32_t i = 0; i < ncomms; i++)
        gids[i] = table[i]->gid;
    *n = ncomms;
    return gids;
}
vt_comm *vt_comm_at(uint32_t index) { return index < ncomms ? table[index] : NULL; }
